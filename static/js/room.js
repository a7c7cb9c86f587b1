// The open channel or conversation: its history (grouped, with day separators and a "new
// messages" divider), live updates from the user stream, read marking, the typing line and the
// message actions. One room is open at a time; openRoom() replaces it. A room opened around a
// message (a search result, a pin, an old reply) pages both ways until it reaches the present,
// then goes live again.
import { api, apiWithReason, query } from './api.js';
import { $, el, toast, ask, formatDay } from './ui.js';
import { askForm } from './dialogs.js';
import { buildMessage, buildBlocked, continues } from './message.js';
import { openEmojiPicker } from './emoji.js';
import { openPopup, menuKeys, menuItem } from './popup.js';
import { openLightbox } from './lightbox.js';
import {
  state, on, emit, findChannel, findServer, findConversation, canManageServer, maySend, applyRead, isBlocked, displayName,
} from './store.js';
import { openUserMenu } from './members.js';
import { showEditHistory } from './edit-history.js';
import { setPinned } from './pins.js';

const PAGE_SIZE = 50;
const CATCH_UP_PAGE = 100;
const FLASH_MS = 3000;

/**
 * The open room: {key, kind, serverId, channelId, conversationId, base, list (oldest first),
 * byId, hasOlder, loadingOlder, hasNewer (opened around a message, the present not reached
 * yet), loadingNewer, dividerAfter, editing, replyTo, revealed (blocked messages shown), closed}.
 */
let room = null;
const hooks = { replyChanged: () => {} };

export const currentRoom = () => room;
export function setRoomHooks(h) {
  Object.assign(hooks, h);
}

export function container(r = room) {
  if (!r) return null;
  return r.kind === 'channel' ? findChannel(r.serverId, r.channelId) : findConversation(r.conversationId);
}

/** Opens a room at its newest messages, or around place.around (a message id). */
export function openRoom(place) {
  closeRoom();
  const kind = place.kind;
  const r = {
    kind,
    serverId: place.serverId || null,
    channelId: place.channelId || null,
    conversationId: kind === 'conversation' ? place.id : null,
    list: [],
    byId: new Map(),
    hasOlder: false,
    loadingOlder: false,
    hasNewer: false,
    loadingNewer: false,
    dividerAfter: undefined,
    editing: null,
    replyTo: null,
    revealed: new Set(),
    closed: false,
  };
  r.key = kind === 'channel' ? `c:${r.channelId}` : `d:${r.conversationId}`;
  r.base = kind === 'channel' ? `/api/servers/${r.serverId}/channels/${r.channelId}` : `/api/conversations/${r.conversationId}`;
  room = r;
  // The divider goes after the last message read when the room was opened; it stays put
  // while the room is open, as in other chat apps.
  const c = container(r);
  r.dividerAfter = c && c.unread_count > 0 && !place.around ? c.last_read_id : undefined;
  $('messages').replaceChildren();
  $('history-start').hidden = true;
  $('room-empty').hidden = true;
  $('room-loading').hidden = false;
  $('jump-present').hidden = true;
  renderTyping();
  r.loading = (place.around ? loadAround(r, place.around) : loadNewest(r)).catch((err) => toast(err.message));
  return r;
}

export function closeRoom() {
  if (!room) return;
  room.closed = true;
  room = null;
}

// ---- history ----------------------------------------------------------------------------

async function loadNewest(r) {
  const page = await api('GET', `${r.base}/messages${query({ limit: PAGE_SIZE })}`);
  if (r.closed) return;
  r.list = page.reverse();
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  r.hasOlder = page.length === PAGE_SIZE;
  r.hasNewer = false;
  $('room-loading').hidden = true;
  renderAll(r);
  const divider = $('messages').querySelector('.new-divider');
  if (divider) divider.scrollIntoView({ block: 'center' });
  else scrollToBottom();
  markRead();
}

/** The page centred on a message: up to 24 newer, it, up to 25 older. */
async function loadAround(r, id) {
  let page;
  try {
    page = await api('GET', `${r.base}/messages${query({ around: id, limit: PAGE_SIZE })}`);
  } catch (err) {
    if (err.status !== 404) throw err;
    toast('That message is no longer there.', false);
    return loadNewest(r);
  }
  if (r.closed) return;
  r.list = page.reverse();
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  const at = r.list.findIndex((m) => m.id === id);
  r.hasOlder = at >= Math.ceil((PAGE_SIZE - 1) / 2);
  r.hasNewer = r.list.length - 1 - at >= Math.floor((PAGE_SIZE - 1) / 2);
  $('room-loading').hidden = true;
  renderAll(r);
  flash(id);
  showJump(r.hasNewer);
  if (!r.hasNewer) markRead();
}

