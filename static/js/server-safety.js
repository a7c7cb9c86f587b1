// @ts-check
// The Safety tab of server settings (manage_server): verification level, two-factor for
// moderators, join-rate protection, and the one-click pauses of invites and joins
// (docs/moderation.md "Verification levels", "Raid protection"). Loaded when first opened.
import { api } from './api.js';
import { el, toast } from './ui.js';
import { findServer, applyServer } from './store.js';

/** @typedef {import('../../types/client').ServerEntry} ServerEntry */

const LEVELS = ['None', 'A verified email', 'Also an account older than 5 minutes', 'Also a member for 10 minutes'];

/** @param {ServerEntry} server @param {Record<string, unknown>} change @param {string} done */
async function save(server, change, done) {
  try {
    applyServer(server.id, await api('PATCH', `/api/servers/${server.id}`, change));
    toast(done, false);
  } catch (err) {
    toast(err.message);
  }
}

/** @param {ServerEntry} server */
export function safetyPanel(server) {
  const s = () => findServer(server.id) || server;
  const level = el('select', { id: 'safety-level' }, ...LEVELS.map((label, i) => el('option', { value: String(i), text: `${i}: ${label}` })));
  const twoFactor = el('input', { id: 'safety-2fa', type: 'checkbox' });
  const threshold = el('input', { id: 'safety-threshold', type: 'number', min: '0', max: '1000' });
  const action = el(
    'select',
    { id: 'safety-action' },
    el('option', { value: 'pause', text: 'Pause new joins and alert' }),
    el('option', { value: 'alert', text: 'Alert moderators only' }),
    el('option', { value: 'screen', text: 'Put newcomers in screening and alert' }),
  );
  const invites = el('button', { type: 'button', id: 'safety-invites', onclick: () => save(s(), { invites_paused: !s().invites_paused }, 'Invites changed.') });
  const joins = el('p', { class: 'notice' });
  const update = () => {
    const now = s();
    level.value = String(now.verification_level);
    twoFactor.checked = now.two_factor_for_moderators;
    threshold.value = String(now.join_rate_threshold);
    action.value = now.join_rate_action;
    invites.textContent = now.invites_paused ? 'Resume invites' : 'Pause invites';
    joins.hidden = !now.joins_paused;
    joins.replaceChildren(
      'New joins are paused (too many joined at once). ',
      el('button', { type: 'button', class: 'small', onclick: () => save(s(), { joins_paused: false }, 'Joins resumed.') }, 'Resume joins'),
    );
  };
  update();
  const form = el(
    'form',
    {
      class: 'settings-form',
      onsubmit: (/** @type {Event} */ e) => {
        e.preventDefault();
        save(
          s(),
          {
            verification_level: Number(level.value),
            two_factor_for_moderators: twoFactor.checked,
            join_rate_threshold: Number(threshold.value) || 0,
            join_rate_action: action.value,
          },
          'Safety settings saved.',
        );
      },
    },
    el('label', { for: 'safety-level', text: 'Verification level: who may post and react' }),
    level,
    el('label', { class: 'check' }, twoFactor, ' Moderators must use two-factor sign-in'),
    el('label', { for: 'safety-threshold', text: 'Joins per minute before protection acts (0: off)' }),
    threshold,
    el('label', { for: 'safety-action', text: 'Then' }),
    action,
    el('button', { type: 'submit', class: 'primary' }, 'Save'),
  );
  return { nodes: [el('h3', { text: 'Safety' }), form, el('h4', { text: 'Invites' }), invites, joins], update };
}
