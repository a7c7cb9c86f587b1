// @ts-check
// Server settings (a dialog with tabs) and the server menu. Overview: name and description
// (the owner and full server administrators), transfer and delete (the owner). Channels,
// Invites, Bans, Emoji (and stickers), Integrations (webhooks), the Audit log and Imported people have their own modules; Roles (the owner creates, renames,
// flags and deletes them) and Members (the owner picks each member's role) live here.
import { api } from './api.js';
import { $, el, toast, ask, confirmAction, formatTime, reorderable, fieldForm } from './ui.js';
import { icon } from './icons.js';
import { askForm } from './dialogs.js';
import { openPopup, menuKeys, menuItem } from './popup.js';
import { state, on, emit, findServer, canManageServer, mayManageEmojis, holdsServerFlag, displayName, holdsRole, heldRoles, applyServer } from './store.js';
import { userAvatar, nameText, paintRole } from './names.js';
import { loadMembers } from './members-data.js';
import { toggleRole } from './members.js';
import { invitesPanel, invite, initInvites } from './server-invites.js';
import { bansPanel } from './moderation.js';
import { report } from './reports.js';

let hooks = null; // {leftServer(id), openChannel(serverId, channelId)}
let serverId = null;
let tab = 'overview';
let panel = null; // {update?} of the open tab
let permissionsFocus = null; // the channel the Permissions tab opens on
let webhooksFocus = null; // the channel the Integrations tab opens on

export { invite };

export function initSettings(options) {
  hooks = options;
  initInvites();
  $('settings-close').addEventListener('click', () => $('settings-dialog', HTMLDialogElement).close());
  // Lists follow the store; forms being filled in are never redrawn under the typist.
  const refresh = () => {
    if (serverId && $('settings-dialog', HTMLDialogElement).open) panel?.update?.();
  };
  on('members', (id) => {
    if (id === serverId) refresh();
  });
  on('nav', () => {
    if (serverId && $('settings-dialog', HTMLDialogElement).open && !findServer(serverId)) $('settings-dialog', HTMLDialogElement).close();
    refresh();
  });
  on('users', refresh);
  // A channel's "Permissions" button (channel-settings.js).
  on('permissions', (channel) => {
    permissionsFocus = channel.id;
    openSettings(channel.server_id, 'permissions');
  });
  // A channel's "Webhooks" button (channel-settings.js).
  on('webhooks', (channel) => {
    webhooksFocus = channel.id;
    openSettings(channel.server_id, 'integrations');
  });
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
  menu.replaceChildren(
    ...[
      menuItem('Invite people', 'user', () => invite(server)),
      menuItem('Server settings', 'gear', () => openSettings(server.id)),
      menuItem('Roles', 'shield', async () => (await import('./self-roles.js')).openSelfRoles(server)),
      menuItem('Notification settings', 'bell', async () => {
        const places = await import('./place-menu.js');
        places.openNotificationSettings(places.placeOf('server', server.id));
      }),
      manage && menuItem('Create channel', 'hash', () => newChannel(server)),
      !owner && menuItem('Report server', 'flag', () => reportServer(server), { danger: true }),
      !owner && menuItem('Leave server', 'door', () => leaveServer(server), { danger: true }),
    ].filter(Boolean),
  );
  openPopup(menu, anchor);
  menu.querySelector('[role="menuitem"]')?.focus();
}

export async function newChannel(server) {
  // Its kind under the name: text (the default), voice or a forum.
  const type = el(
    'select',
    { id: 'new-channel-type' },
    [
      ['text', 'Text'],
      ['voice', 'Voice'],
      ['forum', 'Forum'],
    ].map(([value, text]) => el('option', { value, text })),
  );
  const more = el('label', { class: 'dialog-more', for: type.id }, 'Type ', type);
  const name = await ask({ title: `New channel in ${server.name}`, label: 'Channel name', submit: 'Create channel', maxLength: 100, more });
  if (name === null) return;
  try {
    const channel = await (await import('./channel-settings.js')).createChannel(server, name, type.value);
    hooks.openChannel(server.id, channel.id);
  } catch (err) {
    toast(err.message);
  }
}

