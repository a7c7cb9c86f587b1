// @ts-check
// Membership screening (issue 53; docs/moderation.md "Membership screening and onboarding"): the
// Server settings → Onboarding tab (manage_server) edits the rules, the questions whose answers
// give roles and point at channels, and the switch; a pending member opening the server reads the
// rules, answers and accepts in a dialog. Loaded when first needed (most visits need neither).
import { api } from './api.js';
import { el, toast } from './ui.js';
import { state, on, findChannel } from './store.js';

/**
 * @typedef {import('../../types/client').Onboarding} Onboarding
 * @typedef {import('../../types/client').ServerEntry} ServerEntry
 */

/** The moderators' flags (src/rules/channel-permissions.ts MODERATOR_FLAGS). */
const POWERS = /^(manage_(messages|channels|roles|server|webhooks)|(moderate|kick|ban)_members|view_audit_log)$/;
let n = 0;
const uid = (prefix) => `${prefix}-${++n}`;
/** A labelled field: [label, input]. */
const field = (text, input) => [el('label', { for: input.id, text }), input];
const check = (text, checked, className) => {
  const input = el('input', { type: 'checkbox', id: uid('ob'), checked, class: className });
  return el('label', { for: input.id, class: 'check' }, input, ` ${text}`);
};
const multi = (options, chosen, className, label) =>
  el(
    'select',
    { multiple: true, class: className, 'aria-label': label, id: uid('ob') },
    options.map(([value, text]) => el('option', { value, text, selected: chosen.includes(value) })),
  );
const picked = (select) => [...select.selectedOptions].map((o) => o.value);

/**
 * The settings tab: {nodes}.
 * @param {ServerEntry} server
 */
export async function onboardingPanel(server) {
  const base = `/api/servers/${server.id}/onboarding`;
  /** @type {Onboarding} */
  const current = await api('GET', base);
  // An answer never gives a role with powers (the server refuses it): those are not offered.
  const roles = (state.roles.get(server.id) || []).filter((r) => !r.full_server_admin && !r.permissions.some((p) => POWERS.test(p))).map((r) => [r.id, r.name]);
  const channels = server.channels.filter((c) => c.type !== 'voice').map((c) => [c.id, `#${c.name}`]);

  const enabled = el('input', { type: 'checkbox', id: 'onboarding-enabled', checked: current.enabled });
  const rules = el('textarea', { id: 'onboarding-rules', rows: 5, value: current.rules.join('\n') });
  const defaults = multi(channels, current.default_channel_ids, 'onboarding-defaults', 'Channels everyone is shown first');
  const questions = el('div', { id: 'onboarding-questions' });

  const answerRow = (a = { title: '', role_ids: [], channel_ids: [] }) => {
    const title = el('input', { class: 'onboarding-answer-title', value: a.title, maxLength: 100, 'aria-label': 'Answer', id: uid('ob') });
    const row = el(
      'li',
      { class: 'onboarding-answer' },
      title,
      multi(roles, a.role_ids, 'onboarding-answer-roles', 'Roles this answer gives'),
      multi(channels, a.channel_ids, 'onboarding-answer-channels', 'Channels this answer shows'),
      el('button', { type: 'button', onclick: () => row.remove() }, 'Remove answer'),
    );
    if (a.id) row.dataset.id = a.id;
    return row;
  };
  const questionBox = (q = { title: '', required: false, single_select: false, answers: [] }) => {
    const answers = el('ul', { class: 'onboarding-answers settings-list' }, (q.answers.length ? q.answers : [undefined]).map(answerRow));
    const title = el('input', { class: 'onboarding-question-title', value: q.title, maxLength: 100, id: uid('ob') });
    const box = el(
      'fieldset',
      { class: 'onboarding-question' },
      el('legend', { text: 'Question' }),
      field('Question', title),
      check('Required', q.required, 'onboarding-required'),
      check('One answer only', q.single_select, 'onboarding-single'),
      answers,
      el('button', { type: 'button', onclick: () => answers.append(answerRow()) }, 'Add answer'),
      el('button', { type: 'button', onclick: () => box.remove() }, 'Remove question'),
    );
    if (q.id) box.dataset.id = q.id;
    return box;
  };
  questions.append(...current.questions.map(questionBox));

  const read = () => ({
    enabled: enabled.checked,
    rules: rules.value
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean),
    questions: [...questions.querySelectorAll('.onboarding-question')].map((box) => ({
      ...(box instanceof HTMLElement && box.dataset.id ? { id: box.dataset.id } : {}),
      title: /** @type {HTMLInputElement} */ (box.querySelector('.onboarding-question-title')).value,
      required: /** @type {HTMLInputElement} */ (box.querySelector('.onboarding-required')).checked,
      single_select: /** @type {HTMLInputElement} */ (box.querySelector('.onboarding-single')).checked,
      answers: [...box.querySelectorAll('.onboarding-answer')].map((row) => ({
        ...(row instanceof HTMLElement && row.dataset.id ? { id: row.dataset.id } : {}),
        title: /** @type {HTMLInputElement} */ (row.querySelector('.onboarding-answer-title')).value,
        role_ids: picked(/** @type {HTMLSelectElement} */ (row.querySelector('.onboarding-answer-roles'))),
        channel_ids: picked(/** @type {HTMLSelectElement} */ (row.querySelector('.onboarding-answer-channels'))),
      })),
    })),
    default_channel_ids: picked(defaults),
  });
  const form = el(
    'form',
    { class: 'settings-form', id: 'onboarding-form' },
    el('p', { class: 'muted', text: 'Who joins while screening is on reads the server but cannot write or react until they accept its rules.' }),
    el('label', { for: enabled.id, class: 'check' }, enabled, ' Screening on'),
    field('Rules, one a line (at most 20)', rules),
    questions,
    el('button', { type: 'button', id: 'onboarding-add-question', onclick: () => questions.append(questionBox()) }, 'Add question'),
    field('Channels everyone is shown first', defaults),
    el('button', { type: 'submit', class: 'primary' }, 'Save onboarding'),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await api('PUT', base, read());
      toast('Onboarding saved.', false);
    } catch (err) {
      toast(err.message);
    }
  });
  return { nodes: [form] };
}

