// The message list as one tab stop (a roving tabindex): the message the reader focused last, or
// else the newest, has tabindex 0; every other message, and the buttons and links inside every
// message, have -1, so Tab passes a list of any length in one press (room-keys.js moves between
// messages and into a message's controls). The list is redrawn from many places (a page loaded,
// an edit, a delete, a name changed, a card that arrives late); rather than each of them minding
// the tab stop, one observer of the list does, and when the focused message went with a redraw
// it gives focus to the same message drawn again or to its neighbour, never to <body>.
import { $ } from './ui.js';
import { currentRoom, findItem } from './room-state.js';

/** What can take focus inside a message (the edit form's field and buttons excepted). */
export const CONTROLS = 'a[href], button, input, select, textarea, audio, video, summary, [tabindex], [contenteditable]';

// Was keyboard focus in the list when it was last anywhere? (Not after the reader clicked or
// tabbed elsewhere: a redraw must not pull focus back from there.)
let inList = false;

export const messageItems = () => [...$('messages').querySelectorAll(':scope > li.msg')];

/** The composer's text field, when it can take focus (a room is open and writing is allowed). */
export function composerField() {
  const area = $('composer-text');
  return area && !area.disabled && !$('room').hidden && area.checkVisibility() ? area : null;
}

/** Focuses a message and brings it into view (only as far as needed). */
export function focusMessage(item) {
  if (!item) return;
  item.focus({ preventScroll: true });
  item.scrollIntoView({ block: 'nearest' });
}

/** Takes a newly drawn message, or a part added to one, out of the tab order. */
function quiet(node) {
  if (node.nodeType !== Node.ELEMENT_NODE || node.closest('.edit-form')) return;
  if (node.matches('li.msg') || node.matches(CONTROLS)) node.tabIndex = -1;
  for (const control of node.querySelectorAll(CONTROLS)) if (!control.closest('.edit-form')) control.tabIndex = -1;
}

/** Exactly one message is the list's tab stop: the one focused last, else the newest. */
function rove() {
  const r = currentRoom();
  const stop = (r?.focused && findItem(r.focused)) || messageItems().at(-1);
  for (const item of $('messages').querySelectorAll(':scope > li.msg[tabindex="0"]')) if (item !== stop) item.tabIndex = -1;
  if (stop) stop.tabIndex = 0;
}

/** The focused message was removed by a redraw: the newer message beside it, else the older one. */
function neighbour(records, id) {
  const gone = records.filter((x) => x.target === $('messages'))
    .flatMap((x) => [...x.removedNodes])
    .filter((node) => node.nodeType === Node.ELEMENT_NODE && node.matches('li.msg'))
    .map((node) => node.dataset.id);
  const at = gone.indexOf(id);
  for (const other of at < 0 ? [] : [...gone.slice(at + 1), ...gone.slice(0, at).reverse()]) {
    const item = findItem(other);
    if (item) return item;
  }
  return messageItems().at(-1);
}

function onListChange(records) {
  for (const record of records) for (const node of record.addedNodes) quiet(node);
  const r = currentRoom();
  const lost = !document.activeElement || document.activeElement === document.body;
  if (r && inList && lost) {
    const again = (r.focused && findItem(r.focused)) || neighbour(records, r.focused);
    if (again) {
      r.focused = again.dataset.id;
      again.focus({ preventScroll: true }); // where the reader was reading stays put
    } else {
      composerField()?.focus(); // the last message went
    }
  }
  rove();
}

export function initListFocus() {
  const list = $('messages');
  new MutationObserver(onListChange).observe(list, { childList: true, subtree: true });
  list.addEventListener('focusin', (e) => {
    inList = true;
    const item = e.target.closest('li.msg');
    const r = currentRoom();
    if (!item || !r || r.focused === item.dataset.id) return;
    r.focused = item.dataset.id;
    rove();
  });
  list.addEventListener('focusout', (e) => {
    if (e.relatedTarget && !list.contains(e.relatedTarget)) inList = false;
  });
  document.addEventListener('pointerdown', (e) => {
    if (!list.contains(e.target)) inList = false;
  }, true);
}