/** Opened around a message: the next newer page as the reader scrolls down, until the present. */
async function loadNewer() {
  const r = room;
  if (!r || r.loadingNewer || !r.hasNewer || !r.list.length) return;
  r.loadingNewer = true;
  try {
    let page;
    try {
      page = await api('GET', `${r.base}/messages${query({ after: r.list.at(-1).id, limit: PAGE_SIZE })}`);
    } catch (err) {
      // Our newest message was deleted meanwhile: the present is the surest place to go.
      if (err.status === 404) return void (r.loading = loadNewest(r));
      throw err;
    }
    if (r.closed) return;
    const scroller = $('message-scroll');
    const top = scroller.scrollTop;
    for (const m of page) {
      if (r.byId.has(m.id)) continue;
      r.list.push(m);
      r.byId.set(m.id, m);
    }
    r.hasNewer = page.length === PAGE_SIZE;
    renderAll(r);
    scroller.scrollTop = top; // what was read stays where it was; the new page is below
    showJump(r.hasNewer || !nearBottom());
    if (!r.hasNewer) markRead();
  } catch (err) {
    toast(err.message);
  } finally {
    r.loadingNewer = false;
  }
}

async function loadOlder() {
  const r = room;
  if (!r || r.loadingOlder || !r.hasOlder || !r.list.length) return;
  r.loadingOlder = true;
  $('loading-older').hidden = false;
  try {
    // The oldest message may have been deleted meanwhile (404): try the next one we hold.
    let page = null;
    for (const m of r.list.slice(0, 5)) {
      try {
        page = await api('GET', `${r.base}/messages${query({ before: m.id, limit: PAGE_SIZE })}`);
        break;
      } catch (err) {
        if (err.status !== 404) throw err;
      }
    }
    if (r.closed || !page) return;
    const scroller = $('message-scroll');
    const fromBottom = scroller.scrollHeight - scroller.scrollTop;
    const older = page.reverse().filter((m) => !r.byId.has(m.id));
    for (const m of older) r.byId.set(m.id, m);
    r.list = [...older, ...r.list];
    r.hasOlder = page.length === PAGE_SIZE;
    renderAll(r);
    scroller.scrollTop = scroller.scrollHeight - fromBottom; // keep what the reader was looking at
  } catch (err) {
    toast(err.message);
  } finally {
    r.loadingOlder = false;
    $('loading-older').hidden = true;
  }
}

/** After a reconnect: everything posted after the newest message we hold, oldest first. */
export async function catchUp() {
  const r = room;
  if (!r) return;
  await r.loading;
  if (r.closed || r.hasNewer) return; // paging towards the present fetches what is missing
  const newest = r.list.at(-1);
  if (!newest) {
    r.loading = loadNewest(r).catch((err) => toast(err.message));
    return;
  }
  let after = newest.id;
  try {
    for (;;) {
      let page;
      try {
        page = await api('GET', `${r.base}/messages${query({ after, limit: CATCH_UP_PAGE })}`);
      } catch (err) {
        // 404: our newest message was deleted meanwhile, so the server cannot say what is after it.
        if (err.status === 404) return void (r.loading = loadNewest(r));
        throw err;
      }
      if (r.closed) return;
      for (const m of page) addMessage(r, m);
      if (page.length < CATCH_UP_PAGE) break;
      after = page.at(-1).id;
    }
    markRead();
  } catch (err) {
    toast(err.message);
  }
}

// ---- rendering --------------------------------------------------------------------------

function mentionKind(name) {
  const lower = name.toLowerCase();
  if (lower === 'everyone') return 'everyone';
  if (lower === state.me.username.toLowerCase()) return 'me';
  for (const user of state.users.values()) if (user.username.toLowerCase() === lower) return 'user';
  return null;
}

/** May the user pin here? Channels: the owner and full server administrators; conversations: anyone in it. */
export function mayPin(r = room) {
  if (!r) return false;
  return r.kind === 'conversation' || canManageServer(findServer(r.serverId));
}

/** May the user read this message's edit history (the server's rule)? */
function mayReadHistory(r, m) {
  if (m.author_id === state.me.user_id || state.isAdmin) return true;
  return r.kind === 'channel' && canManageServer(findServer(r.serverId));
}

