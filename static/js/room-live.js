// @ts-check
// A room kept live from the user stream: new messages (or, opened around an older one, the
// "Jump to present" button), pins, edits, deletions and reactions; the typing line; and the
// whole list redrawn when a name, a picture or a block changes, or a role its mentions name.
import { on, onEvent } from './store.js';
import { addMessage, replaceMessage, removeMessage, redrawAll } from './room-list.js';
import { countUnseen, markRead } from './room-scroll.js';
import { renderTyping } from './room-typing.js';
import { applyReaction, applyPollVote } from './room-reactions.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

/**
 * Is the event (a message, or an event naming its room) about what r shows?
 * @param {Opened | null} r
 * @param {{ channel_id?: string, conversation_id?: string }} ev
 */
function inRoom(r, ev) {
  if (!r) return false;
  if (r.kind === 'channel') return ev.channel_id === r.channelId;
  return ev.conversation_id === r.conversationId;
}

const itsMessage = (ev) => ev.message;
const itself = (ev) => ev;

/**
 * Follows the stream for the room; returns the functions that stop each handler.
 * @param {Room} room
 * @returns {(() => void)[]}
 */
export function followLive(room) {
  /** A handler for events about what the room shows: handler(r, ev) runs when where(ev) is in it. */
  const inOpenRoom = (where, handler) => (ev) => {
    const r = room.current;
    if (inRoom(r, where(ev))) handler(r, ev);
  };
  const pinChanged = inOpenRoom(itsMessage, (r, ev) => {
    const m = r.byId.get(ev.message.id);
    if (m) replaceMessage(r, { ...m, pinned: ev.event === 'message_pinned' });
  });
  const typing = () => renderTyping(room);
  return [
    onEvent('message', (ev) => {
      const r = room.current;
      if (!inRoom(r, ev.message)) return typing();
      // Opened around an older message: this one comes with the pages towards the present.
      if (r.hasNewer) return countUnseen(room);
      addMessage(r, ev.message);
      markRead(room);
    }),
    onEvent('message_pinned', pinChanged),
    onEvent('message_unpinned', pinChanged),
    onEvent(
      'message_edited',
      inOpenRoom(itsMessage, (r, ev) => replaceMessage(r, ev.message)),
    ),
    // Its link previews arrived, changed or were removed (docs/api.md "Link previews").
    onEvent(
      'message_updated',
      inOpenRoom(itsMessage, (r, ev) => replaceMessage(r, ev.message)),
    ),
    onEvent(
      'message_deleted',
      inOpenRoom(itself, (r, ev) => removeMessage(r, ev.message_id)),
    ),
    onEvent('reaction', inOpenRoom(itself, applyReaction)),
    onEvent('poll_vote', inOpenRoom(itself, applyPollVote)),
    // A claim gave a placeholder's messages to the claimer, and mentions of it name them now
    // (issue 47 #6): an open channel of that server showing either is read again.
    onEvent('history_claimed', (ev) => {
      const r = room.current;
      const names = (m) => m.author_id === ev.from_user_id || (m.mentions || []).includes(ev.from_user_id);
      if (r?.kind === 'channel' && r.serverId === ev.server_id && r.list.some(names))
        room.open({ kind: 'channel', serverId: r.serverId, channelId: r.channelId });
    }),
    onEvent('typing', typing),
    on('typing', typing),
    on('users', () => {
      redrawAll(room);
      typing();
    }),
    on('blocks', () => redrawAll(room)),
    // A server's roles loaded or changed, or the reader's own: role mentions take their names and
    // colours, and the messages naming a role the reader now holds (or no longer) their tint.
    on('members', (serverId) => {
      const r = room.current;
      if (r?.kind === 'channel' && r.serverId === serverId && r.list.some((m) => m.mention_roles?.length)) redrawAll(room);
    }),
  ];
}
