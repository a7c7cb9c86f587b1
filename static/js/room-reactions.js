// @ts-check
// Reactions on the open room's messages: the user's own, added or taken back (within the
// server's limits: 20 different emoji on a message, 10 of them the user's), and everyone's as
// the stream reports them.
import { api } from './api.js';
import { toast } from './ui.js';
import { state } from './store.js';
import { replaceMessage } from './room-list.js';

/**
 * @typedef {import('../../types/room').Room} Room
 * @typedef {import('../../types/room').Opened} Opened
 * @typedef {import('../../types/client').Message} Message
 */

/**
 * @typedef {import('../../types/client').Message['reactions'][number]['emoji']} ReactionEmoji
 */

/**
 * What a reaction is counted under: a Unicode emoji itself, a custom emoji's id (issue 50).
 * @param {ReactionEmoji} emoji
 */
export const reactionKey = (emoji) => (typeof emoji === 'string' ? emoji : emoji.id);

/**
 * @param {Opened} r
 * @param {string} id
 * @param {ReactionEmoji} emoji
 * @param {boolean} add
 */
export async function toggleReaction(r, id, emoji, add) {
  const m = r.byId.get(id);
  const key = reactionKey(emoji);
  if (add && m && !(m.reactions || []).some((x) => reactionKey(x.emoji) === key)) {
    if ((m.reactions || []).length >= 20) return toast('A message may carry at most 20 different reactions.');
    if ((m.reactions || []).filter((x) => x.reacted).length >= 10) return toast('You may react to one message with at most 10 emoji.');
  }
  try {
    // A custom emoji is addressed in the path as name:id; a Unicode one keeps the spec's route.
    const updated =
      typeof emoji === 'string'
        ? await api(add ? 'PUT' : 'DELETE', `${r.base}/messages/${id}/reactions`, { emoji })
        : await api(add ? 'PUT' : 'DELETE', `${r.base}/messages/${id}/reactions/${emoji.name}:${emoji.id}`);
    if (!r.closed) replaceMessage(r, updated);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * A reaction event of the stream: the new count of one emoji, and whether it is now the user's.
 * @param {Opened} r
 * @param {import('../../types/client').Events['reaction']} ev
 */
export function applyReaction(r, ev) {
  const m = r.byId.get(ev.message_id);
  if (!m) return;
  let list = (m.reactions || []).map((x) => ({ ...x }));
  const existing = list.find((x) => reactionKey(x.emoji) === reactionKey(ev.emoji));
  const mine = ev.user_id === state.me.user_id;
  if (existing) {
    existing.count = ev.count;
    if (mine) existing.reacted = ev.added;
  } else if (ev.count > 0) {
    list.push({ emoji: ev.emoji, count: ev.count, reacted: mine && ev.added });
  }
  list = list.filter((x) => x.count > 0);
  replaceMessage(r, { ...m, reactions: list });
}
