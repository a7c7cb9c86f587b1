// @ts-check
// The member list beside the room (a server's members grouped by role, the owner marked, with
// presence and timeouts; or a conversation's members), and the user menu that a member, a
// message author or a search result opens: a card with the name, then Message or Add friend,
// the role (the owner), time out, kick and ban (as the caller's rank allows), remove from a
// group (its creator), block or unblock, and report.
import { api } from './api.js';
import { $, el, toast, formatTime } from './ui.js';
import { icon } from './icons.js';
import { openPopup, menuKeys, menuItem, keepAnchor } from './popup.js';
import { state, on, emit, findServer, findConversation, isFriend, isBlocked, displayName, holdsRole, heldRoles, addConversation, openPlace } from './store.js';
import { userAvatar, nameText, fullName, isDeletedUser, paintRole } from './names.js';
import { loadMembers, isLoadingMembers } from './members-data.js';
import { mayModerate, timeoutOf, holdsAdminRole, kickMember, banMember, timeOutMember, endTimeout } from './moderation.js';
import { blockUser, unblockUser } from './blocks.js';
import { removeFromGroup } from './groups.js';
import { report } from './reports.js';

/**
 * @typedef {import('../../types/client').Member} Member
 * @typedef {import('../../types/client').ServerEntry} ServerEntry
 */

export { loadMembers };

const reloadedAt = new Map(); // server id -> when its roles were last reloaded for a new role

const PRESENCE_ORDER = { online: 0, idle: 1, dnd: 2, offline: 3 };
const byPresence = (a, b) =>
  PRESENCE_ORDER[state.presence.get(a.user_id) || 'offline'] - PRESENCE_ORDER[state.presence.get(b.user_id) || 'offline'] ||
  displayName(a).localeCompare(displayName(b));

function presenceOf(member) {
  return member.user_id === state.me.user_id
    ? state.presence.get(member.user_id) || 'online'
    : state.presence.get(member.user_id) || member.presence || 'offline';
}

/** A member's name in the colour of the first role they hold that has one (as Discord shows it). */
function coloured(node, member, server) {
  const role = server && heldRoles(state.roles.get(server.id) || [], member).find((r) => r.color !== null && r.color !== undefined);
  return role ? paintRole(node, role.color) : node;
}

/**
 * @param {Member} member
 * @param {ServerEntry | null} server
 */
function memberRow(member, server) {
  const presence = presenceOf(member);
  const role = member.role || null;
  const until = timeoutOf(member);
  const words = { online: 'online', idle: 'idle', dnd: 'do not disturb', offline: 'offline' };
  return el(
    'li',
    { class: `member${presence === 'offline' ? ' offline' : ''}` },
    labelled(
      `${fullName(member)}${member.bot ? ', bot' : ''}${member.is_owner ? ', owner' : ''}${role ? `, role ${role}` : ''}${until ? ', timed out' : ''}${member.pending ? ', has not accepted the rules yet' : ''}, ${words[presence] || presence}`,
      el(
        'button',
        {
          type: 'button',
          class: 'member-button',
          'aria-haspopup': 'menu',
          'data-user': member.user_id,
          onclick: (e) => openUserMenu(member, e.currentTarget),
        },
        el(
          'span',
          { class: 'avatar-wrap', 'aria-hidden': 'true' },
          userAvatar(member, true),
          el('span', { class: `presence ${presence}`, 'aria-hidden': 'true' }),
        ),
        coloured(nameText(member, 'member-name'), member, server),
        member.bot ? el('span', { class: 'tag bot-tag', text: 'BOT', title: 'A bot account' }) : null,
        member.is_owner ? el('span', { class: 'owner-mark', title: 'Server owner' }, icon('crown')) : null,
        until ? el('span', { class: 'timeout-mark', title: `Timed out until ${formatTime(until)}` }, icon('clock')) : null,
        member.pending ? el('span', { class: 'tag pending-tag', text: 'NEW', title: 'Has not accepted the rules yet' }) : null,
      ),
    ),
  );
}

// The button's name is the spoken label (visually hidden); what it shows is hidden from screen
// readers, so the name never disagrees with the visible text (axe: label-content-name-mismatch).
function labelled(label, button) {
  for (const child of button.children) child.setAttribute('aria-hidden', 'true');
  button.append(el('span', { class: 'visually-hidden', text: label }));
  return button;
}

const isOffline = (m) => presenceOf(m) === 'offline';