/** @param {{ id: string, name: string }} server */
const reportServer = (server) => report('server', server.id, `Report ${server.name}`, 'What is wrong with this server?');

async function leaveServer(server) {
  if (!(await confirmAction(`Leave ${server.name}?`, 'You will need a new invite to come back.', 'Leave server'))) return;
  try {
    await api('DELETE', `/api/servers/${server.id}/members/${state.me.user_id}`);
    hooks.leftServer(server.id);
  } catch (err) {
    toast(err.message);
  }
}

// ---- the settings dialog ----------------------------------------------------------------

/** The caller's roles in a server, in position order. */
function myRoles(server) {
  const me = (state.members.get(server.id) || []).find((m) => m.user_id === state.me.user_id);
  return (state.roles.get(server.id) || []).filter((r) => holdsRole(me, r.id));
}

function tabsFor(server) {
  const manage = canManageServer(server);
  return [
    ['overview', 'Overview'],
    ['channels', 'Channels'],
    ['roles', 'Roles'],
    ['members', 'Members'],
    ['invites', 'Invites'],
    mayManageEmojis(server) && ['emoji', 'Emoji'],
    holdsServerFlag(server, 'manage_roles') && ['permissions', 'Permissions'],
    holdsServerFlag(server, 'ban_members') && ['bans', 'Bans'],
    holdsServerFlag(server, 'manage_server') && ['automod', 'AutoMod'],
    manage && ['safety', 'Safety'],
    holdsServerFlag(server, 'manage_server') && ['onboarding', 'Onboarding'],
    manage && ['integrations', 'Integrations'],
    holdsServerFlag(server, 'view_audit_log') && ['audit', 'Audit log'],
    manage && ['imported', 'Imported people'],
  ].filter(Boolean);
}

export async function openSettings(id, which = 'overview') {
  serverId = id;
  tab = which;
  const server = findServer(id);
  if (!server) return;
  $('settings-title').textContent = server.name;
  try {
    await loadMembers(id); // who may do what depends on the roles
  } catch (err) {
    toast(err.message);
  }
  renderTabs();
  renderPanel();
  if (!$('settings-dialog', HTMLDialogElement).open) $('settings-dialog', HTMLDialogElement).showModal();
}

function renderTabs() {
  const server = findServer(serverId);
  if (!server) return;
  $('settings-tabs').replaceChildren(
    ...tabsFor(server).map(([key, label]) =>
      el(
        'button',
        {
          type: 'button',
          role: 'tab',
          class: 'settings-tab',
          id: `settings-tab-${key}`,
          'aria-selected': String(key === tab),
          onclick: () => {
            tab = key;
            renderTabs();
            renderPanel();
          },
        },
        label,
      ),
    ),
  );
}

const PANELS = {
  overview: overviewPanel,
  channels: async (server) => (await import('./channel-settings.js')).channelsPanel(server),
  roles: rolesPanel,
  members: membersPanel,
  invites: (server) => ({ nodes: invitesPanel(server) }),
  bans: (server) => ({ nodes: bansPanel(server) }),
  // Loaded when first opened: most visits to the app never read the audit log or change permissions.
  audit: async (server) => ({ nodes: (await import('./audit-log.js')).auditPanel(server) }),
  permissions: async (server) => (await import('./permissions.js')).permissionsPanel(server, permissionsFocus),
  imported: async (server) => (await import('./imported-people.js')).importedPeoplePanel(server),
  integrations: async (server) => (await import('./webhooks.js')).webhooksPanel(server, webhooksFocus),
  emoji: async (server) => (await import('./server-emoji.js')).emojiPanel(server),
  automod: async (server) => (await import('./automod-settings.js')).automodPanel(server),
  safety: async (server) => (await import('./server-safety.js')).safetyPanel(server),
  onboarding: async (server) => (await import('./onboarding.js')).onboardingPanel(server),
};

async function renderPanel() {
  const server = findServer(serverId);
  const box = $('settings-panel');
  if (!server) return box.replaceChildren(el('p', { text: 'This server is gone.' }));
  const shown = tab;
  const made = PANELS[tab](server);
  const ready = made instanceof Promise ? await made.catch(() => ({ nodes: [el('p', { text: 'This part could not load. Reload the page.' })] })) : made;
  // Another tab was chosen while this one loaded: that one is shown instead.
  if (tab !== shown || serverId !== server.id) return;
  panel = ready;
  box.replaceChildren(...panel.nodes.filter(Boolean));
  box.setAttribute('aria-labelledby', `settings-tab-${tab}`);
}

