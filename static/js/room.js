// @ts-check
// A room: one channel or conversation shown at a time in the elements under a root, kept live
// from the user stream. createRoom(root) makes one; the app's main view is one, and a thread pane
// or a voice channel's chat is another made the same way (the parts it needs are found under its
// root by their data-part names). room.open(place) replaces what it shows; a place opened around
// a message (a search result, a pin, an old reply) pages both ways until it reaches the present,
// then goes live again. This module makes and wires the room; its parts are modules of their
// own, each built only on those before it, and each function takes the room, or the record of
// what it shows (r, with r.room), as an argument:
//   room-state.js     what the room shows, and what may be done there
//   room-scroll.js    scrolling, "Jump to present", highlighting a message, marking it read
//   room-list.js      the message list: grouping, day separators, the "new messages" divider
//   room-history.js   loading pages: newest, around a message, older, newer, after a reconnect
//   room-typing.js    the typing line
//   room-reactions.js reactions and poll votes, the user's own and live
//   room-edit.js      editing a message in place
//   room-menu.js      a message's menu: reply, react, copy, pin, history, edit, delete, report
//   room-live.js      live updates from the user stream
//   room-focus.js     the message list as one tab stop, and focus kept through redraws
//   room-keys.js      the list's keys: move between messages, act on the focused one
// Its composer (composer.js) is made for it: createComposer(root, room).
import { toast, findParts } from './ui.js';
import { icon } from './icons.js';
import { container, setReply } from './room-state.js';
import { nearBottom, scrollToBottom, showJump, markRead, flash } from './room-scroll.js';
import { addMessage } from './room-list.js';
import { loadNewest, loadAround, loadNewer, loadOlder, jumpToPresent, catchUp } from './room-history.js';
import { renderTyping } from './room-typing.js';
import { toggleReaction, vote, endPoll, myVotes } from './room-reactions.js';
import { openMenu } from './room-menu.js';
import { followLive } from './room-live.js';
import { initListFocus, composerField } from './room-focus.js';
import { initMessageKeys } from './room-keys.js';
import { editLastOwn } from './room-edit.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/room').OpenPlace} OpenPlace
 * @typedef {import('../../types/client').Message} Message
 */

/** The elements a room draws in, by their data-part names under its root. */
const PARTS = {
  scroller: 'message-scroll',
  messages: 'messages',
  loadingOlder: 'loading-older',
  historyStart: 'history-start',
  loading: 'room-loading',
  empty: 'room-empty',
  emptyText: 'room-empty-text',
  jump: 'jump-present',
  typing: 'typing-line',
};

/**
 * Makes a room in the elements under root. Its topics (room.on): 'reply' (the reply being
 * written changed: the message, or null). room.destroy() stops it following the stream and the
 * page.
 * @param {HTMLElement} root
 * @returns {Room}
 */
export function createRoom(root) {
  /** @type {Map<string, Set<(detail: any) => void>>} */
  const topics = new Map();
  /** @type {Room} */
  const room = {
    root,
    parts: findParts(root, PARTS),
    /** What the room shows (room-state.js), or null. */
    current: null,
    unseen: 0, // live messages that arrived while the reader was scrolled up
    readTimer: 0,
    typingTimer: 0,
    /** What a message's buttons do beyond the list (room-list.js). */
    actions: { toggleReaction, openMenu, vote, endPoll, myVotes },
    on(topic, fn) {
      if (!topics.has(topic)) topics.set(topic, new Set());
      topics.get(topic).add(fn);
      return () => topics.get(topic).delete(fn);
    },
    emit(topic, detail) {
      for (const fn of topics.get(topic) || []) fn(detail);
    },
    open: (place) => open(room, place),
    close: () => close(room),
    showMessage: (id) => showMessage(room, id),
    addOwnMessage: (m) => addOwnMessage(room, m),
    catchUp: () => catchUp(room),
    editLastOwn: () => editLastOwn(room),
    setReply: (message) => setReply(room.current, message),
    destroy: () => {},
  };
  room.parts.jump.append(icon('down'));
  const stops = [...followLive(room), initListFocus(room), wire(room)];
  initMessageKeys(room);
  room.destroy = () => {
    close(room);
    for (const stop of stops) stop();
  };
  return room;
}

/**
 * Opens a place in the room at its newest messages, or around place.around (a message id).
 * @param {Room} room
 * @param {OpenPlace} place
 */
function open(room, place) {
  close(room);
  const kind = place.kind;
  const serverId = place.serverId || null;
  const channelId = place.channelId || null;
  const conversationId = kind === 'conversation' ? place.id : null;
  /** @type {Opened} */
  const r = {
    room,
    key: kind === 'channel' ? `c:${channelId}` : `d:${conversationId}`,
    base: kind === 'channel' ? `/api/servers/${serverId}/channels/${channelId}` : `/api/conversations/${conversationId}`,
    kind,
    serverId,
    channelId,
    conversationId,
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
  room.current = r;
  // The divider goes after the last message read when the room was opened; it stays put
  // while the room is open, as in other chat apps.
  const c = container(r);
  r.dividerAfter = c && c.unread_count > 0 && !place.around ? c.last_read_id : undefined;
  const { parts } = room;
  parts.messages.replaceChildren();
  parts.historyStart.hidden = true;
  parts.empty.hidden = true;
  parts.loading.hidden = false;
  showJump(room, false);
  renderTyping(room);
  r.loading = (place.around ? loadAround(r, place.around) : loadNewest(r)).catch((err) => toast(err.message));
  return r;
}

/** @param {Room} room */
function close(room) {
  if (!room.current) return;
  room.current.closed = true;
  room.current = null;
}

/**
 * Shows a message of what the room shows: where it is, or reopened around it.
 * @param {Room} room
 * @param {string} id
 */
function showMessage(room, id) {
  const r = room.current;
  if (!r || flash(room, id)) return;
  open(room, { kind: r.kind, serverId: r.serverId, channelId: r.channelId, id: r.conversationId, around: id });
}

/**
 * Our own POST answered: show it at once (the stream brings it too; the id dedupes).
 * @param {Room} room
 * @param {Message} m
 */
function addOwnMessage(room, m) {
  const r = room.current;
  if (!r || m.id === undefined) return;
  if ((m.channel_id && m.channel_id !== r.channelId) || (m.conversation_id && m.conversation_id !== r.conversationId)) return;
  if (r.hasNewer) return jumpToPresent(room); // sent from an older page: the present shows it
  addMessage(r, m);
  scrollToBottom(room);
}

/**
 * Scrolling loads pages and marks the room read; so does coming back to the tab.
 * @param {Room} room
 */
function wire(room) {
  const { scroller, jump } = room.parts;
  scroller.addEventListener(
    'scroll',
    () => {
      const r = room.current;
      if (scroller.scrollTop < 300) loadOlder(room);
      if (r?.hasNewer && nearBottom(room, 300)) loadNewer(room);
      if (nearBottom(room) && !r?.hasNewer) {
        showJump(room, false);
        markRead(room);
      } else if (r && r.list.length) {
        showJump(room, true);
      }
    },
    { passive: true },
  );
  jump.addEventListener('click', () => {
    jumpToPresent(room);
    composerField(room)?.focus();
  });
  const page = new AbortController(); // removes the page's listeners again (destroy)
  document.addEventListener(
    'visibilitychange',
    () => {
      if (!document.hidden) markRead(room);
    },
    { signal: page.signal },
  );
  window.addEventListener('focus', () => markRead(room), { signal: page.signal });
  return () => page.abort();
}
