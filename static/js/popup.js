// @ts-check
// Popups (menus, the emoji picker, autocomplete) live in the top layer through the popover API
// and are placed beside the button that opened them with CSS anchor positioning: the button
// gets the class `anchor` for as long as its popup is open. No style is ever set from script.
import { el } from './ui.js';
import { icon } from './icons.js';

let current = null; // {popup, anchor, restoreFocus}

export function openPopup(popup, anchor, { focus = true } = {}) {
  closePopup();
  if (!popup.isConnected) document.body.append(popup);
  if (!popup.hasAttribute('popover')) {
    popup.setAttribute('popover', 'auto');
    // Escape closes it, whatever inside has focus (a search field would otherwise take it).
    popup.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && popup.matches(':popover-open')) {
        e.preventDefault();
        e.stopPropagation();
        popup.hidePopover();
      }
    });
  }
  anchor?.classList.add('anchor');
  current = { popup, anchor, restoreFocus: focus ? document.activeElement : null };
  popup.addEventListener('toggle', onToggle);
  popup.showPopover();
}

function onToggle(e) {
  if (e.newState !== 'closed' || !current || e.target !== current.popup) return;
  const { popup, anchor, restoreFocus } = current;
  current = null;
  popup.removeEventListener('toggle', onToggle);
  anchor?.classList.remove('anchor');
  if (
    restoreFocus &&
    restoreFocus.isConnected &&
    (!document.activeElement || document.activeElement === document.body || popup.contains(document.activeElement))
  )
    restoreFocus.focus();
}

/**
 * The open popup's button was drawn again (a list redrawn under it): `find(old)` gives the new
 * one, which the popup stays beside and gives focus back to.
 */
export function moveAnchor(find) {
  const old = current?.anchor;
  const next = old && !old.isConnected && find(old);
  if (!next) return;
  next.classList.add('anchor');
  current.anchor = next;
  if (current.restoreFocus === old) current.restoreFocus = next;
}

export function closePopup() {
  if (current && current.popup.matches(':popover-open')) current.popup.hidePopover();
}

/**
 * After a redraw that replaced the open popup's button: `find` gives the button that took its
 * place (it becomes the anchor), null when there is none (the popup closes), or undefined when the
 * old button is not one of the caller's (nothing changes). A popup left without its button would
 * lose its place on screen.
 * @param {(old: HTMLElement) => Element | null | undefined} find
 */
export function keepAnchor(find) {
  if (!current?.anchor || current.anchor.isConnected) return;
  const next = find(current.anchor);
  if (next === undefined) return;
  if (!next) return closePopup();
  next.classList.add('anchor');
  current.anchor = next;
}

export function isOpen(popup) {
  return popup.matches(':popover-open');
}

/**
 * One entry of a menu: closes the menu, then runs. options: {danger, disabled, role
 * ('menuitem', or 'menuitemradio' or 'menuitemcheckbox' with checked)}; iconName may be null.
 * @param {string} label
 * @param {string | null} iconName
 * @param {() => void} run
 * @param {{ danger?: boolean, disabled?: boolean, role?: string, checked?: boolean }} [options]
 */
export function menuItem(label, iconName, run, { danger = false, disabled = false, role = 'menuitem', checked } = {}) {
  return el(
    'button',
    {
      type: 'button',
      role,
      class: `menu-item${danger ? ' danger' : ''}`,
      disabled,
      'aria-checked': checked === undefined ? null : String(checked),
      onclick: () => {
        closePopup();
        run();
      },
    },
    iconName ? icon(iconName) : null,
    el('span', { text: label }),
  );
}

/**
 * A menu of actions: arrow keys move, Home and End jump, Escape closes and gives focus back
 * to the button.
 */
export function menuKeys(menu) {
  menu.addEventListener('keydown', (e) => {
    const items = [...menu.querySelectorAll('[role^="menuitem"]:not([disabled])')];
    const i = items.indexOf(document.activeElement);
    if (e.key === 'ArrowDown') items[(i + 1) % items.length]?.focus();
    else if (e.key === 'ArrowUp') items[(i - 1 + items.length) % items.length]?.focus();
    else if (e.key === 'Home') items[0]?.focus();
    else if (e.key === 'End') items.at(-1)?.focus();
    else return;
    e.preventDefault();
  });
}