function render(r, m, prev) {
  const continued = continues(prev, m) && !(r.dividerAfter && prev && prev.id === r.dividerAfter);
  if (isBlocked(m.author_id) && !r.revealed.has(m.id)) {
    return buildBlocked(m, { continued, show: () => reveal(r, m.id) });
  }
  const mine = m.author_id === state.me.user_id;
  const server = r.kind === 'channel' ? findServer(r.serverId) : null;
  const mentionsMe = !mine && ((m.mentions || []).includes(state.me.user_id) || m.mention_everyone);
  return buildMessage(m, {
    mine,
    continued,
    history: mayReadHistory(r, m) ? () => showEditHistory(r.base, m) : null,
    openUser: (anchor) => openUserMenu(m.author || { user_id: m.author_id, username: 'unknown' }, anchor),
    mentionsMe,
    mention: (name) => {
      const kind = mentionKind(name);
      if (kind === 'me') return mentionsMe ? 'me' : 'user';
      if (kind === 'everyone') return m.mention_everyone ? 'me' : null;
      return kind;
    },
    reply: () => setReply(r, m),
    react: (anchor) => openEmojiPicker(anchor, (emoji) => toggleReaction(r, m.id, emoji, true)),
    toggleReaction: (emoji, add) => toggleReaction(r, m.id, emoji, add),
    menu: (anchor) => openMenu(r, m, anchor, { mine, canDelete: mine || (server && canManageServer(server)) }),
    jump: showMessage,
    open: openLightbox,
    imageLoaded: () => { if (nearBottom(200)) scrollToBottom(); },
  });
}

function daySeparator(m) {
  return el('li', { class: 'day-sep', role: 'separator', 'aria-label': formatDay(m.created_at) }, el('span', { text: formatDay(m.created_at) }));
}

const newDivider = () => el('li', { class: 'new-divider', role: 'separator', 'aria-label': 'New messages' }, el('span', { text: 'New messages' }));

function sameDay(a, b) {
  return new Date(a.created_at).toDateString() === new Date(b.created_at).toDateString();
}

/** Rebuilds the whole list (open, older page, delete). */
function renderAll(r) {
  const items = [];
  let prev = null;
  let dividerPlaced = false;
  for (const m of r.list) {
    if (!prev || !sameDay(prev, m)) items.push(daySeparator(m));
    // null: nothing was read yet, so the divider goes before the first message.
    if (!prev && r.dividerAfter === null) {
      items.push(newDivider());
      dividerPlaced = true;
    }
    items.push(render(r, m, prev));
    if (!dividerPlaced && r.dividerAfter && m.id === r.dividerAfter && m !== r.list.at(-1)) {
      items.push(newDivider());
      dividerPlaced = true;
    }
    prev = m;
  }
  $('messages').replaceChildren(...items);
  $('history-start').hidden = r.hasOlder || r.list.length === 0;
  $('room-empty').hidden = r.list.length > 0;
}

function findItem(id) {
  return $('messages').querySelector(`li.msg[data-id="${CSS.escape(id)}"]`);
}

function addMessage(r, m) {
  if (r.byId.has(m.id)) return;
  const stick = nearBottom();
  const prev = r.list.at(-1);
  r.list.push(m);
  r.byId.set(m.id, m);
  const list = $('messages');
  if (!prev || !sameDay(prev, m)) list.append(daySeparator(m));
  list.append(render(r, m, prev));
  $('room-empty').hidden = true;
  $('history-start').hidden = r.hasOlder;
  if (stick || m.author_id === state.me.user_id) scrollToBottom();
  else showJump(true);
}

/** Our own POST answered: show it at once (the stream brings it too; the id dedupes). */
export function addOwnMessage(m) {
  if (!room || m.id === undefined) return;
  const r = room;
  if ((m.channel_id && m.channel_id !== r.channelId) || (m.conversation_id && m.conversation_id !== r.conversationId)) return;
  if (r.hasNewer) return jumpToPresent(); // sent from an older page: the present shows it
  addMessage(r, m);
  scrollToBottom();
}

