// @ts-check
// The emoji picker: search, categories and recently used, over Emojibase's compact data set
// served from our own origin (/vendor/emoji.json, the data the server checks shortcodes with).
// Built here because emoji-picker-element injects <style> elements and style attributes,
// which the page CSP (style-src 'self') refuses. The custom emoji of the user's servers come
// first under each server's name (custom-emoji.js); picking one gives {id, name, animated}.
import { el } from './ui.js';
import { openPopup, closePopup } from './popup.js';
import { allCustomEmoji } from './custom-emoji.js';

/**
 * @typedef {{ id: string, name: string, animated: boolean, available: true }} CustomPick
 * @typedef {import('./custom-emoji.js').ServerEmoji} ServerEmoji
 */

const GROUPS = [
  [0, 'Smileys & emotion', '😀'],
  [1, 'People & body', '👋'],
  [3, 'Animals & nature', '🐻'],
  [4, 'Food & drink', '🍔'],
  [5, 'Travel & places', '🚗'],
  [6, 'Activities', '⚽'],
  [7, 'Objects', '💡'],
  [8, 'Symbols', '❤️'],
  [9, 'Flags', '🏁'],
];
const RECENT_KEY = 'chat:recent-emoji';
const COLUMNS = 8;
const DEFAULT_RECENT = ['👍', '❤️', '😂', '🎉', '😮', '😢', '🙏', '👀'];

let data = null; // [{unicode, label, tags, group, order}]
/** @type {ServerEmoji[]} */
let custom = [];
let loading = null;
let panel = null;
let onPick = null;
let activeGroup = -1; // the tab shown as selected; -1: recently used

function loadData() {
  if (!loading) {
    loading = fetch('/vendor/emoji.json', { credentials: 'same-origin' })
      .then((res) => {
        if (!res.ok) throw new Error(`emoji data: ${res.status}`);
        return res.json();
      })
      .then((list) => {
        data = list.filter((e) => e.group !== undefined && e.group !== 2 && e.unicode).sort((a, b) => a.order - b.order);
      })
      .catch((err) => {
        loading = null;
        throw err;
      });
  }
  return loading;
}

export function recentEmoji() {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_KEY) || '[]');
    return Array.isArray(list) && list.length ? list : DEFAULT_RECENT;
  } catch {
    return DEFAULT_RECENT;
  }
}

function remember(emoji) {
  const list = [emoji, ...recentEmoji().filter((e) => e !== emoji)].slice(0, 24);
  localStorage.setItem(RECENT_KEY, JSON.stringify(list));
}

function labelOf(emoji) {
  return data?.find((e) => e.unicode === emoji)?.label || emoji;
}

function emojiButton(emoji, label) {
  return el('button', { type: 'button', class: 'emoji-cell', 'aria-label': label, title: label, 'data-emoji': emoji, tabIndex: -1 }, emoji);
}

/** @param {ServerEmoji} e */
function customButton(e) {
  return el(
    'button',
    { type: 'button', class: 'emoji-cell custom', 'aria-label': `:${e.name}:`, title: `:${e.name}: (${e.serverName})`, 'data-custom': e.id, tabIndex: -1 },
    el('img', { class: 'custom-emoji', src: e.url, alt: `:${e.name}:`, width: 28, height: 28, loading: 'lazy' }),
  );
}

/** Each server's custom emoji under its name. */
function customSections() {
  const byServer = new Map();
  for (const e of custom) byServer.set(e.serverId, [...(byServer.get(e.serverId) || []), e]);
  return [...byServer.values()].map((list) =>
    el(
      'section',
      { class: 'emoji-section', 'data-group': `server-${list[0].serverId}`, 'aria-label': list[0].serverName },
      el('h4', { class: 'emoji-section-title', text: list[0].serverName }),
      el('div', { class: 'emoji-cells' }, list.map(customButton)),
    ),
  );
}

/** One titled run of emoji: "Recently used", a category, or search results. */
function section(id, title, list) {
  return el(
    'section',
    { class: 'emoji-section', 'data-group': String(id), 'aria-label': title },
    el('h4', { class: 'emoji-section-title', text: title }),
    el(
      'div',
      { class: 'emoji-cells' },
      list.map(([emoji, label]) => emojiButton(emoji, label)),
    ),
  );
}

