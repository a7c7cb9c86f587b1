// @ts-check
// Reactions on the open room's messages: the user's own, added or taken back (within the
// server's limits: 20 different emoji on a message, 10 of them the user's), and everyone's as
// the stream reports them. And polls, their near kin (issue 50): the user's votes, cast or taken
// back, ending one's own poll early, and the counts as the stream moves them (poll_vote). The
// record says nobody's votes, so this browser remembers the user's own from its answers.
import { api } from './api.js';
import { toast, confirmAction } from './ui.js';
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

// ---- polls ------------------------------------------------------------------------------

const VOTES_KEY = 'chat:poll-votes:';
const KEEP = 300; // polls remembered, the newest votes kept

/** @returns {Record<string, string[]>} message id -> the answers the user voted for */
function readVotes() {
  try {
    const votes = JSON.parse(localStorage.getItem(VOTES_KEY + state.me.user_id) || '{}');
    return votes && typeof votes === 'object' ? votes : {};
  } catch {
    return {};
  }
}

/**
 * The answers the user voted for in a message's poll, as this browser saw them.
 * @param {string} messageId
 */
export const myVotes = (messageId) => new Set(readVotes()[messageId] || []);

/**
 * @param {string} messageId
 * @param {Set<string>} answers
 */
function keepVotes(messageId, answers) {
  const votes = readVotes();
  delete votes[messageId];
  if (answers.size) votes[messageId] = [...answers];
  const ids = Object.keys(votes);
  for (const old of ids.slice(0, Math.max(0, ids.length - KEEP))) delete votes[old];
  localStorage.setItem(VOTES_KEY + state.me.user_id, JSON.stringify(votes));
}

/**
 * Votes for an answer, or takes the vote back. One answer unless the poll allows several: a vote
 * for another answer moves the vote (docs/api.md "Polls").
 * @param {Opened} r
 * @param {string} id the message
 * @param {string} answerId
 * @param {boolean} add
 */
export async function vote(r, id, answerId, add) {
  const m = r.byId.get(id);
  if (!m?.poll) return;
  try {
    const updated = await api(add ? 'PUT' : 'DELETE', `${r.base}/messages/${id}/poll/answers/${answerId}/votes/@me`);
    const mine = m.poll.allow_multiselect || !add ? myVotes(id) : new Set();
    if (add) mine.add(answerId);
    else mine.delete(answerId);
    keepVotes(id, mine);
    if (!r.closed) replaceMessage(r, updated);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * The author ends their poll before its time: the results freeze.
 * @param {Opened} r
 * @param {string} id
 */
export async function endPoll(r, id) {
  if (!(await confirmAction('End the poll now?', 'Its results freeze as they stand, and nobody can vote any more.', 'End poll', false))) return;
  try {
    const updated = await api('POST', `${r.base}/messages/${id}/poll/end`);
    if (!r.closed) replaceMessage(r, updated);
  } catch (err) {
    toast(err.message);
  }
}

/**
 * A poll_vote event: the counts as they now stand, or the poll ended.
 * @param {Opened} r
 * @param {import('../../types/client').Events['poll_vote']} ev
 */
export function applyPollVote(r, ev) {
  const m = r.byId.get(ev.message_id);
  if (m) replaceMessage(r, { ...m, poll: ev.poll });
}