// ---- overview ---------------------------------------------------------------------------

function overviewPanel(server) {
  const owner = server.owner_id === state.me.user_id;
  const manage = canManageServer(server);
  const facts = el('dl', { class: 'facts' });
  const update = () => {
    const s = findServer(server.id) || server;
    const members = state.members.get(server.id) || [];
    const ownerRecord = members.find((m) => m.is_owner) || { user_id: s.owner_id };
    facts.replaceChildren(
      el('dt', { text: 'Owner' }),
      el('dd', { text: displayName(ownerRecord) }),
      el('dt', { text: 'Created' }),
      el('dd', { text: formatTime(s.created_at) }),
      el('dt', { text: 'Members' }),
      el('dd', { text: String(members.length || '…') }),
      el('dt', { text: 'Channels' }),
      el('dd', { text: String(s.channels.length) }),
    );
    $('settings-title').textContent = s.name;
  };
  update();
  /** @type {HTMLElement[]} */
  const nodes = [el('h3', { text: 'Overview' })];
  if (manage) {
    const name = el('input', { id: 'server-name', required: true, maxLength: 100, value: server.name, autocomplete: 'off' });
    const description = el('textarea', {
      id: 'server-description',
      maxLength: 1000,
      rows: 3,
      value: server.description || '',
      placeholder: 'What is this server about?',
    });
    const form = el(
      'form',
      { class: 'settings-form server-form' },
      el('label', { for: 'server-name', text: 'Server name' }),
      name,
      el('label', { for: 'server-description', text: 'Description' }),
      description,
      el('button', { type: 'submit', class: 'primary' }, 'Save changes'),
    );
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        const updated = await api('PATCH', `/api/servers/${server.id}`, { name: name.value, description: description.value });
        applyServer(server.id, updated);
        toast('Server saved.', false);
      } catch (err) {
        toast(err.message);
      }
    });
    nodes.push(form);
  } else if (server.description) {
    nodes.push(el('p', { class: 'server-description', text: server.description }));
  }
  nodes.push(facts);
  if (owner) {
    nodes.push(
      el(
        'section',
        { class: 'danger-zone' },
        el('h4', { text: 'Owner only' }),
        el(
          'div',
          { class: 'danger-row' },
          el(
            'div',
            {},
            el('strong', { text: 'Transfer ownership' }),
            el('p', { class: 'muted', text: "Another member becomes the owner; you stay a member without the owner's rights." }),
          ),
          el('button', { type: 'button', onclick: () => transferOwnership(server) }, 'Transfer…'),
        ),
        exportRow(server),
        el(
          'div',
          { class: 'danger-row' },
          el(
            'div',
            {},
            el('strong', { text: 'Delete server' }),
            el('p', { class: 'muted', text: 'Every channel, message, file, role and invite goes, for everyone. This cannot be undone.' }),
          ),
          el('button', { type: 'button', class: 'danger-fill', onclick: () => deleteServer(server) }, 'Delete server…'),
        ),
      ),
    );
  }
  return { nodes, update };
}

/** Export server (issue 47 #8): the zip the importer reads back, with its progress below the row. */
function exportRow(server) {
  const box = el('div', { id: 'server-export', class: 'server-export', hidden: true });
  const button = el('button', { id: 'server-export-button', type: 'button' }, 'Export server');
  button.addEventListener('click', async () => (await import('./server-export.js')).exportServer(server, box, button));
  return el(
    'div',
    { class: 'danger-row server-export-row' },
    el(
      'div',
      {},
      el('strong', { text: 'Export server' }),
      el('p', {
        class: 'muted',
        text: 'One zip with every channel, message and file, in the format of DiscordChatExporter: an import from Discord reads it back, here or on another server.',
      }),
      box,
    ),
    button,
  );
}

