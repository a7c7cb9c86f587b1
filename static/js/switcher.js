// @ts-check
// Ctrl+K (⌘K): a quick switcher to any channel or conversation. The same dialog, titled, is the
// "Share to…" picker of what another app shares to the installed app (share.js).
import { $, el } from './ui.js';
import { icon } from './icons.js';
import { state, conversationTitle } from './store.js';

/** @typedef {import('../../types/client').Place} Place */

/** @type {(place: Place) => void} */
let go = () => {};
/** Where the chosen place goes: `go` (the quick switcher), or what asked (the share picker). */
let picked = go;
let matches = [];
let index = 0;

export function initSwitcher(onSelect) {
  go = onSelect;
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 'k') {
      e.preventDefault();
      openSwitcher();
    }
  });
  $('switcher-button').addEventListener('click', () => openSwitcher());
  const input = $('switcher-input');
  input.addEventListener('input', () => {
    index = 0;
    render();
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (matches.length) index = (index + (e.key === 'ArrowDown' ? 1 : -1) + matches.length) % matches.length;
      render();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      pick(index);
    }
  });
  $('switcher').addEventListener('click', (e) => {
    if (e.target === $('switcher')) $('switcher', HTMLDialogElement).close();
  });
}

function entries() {
  const list = [];
  for (const c of state.conversations) {
    list.push({
      label: c.kind === 'dm' ? `@ ${conversationTitle(c)}` : conversationTitle(c),
      sub: c.kind === 'dm' ? 'Direct message' : 'Group',
      unread: c.unread_count,
      icon: c.kind === 'dm' ? 'user' : 'users',
      place: { kind: 'conversation', id: c.id },
    });
  }
  for (const s of state.servers) {
    for (const ch of s.channels)
      list.push({ label: ch.name, sub: s.name, unread: ch.unread_count, icon: 'hash', place: { kind: 'channel', serverId: s.id, channelId: ch.id } });
  }
  return list;
}

/**
 * Opens the switcher; with a title, a picker of a place for something else (the place goes to
 * onPick instead of opening).
 * @param {{ title?: string, onPick?: (place: Place) => void }} [options]
 */
export function openSwitcher({ title = '', onPick = go } = {}) {
  if (!state.ready) return;
  picked = onPick;
  const dialog = $('switcher', HTMLDialogElement);
  $('switcher-title').textContent = title;
  $('switcher-title').hidden = !title;
  dialog.setAttribute('aria-label', title || 'Quick switcher');
  $('switcher-input').setAttribute('placeholder', title ? 'Which channel or conversation? Type to find one' : 'Where to? Type a channel, server or person');
  $('switcher-input', HTMLInputElement).value = '';
  index = 0;
  render();
  dialog.showModal();
  $('switcher-input').focus();
}

function render() {
  const q = $('switcher-input', HTMLInputElement).value.trim().toLowerCase();
  const all = entries();
  matches = (q ? all.filter((e) => `${e.label} ${e.sub}`.toLowerCase().includes(q)) : all.sort((a, b) => Number(b.unread > 0) - Number(a.unread > 0))).slice(
    0,
    12,
  );
  $('switcher-list').replaceChildren(
    ...matches.map((m, i) =>
      el(
        'li',
        {
          role: 'option',
          id: `switch-${i}`,
          class: `switch-item${m.unread ? ' unread' : ''}`,
          'aria-selected': String(i === index),
          onclick: () => pick(i),
        },
        icon(m.icon, 'nav-icon'),
        el('span', { class: 'switch-label', text: m.label }),
        el('span', { class: 'muted switch-sub', text: m.sub }),
      ),
    ),
  );
  if (!matches.length) $('switcher-list').append(el('li', { class: 'muted switch-none', text: 'Nothing matches.' }));
  $('switcher-input').setAttribute('aria-activedescendant', matches.length ? `switch-${index}` : '');
  $(`switch-${index}`)?.scrollIntoView({ block: 'nearest' });
}

function pick(i) {
  const m = matches[i];
  if (!m) return;
  $('switcher', HTMLDialogElement).close();
  picked(m.place);
}
