// @ts-check
// The composer's "+" (issue 50): send a sticker of one's servers (a member may use them
// everywhere, docs/api.md "Stickers"), or create a poll (question, 2 to 10 answers, how long it
// runs, one answer or several: docs/api.md "Polls"). Loaded when the button is first pressed.
import { el, toast } from './ui.js';
import { openPopup, closePopup, menuKeys, menuItem } from './popup.js';
import { askForm } from './dialogs.js';
import { allStickers } from './custom-emoji.js';

/** @typedef {{ sticker_ids?: string[], poll?: object }} Extra */

const DURATIONS = [
  [1, '1 hour'],
  [4, '4 hours'],
  [8, '8 hours'],
  [24, '24 hours'],
  [72, '3 days'],
  [168, '1 week'],
  [336, '2 weeks'],
];

let menu = null;
let stickerPanel = null;

/**
 * @param {Element} anchor
 * @param {{ serverId: string | null, polls: boolean, send: (body: Extra) => Promise<boolean> }} options
 */
export function openExtrasMenu(anchor, { serverId, polls, send }) {
  if (!menu) {
    menu = el('div', { id: 'composer-extras', class: 'popup menu', role: 'menu', 'aria-label': 'Stickers and polls' });
    menuKeys(menu);
  }
  menu.replaceChildren(
    menuItem('Send a sticker', 'sticker', () => openStickerPicker(anchor, serverId, send)),
    menuItem('Create a poll', 'poll', () => createPoll(send), {
      disabled: !polls,
    }),
  );
  openPopup(menu, anchor);
  /** @type {HTMLElement | null} */ (menu.querySelector('[role="menuitem"]'))?.focus();
}

/**
 * The stickers of the user's servers, the room's server first; one click sends one.
 * @param {Element} anchor
 * @param {string | null} serverId
 * @param {(body: Extra) => Promise<boolean>} send
 */
async function openStickerPicker(anchor, serverId, send) {
  if (!stickerPanel) {
    stickerPanel = el('div', { id: 'sticker-picker', class: 'popup sticker-panel', role: 'dialog', 'aria-label': 'Send a sticker' });
    stickerPanel.addEventListener('click', (e) => {
      /** @type {HTMLElement | null} */
      const cell = /** @type {Element} */ (e.target).closest('[data-sticker]');
      if (!cell) return;
      closePopup();
      send({ sticker_ids: [/** @type {string} */ (cell.dataset.sticker)] });
    });
  }
  stickerPanel.replaceChildren(el('p', { class: 'muted', text: 'Loading stickers…' }));
  openPopup(stickerPanel, anchor);
  const list = await allStickers(serverId);
  if (!list.length) {
    stickerPanel.replaceChildren(el('p', { class: 'muted', text: 'Your servers have no stickers yet: people who manage emoji add them in server settings.' }));
    return;
  }
  const byServer = new Map();
  for (const s of list) byServer.set(s.serverName, [...(byServer.get(s.serverName) || []), s]);
  stickerPanel.replaceChildren(
    ...[...byServer].map(([name, stickers]) =>
      el(
        'section',
        { class: 'sticker-section', 'aria-label': name },
        el('h4', { class: 'emoji-section-title', text: name }),
        el(
          'div',
          { class: 'sticker-cells' },
          stickers.map((s) =>
            el(
              'button',
              { type: 'button', class: 'sticker-cell', 'data-sticker': s.id, 'aria-label': `Send the sticker ${s.name}`, title: s.description || s.name },
              el('img', { src: s.url, alt: '', width: 80, height: 80, loading: 'lazy' }),
            ),
          ),
        ),
      ),
    ),
  );
  /** @type {HTMLElement | null} */ (stickerPanel.querySelector('.sticker-cell'))?.focus();
}

/**
 * The poll form; refused by the server (a field out of its limits), it opens again as filled in.
 * @param {(body: Extra) => Promise<boolean>} send
 */
async function createPoll(send) {
  let values = { question: '', answers: '', duration: '24', multiselect: false };
  for (;;) {
    const got = await askForm({
      title: 'Create a poll',
      submit: 'Send poll',
      fields: [
        { name: 'question', label: 'Question', value: values.question, required: true, maxLength: 300 },
        {
          name: 'answers',
          label: 'Answers',
          type: 'textarea',
          value: values.answers,
          required: true,
          rows: 4,
          maxLength: 700,
          hint: 'One a line: 2 to 10 answers, each at most 55 characters.',
        },
        { name: 'duration', label: 'Runs for', type: 'select', value: values.duration, options: DURATIONS },
        { name: 'multiselect', label: 'Allow several answers', type: 'checkbox', value: values.multiselect },
      ],
    });
    if (!got) return;
    values = /** @type {typeof values} */ (got);
    const answers = values.answers
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    if (answers.length < 2 || answers.length > 10) {
      toast(`A poll has 2 to 10 answers, one a line; this one has ${answers.length}.`);
      continue;
    }
    const poll = {
      question: values.question.trim(),
      answers: answers.map((text) => ({ text })),
      duration_hours: Number(values.duration),
      allow_multiselect: values.multiselect,
    };
    if (await send({ poll })) return;
  }
}