/** One heading and its members: "Online — 3", a hoisted role's name, or "Offline — 5". */
function memberGroup(name, list, server, admin = false) {
  return el(
    'section',
    { class: 'member-group' },
    el(
      'h3',
      { class: 'members-heading' },
      el('span', { text: `${name} — ${list.length}` }),
      admin ? el('span', { class: 'role-flag', title: 'Full server administrators', text: 'admin' }) : null,
    ),
    el(
      'ul',
      { class: 'member-list' },
      list.map((m) => memberRow(m, server)),
    ),
  );
}

/**
 * As Discord lists them: whoever is online under the first hoisted role they hold (roles are in
 * position order), the other online members under "Online", and everyone offline under
 * "Offline", whatever their roles. A member shows once.
 */
export function renderMembers() {
  drawMembers();
  // A member's menu stays beside their (redrawn) button, wherever the redraw moved it.
  keepAnchor((old) =>
    old.classList.contains('member-button') ? $('members').querySelector(`.member-button[data-user="${CSS.escape(old.dataset.user || '')}"]`) : undefined,
  );
}

function drawMembers() {
  const box = $('members');
  const cur = state.current;
  if (!cur || (cur.kind !== 'channel' && cur.kind !== 'conversation')) return box.replaceChildren();
  if (cur.kind === 'conversation') {
    const c = findConversation(cur.id);
    if (!c) return box.replaceChildren();
    const members = [...c.members].sort(byPresence);
    const online = members.filter((m) => !isOffline(m));
    const offline = members.filter(isOffline);
    return box.replaceChildren(
      ...[online.length && memberGroup('Online', online, null), offline.length && memberGroup('Offline', offline, null)].filter(Boolean),
    );
  }
  const server = findServer(cur.serverId);
  const members = state.members.get(cur.serverId);
  const roles = state.roles.get(cur.serverId) || [];
  if (!server || !members) return box.replaceChildren(el('p', { class: 'muted members-heading', text: 'Loading members…' }));
  const online = members.filter((m) => !isOffline(m)).sort(byPresence);
  const hoisted = roles.filter((r) => r.hoist);
  const groupOf = (m) => hoisted.find((r) => holdsRole(m, r.id)) || null;
  const groups = [];
  for (const role of hoisted) {
    const inRole = online.filter((m) => groupOf(m) === role);
    if (inRole.length) groups.push(memberGroup(role.name, inRole, server, role.full_server_admin));
  }
  const plain = online.filter((m) => !groupOf(m));
  if (plain.length) groups.push(memberGroup('Online', plain, server));
  const offline = members.filter(isOffline).sort(byPresence);
  if (offline.length) groups.push(memberGroup('Offline', offline, server));
  box.replaceChildren(...groups);
}

// ---- the user menu ----------------------------------------------------------------------

let menu = null;

/**
 * Opens the menu of a user: a member of the open server or conversation, or anyone else (an
 * author who left, a search result). What it offers depends on where the caller is.
 * @param {{ user_id: string, username: string, display_name?: string | null, avatar_url?: string | null }} user
 * @param {HTMLElement} anchor
 */
