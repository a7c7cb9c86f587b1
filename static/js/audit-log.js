// @ts-check
// Server settings → Audit log (the owner and full server administrators): what was done, by
// whom, to what, why and what changed, newest first, fifty at a time ("Load older entries").
import { api, query } from './api.js';
import { el, toast, formatTime } from './ui.js';
import { icon } from './icons.js';
import { state, findServer, displayName, learnUser } from './store.js';

const PAGE = 50;

const ACTIONS = {
  server_update: 'updated the server',
  owner_transfer: 'handed the server over to',
  channel_create: 'created the channel',
  channel_update: 'changed the channel',
  channel_delete: 'deleted the channel',
  role_create: 'created the role',
  role_update: 'changed the role',
  role_delete: 'deleted the role',
  role_assign: 'gave a role to',
  role_unassign: 'took a role from',
  member_kick: 'kicked',
  member_ban: 'banned',
  member_unban: 'lifted the ban of',
  member_timeout: 'timed out',
  member_timeout_remove: 'ended the timeout of',
  invite_revoke: 'revoked an invite',
  message_delete: 'deleted a message',
  message_pin: 'pinned a message',
  message_unpin: 'unpinned a message',
};
const ICONS = { server: 'gear', user: 'user', channel: 'hash', role: 'shield', invite: 'link', message: 'chat' };
const FIELD_NAMES = {
  name: 'name',
  description: 'description',
  topic: 'topic',
  slowmode_seconds: 'slow mode (s)',
  position: 'position',
  full_server_admin: 'full server administrator',
  role: 'role',
  timeout_until: 'until',
};

/** Users the log names that this tab has never seen: looked up once each. */
const lookups = new Map();
function userName(id) {
  if (state.users.has(id)) return Promise.resolve(displayName({ user_id: id }));
  if (!lookups.has(id)) {
    lookups.set(
      id,
      api('GET', `/api/users/${id}`).then(
        (u) => {
          learnUser(u);
          return displayName(u);
        },
        () => 'a former user',
      ),
    );
  }
  return lookups.get(id);
}

/** The entry's target, named as well as the tab can: a channel or role by its name now or then. */
async function targetName(server, entry) {
  const id = entry.target_id;
  const was = entry.changes?.name;
  const from = typeof was === 'object' && was ? was.to : was;
  switch (entry.target_kind) {
    case 'user':
      return userName(id);
    case 'channel':
      return `#${server.channels.find((c) => c.id === id)?.name || from || 'a deleted channel'}`;
    case 'role':
      return (state.roles.get(server.id) || []).find((r) => r.id === id)?.name || from || 'a deleted role';
    default:
      return '';
  }
}

function valueText(key, value) {
  if (value === null || value === undefined || value === '') return key === 'role' ? 'none' : '(empty)';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (key === 'timeout_until') return formatTime(value);
  return String(value);
}

function changesList(entry) {
  const changes = entry.changes || {};
  const items = [];
  for (const [key, value] of Object.entries(changes)) {
    if (key === 'role_id' || key === 'owner_id') continue;
    if (['channel_create', 'channel_delete', 'role_delete'].includes(entry.action) && key === 'name') continue;
    const label = FIELD_NAMES[key] || key;
    if (value && typeof value === 'object' && 'from' in value) {
      items.push(
        el(
          'li',
          {},
          el('span', { class: 'change-key', text: `${label}: ` }),
          el('del', { text: valueText(key, value.from) }),
          ' → ',
          el('ins', { text: valueText(key, value.to) }),
        ),
      );
    } else {
      items.push(el('li', {}, el('span', { class: 'change-key', text: `${label}: ` }), el('span', { text: valueText(key, value) })));
    }
  }
  return items.length ? el('ul', { class: 'audit-changes' }, items) : null;
}

async function entryRow(server, entry) {
  learnUser(entry.actor);
  const target = await targetName(server, entry);
  return el(
    'li',
    { class: 'audit-entry', 'data-action': entry.action },
    el('span', { class: 'audit-icon', 'aria-hidden': 'true' }, icon(ICONS[entry.target_kind] || 'dots')),
    el(
      'div',
      { class: 'audit-text' },
      el(
        'div',
        { class: 'audit-line' },
        el('strong', { text: displayName(entry.actor), title: `@${entry.actor.username}` }),
        ` ${ACTIONS[entry.action] || entry.action.replace(/_/g, ' ')}`,
        target ? el('strong', { text: ` ${target}` }) : null,
        el('time', { class: 'muted audit-time', dateTime: entry.created_at, text: formatTime(entry.created_at) }),
      ),
      entry.reason ? el('div', { class: 'audit-reason' }, el('span', { class: 'muted', text: 'Reason: ' }), el('span', { text: entry.reason })) : null,
      changesList(entry),
    ),
  );
}

/** Server settings → Audit log. */
export function auditPanel(server) {
  const list = el('ol', { id: 'audit-list', class: 'audit-list' });
  const status = el('p', { class: 'muted empty-note', text: 'Loading…' });
  const more = el('button', { type: 'button', class: 'small', hidden: true }, 'Load older entries');
  let last = null;
  const load = async () => {
    more.disabled = true;
    try {
      const page = await api('GET', `/api/servers/${server.id}/audit-log${query({ before: last, limit: PAGE })}`);
      const s = findServer(server.id) || server;
      list.append(...(await Promise.all(page.map((entry) => entryRow(s, entry)))));
      last = page.at(-1)?.id || last;
      more.hidden = page.length < PAGE;
      status.textContent = 'Nothing has been recorded yet.';
      status.hidden = list.children.length > 0;
    } catch (err) {
      toast(err.message);
      status.textContent = err.message;
    } finally {
      more.disabled = false;
    }
  };
  more.addEventListener('click', load);
  load();
  return [
    el('h3', { text: 'Audit log' }),
    el('p', { class: 'muted', text: 'What the owner and administrators did, newest first, with the reason they gave.' }),
    list,
    status,
    more,
  ];
}
