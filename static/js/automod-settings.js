// @ts-check
// Server settings → AutoMod (issue 53; docs/moderation.md "AutoMod"): the server's rules, listed,
// switched on and off, made and changed by who holds manage_server. One form for every kind of
// rule: its trigger's own fields show for the kind chosen. The server checks everything; what it
// refuses is said as it says it. Loaded when the tab is first opened.
import { api } from './api.js';
import { el, toast, confirmAction } from './ui.js';
import { state } from './store.js';

/** @typedef {import('../../types/client').AutomodRule} Rule */

const KINDS = { keyword: 'Keywords', mention_spam: 'Mention spam', spam: 'Spam', links: 'Links', invite_links: 'Invites to other servers' };
const TIMEOUTS = [
  ['', 'No timeout'],
  ['60', '1 minute'],
  ['600', '10 minutes'],
  ['3600', '1 hour'],
  ['86400', '1 day'],
  ['604800', '1 week'],
];
/** A list typed one per line or separated by commas. */
const listOf = (text) => [
  ...new Set(
    text
      .split(/[\n,]/)
      .map((w) => w.trim())
      .filter(Boolean),
  ),
];

/**
 * The panel: {nodes}.
 * @param {import('../../types/client').ServerEntry} server
 */
export function automodPanel(server) {
  const base = `/api/servers/${server.id}/automod/rules`;
  const list = el('ul', { id: 'automod-rules', class: 'settings-list', 'aria-label': 'AutoMod rules' });
  /** @type {Rule | null} */
  let editing = null;

  const field = (id, label, input) => el('div', { class: 'automod-field', id: `${id}-field` }, el('label', { for: id, text: label }), input);
  const kind = el('select', { id: 'automod-kind' }, ...Object.entries(KINDS).map(([value, text]) => el('option', { value, text })));
  const name = el('input', { id: 'automod-name', required: true, maxLength: 100, autocomplete: 'off' });
  const keywords = el('textarea', {
    id: 'automod-keywords',
    rows: 4,
    placeholder: 'one per line or comma-separated; * at the start or end for part of a word',
  });
  const allow = el('textarea', { id: 'automod-allow', rows: 2 });
  const limit = el('input', { id: 'automod-limit', type: 'number', min: 1, max: 50, value: '5' });
  const block = el('input', { id: 'automod-block', type: 'checkbox', checked: true });
  const reason = el('input', { id: 'automod-reason', maxLength: 150, placeholder: 'shown to the author (optional)' });
  const textChannels = server.channels.filter((c) => c.type === 'text');
  const alert = el(
    'select',
    { id: 'automod-alert' },
    el('option', { value: '', text: 'No alert' }),
    ...textChannels.map((c) => el('option', { value: c.id, text: `#${c.name}` })),
  );
  const timeout = el('select', { id: 'automod-timeout' }, ...TIMEOUTS.map(([value, text]) => el('option', { value, text })));
  const roles = el(
    'select',
    { id: 'automod-roles', multiple: true },
    ...(state.roles.get(server.id) || []).map((r) => el('option', { value: r.id, text: r.name })),
  );
  const channels = el('select', { id: 'automod-channels', multiple: true }, ...textChannels.map((c) => el('option', { value: c.id, text: `#${c.name}` })));
  const submit = el('button', { type: 'submit', class: 'primary' }, 'Add rule');
  const cancel = el('button', { type: 'button', hidden: true, onclick: () => fill(null) }, 'Cancel');
  const shown = () => {
    const k = kind.value;
    for (const [id, on] of [
      ['automod-keywords', k === 'keyword'],
      ['automod-allow', k === 'keyword' || k === 'links'],
      ['automod-limit', k === 'mention_spam'],
    ])
      /** @type {HTMLElement} */ (form.querySelector(`#${id}-field`)).hidden = !on;
    /** @type {HTMLElement} */ (form.querySelector('#automod-allow-field label')).textContent =
      k === 'links' ? 'Allowed domains (their subdomains too)' : 'Allowed words';
  };
  kind.addEventListener('change', shown);
  const form = el(
    'form',
    { class: 'settings-form', id: 'automod-form' },
    field('automod-kind', 'Kind', kind),
    field('automod-name', 'Name', name),
    field('automod-keywords', 'Keywords (up to 1 000)', keywords),
    field('automod-allow', 'Allowed words', allow),
    field('automod-limit', 'Most distinct mentions in one message', limit),
    el('div', { class: 'automod-field' }, el('label', {}, block, ' Block the message'), reason),
    field('automod-alert', 'Send an alert to', alert),
    field('automod-timeout', 'Time the author out', timeout),
    field('automod-roles', 'Roles it does not apply to', roles),
    field('automod-channels', 'Channels it does not apply to', channels),
    el('div', { class: 'inline-form' }, submit, cancel),
  );
  const picked = (select) => [...select.selectedOptions].map((o) => o.value);

  /** @param {Rule | null} rule */
  function fill(rule) {
    editing = rule;
    const t = /** @type {any} */ (rule?.trigger || { type: 'keyword' });
    const acts = rule?.actions || [];
    const act = (type) => /** @type {any} */ (acts.find((a) => a.type === type));
    kind.value = t.type;
    kind.disabled = !!rule;
    name.value = rule?.name || '';
    keywords.value = (t.keyword_filter || []).join('\n');
    allow.value = (t.allow_list || []).join('\n');
    limit.value = String(t.mention_total_limit || 5);
    block.checked = !rule || !!act('block_message');
    reason.value = act('block_message')?.custom_message || '';
    alert.value = act('send_alert_message')?.channel_id || '';
    timeout.value = String(act('timeout')?.duration_seconds || '');
    const choose = (/** @type {HTMLSelectElement} */ select, /** @type {string[]} */ ids) => {
      for (const o of select.options) o.selected = ids.includes(o.value);
    };
    choose(roles, rule?.exempt_role_ids || []);
    choose(channels, rule?.exempt_channel_ids || []);
    submit.textContent = rule ? 'Save rule' : 'Add rule';
    cancel.hidden = !rule;
    shown();
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const k = kind.value;
    const trigger =
      k === 'keyword'
        ? { type: k, keyword_filter: listOf(keywords.value), allow_list: listOf(allow.value) }
        : k === 'links'
          ? { type: k, allow_list: listOf(allow.value) }
          : k === 'mention_spam'
            ? { type: k, mention_total_limit: Number(limit.value) }
            : { type: k };
    const actions = [
      block.checked && { type: 'block_message', custom_message: reason.value.trim() || null },
      alert.value && { type: 'send_alert_message', channel_id: alert.value },
      timeout.value && { type: 'timeout', duration_seconds: Number(timeout.value) },
    ].filter(Boolean);
    const body = { name: name.value, trigger, actions, exempt_role_ids: picked(roles), exempt_channel_ids: picked(channels) };
    try {
      if (editing) await api('PATCH', `${base}/${editing.id}`, body);
      else await api('POST', base, body);
      toast(editing ? 'Rule saved.' : 'Rule added.', false);
      fill(null);
      load();
    } catch (err) {
      toast(err.message);
    }
  });

  /** @param {Rule} rule */
  const row = (rule) => {
    const on = el('input', { type: 'checkbox', checked: rule.enabled, 'aria-label': `${rule.name} is on` });
    on.addEventListener('change', () => api('PATCH', `${base}/${rule.id}`, { enabled: on.checked }).then(load, (err) => toast(err.message)));
    return el(
      'li',
      { class: 'automod-rule', 'data-id': rule.id },
      on,
      el(
        'span',
        { class: 'row-text' },
        el('span', { class: 'row-title', text: rule.name }),
        el('span', { class: 'muted row-sub', text: `${KINDS[rule.trigger.type]} · ${rule.actions.map((a) => a.type.replace(/_/g, ' ')).join(', ')}` }),
      ),
      el(
        'span',
        { class: 'row-actions' },
        el('button', { type: 'button', class: 'small', 'aria-label': `Edit ${rule.name}`, onclick: () => fill(rule) }, 'Edit'),
        el('button', { type: 'button', class: 'small danger', 'aria-label': `Delete ${rule.name}`, onclick: () => remove(rule) }, 'Delete'),
      ),
    );
  };

  async function load() {
    try {
      /** @type {Rule[]} */
      const rules = await api('GET', base);
      list.replaceChildren(...(rules.length ? rules.map(row) : [el('li', { class: 'muted', text: 'No rules yet.' })]));
    } catch (err) {
      toast(err.message);
    }
  }

  /** @param {Rule} rule */
  async function remove(rule) {
    if (!(await confirmAction(`Delete the rule ${rule.name}?`, 'Messages it would catch are let through from now on.', 'Delete rule'))) return;
    try {
      await api('DELETE', `${base}/${rule.id}`);
      if (editing?.id === rule.id) fill(null);
      load();
    } catch (err) {
      toast(err.message);
    }
  }

  fill(null);
  load();
  return {
    nodes: [
      el('h3', { text: 'AutoMod' }),
      el('p', {
        class: 'muted',
        text: 'Rules that look at every message before it is posted. The owner, administrators and who may manage the server are never stopped.',
      }),
      list,
      el('h4', { text: 'Add or edit a rule' }),
      form,
    ],
  };
}
