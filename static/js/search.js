// @ts-check
// Message search (GET /api/search): the box in the room header (Ctrl+F, or / when not typing),
// the results panel beside the room with its filters (this server, channel or conversation, or
// everywhere; an author; has a file, image, video, audio or link), the words found marked
// from the server's highlight offsets, and "load more" (next_before). A result opens its room
// around the message.
import { api, query } from './api.js';
import { $, el, toast, formatTime } from './ui.js';
import { icon } from './icons.js';
import { state, on, findServer, findChannel, findConversation, conversationTitle, isBlocked, displayName, learnUser } from './store.js';
import { userAvatar, nameText } from './names.js';

const PAGE = 25;
/** @typedef {import('../../types/client').Place} Place */

/** @type {(place: Place) => void} */
let open = () => {}; // opens a place, as app.js's select()
let search = null; // {q, params, next, shown, revealed}

/**
 * @param {(place: Place) => void} onOpen
 */
export function initSearch(onOpen) {
  open = onOpen;
  $('search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    run();
  });
  $('search-input').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      if ($('search-input', HTMLInputElement).value) $('search-input', HTMLInputElement).value = '';
      else $('search-input').blur();
      closeSearch();
    }
  });
  for (const id of ['search-scope', 'search-author', 'search-has']) $(id).addEventListener('change', run);
  $('search-close').addEventListener('click', closeSearch);
  $('search-back').addEventListener('click', () => $('app').classList.replace('pane-search', 'pane-room'));
  $('search-more').addEventListener('click', more);
  $('search-panel').addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      closeSearch();
      $('search-input').focus();
    }
  });
  // Ctrl+F (⌘F) anywhere, or / when not typing: focus the search box of the open room.
  document.addEventListener('keydown', (e) => {
    if ($('room').hidden || $('search-input').offsetParent === null) return;
    const typing = /** @type {Element} */ (e.target).closest?.('input, textarea, select, [contenteditable=""], [contenteditable="true"]');
    const find = (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f';
    if (find || (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey && !document.querySelector('dialog[open]'))) {
      e.preventDefault();
      $('search-input').focus();
      $('search-input', HTMLInputElement).select();
    }
  });
  on('blocks', () => {
    if (search) render();
  });
  on('users', () => {
    if (search) render();
  });
}

/** The scope choices for the open room; the first is the default. */
function scopes() {
  const cur = state.current;
  if (cur?.kind === 'channel') {
    const server = findServer(cur.serverId);
    const channel = findChannel(cur.serverId, cur.channelId);
    return [
      [`s:${cur.serverId}`, `In ${server?.name || 'this server'}`],
      [`c:${cur.serverId}:${cur.channelId}`, `In #${channel?.name || 'this channel'}`],
      ['all', 'Everywhere'],
    ];
  }
  if (cur?.kind === 'conversation') {
    const c = findConversation(cur.id);
    return [
      [`d:${cur.id}`, `In ${c ? conversationTitle(c) : 'this conversation'}`],
      ['all', 'Everywhere'],
    ];
  }
  return [['all', 'Everywhere']];
}

/** The people of the open room, to search by author. */
function authors() {
  const cur = state.current;
  const people = cur?.kind === 'channel' ? state.members.get(cur.serverId) || [] : cur?.kind === 'conversation' ? findConversation(cur.id)?.members || [] : [];
  return [...people].sort((a, b) => displayName(a).localeCompare(displayName(b)));
}

/** Refills the filters for the room now open (keeping the choices that still apply). */
function fillFilters() {
  const scope = $('search-scope', HTMLSelectElement);
  const previous = scope.value;
  const choices = scopes();
  scope.replaceChildren(...choices.map(([value, label]) => el('option', { value, text: label })));
  scope.value = choices.some(([v]) => v === previous) ? previous : choices[0][0];
  const author = $('search-author', HTMLSelectElement);
  const who = author.value;
  const people = authors();
  author.replaceChildren(
    el('option', { value: '', text: 'From anyone' }),
    ...people.map((p) => el('option', { value: p.user_id, text: `From ${displayName(p)}` })),
  );
  author.value = people.some((p) => p.user_id === who) ? who : '';
}

function params() {
  const [kind, a, b] = $('search-scope', HTMLSelectElement).value.split(':');
  const p = { author_id: $('search-author', HTMLSelectElement).value, has: $('search-has', HTMLSelectElement).value, limit: PAGE };
  if (kind === 's') p.server_id = a;
  if (kind === 'c') Object.assign(p, { server_id: a, channel_id: b });
  if (kind === 'd') p.conversation_id = a;
  return p;
}

export function closeSearch() {
  search = null;
  $('search-panel').hidden = true;
  $('app').classList.remove('searching');
  $('app').classList.replace('pane-search', 'pane-room');
}

/** Called when another room opens: the filters follow it; open results stay until closed. */
export function roomChanged() {
  if (!$('search-panel').hidden) fillFilters();
}