async function transferOwnership(server) {
  await loadMembers(server.id);
  const others = (state.members.get(server.id) || []).filter((m) => m.user_id !== state.me.user_id);
  if (!others.length) return toast('There is nobody else in this server to hand it over to.', false);
  const answer = await askForm({
    title: `Transfer ${server.name}`,
    text: 'The new owner holds every right, including deleting the server. Only they can give it back.',
    submit: 'Transfer ownership',
    danger: true,
    fields: [{ name: 'user', label: 'New owner', type: 'select', options: others.map((m) => [m.user_id, `${displayName(m)} (@${m.username})`]) }],
  });
  if (!answer) return;
  try {
    const updated = await api('PUT', `/api/servers/${server.id}/owner`, { user_id: answer.user });
    applyServer(server.id, updated);
    await loadMembers(server.id, true);
    emit('nav');
    toast(`${displayName({ user_id: answer.user })} owns ${server.name} now.`, false);
    renderTabs();
    renderPanel();
  } catch (err) {
    toast(err.message);
  }
}

async function deleteServer(server) {
  const answer = await askForm({
    title: `Delete ${server.name}?`,
    text: 'Every channel, message, file, role and invite is deleted for everyone. This cannot be undone.',
    submit: 'Delete server',
    danger: true,
    fields: [{ name: 'confirm', label: "Type the server's name to confirm", mustEqual: server.name, required: true, maxLength: 100 }],
  });
  if (!answer) return;
  try {
    await api('DELETE', `/api/servers/${server.id}`);
    $('settings-dialog', HTMLDialogElement).close();
    toast(`${server.name} was deleted.`, false);
    hooks.leftServer(server.id);
  } catch (err) {
    toast(err.message);
  }
}

// ---- roles and members ------------------------------------------------------------------

/**
 * Whether the caller may change a role (docs/moderation.md, the hierarchy): the owner any; with
 * manage_roles (full server administrators hold it), a role below their highest, never an
 * administrators' role unless they own the server. The server decides; this only hides buttons.
 */
function mayChangeRole(server, role) {
  if (server.owner_id === state.me.user_id) return true;
  if (role.full_server_admin) return false;
  if (canManageServer(server)) return true;
  const mine = myRoles(server);
  return holdsServerFlag(server, 'manage_roles') && mine.length > 0 && Math.min(...mine.map((r) => r.position)) < role.position;
}

function rolesPanel(server) {
  const owner = server.owner_id === state.me.user_id;
  const list = el('ul', { class: 'settings-list' });
  const empty = el('p', { class: 'empty-note muted', text: 'No roles yet.' });
  const dragRow = reorderable();
  const update = () => {
    const roles = state.roles.get(server.id) || [];
    const members = state.members.get(server.id) || [];
    list.replaceChildren(
      ...roles.map((r, i) =>
        withDrag(
          el(
            'li',
            { class: 'role-row' },
            owner ? el('span', { class: 'drag-handle', title: 'Drag to reorder' }, icon('grip')) : null,
            icon('shield', 'nav-icon'),
            roleName(r),
            r.full_server_admin ? el('span', { class: 'role-flag', text: 'full server administrator' }) : el('span', { class: 'muted', text: 'label only' }),
            r.hoist ? el('span', { class: 'tag', text: 'own group' }) : null,
            r.mentionable ? el('span', { class: 'tag', text: `@${r.name}` }) : null,
            r.self_assignable ? el('span', { class: 'tag', text: 'self-assigned' }) : null,
            el('span', { class: 'muted', text: `${members.filter((m) => holdsRole(m, r.id)).length} members` }),
            mayChangeRole(server, r)
              ? el(
                  'span',
                  { class: 'row-actions' },
                  owner
                    ? el(
                        'button',
                        {
                          type: 'button',
                          class: 'small',
                          'aria-label': `Move role ${r.name} up`,
                          disabled: i === 0,
                          onclick: () => moveRole(server, r, i - 1),
                        },
                        '↑',
                      )
                    : null,
                  owner
                    ? el(
                        'button',
                        {
                          type: 'button',
                          class: 'small',
                          'aria-label': `Move role ${r.name} down`,
                          disabled: i === roles.length - 1,
                          onclick: () => moveRole(server, r, i + 1),
                        },
                        '↓',
                      )
                    : null,
                  el('button', { type: 'button', class: 'small', 'aria-label': `Edit role ${r.name}`, onclick: () => editRole(server, r) }, 'Edit'),
                  el(
                    'button',
                    { type: 'button', class: 'small danger', 'aria-label': `Delete role ${r.name}`, onclick: () => deleteRole(server, r) },
                    'Delete',
                  ),
                )
              : null,
          ),
          r,
          i,
        ),
      ),
    );
    empty.hidden = roles.length > 0;
  };
  // The owner drags a role onto another's place, or uses its arrows.
  function withDrag(row, role, index) {
    if (owner) dragRow(row, role, role.name, (dragged) => moveRole(server, dragged, index));
    return row;
  }
  update();
  return {
    nodes: [
      el('h3', { text: 'Roles' }),
      el('p', {
        class: 'muted',
        text: 'A member may hold several roles; the first one with a colour colours their name, and the order (drag a role, or use its arrows) decides which is first. A role with "full server administrator" may do everything but create and assign roles; the moderator flags (delete and pin messages, time out, kick, ban, manage channels, roles, the server, webhooks, read the audit log) each give one power, over members and roles below the holder’s highest role. "Own group" shows its holders together in the member list; a mentionable role is notified by @name, from the owner or an administrator.',
      }),
      list,
      empty,
      owner ? roleForm(server) : el('p', { class: 'muted', text: 'Only the owner creates and assigns roles.' }),
    ],
    update,
  };
}

