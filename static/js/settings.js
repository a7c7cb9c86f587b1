// Server settings (a dialog with tabs) and the server menu. What the server offers today:
// channels (create), roles (create, assign), members (roles, remove), invites (create).
// Renaming or deleting a server, channels and roles, invite lists and bans come with later
// server work; the tabs are laid out so they slot in.
import { api } from './api.js';
import { $, el, toast, ask, confirmAction, avatar, formatTime } from './ui.js';
import { icon } from './icons.js';
import { openPopup, closePopup, menuKeys } from './popup.js';
import { state, on, findServer, canManageServer } from './store.js';
import { loadMembers } from './members.js';

let hooks = null; // {leftServer(id), openChannel(serverId, channelId)}
let serverId = null;
let tab = 'overview';

export function initSettings(options) {
  hooks = options;
  $('settings-close').addEventListener('click', () => $('settings-dialog').close());
  $('invite-copy').addEventListener('click', copyInvite);
  on('members', (id) => { if (id === serverId && $('settings-dialog').open) renderPanel(); });
  on('nav', () => { if (serverId && $('settings-dialog').open) renderPanel(); });
}

// ---- the server menu --------------------------------------------------------------------

let menu = null;
export function openServerMenu(server, anchor) {
  if (!menu) {
    menu = el('div', { id: 'server-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Server menu' });
    menuKeys(menu);
  }
  const owner = server.owner_id === state.me.user_id;
  const manage = canManageServer(server);
  const item = (label, iconName, run, danger = false) => el('button', {
    type: 'button', role: 'menuitem', class: `menu-item${danger ? ' danger' : ''}`, onclick: () => { closePopup(); run(); },
  }, icon(iconName), el('span', { text: label }));
  menu.replaceChildren(...[
    item('Invite people', 'user', () => invite(server)),
    item('Server settings', 'gear', () => openSettings(server.id)),
    manage && item('Create channel', 'hash', () => newChannel(server)),
    item('Report server', 'flag', () => reportServer(server), true),
    !owner && item('Leave server', 'door', () => leaveServer(server), true),
  ].filter(Boolean));
  openPopup(menu, anchor);
  menu.querySelector('[role="menuitem"]')?.focus();
}

export async function invite(server) {
  try {
    const created = await api('POST', `/api/servers/${server.id}/invites`);
    $('invite-title').textContent = `Invite people to ${server.name}`;
    $('invite-url').value = created.url;
    $('invite-expires').textContent = `Anyone with the link can join until ${new Date(created.expires_at).toLocaleString()}.`;
    $('invite-copy').textContent = 'Copy';
    $('invite-dialog').showModal();
    $('invite-url').select();
  } catch (err) {
    toast(err.message);
  }
}

async function copyInvite() {
  const input = $('invite-url');
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    $('invite-copy').textContent = 'Copied';
  } catch {
    toast('Copying was refused by the browser: the link is selected, copy it with Ctrl+C.', false);
  }
}

export async function newChannel(server) {
  const name = await ask({ title: `New channel in ${server.name}`, label: 'Channel name', submit: 'Create channel', maxLength: 100 });
  if (name === null) return;
  try {
    const channel = await api('POST', `/api/servers/${server.id}/channels`, { name });
    // channel_created arrives on the stream too; add it now so it can open at once.
    const s = findServer(server.id);
    if (s && !s.channels.some((c) => c.id === channel.id)) s.channels.push({ last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0, ...channel });
    hooks.openChannel(server.id, channel.id);
  } catch (err) {
    toast(err.message);
  }
}

async function reportServer(server) {
  const reason = await ask({ title: `Report ${server.name}`, label: 'What is wrong with this server?', submit: 'Report' });
  if (reason === null) return;
  try {
    await api('POST', '/api/reports', { type: 'server', target: server.id, reason });
    toast('Reported. The administrators will have a look.', false);
  } catch (err) {
    toast(err.message);
  }
}

async function leaveServer(server) {
  if (!(await confirmAction(`Leave ${server.name}?`, 'You will need a new invite to come back.', 'Leave server'))) return;
  try {
    await api('DELETE', `/api/servers/${server.id}/members/${state.me.user_id}`);
    hooks.leftServer(server.id);
  } catch (err) {
    toast(err.message);
  }
}

/** The owner picks a member's role (or none). */
export async function chooseRole(server, member) {
  await loadMembers(server.id);
  const roles = state.roles.get(server.id) || [];
  if (!roles.length) {
    toast('This server has no roles yet: create one in Server settings → Roles.', false);
    return openSettings(server.id, 'roles');
  }
  openSettings(server.id, 'members');
}

// ---- the settings dialog ----------------------------------------------------------------

const TABS = [
  ['overview', 'Overview'],
  ['channels', 'Channels'],
  ['roles', 'Roles'],
  ['members', 'Members'],
  ['invites', 'Invites'],
];

export async function openSettings(id, which = 'overview') {
  serverId = id;
  tab = which;
  const server = findServer(id);
  if (!server) return;
  $('settings-title').textContent = server.name;
  renderTabs();
  renderPanel();
  if (!$('settings-dialog').open) $('settings-dialog').showModal();
  try {
    await loadMembers(id);
  } catch (err) {
    toast(err.message);
  }
}

function renderTabs() {
  $('settings-tabs').replaceChildren(...TABS.map(([key, label]) => el('button', {
    type: 'button', role: 'tab', class: 'settings-tab', id: `settings-tab-${key}`, 'aria-selected': String(key === tab),
    onclick: () => { tab = key; renderTabs(); renderPanel(); },
  }, label)));
}

