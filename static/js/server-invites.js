// @ts-check
// Invites to a server: the quick "Invite people" link (seven days, any number of uses), and
// Server settings → Invites: create one limited in uses and time, list the live ones with
// their uses and expiry (all of them for the owner and administrators, one's own for a
// member), copy and revoke.
import { api } from './api.js';
import { $, el, toast, confirmAction, formatTime, copyField } from './ui.js';
import { canManageServer, displayName, learnUser } from './store.js';

const MAX_USES = [
  ['', 'No limit'],
  [1, '1 use'],
  [5, '5 uses'],
  [10, '10 uses'],
  [25, '25 uses'],
  [50, '50 uses'],
  [100, '100 uses'],
];
const EXPIRY = [
  [1800, '30 minutes'],
  [3600, '1 hour'],
  [21600, '6 hours'],
  [43200, '12 hours'],
  [86400, '1 day'],
  [604800, '7 days'],
];

export function initInvites() {
  $('invite-copy').addEventListener('click', () => copyField($('invite-url', HTMLInputElement), $('invite-copy'), 'link'));
}

/** The server menu's "Invite people": a fresh link, valid seven days, for anyone. */
export async function invite(server) {
  try {
    const created = await api('POST', `/api/servers/${server.id}/invites`);
    $('invite-title').textContent = `Invite people to ${server.name}`;
    $('invite-url', HTMLInputElement).value = created.url;
    $('invite-expires').textContent = `Anyone with the link can join until ${new Date(created.expires_at).toLocaleString()}.`;
    $('invite-copy').textContent = 'Copy';
    $('invite-dialog', HTMLDialogElement).showModal();
    $('invite-url', HTMLInputElement).select();
  } catch (err) {
    toast(err.message);
  }
}

/** "in 59 min", "in 6 h", "on 12/03/2026 14:00". */
function expiresText(iso) {
  const left = Date.parse(iso) - Date.now();
  if (left < 3600_000) return `expires in ${Math.max(1, Math.round(left / 60_000))} min`;
  if (left < 86_400_000) return `expires in ${Math.round(left / 3600_000)} h`;
  return `expires ${formatTime(iso)}`;
}

/** Server settings → Invites. */
export function invitesPanel(server) {
  const manage = canManageServer(server);
  const list = el('ul', { id: 'invite-list', class: 'settings-list' });
  const empty = el('p', { class: 'muted empty-note', text: 'Loading…' });
  const uses = el(
    'select',
    { id: 'invite-max-uses' },
    MAX_USES.map(([v, label]) => el('option', { value: String(v), text: label })),
  );
  const expiry = el(
    'select',
    { id: 'invite-expiry' },
    EXPIRY.map(([v, label]) => el('option', { value: String(v), text: label, selected: v === 604800 })),
  );
  const form = el(
    'form',
    { class: 'settings-form invite-form' },
    el(
      'div',
      { class: 'field-pair' },
      el('div', {}, el('label', { for: 'invite-max-uses', text: 'Max uses' }), uses),
      el('div', {}, el('label', { for: 'invite-expiry', text: 'Expires after' }), expiry),
    ),
    el('button', { type: 'submit', class: 'primary' }, 'Create invite'),
  );

  const row = (inv) => {
    const link = el('input', { class: 'invite-link', readOnly: true, value: inv.url, 'aria-label': 'Invite link' });
    const copy = el('button', { type: 'button', class: 'small', onclick: () => copyField(link, copy, 'link') }, 'Copy');
    return el(
      'li',
      { class: 'invite-row', 'data-token': inv.token },
      el(
        'span',
        { class: 'row-text' },
        link,
        el('span', {
          class: 'muted row-sub',
          text: [
            `${inv.uses}${inv.max_uses ? ` / ${inv.max_uses}` : ''} ${inv.max_uses === 1 || (!inv.max_uses && inv.uses === 1) ? 'use' : 'uses'}`,
            expiresText(inv.expires_at),
            `by ${displayName(inv.created_by)}`,
          ].join(' · '),
        }),
      ),
      copy,
      el('button', { type: 'button', class: 'small danger', onclick: () => revoke(inv) }, 'Revoke'),
    );
  };
  const load = async () => {
    try {
      const invites = await api('GET', `/api/servers/${server.id}/invites`);
      invites.forEach((inv) => learnUser(inv.created_by));
      list.replaceChildren(...invites.map(row));
      empty.textContent = 'No live invites.';
      empty.hidden = invites.length > 0;
    } catch (err) {
      empty.textContent = err.message;
    }
  };
  const revoke = async (inv) => {
    if (!(await confirmAction('Revoke this invite?', 'The link stops working at once, for everyone who has it.', 'Revoke'))) return;
    try {
      await api('DELETE', `/api/invites/${encodeURIComponent(inv.token)}`);
      toast('Invite revoked.', false);
      await load();
    } catch (err) {
      toast(err.message);
    }
  };
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { expires_in_seconds: Number(expiry.value) };
    if (uses.value) body.max_uses = Number(uses.value);
    try {
      await api('POST', `/api/servers/${server.id}/invites`, body);
      toast('Invite created: copy its link below.', false);
      await load();
    } catch (err) {
      toast(err.message);
    }
  });
  load();
  return [
    el('h3', { text: 'Invites' }),
    el('p', {
      class: 'muted',
      text: manage
        ? 'Every live invite of the server. A used-up, expired or revoked invite stops working.'
        : "Your live invites. The owner and administrators see everyone's.",
    }),
    form,
    list,
    empty,
  ];
}
