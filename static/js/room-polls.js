// @ts-check
// Polls in the open room's messages (issue 50): the user's votes, cast or taken back, ending
// one's own poll early, and the counts as the stream moves them (poll_vote). The record says
// nobody's votes, so this browser remembers the user's own from the answers to their votes.
import { api } from './api.js';
import { toast, confirmAction } from './ui.js';
import { state } from './store.js';
import { replaceMessage } from './room-list.js';

/**
 * @typedef {import('../../types/room').Opened} Opened
 */

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