function roleForm(server) {
  const admin = el('input', { id: 'role-admin', type: 'checkbox' });
  const hoist = el('input', { id: 'role-hoist', type: 'checkbox' });
  return fieldForm({
    id: 'role-name',
    label: 'New role',
    button: 'Create role',
    className: 'role-form',
    field: { maxLength: 100, placeholder: 'Role name' },
    more: [
      el('div', { class: 'check-line' }, admin, el('label', { for: 'role-admin', text: 'Full server administrator' })),
      el('div', { class: 'check-line' }, hoist, el('label', { for: 'role-hoist', text: 'Show its members as a group of their own' })),
    ],
    create: (name) => api('POST', `/api/servers/${server.id}/roles`, { name, full_server_admin: admin.checked, hoist: hoist.checked }),
    done: (role) => {
      toast(`Role ${role.name} created.`, false);
      admin.checked = false;
      hoist.checked = false;
      return loadMembers(server.id, true);
    },
  });
}

/** A role's name in its colour (with the contrast floor of names.js). */
const roleName = (role) => paintRole(el('span', { class: 'role-name', text: role.name }), role.color);

const hexColor = (n) => `#${n.toString(16).padStart(6, '0')}`;

async function moveRole(server, role, position) {
  try {
    await api('PATCH', `/api/servers/${server.id}/roles/${role.id}`, { position });
    await loadMembers(server.id, true);
  } catch (err) {
    toast(err.message);
  }
}

async function editRole(server, role) {
  const { FLAGS } = await import('./permissions.js');
  const owner = server.owner_id === state.me.user_id;
  const answer = await askForm({
    title: `Edit the role ${role.name}`,
    submit: 'Save',
    fields: [
      { name: 'name', label: 'Role name', value: role.name, required: true, maxLength: 100 },
      { name: 'color', label: 'Colour', type: 'color', value: role.color === null || role.color === undefined ? '' : hexColor(role.color) },
      // Only the owner turns the switch (docs/moderation.md): moderators with manage_roles do not see it.
      ...(owner ? [{ name: 'admin', label: 'Full server administrator', type: 'checkbox', value: role.full_server_admin }] : []),
      { name: 'hoist', label: 'Show its members as a group of their own', type: 'checkbox', value: role.hoist },
      { name: 'mentionable', label: 'Mentionable with @name', type: 'checkbox', value: role.mentionable },
      { name: 'self', label: 'Members take it themselves (Roles page; never with a power)', type: 'checkbox', value: role.self_assignable },
      ...FLAGS.map(([flag, label], i) => ({
        name: flag,
        label,
        type: 'checkbox',
        value: (role.permissions || []).includes(flag),
        note: i === 0 ? 'In every channel, beside what everyone may do (channels may still say otherwise):' : undefined,
      })),
    ],
  });
  if (!answer) return;
  const colour = answer.color;
  try {
    await api('PATCH', `/api/servers/${server.id}/roles/${role.id}`, {
      name: answer.name,
      ...(owner ? { full_server_admin: answer.admin } : {}),
      hoist: answer.hoist,
      mentionable: answer.mentionable,
      self_assignable: answer.self,
      permissions: FLAGS.map(([flag]) => flag).filter((flag) => answer[flag]),
      color: colour ? parseInt(colour.replace('#', ''), 16) : null,
    });
    toast('Role saved.', false);
    await loadMembers(server.id, true);
  } catch (err) {
    toast(err.message);
  }
}