function renderPanel() {
  const server = findServer(serverId);
  const panel = $('settings-panel');
  if (!server) return panel.replaceChildren(el('p', { text: 'This server is gone.' }));
  const owner = server.owner_id === state.me.user_id;
  const manage = canManageServer(server);
  const members = state.members.get(server.id) || [];
  const roles = state.roles.get(server.id) || [];
  const ownerName = members.find((m) => m.is_owner)?.username || state.users.get(server.owner_id) || '…';
  const views = {
    overview: () => [
      el('h3', { text: 'Overview' }),
      el('dl', { class: 'facts' },
        el('dt', { text: 'Name' }), el('dd', { text: server.name }),
        el('dt', { text: 'Owner' }), el('dd', { text: ownerName }),
        el('dt', { text: 'Created' }), el('dd', { text: formatTime(server.created_at) }),
        el('dt', { text: 'Members' }), el('dd', { text: String(members.length || '…') }),
        el('dt', { text: 'Channels' }), el('dd', { text: String(server.channels.length) })),
      el('p', { class: 'muted', text: 'Renaming or deleting a server is not offered by this server version yet.' }),
    ],
    channels: () => [
      el('h3', { text: 'Channels' }),
      el('ul', { class: 'settings-list' }, server.channels.map((c) => el('li', {}, icon('hash', 'nav-icon'), el('span', { text: c.name })))),
      manage
        ? createForm('New channel name', 'Create channel', async (name) => {
          await api('POST', `/api/servers/${server.id}/channels`, { name });
          toast(`#${name.trim()} created.`, false);
        })
        : el('p', { class: 'muted', text: 'Only the owner and full server administrators create channels.' }),
    ],
    roles: () => [
      el('h3', { text: 'Roles' }),
      el('p', { class: 'muted', text: 'A member holds one role. A role with "full server administrator" may create channels, remove members without that role and delete any message.' }),
      roles.length
        ? el('ul', { class: 'settings-list' }, roles.map((r) => el('li', { class: 'role-row' }, icon('shield', 'nav-icon'), el('span', { class: 'role-name', text: r.name }),
          r.full_server_admin ? el('span', { class: 'role-flag', text: 'full server administrator' }) : el('span', { class: 'muted', text: 'label only' }),
          el('span', { class: 'muted', text: `${members.filter((m) => m.roles.includes(r.name)).length} members` }))))
        : el('p', { class: 'empty-note muted', text: 'No roles yet.' }),
      owner ? roleForm(server) : el('p', { class: 'muted', text: 'Only the owner creates and assigns roles.' }),
    ],
    members: () => [
      el('h3', { text: 'Members' }),
      el('ul', { class: 'settings-list member-roles' }, members.map((m) => el('li', { class: 'role-row' },
        avatar(m, true), el('span', { class: 'role-name', text: m.username }),
        m.is_owner ? el('span', { class: 'role-flag', text: 'owner' }) : null,
        owner
          ? roleSelect(server, m, roles)
          : el('span', { class: 'muted', text: m.role ? `role: ${m.role}` : 'no role' })))),
    ],
    invites: () => [
      el('h3', { text: 'Invites' }),
      el('p', { class: 'muted', text: 'An invite link works for seven days, for any number of people. Listing and revoking invites, and choosing expiry and uses, come with a later server version.' }),
      el('button', { type: 'button', class: 'primary', onclick: () => invite(server) }, 'Create an invite link'),
    ],
  };
  panel.replaceChildren(...views[tab]());
  panel.setAttribute('aria-labelledby', `settings-tab-${tab}`);
}

function createForm(label, submit, run) {
  const input = el('input', { required: true, maxLength: 100, autocomplete: 'off', 'aria-label': label, placeholder: label });
  const form = el('form', { class: 'inline-form settings-form' }, input, el('button', { type: 'submit', class: 'primary' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await run(input.value);
      input.value = '';
    } catch (err) {
      toast(err.message);
    }
  });
  return form;
}

function roleForm(server) {
  const name = el('input', { id: 'role-name', required: true, maxLength: 100, autocomplete: 'off', placeholder: 'Role name' });
  const admin = el('input', { id: 'role-admin', type: 'checkbox' });
  const form = el('form', { class: 'settings-form role-form' },
    el('label', { for: 'role-name', text: 'New role' }),
    el('div', { class: 'inline-form' }, name, el('button', { type: 'submit', class: 'primary' }, 'Create role')),
    el('div', { class: 'check-line' }, admin, el('label', { for: 'role-admin', text: 'Full server administrator' })));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const role = await api('POST', `/api/servers/${server.id}/roles`, { name: name.value, full_server_admin: admin.checked });
      toast(`Role ${role.name} created.`, false);
      await loadMembers(server.id, true);
    } catch (err) {
      toast(err.message);
    }
  });
  return form;
}

function roleSelect(server, member, roles) {
  const select = el('select', { 'aria-label': `Role of ${member.username}`, class: 'role-select' },
    el('option', { value: '', text: 'No role', selected: !member.role }),
    roles.map((r) => el('option', { value: r.name, text: r.name, selected: member.role === r.name })));
  select.addEventListener('change', async () => {
    try {
      await api('PUT', `/api/servers/${server.id}/members/${member.user_id}/role`, { role: select.value || null });
      toast(select.value ? `${member.username} now has the role ${select.value}.` : `${member.username} has no role now.`, false);
      await loadMembers(server.id, true);
    } catch (err) {
      toast(err.message);
    }
  });
  return select;
}
