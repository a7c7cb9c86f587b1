// The member list beside the room: a server's members grouped by role (the owner marked),
// with presence, or a conversation's members. A member opens a menu: message, add as friend,
// change role (the owner), remove (who may), report.
import { api } from './api.js';
import { $, el, toast, ask, confirmAction, avatar, presenceDot } from './ui.js';
import { icon } from './icons.js';
import { openPopup, closePopup, menuKeys } from './popup.js';
import { state, on, emit, findServer, findConversation, isFriend, learnUser } from './store.js';

const loading = new Map(); // server id -> promise
const reloadedAt = new Map(); // server id -> when its roles were last reloaded for a new role
const hooks = { openDm: async () => {}, chooseRole: async () => {} };

export function setMemberHooks(h) {
  Object.assign(hooks, h);
}

/** Loads (once per ready) a server's members and roles into the store. */
export function loadMembers(serverId, force = false) {
  if (!force && state.members.has(serverId) && state.roles.has(serverId)) return Promise.resolve();
  if (!force && loading.has(serverId)) return loading.get(serverId);
  const job = Promise.all([api('GET', `/api/servers/${serverId}/members`), api('GET', `/api/servers/${serverId}/roles`)])
    .then(([members, roles]) => {
      state.members.set(serverId, members);
      state.roles.set(serverId, roles);
      for (const m of members) {
        learnUser(m);
        if (m.presence) state.presence.set(m.user_id, m.presence);
      }
      emit('members', serverId);
    })
    .finally(() => loading.delete(serverId));
  loading.set(serverId, job);
  return job;
}

const PRESENCE_ORDER = { online: 0, idle: 1, dnd: 2, offline: 3 };
const byPresence = (a, b) => (PRESENCE_ORDER[state.presence.get(a.user_id) || 'offline'] - PRESENCE_ORDER[state.presence.get(b.user_id) || 'offline'])
  || a.username.localeCompare(b.username);

function memberRow(member, server) {
  const presence = member.user_id === state.me.user_id ? state.presence.get(member.user_id) || 'online' : state.presence.get(member.user_id) || member.presence || 'offline';
  const role = member.role || null;
  return el('li', { class: `member${presence === 'offline' ? ' offline' : ''}` },
    el('button', {
      type: 'button', class: 'member-button', 'aria-haspopup': 'menu', 'data-user': member.user_id,
      'aria-label': `${member.username}${member.is_owner ? ', owner' : ''}${role ? `, role ${role}` : ''}, ${presence === 'dnd' ? 'do not disturb' : presence}`,
      onclick: (e) => openMemberMenu(member, server, e.currentTarget),
    },
    el('span', { class: 'avatar-wrap' }, avatar(member, true), presenceDot(presence)),
    el('span', { class: 'member-name', text: member.username }),
    member.is_owner ? el('span', { class: 'owner-mark', title: 'Server owner' }, icon('crown')) : null));
}

export function renderMembers() {
  const box = $('members');
  const cur = state.current;
  if (!cur || (cur.kind !== 'channel' && cur.kind !== 'conversation')) return box.replaceChildren();
  if (cur.kind === 'conversation') {
    const c = findConversation(cur.id);
    if (!c) return box.replaceChildren();
    const members = [...c.members].sort(byPresence);
    box.replaceChildren(el('h3', { class: 'members-heading', text: `Members — ${members.length}` }),
      el('ul', { class: 'member-list' }, members.map((m) => memberRow(m, null))));
    return;
  }
  const server = findServer(cur.serverId);
  const members = state.members.get(cur.serverId);
  const roles = state.roles.get(cur.serverId) || [];
  if (!server || !members) return box.replaceChildren(el('p', { class: 'muted members-heading', text: 'Loading members…' }));
  const groups = [];
  // Roles in creation order; a role we have not heard of yet (created since) still groups.
  const names = [...roles.map((r) => r.name), ...new Set(members.flatMap((m) => m.roles).filter((n) => !roles.some((r) => r.name === n)))];
  for (const name of names) {
    const inRole = members.filter((m) => m.roles.includes(name)).sort(byPresence);
    if (inRole.length) groups.push([name, inRole, roles.find((r) => r.name === name)?.full_server_admin]);
  }
  const plain = members.filter((m) => !m.roles.length).sort(byPresence);
  if (plain.length) groups.push(['Members', plain, false]);
  box.replaceChildren(...groups.map(([name, list, admin]) => el('section', { class: 'member-group' },
    el('h3', { class: 'members-heading' }, el('span', { text: `${name} — ${list.length}` }), admin ? el('span', { class: 'role-flag', title: 'Full server administrators', text: 'admin' }) : null),
    el('ul', { class: 'member-list' }, list.map((m) => memberRow(m, server))))));
}

