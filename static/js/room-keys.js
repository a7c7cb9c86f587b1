// @ts-check
// The message list from the keyboard, as in other chat apps. The list is one tab stop
// (room-focus.js); inside it ↑ ↓ move between messages (day separators and the "new messages"
// divider are passed over), Home and End go to the first and last loaded, Page Up and Page Down
// by several, and ↑ on the first loaded message loads the page before it, as scrolling does.
// On the focused message: E edits it (one's own), R replies, Delete or Backspace deletes it
// (asking first, as its menu does), + adds a reaction, Enter, Shift+F10 or the context-menu key
// opens its menu. ← → step through the message's own buttons and links, which are out of the
// tab order; Escape goes back from them to the message. The list in docs/ui.md, "Keyboard".
import { state, findServer, canManageServer, maySend } from './store.js';
import { setReply } from './room-state.js';
import { CONTROLS, messageItems, focusMessage } from './room-focus.js';
import { loadOlder, loadNewer } from './room-history.js';
import { startEdit } from './room-edit.js';
import { deleteMessage } from './room-menu.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

const PAGE_STEP = 10;

/**
 * Moves by `by` messages from `item` (clamped to the loaded ones); past either end, loads more.
 * @param {Room} room
 * @param {HTMLElement} item
 * @param {number} by
 */
async function move(room, item, by) {
  const r = room.current;
  const id = item.dataset.id;
  const at = messageItems(room).indexOf(item);
  if (at + by < 0 && r.hasOlder)
    await loadOlder(room); // redrawn, the focused message kept (room-focus.js)
  else if (at + by >= messageItems(room).length && r.hasNewer) await loadNewer(room);
  if (!room.parts.messages.contains(document.activeElement)) return; // the reader went elsewhere meanwhile
  const items = messageItems(room);
  const from = items.findIndex((x) => x.dataset.id === id);
  if (from >= 0) focusMessage(items[Math.min(items.length - 1, Math.max(0, from + by))]);
}

/**
 * The message's own controls that can be used now (shown, not disabled).
 * @param {HTMLElement} item
 * @returns {HTMLElement[]}
 */
const controlsOf = (item) =>
  [.../** @type {NodeListOf<HTMLElement>} */ (item.querySelectorAll(CONTROLS))].filter(
    (c) => !(/** @type {HTMLButtonElement} */ (c).disabled) && c.checkVisibility(),
  );

/**
 * ← → inside a message: through its controls, and back to the message past either end.
 * @param {HTMLElement} item
 * @param {HTMLElement} from
 * @param {number} by
 */
function step(item, from, by) {
  const controls = controlsOf(item);
  const at = from === item ? (by > 0 ? -1 : controls.length) : controls.indexOf(from);
  (controls[at + by] || item).focus();
}

/**
 * @param {Opened} r
 * @param {Message} m
 */
function mayDelete(r, m) {
  if (m.author_id === state.me.user_id) return true;
  return r.kind === 'channel' && canManageServer(findServer(r.serverId));
}

/** Clicks the button of a message that `selector` finds, if it has one. */
const press = (/** @type {HTMLElement} */ item, /** @type {string} */ selector) => /** @type {HTMLElement | null} */ (item.querySelector(selector))?.click();

/**
 * A key that acts on the focused message; true when it did something.
 * @param {string} key
 * @param {HTMLElement} item
 * @param {Opened} r
 * @param {Message} m
 */
function act(key, item, r, m) {
  const mine = m.author_id === state.me.user_id;
  const lower = key.toLowerCase();
  // A blocked message is collapsed: Enter shows it, and nothing else is offered until then.
  if (item.matches('.blocked-msg')) {
    if (key !== 'Enter') return false;
    press(item, '.link-button');
    return true;
  }
  if (key === 'Enter' || key === 'ContextMenu' || key === 'F10') press(item, '.more-button');
  else if (lower === 'e' && mine && maySend(r.kind)) startEdit(r, m);
  else if (lower === 'r')
    setReply(r, m); // (the composer takes focus with the reply)
  else if ((key === 'Delete' || key === 'Backspace') && mayDelete(r, m)) deleteMessage(r, m);
  else if (key === '+') press(item, '.react-button');
  // E, R and + are the message's even where they do nothing (another's message, no reactions):
  // they must not start a message in the composer (keyboard.js) instead.
  else return ['e', 'r', '+'].includes(lower);
  return true;
}

/**
 * @param {Room} room
 * @param {KeyboardEvent} e
 */
function onKey(room, e) {
  if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
  const target = /** @type {HTMLElement} */ (e.target);
  // Typing stays typing, and a player keeps its own arrow keys.
  if (target.closest('.edit-form, input, textarea, select, audio, video, [contenteditable]')) return;
  const item = /** @type {HTMLElement} */ (target.closest('li.msg'));
  const r = room.current;
  if (!item || !r) return;
  const onItem = target === item;
  const moves = { ArrowUp: -1, ArrowDown: 1, PageUp: -PAGE_STEP, PageDown: PAGE_STEP };
  if (e.shiftKey && e.key === 'F10') {
    act('F10', item, r, r.byId.get(item.dataset.id) || /** @type {Message} */ ({}));
  } else if (e.key in moves && !e.shiftKey) {
    move(room, item, moves[e.key]);
  } else if ((e.key === 'Home' || e.key === 'End') && !e.shiftKey) {
    focusMessage(e.key === 'Home' ? messageItems(room)[0] : messageItems(room).at(-1));
  } else if ((e.key === 'ArrowLeft' || e.key === 'ArrowRight') && !e.shiftKey) {
    step(item, target, e.key === 'ArrowRight' ? 1 : -1);
  } else if (e.key === 'Escape' && !onItem) {
    item.focus();
  } else {
    // Enter and Backspace belong to a focused button or link; the letters to the message.
    const m = r.byId.get(item.dataset.id);
    if (!m || (!onItem && (e.key === 'Enter' || e.key === ' ')) || !act(e.key, item, r, m)) return;
  }
  e.preventDefault();
}

/**
 * @param {Room} room
 */
export function initMessageKeys(room) {
  room.parts.messages.addEventListener('keydown', (e) => onKey(room, e));
}
