// The open room kept live from the user stream: new messages (or, opened around an older one,
// the "Jump to present" button), pins, edits, deletions and reactions; the typing line; and the
// whole list redrawn when a name, a picture or a block changes.
import { on, onEvent } from './store.js';
import { currentRoom } from './room-state.js';
import { addMessage, replaceMessage, removeMessage, redrawAll } from './room-list.js';
import { countUnseen, markRead } from './room-scroll.js';
import { renderTyping } from './room-typing.js';
import { applyReaction } from './room-reactions.js';

/** Is the event (a message, or an event naming its room) about the open room r? */
function inRoom(r, ev) {
  if (!r) return false;
  if (r.kind === 'channel') return ev.channel_id === r.channelId;
  return ev.conversation_id === r.conversationId;
}

/** A handler for events about the open room: handler(r, ev) runs when where(ev) is in it. */
const inOpenRoom = (where, handler) => (ev) => {
  const r = currentRoom();
  if (inRoom(r, where(ev))) handler(r, ev);
};
const itsMessage = (ev) => ev.message;
const itself = (ev) => ev;

onEvent('message', (ev) => {
  const r = currentRoom();
  if (!inRoom(r, ev.message)) return renderTyping();
  // Opened around an older message: this one comes with the pages towards the present.
  if (r.hasNewer) return countUnseen();
  addMessage(r, ev.message);
  markRead();
});
const pinChanged = inOpenRoom(itsMessage, (r, ev) => {
  const m = r.byId.get(ev.message.id);
  if (m) replaceMessage(r, { ...m, pinned: ev.event === 'message_pinned' });
});
onEvent('message_pinned', pinChanged);
onEvent('message_unpinned', pinChanged);
onEvent('message_edited', inOpenRoom(itsMessage, (r, ev) => replaceMessage(r, ev.message)));
onEvent('message_deleted', inOpenRoom(itself, (r, ev) => removeMessage(r, ev.message_id)));
onEvent('reaction', inOpenRoom(itself, applyReaction));
onEvent('typing', renderTyping);

on('typing', renderTyping);
on('users', () => {
  redrawAll();
  renderTyping();
});
on('blocks', redrawAll);