function build() {
  const search = el('input', { type: 'search', class: 'emoji-search', placeholder: 'Search emoji', 'aria-label': 'Search emoji', autocomplete: 'off' });
  const tabs = el(
    'div',
    { class: 'emoji-tabs', role: 'tablist', 'aria-label': 'Emoji categories' },
    el('button', { type: 'button', role: 'tab', class: 'emoji-tab', 'data-group': '-1', 'aria-label': 'Recently used', title: 'Recently used' }, '🕘'),
    GROUPS.map(([id, name, glyph]) =>
      el('button', { type: 'button', role: 'tab', class: 'emoji-tab', 'data-group': String(id), 'aria-label': name, title: name }, glyph),
    ),
  );
  const heading = el('p', { class: 'emoji-heading', 'aria-live': 'polite' });
  const grid = el('div', { class: 'emoji-grid', role: 'group', 'aria-label': 'Emoji' });
  panel = el('div', { id: 'emoji-picker', class: 'popup emoji-panel', role: 'dialog', 'aria-label': 'Pick an emoji' }, search, tabs, heading, grid);

  tabs.addEventListener('click', (e) => {
    /** @type {HTMLElement} */
    const tab = /** @type {Element} */ (e.target).closest('[data-group]');
    if (!tab) return;
    if (search.value) {
      search.value = '';
      render();
    }
    activeGroup = Number(tab.dataset.group);
    markTab();
    grid.querySelector(`.emoji-section[data-group="${activeGroup}"]`)?.scrollIntoView({ block: 'start' });
  });
  search.addEventListener('input', render);
  search.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'Enter') {
      /** @type {HTMLElement} */
      const first = grid.querySelector('.emoji-cell');
      if (!first) return;
      e.preventDefault();
      if (e.key === 'Enter') pickCell(first);
      else first.focus();
    }
  });
  grid.addEventListener('click', (e) => {
    /** @type {HTMLElement} */
    const cell = /** @type {Element} */ (e.target).closest('.emoji-cell');
    if (cell) pickCell(cell);
  });
  grid.addEventListener('keydown', (e) => {
    const cells = [.../** @type {NodeListOf<HTMLElement>} */ (grid.querySelectorAll('.emoji-cell'))];
    const i = cells.indexOf(/** @type {HTMLElement} */ (document.activeElement));
    if (i < 0) return;
    const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: COLUMNS, ArrowUp: -COLUMNS };
    if (e.key in moves) {
      e.preventDefault();
      const next = i + moves[e.key];
      if (next < 0) search.focus();
      else cells[Math.min(next, cells.length - 1)]?.focus();
    }
  });
}

function markTab() {
  const searching = Boolean(panel.querySelector('.emoji-search').value.trim());
  for (const tab of panel.querySelectorAll('.emoji-tab')) {
    tab.setAttribute('aria-selected', String(!searching && Number(tab.dataset.group) === activeGroup));
  }
}

/**
 * Without a search: recently used first, then every category below it in one scrolling grid
 * (as Discord's picker does), the tabs jumping to a category. With one: the matches.
 */
function render() {
  const grid = panel.querySelector('.emoji-grid');
  const heading = panel.querySelector('.emoji-heading');
  const q = panel.querySelector('.emoji-search').value.trim().toLowerCase();
  markTab();
  if (q) {
    const words = q.split(/\s+/);
    const list = (data || [])
      .filter((e) => words.every((w) => e.label.toLowerCase().includes(w) || (e.tags || []).some((t) => t.startsWith(w))))
      .slice(0, 160)
      .map((e) => [e.unicode, e.label]);
    const mine = custom.filter((e) => words.every((w) => e.name.toLowerCase().includes(w)));
    heading.textContent = list.length + mine.length ? `Results for "${q}"` : `No emoji match "${q}"`;
    heading.hidden = false;
    grid.replaceChildren(
      el(
        'div',
        { class: 'emoji-cells' },
        mine.map(customButton),
        list.map(([emoji, label]) => emojiButton(emoji, label)),
      ),
    );
  } else {
    heading.textContent = '';
    heading.hidden = true;
    grid.replaceChildren(
      section(
        -1,
        'Recently used',
        recentEmoji().map((e) => [e, labelOf(e)]),
      ),
      ...customSections(),
      ...(data
        ? GROUPS.map(([id, name]) =>
            section(
              id,
              name,
              data.filter((e) => e.group === id).map((e) => [e.unicode, e.label]),
            ),
          )
        : []),
    );
  }
  const first = grid.querySelector('.emoji-cell');
  if (first) first.tabIndex = 0;
}

/** @param {HTMLElement} cell */
function pickCell(cell) {
  const e = custom.find((x) => x.id === cell.dataset.custom);
  if (e) pick({ id: e.id, name: e.name, animated: e.animated, available: true });
  else pick(cell.dataset.emoji);
}

/** @param {string | CustomPick} emoji */
function pick(emoji) {
  if (typeof emoji === 'string') remember(emoji);
  const fn = onPick;
  closePopup();
  fn?.(emoji);
}

/**
 * Opens the picker beside `anchor`; onChoose(emoji) is called with the one picked: a Unicode
 * emoji, or a custom one as {id, name, animated, available}.
 * @param {Element} anchor
 * @param {(emoji: string | CustomPick) => void} onChoose
 * @param {string | null} [serverId] the server whose emoji come first
 */
export async function openEmojiPicker(anchor, onChoose, serverId = null) {
  if (!panel) build();
  onPick = onChoose;
  activeGroup = -1;
  panel.querySelector('.emoji-search').value = '';
  render();
  openPopup(panel, anchor);
  panel.querySelector('.emoji-search').focus();
  allCustomEmoji(serverId).then((list) => {
    custom = list;
    if (onPick === onChoose) render();
  });
  try {
    await loadData();
    render();
  } catch {
    const heading = panel.querySelector('.emoji-heading');
    heading.textContent = 'The emoji list could not be loaded; recently used ones still work.';
    heading.hidden = false;
  }
}
