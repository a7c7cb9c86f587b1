// The open room's message list: each message drawn (grouped with the one before, blocked
// authors collapsed), day separators and the "new messages" divider, and the list kept in step
// with the room's record as messages arrive, change or go. What a message's buttons do beyond
// the list (reactions, its menu, a jump to the message it replies to) is given by room.js
// through setListActions, so that those modules may in turn redraw the list.
import { $, el, formatDay } from './ui.js';
import { buildMessage, buildBlocked, continues } from './message.js';
import { openEmojiPicker } from './emoji.js';
import { state, findServer, canManageServer, isBlocked, mentionsMe, mayIn } from './store.js';
import { openUserMenu } from './members.js';
import { learnUsers } from './users-data.js';
import { currentRoom, findItem, setReply, mayReadHistory, showEditHistory } from './room-state.js';
import { nearBottom, scrollToBottom, countUnseen } from './room-scroll.js';

const actions = { toggleReaction: () => {}, openMenu: () => {}, showMessage: () => {} };

/**
 * What the message buttons call: {toggleReaction(r, id, emoji, add), openMenu(r, m, anchor,
 * {mine, canDelete}), showMessage(id)}.
 */
export function setListActions(a) {
  Object.assign(actions, a);
}

function mentionKind(name) {
  const lower = name.toLowerCase();
  if (lower === 'everyone') return 'everyone';
  if (lower === state.me.username.toLowerCase()) return 'me';
  for (const user of state.users.values()) if (user.username.toLowerCase() === lower) return 'user';
  return null;
}

export function render(r, m, prev) {
  const continued = continues(prev, m) && !(r.dividerAfter && prev && prev.id === r.dividerAfter);
  if (isBlocked(m.author_id) && !r.revealed.has(m.id)) {
    return buildBlocked(m, { continued, show: () => reveal(r, m.id) });
  }
  const mine = m.author_id === state.me.user_id;
  const server = r.kind === 'channel' ? findServer(r.serverId) : null;
  const named = !mine && mentionsMe(m);
  return buildMessage(m, {
    mine,
    continued,
    history: mayReadHistory(r, m) ? () => showEditHistory(r, m) : null,
    openUser: (anchor) => openUserMenu(m.author || { user_id: m.author_id, username: 'unknown' }, anchor),
    mentionsMe: named,
    mention: (name) => {
      const kind = mentionKind(name);
      if (kind === 'me') return named ? 'me' : 'user';
      if (kind === 'everyone') return m.mention_everyone ? 'me' : null;
      // Someone the server recognised whom this client has not met: shown once their record is in.
      if (!kind && m.mentions?.length) learnUsers(m.mentions);
      return kind;
    },
    reply: () => setReply(r, m),
    react: mayIn(r, 'add_reactions') ? (anchor) => openEmojiPicker(anchor, (emoji) => actions.toggleReaction(r, m.id, emoji, true)) : null,
    toggleReaction: (emoji, add) => actions.toggleReaction(r, m.id, emoji, add),
    menu: (anchor) => actions.openMenu(r, m, anchor, { mine, canDelete: mine || (server && canManageServer(server)) }),
    jump: (id) => actions.showMessage(id),
    open: (a) => import('./lightbox.js').then((lightbox) => lightbox.openLightbox(a)),
    imageLoaded: () => { if (nearBottom(200)) scrollToBottom(); },
    keepBottom: (change) => {
      const stick = nearBottom();
      change();
      if (stick) scrollToBottom();
    },
  });
}

function daySeparator(m) {
  return el('li', { class: 'day-sep' }, el('span', { role: 'separator', 'aria-label': formatDay(m.created_at), text: formatDay(m.created_at) }));
}

const newDivider = () => el('li', { class: 'new-divider' }, el('span', { role: 'separator', 'aria-label': 'New messages', text: 'New messages' }));

function sameDay(a, b) {
  return new Date(a.created_at).toDateString() === new Date(b.created_at).toDateString();
}

/** Rebuilds the whole list (open, older page, delete). */
export function renderAll(r) {
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

export function addMessage(r, m) {
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
  else countUnseen();
}

/** Redraws one message in place, keeping keyboard focus where it was. */
export function replaceMessage(r, m) {
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

export function removeMessage(r, id) {
  if (!r.byId.delete(id)) return;
  r.list = r.list.filter((m) => m.id !== id);
  if (r.editing === id) r.editing = null;
  if (r.replyTo && r.replyTo.id === id) setReply(r, null);
  // Replies to it now show "deleted message", as the server will say from now on.
  r.list = r.list.map((m) => (m.reply_to === id && m.reply_preview ? { ...m, reply_preview: null } : m));
  r.byId = new Map(r.list.map((m) => [m.id, m]));
  keepingPosition(() => renderAll(r));
}

function reveal(r, id) {
  r.revealed.add(id);
  const m = r.byId.get(id);
  const i = r.list.indexOf(m);
  findItem(id)?.replaceWith(render(r, m, r.list[i - 1]));
}

/** Redraws every message (a name, picture or block changed), keeping the reading position. */
export function redrawAll() {
  const r = currentRoom();
  if (!r || !r.list.length) return;
  keepingPosition(() => renderAll(r));
}

/** Runs draw() and scrolls back to where the reader was (what they read stays put). */
export function keepingPosition(draw) {
  const scroller = $('message-scroll');
  const top = scroller.scrollTop;
  draw();
  scroller.scrollTop = top;
}
