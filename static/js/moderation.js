// @ts-check
// Moderating a server's members: kick, ban (with a reason), time out (a duration) and end a
// timeout, each with an optional reason for the audit log (the X-Audit-Log-Reason header), and
// the list of bans with Unban. Who may act on whom follows the server's rule: the owner on
// anyone else, a full server administrator on members without an administrator role.
import { api, apiWithReason } from './api.js';
import { el, toast, formatTime } from './ui.js';
import { askForm } from './dialogs.js';
import { state, displayName, learnUser, holdsRole } from './store.js';
import { userAvatar, nameText } from './names.js';
import { loadMembers } from './members-data.js';

export const TIMEOUTS = [
  [60, '60 seconds'],
  [300, '5 minutes'],
  [600, '10 minutes'],
  [3600, '1 hour'],
  [86400, '1 day'],
  [604800, '1 week'],
];
const REASON_MAX = 512;

/** Does this member hold a role with full_server_admin? */
export function holdsAdminRole(serverId, member) {
  const roles = state.roles.get(serverId) || [];
  return roles.some((r) => r.full_server_admin && holdsRole(member, r.id));
}

/** May the caller kick, ban or time out this member? */
export function mayModerate(server, member) {
  if (!server || !member || member.user_id === state.me.user_id || member.is_owner) return false;
  if (server.owner_id === state.me.user_id) return true;
  const mine = (state.members.get(server.id) || []).find((m) => m.user_id === state.me.user_id);
  return holdsAdminRole(server.id, mine) && !holdsAdminRole(server.id, member);
}

/** A member's timeout end, or null when they may write. */
export function timeoutOf(member) {
  return member?.timeout_until && Date.parse(member.timeout_until) > Date.now() ? member.timeout_until : null;
}

const reasonField = { name: 'reason', label: 'Reason (optional, kept in the audit log)', type: 'textarea', rows: 2, maxLength: REASON_MAX };

/**
 * Sends a change to a member (request()), says what it did (said(answer)) and reloads the member
 * list; a refusal is said instead.
 * @template T
 * @param {{ id: string }} server
 * @param {() => Promise<T>} request
 * @param {(answer: T) => string} said
 */
async function changeMember(server, request, said) {
  try {
    const answer = await request();
    toast(said(answer), false);
    await loadMembers(server.id, true);
  } catch (err) {
    toast(err.message);
  }
}

export async function kickMember(server, member) {
  const name = displayName(member);
  const answer = await askForm({
    title: `Kick ${name}?`,
    text: `${name} leaves ${server.name}. They can come back only with a new invite from the owner or an administrator.`,
    submit: 'Kick',
    danger: true,
    fields: [reasonField],
  });
  if (!answer) return;
  await changeMember(
    server,
    () => apiWithReason('DELETE', `/api/servers/${server.id}/members/${member.user_id}`, undefined, answer.reason),
    () => `${name} was kicked.`,
  );
}

export async function banMember(server, member) {
  const name = displayName(member);
  const answer = await askForm({
    title: `Ban ${name}?`,
    text: `${name} is removed from ${server.name} and cannot join again, through any invite, until unbanned (Server settings → Bans).`,
    submit: 'Ban',
    danger: true,
    fields: [{ ...reasonField, label: 'Reason (optional; shown in the ban list and the audit log)' }],
  });
  if (!answer) return;
  const reason = answer.reason.trim();
  // The ban keeps its reason for the ban list; the header gives it to the audit log.
  await changeMember(
    server,
    () => apiWithReason('PUT', `/api/servers/${server.id}/bans/${member.user_id}`, reason ? { reason } : {}, reason),
    () => `${name} was banned.`,
  );
}

export async function timeOutMember(server, member) {
  const name = displayName(member);
  const answer = await askForm({
    title: `Time out ${name}`,
    text: `${name} can still read ${server.name} but cannot send, edit, react or type there until the time is up.`,
    submit: 'Time out',
    danger: true,
    fields: [{ name: 'seconds', label: 'For how long', type: 'select', value: 300, options: TIMEOUTS }, reasonField],
  });
  if (!answer) return;
  await changeMember(
    server,
    () => apiWithReason('PUT', `/api/servers/${server.id}/members/${member.user_id}/timeout`, { seconds: Number(answer.seconds) }, answer.reason),
    (updated) => `${name} is timed out until ${formatTime(updated.timeout_until)}.`,
  );
}

export async function endTimeout(server, member) {
  await changeMember(
    server,
    () => api('DELETE', `/api/servers/${server.id}/members/${member.user_id}/timeout`),
    () => `${displayName(member)} may write again.`,
  );
}

/** Server settings → Bans: who is banned, why, by whom and when, with Unban. */
export function bansPanel(server) {
  const list = el('ul', { id: 'ban-list', class: 'settings-list' });
  const empty = el('p', { class: 'muted empty-note', text: 'Loading…' });
  const load = async () => {
    try {
      const bans = await api('GET', `/api/servers/${server.id}/bans`);
      bans.forEach(learnUser);
      list.replaceChildren(
        ...bans.map((ban) =>
          el(
            'li',
            { class: 'ban-row' },
            userAvatar(ban, true),
            el(
              'span',
              { class: 'row-text' },
              nameText(ban, 'row-title'),
              el('span', {
                class: 'muted row-sub',
                text: `${ban.reason ? `“${ban.reason}” · ` : ''}banned by ${state.users.has(ban.banned_by) ? displayName({ user_id: ban.banned_by }) : 'an administrator'}, ${formatTime(ban.created_at)}`,
              }),
            ),
            el('button', { type: 'button', class: 'small', onclick: () => unban(ban) }, 'Unban'),
          ),
        ),
      );
      empty.textContent = 'Nobody is banned.';
      empty.hidden = bans.length > 0;
    } catch (err) {
      empty.textContent = err.message;
    }
  };
  const unban = async (ban) => {
    try {
      await api('DELETE', `/api/servers/${server.id}/bans/${ban.user_id}`);
      toast(`${displayName(ban)} is no longer banned. They may join again with an invite.`, false);
      await load();
    } catch (err) {
      toast(err.message);
    }
  };
  load();
  return [
    el('h3', { text: 'Bans' }),
    el('p', { class: 'muted', text: 'Banned people cannot join through any invite. Ban someone from their menu in the member list.' }),
    list,
    empty,
  ];
}
