// @ts-check
// Small DOM helpers shared by the pages. User text only ever enters the page as text nodes
// (textContent or append of a string), never as HTML. The one exception, rendered markdown, is
// sanitized by DOMPurify in markdown.js and never passes through here.
import { icon } from './icons.js';

/**
 * The element with this id. `type` (HTMLInputElement, HTMLDialogElement, …) says which kind it
 * is, for the type checker and at once in the page: another kind of element there is a mistake.
 * @template {HTMLElement} [T=HTMLElement]
 * @param {string} id
 * @param {{ new (): T, prototype: T }} [type]
 * @returns {T}
 */
export function $(id, type) {
  const node = document.getElementById(id);
  if (node && type && !(node instanceof type)) throw new TypeError(`#${id} is not a ${type.name}`);
  return /** @type {T} */ (node);
}

/**
 * The elements of a view made more than once (a room, its composer), found under its root by
 * their data-part names: findParts(root, {list: 'messages', text: ['composer-text',
 * HTMLTextAreaElement]}) is {list: <[data-part="messages"]>, text: <[data-part="composer-text"]>}.
 * A missing one, or one of another kind than named, is a mistake in the page, said at once.
 * @template {Record<string, string | readonly [string, { new (): HTMLElement }]>} N
 * @param {ParentNode} root
 * @param {N} names
 * @returns {{ [K in keyof N]: N[K] extends readonly [string, { new (): infer T }] ? T : HTMLElement }}
 */
export function findParts(root, names) {
  return /** @type {any} */ (
    Object.fromEntries(
      Object.entries(names).map(([key, spec]) => {
        const [name, type] = typeof spec === 'string' ? [spec, HTMLElement] : spec;
        const node = root.querySelector(`[data-part="${name}"]`);
        if (!(node instanceof type)) throw new Error(`no ${type.name} [data-part="${name}"] under the view's root`);
        return [key, node];
      }),
    )
  );
}

// Props that would bypass the CSP or parse markup are refused outright.
const refused = (key) => key === 'style' || key === 'srcdoc' || /html$/i.test(key);

/**
 * el('button', {class: 'x', text: 'Send', onclick: fn, 'aria-label': '…'}, ...children).
 * Strings among the children become text nodes; null/false children are skipped.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, any>} [props]
 * @param {...any} children nodes, strings, arrays of them, or null, undefined and false
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (refused(key)) throw new Error(`el(): ${key} is not allowed`);
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key.startsWith('data-') || key.startsWith('aria-') || key === 'role' || key === 'for') node.setAttribute(key, value === true ? '' : String(value));
    else node[key] = value;
  }
  node.append(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/**
 * Rows of one list that can be dragged onto each other: `dragRow(row, item, label, drop)` makes a
 * row draggable, and dropping another row's item on it calls `drop(thatItem)` (the caller moves
 * it to this row's place). Arrow buttons beside the rows do the same from the keyboard.
 */
export function reorderable() {
  let dragged = null;
  return (row, item, label, drop) => {
    row.draggable = true;
    row.addEventListener('dragstart', (e) => {
      dragged = item;
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('text/plain', label);
      row.classList.add('dragging');
    });
    row.addEventListener('dragend', () => {
      dragged = null;
      row.classList.remove('dragging');
    });
    row.addEventListener('dragover', (e) => {
      if (!dragged || dragged === item) return;
      e.preventDefault();
      row.classList.add('drop-target');
    });
    row.addEventListener('dragleave', () => row.classList.remove('drop-target'));
    row.addEventListener('drop', (e) => {
      e.preventDefault();
      row.classList.remove('drop-target');
      if (dragged && dragged !== item) drop(dragged);
    });
  };
}

/**
 * Opens the emoji picker (emoji.js openEmojiPicker) beside `anchor`, loading it on first use:
 * most visits never open it, and the page's first load stays within its weight.
 * @param {Element} anchor
 * @param {(emoji: string | import('./emoji.js').CustomPick) => void} onChoose
 * @param {string | null} [serverId] the server whose custom emoji come first
 */
export const pickEmoji = (anchor, onChoose, serverId = null) => import('./emoji.js').then((picker) => picker.openEmojiPicker(anchor, onChoose, serverId));

