// Scrolling and reading in the open room: is the reader at the bottom, the "Jump to present"
// button (which counts the messages that arrived while the reader was scrolled up), a found
// message highlighted for a moment, and marking the room read once it is seen.
import { api } from './api.js';
import { $, toast } from './ui.js';
import { emit, applyRead } from './store.js';
import { currentRoom, container, findItem } from './room-state.js';

const FLASH_MS = 3000;

export function nearBottom(slack = 80) {
  const s = $('message-scroll');
  return s.scrollHeight - s.scrollTop - s.clientHeight < slack;
}

export function scrollToBottom() {
  const s = $('message-scroll');
  s.scrollTop = s.scrollHeight;
  showJump(false);
}

let unseen = 0; // live messages that arrived while the reader was scrolled up

/** Shows or hides "Jump to present"; hiding it (the reader is at the present) resets the count. */
export function showJump(show) {
  if (!show) unseen = 0;
  $('jump-present').hidden = !show;
  jumpLabel();
}

/** A live message arrived out of sight: the button says how many wait below. */
export function countUnseen() {
  unseen += 1;
  showJump(true);
}

function jumpLabel() {
  const many = unseen === 1 ? '1 new message' : `${unseen} new messages`;
  const text = unseen ? `${many} — Jump to present` : 'Jump to present';
  if ($('jump-present').textContent !== text) $('jump-present').textContent = text; // (each scroll asks)
}

let readTimer = 0;
/** Marks the room read up to its newest message when it is seen: at the bottom, tab visible. */
export function markRead() {
  clearTimeout(readTimer);
  readTimer = setTimeout(async () => {
    const r = currentRoom();
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
      // The message deleted meanwhile (400) or the room gone (404): nothing to tell.
      if (err.status !== 404 && err.status !== 400) toast(err.message);
    }
  }, 150);
}

/** Scrolls to a message of the list and highlights it for a moment. */
export function flash(id) {
  const target = findItem(id);
  if (!target) return false;
  target.scrollIntoView({ block: 'center' });
  target.classList.add('flash');
  setTimeout(() => target.classList.remove('flash'), FLASH_MS);
  return true;
}
