// The open room, one at a time, and what every part of it asks about it: its channel or
// conversation record, what the user may do there, the list item of a message and the reply
// being written. The other room-*.js modules build on this one; room.js opens and closes it.
import { $ } from './ui.js';
import { state, findChannel, findServer, findConversation, canManageServer } from './store.js';

/**
 * The open room: {key, kind, serverId, channelId, conversationId, base, list (oldest first),
 * byId, hasOlder, loadingOlder, hasNewer (opened around a message, the present not reached
 * yet), loadingNewer, dividerAfter, editing, replyTo, revealed (blocked messages shown), closed,
 * link (opened from a message link: what to say if its message cannot be shown)}.
 */
let room = null;
const hooks = { replyChanged: () => {} };

export const currentRoom = () => room;
export function setCurrentRoom(r) {
  room = r;
}
export function setRoomHooks(h) {
  Object.assign(hooks, h);
}

export function container(r = room) {
  if (!r) return null;
  return r.kind === 'channel' ? findChannel(r.serverId, r.channelId) : findConversation(r.conversationId);
}

/** May the user pin here? Channels: the owner and full server administrators; conversations: anyone in it. */
export function mayPin(r = room) {
  if (!r) return false;
  return r.kind === 'conversation' || canManageServer(findServer(r.serverId));
}

/** May the user read this message's edit history (the server's rule)? */
export function mayReadHistory(r, m) {
  if (m.author_id === state.me.user_id || state.isAdmin) return true;
  return r.kind === 'channel' && canManageServer(findServer(r.serverId));
}

/** Every version of an edited message (edit-history.js, loaded on first use). */
export const showEditHistory = (r, m) => import('./edit-history.js').then((h) => h.showEditHistory(r.base, m));

export function findItem(id) {
  return $('messages').querySelector(`li.msg[data-id="${CSS.escape(id)}"]`);
}

export function setReply(r, message) {
  if (!r) return;
  r.replyTo = message;
  hooks.replyChanged(message);
}