/** A button holding an icon, labelled for screen readers (and a tooltip). */
export function iconButton(name, label, onclick, extra = {}) {
  const { class: cls, ...rest } = extra;
  return el('button', { type: 'button', class: `icon-button${cls ? ` ${cls}` : ''}`, 'aria-label': label, title: label, onclick, ...rest }, icon(name));
}

let toastTimer = 0;
/**
 * One toast at a time, in a corner away from the messages. An error stays until dismissed or
 * replaced; a success replaces any earlier error and passes by itself. A `neutral` one (news that
 * is neither: "You no longer have access to #x") is drawn plainly, not in the success colours.
 */
export function toast(text, isError = true, neutral = false) {
  let box = $('toast');
  if (!box) {
    box = el('div', { id: 'toast', class: 'toast', role: 'status', hidden: true });
    document.body.append(box);
  }
  const close = iconButton(
    'x',
    'Dismiss',
    () => {
      box.hidden = true;
    },
    { class: 'toast-close' },
  );
  box.replaceChildren(el('span', { class: 'toast-text', text }), close);
  box.classList.toggle('error', isError);
  box.classList.toggle('neutral', !isError && neutral);
  box.setAttribute('role', isError ? 'alert' : 'status');
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(
    () => {
      box.hidden = true;
    },
    isError ? 12000 : 3500,
  );
}
export const notify = toast;

/** Puts text on the clipboard and says so (or that the browser refused). */
export const copyText = (text) =>
  navigator.clipboard.writeText(text).then(
    () => toast('Copied.', false),
    () => toast('Copying was refused by the browser.'),
  );

/** Shows `text` in a notice paragraph (hidden when text is empty). */
export function showText(id, text) {
  const node = $(id);
  node.textContent = text || '';
  node.hidden = !text;
}

export function formatTime(isoText) {
  const date = new Date(isoText);
  const now = new Date();
  const time = date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (date.toDateString() === now.toDateString()) return time;
  return `${date.toLocaleDateString()} ${time}`;
}

export function formatClock(isoText) {
  return new Date(isoText).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function formatDay(isoText) {
  const date = new Date(isoText);
  const today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (date.toDateString() === today.toDateString()) return 'Today';
  if (date.toDateString() === yesterday.toDateString()) return 'Yesterday';
  return date.toLocaleDateString([], { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' });
}

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export const STANDING_NAMES = ['All good', 'Limited', 'Very limited', 'At risk', 'Suspended'];
/** How a standing reads everywhere in the app: one name per standing, with its number. */
export const standingLabel = (n) => `${STANDING_NAMES[n]} (${n})`;
export const STANDING_HELP = [
  'Nothing is restricted.',
  'You cannot join servers.',
  'You cannot join servers, create group chats or send direct or group messages.',
  'You cannot join servers, create group chats or send any message.',
  'Everything but your account page is closed.',
];

/** 0 → "Off", 30 → "30 s", 120 → "2 min", 3600 → "1 h". */
export function slowmodeLabel(seconds) {
  if (!seconds) return 'Off';
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return seconds % 60 ? `${Math.floor(seconds / 60)} min ${seconds % 60} s` : `${seconds / 60} min`;
  return seconds % 3600 ? `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min` : `${seconds / 3600} h`;
}

/** A count for a badge: 1 … 99, then 99+ (the server caps counts at 100). */
export const badgeText = (n) => (n >= 100 ? '99+' : String(n));

/**
 * The page's one text dialog (#ask-dialog, created on first use): resolves to the text typed,
 * or null when cancelled. With {confirm: true} it only asks yes or no and resolves to '' or null.
 * `more`: a node shown under the field (a link to another way of doing it).
 */
export function ask({ title, label = '', text = '', submit = 'OK', value = '', confirm = false, danger = false, maxLength = 1000, more = null }) {
  let dialog = $('ask-dialog', HTMLDialogElement);
  if (!dialog) {
    dialog = el(
      'dialog',
      { id: 'ask-dialog', 'aria-labelledby': 'ask-title' },
      el(
        'form',
        { method: 'dialog', class: 'dialog-form' },
        el('h2', { id: 'ask-title' }),
        el('p', { id: 'ask-text', class: 'dialog-text' }),
        el('label', { id: 'ask-field' }, el('span', { id: 'ask-label' }), el('input', { id: 'ask-input', autocomplete: 'off' })),
        el('div', { id: 'ask-more' }),
        el(
          'div',
          { class: 'button-row' },
          el('button', { type: 'button', 'data-cancel': true, onclick: () => dialog.close() }, 'Cancel'),
          el('button', { id: 'ask-submit', type: 'submit', value: 'ok', class: 'primary' }, 'OK'),
        ),
      ),
    );
    document.body.append(dialog);
  }
  const input = $('ask-input', HTMLInputElement);
  $('ask-title').textContent = title;
  showText('ask-text', text);
  $('ask-label').textContent = label;
  $('ask-submit').textContent = submit;
  $('ask-submit').classList.toggle('danger-fill', danger);
  $('ask-field').hidden = confirm;
  $('ask-more').replaceChildren(...(more ? [more] : []));
  input.required = !confirm;
  input.maxLength = maxLength;
  input.value = value;
  dialog.returnValue = '';
  dialog.showModal();
  if (confirm) $('ask-submit').focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok' ? (confirm ? '' : input.value) : null), { once: true });
  });
}

/** Asks before something that cannot be undone; resolves true to go ahead. */
export async function confirmAction(title, text, submit = 'Confirm', danger = true) {
  return (await ask({ title, text, submit, confirm: true, danger })) !== null;
}

/**
 * Copies a read-only field's text (an invite link, a webhook's URL): the button says Copied;
 * when the browser refuses, the text stays selected for Ctrl+C.
 * @param {HTMLInputElement} input
 * @param {HTMLElement} button
 * @param {string} what "link", "URL"
 */
export async function copyField(input, button, what) {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    button.textContent = 'Copied';
  } catch {
    toast(`Copying was refused by the browser: the ${what} is selected, copy it with Ctrl+C.`, false);
  }
}