/** Redraws one message in place, keeping keyboard focus where it was. */
function replaceMessage(r, m) {
  if (!r.byId.has(m.id)) return;
  const i = r.list.findIndex((x) => x.id === m.id);
  r.list[i] = m;
  r.byId.set(m.id, m);
  if (r.editing === m.id) return; // redrawn when the edit ends
  const old = findItem(m.id);
  if (!old) return;
  const focusables = [...old.querySelectorAll('button, a, [tabindex]')];
  const at = focusables.indexOf(document.activeElement);
  const fresh = render(r, m, r.list[i - 1]);
  old.replaceWith(fresh);
  if (at >= 0) ([...fresh.querySelectorAll('button, a, [tabindex]')][at] || fresh.querySelector('.more-button'))?.focus();
}

function removeMessage(r, id) {
  if (!r.byId.delete(id)) return;
  r.list = r.list.filter((m) => m.id !== id);
  if (r.editing === id) r.editing = null;
  if (r.replyTo && r.replyTo.id === id) setReply(r, null);
  // Replies to it now show "deleted message", as the server will say from now on.
  r.list = r.list.map((m) => (m.reply_to === id && m.reply_preview ? { ...m, reply_preview: null } : m));
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  const scroller = $('message-scroll');
  const top = scroller.scrollTop;
  renderAll(r);
  scroller.scrollTop = top;
}

// ---- scrolling, reading -----------------------------------------------------------------

export function nearBottom(slack = 80) {
  const s = $('message-scroll');
  return s.scrollHeight - s.scrollTop - s.clientHeight < slack;
}

export function scrollToBottom() {
  const s = $('message-scroll');
  s.scrollTop = s.scrollHeight;
  showJump(false);
}

function showJump(show) {
  $('jump-present').hidden = !show;
}

let readTimer = 0;
/** Marks the room read up to its newest message when it is seen: at the bottom, tab visible. */
export function markRead() {
  clearTimeout(readTimer);
  readTimer = setTimeout(async () => {
    const r = room;
    const c = container(r);
    if (!r || !c || r.hasNewer || document.hidden || !nearBottom() || !r.list.length) return;
    if (c.unread_count === 0 && c.mention_count === 0) return;
    const newest = r.list.at(-1);
    c.unread_count = 0;
    c.mention_count = 0;
    emit('nav');
    try {
      const result = await api('PUT', `${r.base}/read`, { message_id: newest.id });
      applyRead({ ...result, ...(r.kind === 'channel' ? { server_id: r.serverId, channel_id: r.channelId } : { conversation_id: r.conversationId }) });
    } catch (err) {
      if (err.status !== 404) toast(err.message);
    }
  }, 150);
}

/** Scrolls to a message of the list and highlights it for a moment. */
function flash(id) {
  const target = findItem(id);
  if (!target) return false;
  target.scrollIntoView({ block: 'center' });
  target.classList.add('flash');
  setTimeout(() => target.classList.remove('flash'), FLASH_MS);
  return true;
}

/** Shows a message of the open room: where it is, or the room reopened around it. */
export function showMessage(id) {
  const r = room;
  if (!r || flash(id)) return;
  openRoom({ kind: r.kind, serverId: r.serverId, channelId: r.channelId, id: r.conversationId, around: id });
}

/** Back to the newest messages, from wherever the reader is. */
export function jumpToPresent() {
  const r = room;
  if (!r) return;
  if (r.hasNewer) {
    $('room-loading').hidden = false;
    r.loading = loadNewest(r).catch((err) => toast(err.message));
    return;
  }
  scrollToBottom();
  markRead();
}

function reveal(r, id) {
  r.revealed.add(id);
  const m = r.byId.get(id);
  const i = r.list.indexOf(m);
  findItem(id)?.replaceWith(render(r, m, r.list[i - 1]));
}

/** Redraws every message (a name, picture or block changed), keeping the reading position. */
function redrawAll() {
  const r = room;
  if (!r || !r.list.length) return;
  const scroller = $('message-scroll');
  const top = scroller.scrollTop;
  renderAll(r);
  scroller.scrollTop = top;
}

// ---- live events ------------------------------------------------------------------------

function inRoom(r, ev) {
  if (!r) return false;
  if (r.kind === 'channel') return ev.channel_id === r.channelId;
  return ev.conversation_id === r.conversationId;
}