async function run() {
  const q = $('search-input', HTMLInputElement).value.trim();
  if (!q) return closeSearch();
  if ($('search-panel').hidden) {
    fillFilters();
    $('search-panel').hidden = false;
    $('app').classList.add('searching');
  }
  $('app').classList.replace('pane-room', 'pane-search');
  const p = params();
  search = { q, params: p, results: [], next: null, total: 0, revealed: new Set() };
  const mine = search;
  $('search-status').textContent = 'Searching…';
  $('search-results').replaceChildren();
  $('search-more').hidden = true;
  try {
    const page = await api('GET', `/api/search${query({ q, ...p })}`);
    if (search !== mine) return;
    take(page);
  } catch (err) {
    if (search !== mine) return;
    $('search-status').textContent = err.message;
  }
}

async function more() {
  const mine = search;
  if (!mine?.next) return;
  $('search-more', HTMLButtonElement).disabled = true;
  try {
    const page = await api('GET', `/api/search${query({ q: mine.q, ...mine.params, before: mine.next })}`);
    if (search === mine) take(page);
  } catch (err) {
    toast(err.message);
  } finally {
    $('search-more', HTMLButtonElement).disabled = false;
  }
}

function take(page) {
  for (const m of page.results) learnUser(m.author);
  search.results.push(...page.results);
  search.next = page.next_before;
  render();
}

function render() {
  const { results, next } = search;
  const n = results.length;
  $('search-status').textContent = n
    ? `${n}${next ? '+' : ''} result${n === 1 ? '' : 's'}, newest first`
    : 'No messages match. Try other words, or search everywhere.';
  $('search-results').replaceChildren(...results.map(resultItem));
  $('search-more').hidden = !next;
}

/** content with the [start, end) ranges wrapped in <mark>: text nodes only, never markup. */
export function highlighted(content, ranges) {
  const parts = [];
  let at = 0;
  for (const [start, end] of ranges || []) {
    if (start < at || end <= start || end > content.length) continue;
    if (start > at) parts.push(content.slice(at, start));
    parts.push(el('mark', { text: content.slice(start, end) }));
    at = end;
  }
  if (at < content.length) parts.push(content.slice(at));
  return parts;
}

function placeOf(m) {
  if (m.conversation_id) {
    const c = findConversation(m.conversation_id);
    return {
      label: c ? (c.kind === 'dm' ? `@${conversationTitle(c)}` : conversationTitle(c)) : 'a conversation',
      place: { kind: 'conversation', id: m.conversation_id, around: m.id },
    };
  }
  const channel = findChannel(m.server_id, m.channel_id);
  const server = findServer(m.server_id);
  return {
    label: `#${channel?.name || 'channel'}${server ? ` · ${server.name}` : ''}`,
    place: { kind: 'channel', serverId: m.server_id, channelId: m.channel_id, around: m.id },
  };
}

function resultItem(m) {
  const { label, place } = placeOf(m);
  const hidden = isBlocked(m.author_id) && !search.revealed.has(m.id);
  const body = hidden
    ? el(
        'p',
        { class: 'result-text muted' },
        'Blocked message — ',
        el(
          'button',
          {
            type: 'button',
            class: 'link-button',
            onclick: (e) => {
              e.stopPropagation();
              search.revealed.add(m.id);
              render();
            },
          },
          'show',
        ),
      )
    : el(
        'p',
        { class: 'result-text' },
        m.content ? highlighted(m.content, m.highlight) : el('span', { class: 'muted', text: `${(m.attachments || []).length} attachment(s)` }),
      );
  const files =
    (m.attachments || []).length && !hidden
      ? el('p', { class: 'result-files muted' }, icon('paperclip'), ` ${m.attachments.map((a) => a.name).join(', ')}`)
      : null;
  // The whole result opens the message; its Jump button is the way there by keyboard.
  return el(
    'li',
    {
      class: 'search-result',
      'data-id': m.id,
      onclick: (e) => {
        if (!e.target.closest('button')) jump(place);
      },
    },
    el('div', { class: 'result-place muted' }, icon(m.conversation_id ? 'chat' : 'hash'), el('span', { text: label })),
    el(
      'div',
      { class: 'result-main' },
      userAvatar(m.author, true),
      el(
        'div',
        { class: 'result-body' },
        el(
          'div',
          { class: 'result-head' },
          nameText(m.author, 'result-author'),
          el('time', { class: 'muted', dateTime: m.created_at, text: formatTime(m.created_at) }),
        ),
        body,
        files,
      ),
    ),
    el(
      'button',
      {
        type: 'button',
        class: 'result-open',
        onclick: () => jump(place),
        'aria-label': `Open ${displayName(m.author)}'s message in ${label}, ${formatTime(m.created_at)}`,
      },
      'Jump',
    ),
  );
}

function jump(place) {
  open(place);
  $('app').classList.replace('pane-search', 'pane-room');
}