/**
 * A settings form of one text field and its button ("New channel" [name] Create channel), with
 * `more` nodes under it. Submitting calls create(value); once it resolves the field is emptied
 * and done(result, value) runs; a refusal is a toast, and the text stays.
 * @template R
 * @param {{ id: string, label: string, button: string, create: (value: string) => Promise<R>,
 *   done?: (result: R, value: string) => unknown, field?: Record<string, any>, primary?: boolean,
 *   className?: string, more?: Node[] }} options
 */
export function fieldForm({ id, label, button, create, done = () => {}, field = {}, primary = true, className = '', more = [] }) {
  const input = el('input', { id, required: true, autocomplete: 'off', ...field });
  const form = el(
    'form',
    { class: `settings-form${className ? ` ${className}` : ''}` },
    el('label', { for: id, text: label }),
    el('div', { class: 'inline-form' }, input, el('button', { type: 'submit', class: primary ? 'primary' : null }, button)),
    more,
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const value = input.value;
      const result = await create(value);
      input.value = '';
      await done(result, value);
    } catch (err) {
      toast(err.message);
    }
  });
  return form;
}

/** A form's submit button. @param {ParentNode} form @returns {HTMLButtonElement} */
export const submitButton = (form) => form.querySelector('button[type=submit]');

/** Wires the cancel buttons of every <dialog> on the page (forms use method="dialog"). */
export function wireDialogs() {
  for (const button of document.querySelectorAll('dialog [data-cancel]')) {
    button.addEventListener('click', () => button.closest('dialog').close());
  }
}

/** Initials for an avatar circle. */
export const initials = (name) =>
  (name || '?')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 2)
    .toUpperCase() || '?';

/** One of eight avatar colours, picked from the user id (classes, never a style attribute). */
export function avatarClass(id) {
  let h = 0;
  for (const c of String(id)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `avatar tone-${h % 8}`;
}

export function avatar(user, small = false) {
  return el('span', {
    class: `${avatarClass(user.user_id || user.id)}${small ? ' small' : ''}`,
    'aria-hidden': 'true',
    text: initials(user.username || user.name),
  });
}

/** A presence dot with its word for screen readers. */
export function presenceDot(presence) {
  const value = presence || 'offline';
  const words = { online: 'online', idle: 'idle', dnd: 'do not disturb', offline: 'offline' };
  return el('span', { class: `presence ${value}`, role: 'img', 'aria-label': words[value] || value, title: words[value] || value });
}

/** Like showText, and marks the notice as an error or not. */
export function showNotice(id, text, isError = false) {
  showText(id, text);
  $(id).classList.toggle('error', isError);
}

/** Length in Unicode code points, the way the server counts names and passwords. */
export const codePointLength = (text) => [...text].length;