on('event', (ev) => {
  const r = room;
  if (ev.event === 'message' && inRoom(r, ev.message)) {
    // Opened around an older message: this one comes with the pages towards the present.
    if (r.hasNewer) return showJump(true);
    addMessage(r, ev.message);
    markRead();
  } else if ((ev.event === 'message_pinned' || ev.event === 'message_unpinned') && inRoom(r, ev.message)) {
    const m = r.byId.get(ev.message.id);
    if (m) replaceMessage(r, { ...m, pinned: ev.event === 'message_pinned' });
  } else if (ev.event === 'message_edited' && inRoom(r, ev.message)) {
    replaceMessage(r, ev.message);
  } else if (ev.event === 'message_deleted' && inRoom(r, ev)) {
    removeMessage(r, ev.message_id);
  } else if (ev.event === 'reaction' && inRoom(r, ev)) {
    const m = r.byId.get(ev.message_id);
    if (!m) return;
    let list = (m.reactions || []).map((x) => ({ ...x }));
    const existing = list.find((x) => x.emoji === ev.emoji);
    const mine = ev.user_id === state.me.user_id;
    if (existing) {
      existing.count = ev.count;
      if (mine) existing.reacted = ev.added;
    } else if (ev.count > 0) {
      list.push({ emoji: ev.emoji, count: ev.count, reacted: mine && ev.added });
    }
    list = list.filter((x) => x.count > 0);
    replaceMessage(r, { ...m, reactions: list });
  } else if (ev.event === 'typing' || ev.event === 'message') {
    renderTyping();
  }
});

on('typing', renderTyping);
on('users', () => {
  redrawAll();
  renderTyping();
});
on('blocks', redrawAll);

let typingTimer = 0;
function renderTyping() {
  clearTimeout(typingTimer);
  const line = $('typing-line');
  const r = room;
  const typers = r ? state.typing.get(r.key) : null;
  const now = Date.now();
  const names = [];
  let next = Infinity;
  for (const [id, t] of typers || []) {
    if (t.until <= now) typers.delete(id);
    else {
      names.push(displayName(t));
      next = Math.min(next, t.until);
    }
  }
  let text = '';
  if (names.length === 1) text = `${names[0]} is typing…`;
  else if (names.length === 2) text = `${names[0]} and ${names[1]} are typing…`;
  else if (names.length > 2) text = 'Several people are typing…';
  line.replaceChildren(...(text ? [el('span', { class: 'typing-dots', 'aria-hidden': 'true' }, el('i'), el('i'), el('i')), el('span', { text })] : []));
  line.classList.toggle('active', Boolean(text));
  if (next < Infinity) typingTimer = setTimeout(renderTyping, next - now + 50);
}

// ---- message actions --------------------------------------------------------------------

export function setReply(r, message) {
  if (!r) return;
  r.replyTo = message;
  hooks.replyChanged(message);
}

async function toggleReaction(r, id, emoji, add) {
  const m = r.byId.get(id);
  if (add && m && !(m.reactions || []).some((x) => x.emoji === emoji)) {
    if ((m.reactions || []).length >= 20) return toast('A message may carry at most 20 different reactions.');
    if ((m.reactions || []).filter((x) => x.reacted).length >= 10) return toast('You may react to one message with at most 10 emoji.');
  }
  try {
    const updated = await api(add ? 'PUT' : 'DELETE', `${r.base}/messages/${id}/reactions`, { emoji });
    if (!r.closed) replaceMessage(r, updated);
  } catch (err) {
    toast(err.message);
  }
}

let menuEl = null;
function openMenu(r, m, anchor, { mine, canDelete }) {
  const mayWrite = maySend(r.kind);
  const items = [
    menuItem('Reply', 'reply', () => setReply(r, m)),
    menuItem('Add reaction', 'smile', () => openEmojiPicker(findItem(m.id)?.querySelector('.react-button') || anchor, (emoji) => toggleReaction(r, m.id, emoji, true))),
    m.content && menuItem('Copy text', 'copy', () => navigator.clipboard.writeText(m.content).then(() => toast('Copied.', false), () => toast('Copying was refused by the browser.'))),
    mayPin(r) && menuItem(m.pinned ? 'Unpin' : 'Pin', 'pin', () => setPinned(r, m, !m.pinned)),
    m.edited_at && mayReadHistory(r, m) && menuItem('Edit history', 'history', () => showEditHistory(r.base, m)),
    mine && mayWrite && menuItem('Edit', 'edit', () => startEdit(r, m)),
    canDelete && menuItem('Delete', 'trash', () => deleteMessage(r, m), { danger: true }),
    !mine && menuItem('Report', 'flag', () => report(r, m), { danger: true }),
  ].filter(Boolean);
  if (!menuEl) {
    menuEl = el('div', { id: 'message-menu', class: 'popup menu', role: 'menu', 'aria-label': 'Message actions' });
    menuKeys(menuEl);
  }
  menuEl.replaceChildren(...items);
  openPopup(menuEl, anchor);
  menuEl.querySelector('[role="menuitem"]')?.focus();
}