/**
 * A pending member's view of the server: its rules, a box to accept them and the questions;
 * accepted, the answers' roles come (their channels arrive as events) and `open` goes to the first
 * channel shown.
 * @param {ServerEntry} server
 * @param {(channelId: string) => void} open
 */
export async function showOnboarding(server, open) {
  if (document.getElementById('onboarding-dialog')) return;
  try {
    /** @type {Onboarding} */
    const ob = await api('GET', `/api/servers/${server.id}/onboarding`);
    if (!ob.pending || document.getElementById('onboarding-dialog')) return;
    const agree = el('input', { type: 'checkbox', id: 'onboarding-agree', required: true });
    const dialog = el(
      'dialog',
      { id: 'onboarding-dialog', 'aria-labelledby': 'onboarding-title' },
      el(
        'form',
        { method: 'dialog', class: 'dialog-form' },
        el('h2', { id: 'onboarding-title', text: `Welcome to ${server.name}` }),
        el('p', { class: 'dialog-text', text: 'Read the rules and accept them to write here.' }),
        el(
          'ol',
          { id: 'onboarding-rule-list' },
          ob.rules.map((r) => el('li', { text: r })),
        ),
        ob.questions.map((q) =>
          el(
            'fieldset',
            { class: 'onboarding-question', 'data-id': q.id },
            el('legend', { text: `${q.title}${q.required ? ' (required)' : ''}` }),
            q.answers.map((a) => {
              const input = el('input', {
                type: q.single_select ? 'radio' : 'checkbox',
                name: `q-${q.id}`,
                value: a.id,
                id: uid('ob'),
                required: q.required && q.single_select,
              });
              return el('label', { for: input.id, class: 'check' }, input, ` ${a.title}`);
            }),
          ),
        ),
        el('label', { for: agree.id, class: 'check' }, agree, ' I have read and accept the rules'),
        el(
          'div',
          { class: 'button-row' },
          el('button', { type: 'button', id: 'onboarding-later', onclick: () => dialog.close() }, 'Later'),
          el('button', { type: 'submit', class: 'primary', id: 'onboarding-accept' }, 'Accept'),
        ),
      ),
    );
    // Read first, accept later: the server opens it again when next chosen.
    dialog.addEventListener('close', () => dialog.remove());
    dialog.querySelector('form')?.addEventListener('submit', async (e) => {
      e.preventDefault();
      /** @type {Record<string, string[]>} */
      const answers = {};
      for (const q of ob.questions)
        answers[q.id] = [...dialog.querySelectorAll(`input[name="q-${CSS.escape(q.id)}"]:checked`)].map((i) => /** @type {HTMLInputElement} */ (i).value);
      try {
        const done = await api('POST', `/api/servers/${server.id}/onboarding/accept`, { answers });
        dialog.close();
        toast('Welcome! You can write here now.', false);
        // The channels the roles open arrive as events, maybe after this answer: open it once listed.
        const target = done.channel_ids[done.channel_ids.length - 1];
        if (!target) return;
        if (findChannel(server.id, target)) return open(target);
        const off = on('nav', () => {
          if (findChannel(server.id, target)) (off(), open(target));
        });
        setTimeout(off, 5000);
      } catch (err) {
        toast(err.message);
      }
    });
    document.body.append(dialog);
    dialog.showModal();
  } catch (err) {
    toast(err.message);
  }
}
