// @ts-check
// What every part of a room asks about what it shows: its channel or conversation record, what
// the user may do there, the list item of a message and the reply being written. The other
// room-*.js modules build on this one; room.js makes the room (createRoom) and opens places in it.
import { state, findChannel, findServer, findConversation, canManageServer } from './store.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */
// What a room shows, from one open to the next (room.current), is an Opened record
// (types/room.d.ts): where it is, the messages loaded, paging, the reply, the divider; r.room
// is the room it is open in.

/**
 * The channel or conversation record (with its read state) of what the room shows.
 * @param {Opened | null} r
 */
export function container(r) {
  if (!r) return null;
  return r.kind === 'channel' ? findChannel(r.serverId, r.channelId) : findConversation(r.conversationId);
}

/**
 * May the user pin here? Channels: the owner and full server administrators; conversations: anyone in it.
 * @param {Opened | null} r
 */
export function mayPin(r) {
  if (!r) return false;
  return r.kind === 'conversation' || canManageServer(findServer(r.serverId));
}

/**
 * May the user read this message's edit history (the server's rule)?
 * @param {Opened} r
 * @param {Message} m
 */
export function mayReadHistory(r, m) {
  if (m.author_id === state.me.user_id || state.isAdmin) return true;
  return r.kind === 'channel' && canManageServer(findServer(r.serverId));
}

/**
 * Every version of an edited message (edit-history.js, loaded on first use).
 * @type {(r: Opened, m: Message) => Promise<void>}
 */
export const showEditHistory = (r, m) => import('./edit-history.js').then((h) => h.showEditHistory(r.base, m));

/**
 * A message's item in the room's list.
 * @param {Room} room
 * @param {string} id
 * @returns {HTMLElement | null}
 */
export function findItem(room, id) {
  return room.parts.messages.querySelector(`li.msg[data-id="${CSS.escape(id)}"]`);
}

/**
 * The reply being written in the room (null: none); the room's composer shows it.
 * @param {Opened | null} r
 * @param {Message | null} message
 */
export function setReply(r, message) {
  if (!r) return;
  r.replyTo = message;
  r.room.emit('reply', message);
}