let menu = null;
function openMemberMenu(member, server, anchor) {
  if (!menu) {
    menu = el('div', { id: 'member-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Member actions' });
    menuKeys(menu);
  }
  const me = state.me.user_id;
  const self = member.user_id === me;
  const isOwner = server && server.owner_id === me;
  const item = (label, iconName, run, danger = false) => el('button', {
    type: 'button', role: 'menuitem', class: `menu-item${danger ? ' danger' : ''}`, onclick: () => { closePopup(); run(); },
  }, icon(iconName), el('span', { text: label }));
  const myRecord = server ? (state.members.get(server.id) || []).find((m) => m.user_id === me) : null;
  const roles = server ? state.roles.get(server.id) || [] : [];
  const iAmAdmin = myRecord && roles.some((r) => r.full_server_admin && myRecord.roles.includes(r.name));
  const targetAdmin = roles.some((r) => r.full_server_admin && member.roles?.includes(r.name));
  const mayRemove = server && !self && !member.is_owner && (isOwner || (iAmAdmin && !targetAdmin));
  menu.replaceChildren(
    el('div', { class: 'menu-card' },
      avatar(member),
      el('div', {}, el('strong', { text: member.username }),
        el('div', { class: 'muted', text: member.is_owner ? 'Server owner' : member.role ? `Role: ${member.role}` : server ? 'No role' : 'Member' }))),
    ...[
      !self && isFriend(member.user_id) && item('Message', 'chat', () => hooks.openDm(member.username)),
      !self && !isFriend(member.user_id) && item('Add friend', 'user', () => addFriend(member.username)),
      server && isOwner && item('Change role', 'shield', () => hooks.chooseRole(server, member)),
      mayRemove && item('Remove from server', 'door', () => removeMember(server, member), true),
      !self && item('Report user', 'flag', () => reportUser(member), true),
    ].filter(Boolean));
  openPopup(menu, anchor);
  menu.querySelector('[role="menuitem"]')?.focus();
}

export async function addFriend(username) {
  try {
    const request = await api('POST', '/api/friends/requests', { username });
    toast(`Friend request sent to ${request.to.username}.`, false);
    emit('friends', { event: 'outgoing' });
  } catch (err) {
    toast(err.message);
  }
}

async function removeMember(server, member) {
  if (!(await confirmAction(`Remove ${member.username}?`, `${member.username} leaves ${server.name} and can only come back with a new invite from you or an administrator.`, 'Remove'))) return;
  try {
    await api('DELETE', `/api/servers/${server.id}/members/${member.user_id}`);
    toast(`${member.username} was removed.`, false);
    await loadMembers(server.id, true);
  } catch (err) {
    toast(err.message);
  }
}

export async function reportUser(user) {
  const reason = await ask({ title: `Report ${user.username}`, label: 'What is wrong?', submit: 'Report' });
  if (reason === null) return;
  try {
    await api('POST', '/api/reports', { type: 'user', target: user.user_id, reason });
    toast('Reported. The administrators will have a look.', false);
  } catch (err) {
    toast(err.message);
  }
}

on('members', (serverId) => {
  // A member holds a role created since we loaded the roles: load them again (its permissions).
  const members = state.members.get(serverId);
  const roles = state.roles.get(serverId);
  const stale = members && roles && members.some((m) => m.roles.some((n) => !roles.some((r) => r.name === n)));
  if (stale && !loading.has(serverId) && Date.now() - (reloadedAt.get(serverId) || 0) > 5000) {
    reloadedAt.set(serverId, Date.now()); // at most once in 5 s, whatever the server answers
    loadMembers(serverId, true).catch(() => {});
  }
  renderMembers();
});
on('presence', renderMembers);
on('friends', renderMembers);
