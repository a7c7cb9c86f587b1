// @ts-check
// Scrolling and reading in a room: is the reader at the bottom, the "Jump to present" button
// (which counts the messages that arrived while the reader was scrolled up), a found message
// highlighted for a moment, and marking what the room shows read once it is seen.
import { api } from './api.js';
import { toast } from './ui.js';
import { applyRead, clearUnread } from './store.js';
import { container, findItem } from './room-state.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

const FLASH_MS = 3000;

/**
 * @param {Room} room
 * @param {number} [slack]
 */
export function nearBottom(room, slack = 80) {
  const s = room.parts.scroller;
  return s.scrollHeight - s.scrollTop - s.clientHeight < slack;
}

/**
 * @param {Room} room
 */
export function scrollToBottom(room) {
  const s = room.parts.scroller;
  s.scrollTop = s.scrollHeight;
  showJump(room, false);
}

/**
 * Shows or hides "Jump to present"; hiding it (the reader is at the present) resets the count.
 * @param {Room} room
 * @param {boolean} show
 */
export function showJump(room, show) {
  if (!show) room.unseen = 0;
  room.parts.jump.hidden = !show;
  jumpLabel(room);
}

/**
 * A live message arrived out of sight: the button says how many wait below.
 * @param {Room} room
 */
export function countUnseen(room) {
  room.unseen += 1;
  showJump(room, true);
}

/**
 * @param {Room} room
 */
function jumpLabel(room) {
  const { unseen } = room;
  const many = unseen === 1 ? '1 new message' : `${unseen} new messages`;
  const text = unseen ? `${many} — Jump to present` : 'Jump to present';
  if (room.parts.jump.textContent !== text) room.parts.jump.textContent = text; // (each scroll asks)
}

/**
 * Marks the room read up to its newest message when it is seen: at the bottom, tab visible.
 * @param {Room} room
 */
export function markRead(room) {
  clearTimeout(room.readTimer);
  room.readTimer = setTimeout(async () => {
    const r = room.current;
    const c = container(r);
    if (!r || !c || r.hasNewer || document.hidden || !nearBottom(room) || !r.list.length) return;
    if (c.unread_count === 0 && c.mention_count === 0) return;
    const newest = r.list.at(-1);
    clearUnread(c);
    try {
      const result = await api('PUT', `${r.base}/read`, { message_id: newest.id });
      applyRead({ ...result, ...(r.kind === 'channel' ? { server_id: r.serverId, channel_id: r.channelId } : { conversation_id: r.conversationId }) });
    } catch (err) {
      // The message deleted meanwhile (400) or the room gone (404): nothing to tell.
      if (err.status !== 404 && err.status !== 400) toast(err.message);
    }
  }, 150);
}

/**
 * Scrolls to a message of the list and highlights it for a moment.
 * @param {Room} room
 * @param {string} id
 */
export function flash(room, id) {
  const target = findItem(room, id);
  if (!target) return false;
  target.scrollIntoView({ block: 'center' });
  target.classList.add('flash');
  setTimeout(() => target.classList.remove('flash'), FLASH_MS);
  return true;
}