async function deleteMessage(r, m) {
  const mine = m.author_id === state.me.user_id;
  // A moderator's delete is audited: it may say why.
  const answer = await askForm({
    title: 'Delete this message?',
    text: mine ? 'It is removed for everyone, with its attachments. This cannot be undone.' : `${displayName(m.author)}'s message is removed for everyone. This cannot be undone.`,
    submit: 'Delete', danger: true,
    fields: mine ? [] : [{ name: 'reason', label: 'Reason (optional, kept in the audit log)', type: 'textarea', rows: 2, maxLength: 512 }],
  });
  if (!answer) return;
  try {
    await apiWithReason('DELETE', `${r.base}/messages/${m.id}`, undefined, answer.reason);
    removeMessage(r, m.id);
  } catch (err) {
    toast(err.message);
  }
}

async function report(r, m) {
  const reason = await ask({ title: `Report ${displayName(m.author)}'s message`, label: 'What is wrong with it?', submit: 'Report' });
  if (reason === null) return;
  try {
    await api('POST', '/api/reports', { type: r.kind === 'channel' ? 'server_message' : 'conversation_message', target: m.id, reason });
    toast('Reported. The administrators will have a look.', false);
  } catch (err) {
    toast(err.message);
  }
}

/** Edits a message in place: Enter saves, Shift+Enter is a new line, Escape cancels. */
export function startEdit(r, m) {
  const item = findItem(m.id);
  if (!item || r.editing) return;
  r.editing = m.id;
  const text = el('textarea', { value: m.content, rows: 2, maxLength: 4000, 'aria-label': 'Edit message', class: 'edit-text' });
  const finish = () => {
    r.editing = null;
    const latest = r.byId.get(m.id);
    if (latest) {
      const i = r.list.indexOf(latest);
      const fresh = render(r, latest, r.list[i - 1]);
      findItem(m.id)?.replaceWith(fresh);
      fresh.querySelector('.more-button')?.focus();
    }
  };
  const form = el('form', { class: 'edit-form' }, text,
    el('div', { class: 'edit-hint muted' }, 'Escape to ',
      el('button', { type: 'button', class: 'link-button', onclick: finish }, 'cancel'), ' · Enter to ',
      el('button', { type: 'submit', class: 'link-button' }, 'save')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!text.value.trim() && !(m.attachments || []).length) return toast('A message without attachments cannot be empty: delete it instead.');
    try {
      const updated = await api('PUT', `${r.base}/messages/${m.id}`, { content: text.value });
      r.byId.set(updated.id, updated);
      r.list[r.list.findIndex((x) => x.id === updated.id)] = updated;
      finish();
    } catch (err) {
      toast(err.message);
    }
  });
  text.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      finish();
    } else if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
  const content = item.querySelector('.content');
  if (content) content.replaceWith(form);
  else item.querySelector('.msg-body').append(form);
  text.focus();
  text.setSelectionRange(text.value.length, text.value.length);
}

/** ↑ in an empty composer: edit the newest message of mine in this room. */
export function editLastOwn() {
  const r = room;
  if (!r || !maySend(r.kind)) return false;
  const mine = [...r.list].reverse().find((m) => m.author_id === state.me.user_id);
  if (!mine) return false;
  findItem(mine.id)?.scrollIntoView({ block: 'nearest' });
  startEdit(r, mine);
  return true;
}

// ---- wiring -----------------------------------------------------------------------------

export function initRoom() {
  const scroller = $('message-scroll');
  scroller.addEventListener('scroll', () => {
    if (scroller.scrollTop < 300) loadOlder();
    if (room?.hasNewer && nearBottom(300)) loadNewer();
    if (nearBottom() && !room?.hasNewer) {
      showJump(false);
      markRead();
    } else if (room && room.list.length) {
      showJump(true);
    }
  }, { passive: true });
  $('jump-present').addEventListener('click', () => {
    jumpToPresent();
    $('composer-text').focus();
  });
  document.addEventListener('visibilitychange', () => { if (!document.hidden) markRead(); });
  window.addEventListener('focus', markRead);
}