async function deleteRole(server, role) {
  const holders = (state.members.get(server.id) || []).filter((m) => holdsRole(m, role.id)).length;
  if (
    !(await confirmAction(
      `Delete the role ${role.name}?`,
      holders ? `${holders} member${holders === 1 ? '' : 's'} will lose it, and what it allowed.` : 'Nobody holds it.',
      'Delete role',
    ))
  )
    return;
  try {
    await api('DELETE', `/api/servers/${server.id}/roles/${role.id}`);
    toast(`Role ${role.name} deleted.`, false);
    await loadMembers(server.id, true);
  } catch (err) {
    toast(err.message);
  }
}

function membersPanel(server) {
  const owner = server.owner_id === state.me.user_id;
  const list = el('ul', { class: 'settings-list member-roles' });
  // No role to give yet (issue 47 #10): say so once, and where to make one, not "Holds every role" per member.
  const noRoles = el(
    'p',
    { id: 'members-no-roles', class: 'muted', hidden: true },
    'This server has no roles yet, so there are none to give. Make one under ',
    el('button', { type: 'button', class: 'link-button', onclick: () => openSettings(server.id, 'roles') }, 'Roles'),
    ', then give it to members here.',
  );
  const update = () => {
    const members = state.members.get(server.id) || [];
    const roles = state.roles.get(server.id) || [];
    noRoles.hidden = !owner || roles.length > 0;
    list.replaceChildren(
      ...members.map((m) =>
        el(
          'li',
          { class: 'role-row' },
          userAvatar(m, true),
          nameText(m, 'role-name'),
          m.is_owner ? el('span', { class: 'role-flag', text: 'owner' }) : null,
          m.timeout_until ? el('span', { class: 'tag', text: `timed out until ${formatTime(m.timeout_until)}` }) : null,
          owner ? roleChips(server, m, roles) : el('span', { class: 'muted', text: m.roles.length ? `roles: ${m.roles.join(', ')}` : 'no role' }),
        ),
      ),
    );
  };
  update();
  return {
    nodes: [
      el('h3', { text: 'Members' }),
      el('p', { class: 'muted', text: 'Time out, kick or ban someone from their menu in the member list beside the room.' }),
      noRoles,
      list,
    ],
    update,
  };
}

/** The roles a member holds, each with a button that takes it, and a list to give another. */
function roleChips(server, member, roles) {
  if (roles.length === 0) return el('span', { class: 'muted', text: 'no role' });
  const held = heldRoles(roles, member);
  const others = roles.filter((r) => !held.includes(r));
  const select = el(
    'select',
    { 'aria-label': `Give ${member.username} a role`, class: 'role-select' },
    el('option', { value: '', text: others.length ? 'Add a role…' : 'Holds every role', selected: true }),
    others.map((r) => el('option', { value: r.id, text: r.name })),
  );
  select.disabled = others.length === 0;
  select.addEventListener('change', () => {
    const role = others.find((r) => r.id === select.value);
    if (role) toggleRole(server, member, role);
  });
  return el(
    'span',
    { class: 'role-chips' },
    held.map((r) =>
      el(
        'span',
        { class: 'tag' },
        roleName(r),
        el(
          'button',
          {
            type: 'button',
            class: 'link-button',
            'aria-label': `Take the role ${r.name} from ${member.username}`,
            onclick: () => toggleRole(server, member, r),
          },
          '×',
        ),
      ),
    ),
    select,
  );
}