export function openUserMenu(user, anchor) {
  if (!menu) {
    menu = el('div', { id: 'member-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Member actions' });
    menuKeys(menu);
  }
  const cur = state.current;
  const server = cur?.kind === 'channel' ? findServer(cur.serverId) : null;
  const conversation = cur?.kind === 'conversation' ? findConversation(cur.id) : null;
  const member = server ? (state.members.get(server.id) || []).find((m) => m.user_id === user.user_id) : null;
  const inGroup = conversation?.kind === 'group' && conversation.members.some((m) => m.user_id === user.user_id);
  const me = state.me.user_id;
  const self = user.user_id === me;
  const gone = isDeletedUser(user);
  const isOwner = server && server.owner_id === me;
  const until = timeoutOf(member);
  const moderate = server && member && mayModerate(server, member);
  const roles = server ? state.roles.get(server.id) || [] : [];
  const subtitle = member
    ? member.is_owner
      ? 'Server owner'
      : member.roles.length
        ? `${member.roles.length > 1 ? 'Roles' : 'Role'}: ${heldRoles(roles, member)
            .map((r) => r.name)
            .join(', ')}${holdsAdminRole(server.id, member) ? ' (administrator)' : ''}`
        : 'No role'
    : server
      ? 'Not a member of this server'
      : conversation
        ? 'Member'
        : '';
  const name = displayName(user);
  const groups = [
    [
      !self && !gone && isFriend(user.user_id) && menuItem('Message', 'chat', () => openDm(user.username)),
      !self && !gone && !isFriend(user.user_id) && !isBlocked(user.user_id) && menuItem('Add friend', 'user', () => addFriend(user.username)),
    ],
    isOwner && member && roles.length
      ? [
          el('div', { class: 'menu-label', text: 'Roles' }),
          ...roles.map((r) =>
            menuItem(r.name, 'shield', () => toggleRole(server, member, r), {
              role: 'menuitemcheckbox',
              checked: member.roles.includes(r.name),
            }),
          ),
        ]
      : [],
    [
      moderate && !until && menuItem('Time out…', 'clock', () => timeOutMember(server, member), { danger: true }),
      moderate && until && menuItem('Remove timeout', 'clock', () => endTimeout(server, member)),
      moderate && menuItem(`Kick ${name}…`, 'door', () => kickMember(server, member), { danger: true }),
      moderate && menuItem(`Ban ${name}…`, 'ban', () => banMember(server, member), { danger: true }),
      inGroup && !self && conversation.created_by === me && menuItem('Remove from group', 'door', () => removeFromGroup(conversation, user), { danger: true }),
    ],
    [
      !self &&
        !gone &&
        (isBlocked(user.user_id) ? menuItem('Unblock', 'ban', () => unblockUser(user)) : menuItem('Block', 'ban', () => blockUser(user), { danger: true })),
      !self && !gone && menuItem('Report user', 'flag', () => reportUser(user), { danger: true }),
    ],
  ]
    .map((g) => g.filter(Boolean))
    .filter((g) => g.length);
  menu.replaceChildren(
    el(
      'div',
      { class: 'menu-card' },
      userAvatar(user),
      el(
        'div',
        { class: 'card-text' },
        el('strong', { class: 'card-name', text: name }),
        gone ? null : el('div', { class: 'muted card-username', text: `@${user.username}` }),
        subtitle ? el('div', { class: 'muted card-sub', text: subtitle }) : null,
        until ? el('div', { class: 'card-timeout', text: `Timed out until ${formatTime(until)}` }) : null,
      ),
    ),
    ...groups.flatMap((g, i) => (i ? [el('div', { class: 'menu-sep', role: 'separator' }), ...g] : g)),
  );
  openPopup(menu, anchor);
  menu.querySelector('[role^="menuitem"]')?.focus();
}

/**
 * Gives the role, or takes it when the member holds it.
 * @param {ServerEntry} server
 * @param {Member} member
 * @param {import('../../types/client').Role} role
 */
export async function toggleRole(server, member, role) {
  const holds = holdsRole(member, role.id);
  try {
    if (holds) await api('DELETE', `/api/servers/${server.id}/members/${member.user_id}/roles/${role.id}`);
    else await api('PUT', `/api/servers/${server.id}/members/${member.user_id}/role`, { role: role.name });
    toast(holds ? `${displayName(member)} no longer has the role ${role.name}.` : `${displayName(member)} now has the role ${role.name}.`, false);
    await loadMembers(server.id, true);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * Makes a DM (or finds the one there is) or a group, and opens it.
 * @param {'dm' | 'group'} kind
 * @param {{ usernames: string[], name?: string }} body
 */
export async function startConversation(kind, body) {
  try {
    const conversation = await api('POST', `/api/conversations/${kind}`, body);
    addConversation(conversation);
    openPlace({ kind: 'conversation', id: conversation.id });
  } catch (err) {
    toast(err.message);
  }
}

/**
 * Opens the direct messages with a user (made on first use).
 * @param {string} username
 */
export const openDm = (username) => startConversation('dm', { usernames: [username] });

/**
 * @param {string} username
 */
export async function addFriend(username) {
  try {
    const request = await api('POST', '/api/friends/requests', { username });
    toast(`Friend request sent to ${displayName(request.to)}.`, false);
    emit('friends', { event: 'outgoing' });
  } catch (err) {
    toast(err.message);
  }
}

/** @param {{ user_id: string, username?: string, display_name?: string | null }} user */
export const reportUser = (user) => report('user', user.user_id, `Report ${displayName(user)}`, 'What is wrong?');

on('members', (serverId) => {
  // A member holds a role created since we loaded the roles: load them again (its permissions).
  const members = state.members.get(serverId);
  const roles = state.roles.get(serverId);
  const stale = members && roles && members.some((m) => m.roles.some((n) => !roles.some((r) => r.name === n)));
  if (stale && !isLoadingMembers(serverId) && Date.now() - (reloadedAt.get(serverId) || 0) > 5000) {
    reloadedAt.set(serverId, Date.now()); // at most once in 5 s, whatever the server answers
    loadMembers(serverId, true).catch(() => {});
  }
  renderMembers();
});
on('presence', renderMembers);
on('friends', renderMembers);
on('users', renderMembers);
on('blocks', renderMembers);
on('nav', () => {
  if (state.current?.kind === 'conversation') renderMembers();
});
