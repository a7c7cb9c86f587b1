// The open channel or conversation. One room is open at a time; openRoom() replaces it. A room
// opened around a message (a search result, a pin, an old reply) pages both ways until it
// reaches the present, then goes live again. This module opens, closes and wires the room; its
// parts are modules of their own, each built only on those before it:
//   room-state.js     the open room and what may be done in it
//   room-scroll.js    scrolling, "Jump to present", highlighting a message, marking it read
//   room-list.js      the message list: grouping, day separators, the "new messages" divider
//   room-history.js   loading pages: newest, around a message, older, newer, after a reconnect
//   room-typing.js    the typing line
//   room-reactions.js reactions, the user's own and live
//   room-edit.js      editing a message in place
//   room-menu.js      a message's menu: reply, react, copy, pin, history, edit, delete, report
//   room-live.js      live updates from the user stream
//   room-focus.js     the message list as one tab stop, and focus kept through redraws
//   room-keys.js      the list's keys: move between messages, act on the focused one
// keyboard.js (the skip link, typing that goes to the composer, focus after dialogs) is wired here.
import { $, toast } from './ui.js';
import { currentRoom, setCurrentRoom, container } from './room-state.js';
import { nearBottom, scrollToBottom, showJump, markRead, flash } from './room-scroll.js';
import { setListActions, addMessage } from './room-list.js';
import { loadNewest, loadAround, loadNewer, loadOlder, jumpToPresent } from './room-history.js';
import { renderTyping } from './room-typing.js';
import { toggleReaction } from './room-reactions.js';
import { openMenu } from './room-menu.js';
import './room-live.js';
import { initListFocus } from './room-focus.js';
import { initMessageKeys } from './room-keys.js';
import { initKeyboard } from './keyboard.js';

export { currentRoom, setRoomHooks, setReply, mayPin } from './room-state.js';
export { catchUp } from './room-history.js';
export { editLastOwn } from './room-edit.js';

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
    link: place.link, // opened from a message link: what to say when its message cannot be shown
  };
  r.key = kind === 'channel' ? `c:${r.channelId}` : `d:${r.conversationId}`;
  r.base = kind === 'channel' ? `/api/servers/${r.serverId}/channels/${r.channelId}` : `/api/conversations/${r.conversationId}`;
  setCurrentRoom(r);
  // The divider goes after the last message read when the room was opened; it stays put
  // while the room is open, as in other chat apps.
  const c = container(r);
  r.dividerAfter = c && c.unread_count > 0 && !place.around ? c.last_read_id : undefined;
  $('messages').replaceChildren();
  $('history-start').hidden = true;
  $('room-empty').hidden = true;
  $('room-loading').hidden = false;
  showJump(false);
  renderTyping();
  r.loading = (place.around ? loadAround(r, place.around) : loadNewest(r)).catch((err) => toast(err.message));
  return r;
}

export function closeRoom() {
  const room = currentRoom();
  if (!room) return;
  room.closed = true;
  setCurrentRoom(null);
}

/** Shows a message of the open room: where it is, or the room reopened around it. */
export function showMessage(id) {
  const r = currentRoom();
  if (!r || flash(id)) return;
  openRoom({ kind: r.kind, serverId: r.serverId, channelId: r.channelId, id: r.conversationId, around: id });
}

/** Our own POST answered: show it at once (the stream brings it too; the id dedupes). */
export function addOwnMessage(m) {
  const r = currentRoom();
  if (!r || m.id === undefined) return;
  if ((m.channel_id && m.channel_id !== r.channelId) || (m.conversation_id && m.conversation_id !== r.conversationId)) return;
  if (r.hasNewer) return jumpToPresent(); // sent from an older page: the present shows it
  addMessage(r, m);
  scrollToBottom();
}

setListActions({ toggleReaction, openMenu, showMessage });

export function initRoom() {
  const scroller = $('message-scroll');
  scroller.addEventListener('scroll', () => {
    const room = currentRoom();
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
  initListFocus();
  initMessageKeys();
  initKeyboard();
}
