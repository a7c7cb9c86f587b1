// @ts-check
// The message list as one tab stop (a roving tabindex): the message the reader focused last, or
// else the newest, has tabindex 0; every other message, and the buttons and links inside every
// message, have -1, so Tab passes a list of any length in one press (room-keys.js moves between
// messages and into a message's controls). The list is redrawn from many places (a page loaded,
// an edit, a delete, a name changed, a card that arrives late); rather than each of them minding
// the tab stop, one observer of the list does, and when the focused message went with a redraw
// it gives focus to the same message drawn again or to its neighbour, never to <body>.
import { findItem } from './room-state.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

/** What can take focus inside a message (the edit form's field and buttons excepted). */
export const CONTROLS = 'a[href], button, input, select, textarea, audio, video, summary, [tabindex], [contenteditable]';

/**
 * @param {Room} room
 * @returns {HTMLElement[]}
 */
export const messageItems = (room) => [.../** @type {NodeListOf<HTMLElement>} */ (room.parts.messages.querySelectorAll(':scope > li.msg'))];

/**
 * The text field of the room's composer (a part of the room's root), when it can take focus: the
 * room is shown and writing is allowed.
 * @param {Room} room
 * @returns {HTMLTextAreaElement | null}
 */
export function composerField(room) {
  const area = /** @type {HTMLTextAreaElement | null} */ (room.root.querySelector('[data-part="composer-text"]'));
  return area && !area.disabled && area.checkVisibility() ? area : null;
}

/**
 * Focuses a message and brings it into view (only as far as needed).
 * @param {HTMLElement | undefined} item
 */
export function focusMessage(item) {
  if (!item) return;
  item.focus({ preventScroll: true });
  item.scrollIntoView({ block: 'nearest' });
}

/**
 * Takes a newly drawn message, or a part added to one, out of the tab order.
 * @param {Node} added
 */
function quiet(added) {
  if (added.nodeType !== Node.ELEMENT_NODE) return;
  const node = /** @type {HTMLElement} */ (added);
  if (node.closest('.edit-form')) return;
  if (node.matches('li.msg') || node.matches(CONTROLS)) node.tabIndex = -1;
  for (const control of /** @type {NodeListOf<HTMLElement>} */ (node.querySelectorAll(CONTROLS))) if (!control.closest('.edit-form')) control.tabIndex = -1;
}

/**
 * Exactly one message is the list's tab stop: the one focused last, else the newest.
 * @param {Room} room
 */
function rove(room) {
  const r = room.current;
  const stop = (r?.focused && findItem(room, r.focused)) || messageItems(room).at(-1);
  for (const item of /** @type {NodeListOf<HTMLElement>} */ (room.parts.messages.querySelectorAll(':scope > li.msg[tabindex="0"]')))
    if (item !== stop) item.tabIndex = -1;
  if (stop) stop.tabIndex = 0;
}

/**
 * The focused message was removed by a redraw: the newer message beside it, else the older one.
 * @param {Room} room
 * @param {MutationRecord[]} records
 * @param {string} id
 * @returns {HTMLElement | undefined}
 */
function neighbour(room, records, id) {
  const gone = records
    .filter((x) => x.target === room.parts.messages)
    .flatMap((x) => [...x.removedNodes])
    .filter((node) => node.nodeType === Node.ELEMENT_NODE && /** @type {HTMLElement} */ (node).matches('li.msg'))
    .map((node) => /** @type {HTMLElement} */ (node).dataset.id);
  const at = gone.indexOf(id);
  for (const other of at < 0 ? [] : [...gone.slice(at + 1), ...gone.slice(0, at).reverse()]) {
    const item = findItem(room, other);
    if (item) return item;
  }
  return messageItems(room).at(-1);
}

/**
 * Minds the list's tab stop and keeps focus through redraws; returns what stops it.
 * @param {Room} room
 * @returns {() => void}
 */
export function initListFocus(room) {
  const list = room.parts.messages;
  // Was keyboard focus in the list when it was last anywhere? (Not after the reader clicked or
  // tabbed elsewhere: a redraw must not pull focus back from there.)
  let inList = false;
  const onListChange = (records) => {
    for (const record of records) for (const node of record.addedNodes) quiet(node);
    const r = room.current;
    const lost = !document.activeElement || document.activeElement === document.body;
    if (r && inList && lost) {
      const again = (r.focused && findItem(room, r.focused)) || neighbour(room, records, r.focused);
      if (again) {
        r.focused = again.dataset.id;
        again.focus({ preventScroll: true }); // where the reader was reading stays put
      } else {
        composerField(room)?.focus(); // the last message went
      }
    }
    rove(room);
  };
  const observer = new MutationObserver(onListChange);
  observer.observe(list, { childList: true, subtree: true });
  list.addEventListener('focusin', (e) => {
    inList = true;
    const item = /** @type {HTMLElement} */ (/** @type {Element} */ (e.target).closest('li.msg'));
    const r = room.current;
    if (!item || !r || r.focused === item.dataset.id) return;
    r.focused = item.dataset.id;
    rove(room);
  });
  list.addEventListener('focusout', (e) => {
    if (e.relatedTarget && !list.contains(/** @type {Node} */ (e.relatedTarget))) inList = false;
  });
  const away = (/** @type {Event} */ e) => {
    if (!list.contains(/** @type {Node} */ (e.target))) inList = false;
  };
  document.addEventListener('pointerdown', away, true);
  return () => {
    observer.disconnect();
    document.removeEventListener('pointerdown', away, true);
  };
}
