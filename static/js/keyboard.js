// @ts-check
// Keyboard help for the whole app page, so that typing never goes nowhere:
// - the skip link ("Skip to message composer", the page's first stop, shown only when focused);
// - a printable key pressed in a room while nothing that takes text has focus (and no dialog or
//   menu is open) goes to the composer with its character, as in other chat apps; Ctrl, ⌘ and
//   Alt combinations stay shortcuts;
// - when a dialog or a popup closes and focus fell to <body> (the button that opened it went with
//   a redraw, or was a menu's item), focus goes back to what opened it, else to the composer.
// It works for the page's main room, given to initKeyboard(), and reaches that room's composer
// through the DOM (its text field and the field's "input" event, which keeps the draft, the
// counter and the typing notice), so composer.js needs no hook for it.
import { $, el } from './ui.js';
import { composerField, messageItems } from './room-focus.js';

const TYPING = 'input, textarea, select, [contenteditable=""], [contenteditable="true"]';

// The element focused last outside any dialog or popup: what opened the one now open.
let opener = null;

const nowhere = () => !document.activeElement || document.activeElement === document.body;
const usable = (node) => node?.isConnected && !node.disabled && node.checkVisibility();

/** On a phone a room's composer is on the room's pane: show that pane first. */
function composerNow(room) {
  if (!$('room').hidden) $('app').classList.replace('pane-nav', 'pane-room');
  return composerField(room);
}

function skipToComposer(room, e) {
  e.preventDefault(); // (the address stays the room's own)
  const stop = room.parts.messages.querySelector('li.msg[tabindex="0"]');
  const first = [...$('main').querySelectorAll('button, a[href], input, textarea, select')].find(usable);
  (composerNow(room) || stop || first)?.focus();
}

/** Puts a typed character at the end of the composer's text, as typing there would. */
function typeInto(area, text) {
  if (area.value.length >= area.maxLength) return;
  area.setRangeText(text, area.value.length, area.value.length, 'end');
  area.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
}

function typeToComposer(room, e) {
  // (On window, so that the page's own keys, / for search among them, have had their turn.)
  if (e.defaultPrevented || e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
  if ([...e.key].length !== 1 || e.key === ' ') return; // a space presses the focused button
  if (e.target.closest?.(TYPING) || document.querySelector('dialog[open], :popover-open')) return;
  const area = composerField(room);
  if (!area) return;
  e.preventDefault();
  area.focus();
  typeInto(area, e.key);
}

/** After a dialog or popup closed: focus on what opened it, else the composer, else the list. */
function afterClose(room) {
  setTimeout(() => {
    if (!nowhere() || document.querySelector('dialog[open]')) return;
    const back = usable(opener) ? opener : composerField(room) || messageItems(room).find((item) => item.tabIndex === 0);
    back?.focus();
  });
}

// The keys, as the shortcuts dialog lists them (docs/ui.md "Keyboard" says the same).
const SHORTCUTS = [
  ['Ctrl+K', 'Jump to a channel or conversation'],
  ['Ctrl+F or /', 'Search'],
  ['Ctrl+/', 'This list of keys'],
  ['Tab, Shift+Tab', 'Between the list, the message list (one stop) and the composer'],
  ['↑ ↓, Page Up, Page Down', 'Between messages (↑ at the top loads older ones)'],
  ['Home, End', 'The first or last loaded message'],
  ['Enter, Shift+F10', "The focused message's menu"],
  ['E', 'Edit the focused message (your own)'],
  ['R', 'Reply to the focused message'],
  ['Delete', 'Delete the focused message (asks first)'],
  ['+', 'React to the focused message'],
  ['← →', "The focused message's buttons"],
  ['↑ in an empty composer', 'Edit your last message'],
  ['Escape', 'Close, cancel a reply, back to the message'],
  ['Any letter', 'Starts writing in the composer'],
];

/** A dialog listing the keys (Ctrl+/ or the user panel's menu), so they can be found without the docs. */
export function openShortcuts() {
  let dialog = $('shortcuts-dialog', HTMLDialogElement);
  if (!dialog) {
    dialog = el(
      'dialog',
      { id: 'shortcuts-dialog', 'aria-labelledby': 'shortcuts-title' },
      el(
        'form',
        { method: 'dialog', class: 'dialog-form' },
        el('h2', { id: 'shortcuts-title', text: 'Keyboard shortcuts' }),
        el(
          'table',
          { class: 'shortcuts-table' },
          el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'Keys' }), el('th', { scope: 'col', text: 'What they do' }))),
          el(
            'tbody',
            {},
            SHORTCUTS.map(([keys, does]) => el('tr', {}, el('td', {}, el('kbd', { text: keys })), el('td', { text: does }))),
          ),
        ),
        el('div', { class: 'button-row' }, el('button', { type: 'submit', class: 'primary' }, 'Close')),
      ),
    );
    document.body.append(dialog);
  }
  if (!dialog.open) dialog.showModal();
}

function shortcutKeys(e) {
  if ((e.ctrlKey || e.metaKey) && e.key === '/') {
    e.preventDefault();
    openShortcuts();
  }
}

/** The page's keys, for its main room (app.js). */
export function initKeyboard(room) {
  window.addEventListener('keydown', shortcutKeys);
  $('skip-link').addEventListener('click', (e) => skipToComposer(room, e));
  window.addEventListener('keydown', (e) => typeToComposer(room, e));
  document.addEventListener('focusin', (e) => {
    const target = /** @type {HTMLElement} */ (e.target);
    if (!target.closest('dialog, [popover]')) opener = target;
  });
  // Neither event bubbles; listening in the capture phase hears every dialog and popup.
  document.addEventListener(
    'close',
    (e) => {
      if (e.target instanceof HTMLDialogElement) afterClose(room);
    },
    true,
  );
  document.addEventListener(
    'toggle',
    (e) => {
      if (e.newState === 'closed') afterClose(room);
    },
    true,
  );
}
