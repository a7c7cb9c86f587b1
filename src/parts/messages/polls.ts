import { after, logFailure } from '../../core/callbacks';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { badRequest, conflict, forbidden, notFound } from '../../core/http/errors';
import type { PollResult } from '../../core/message-record';
import { type Container, type Log, type Reached, type User, type UserRef, reachedWhole, userRef } from '../../core/types';
import type { MessageStore } from './message-store';

/** At most one poll_vote event a second per poll: a busy vote sends the counts as they then stand. */
export const POLL_EVENT_MS = 1000;
export const MAX_VOTERS_PAGE = 100;

export interface Polls {
  /** The caller's vote for one answer (idempotent); one answer unless multiselect (a vote for another replaces it). */
  vote(at: Reached, messageId: string, user: User, answerId: string): void;
  /** Takes the caller's vote for one answer back (idempotent). */
  unvote(at: Reached, messageId: string, user: User, answerId: string): void;
  /** Who voted for an answer, by user id, `after` one, at most `limit`. */
  voters(at: Reached, messageId: string, answerId: string, afterId: string | null, limit: number): UserRef[];
  /** Its author ends it early: the results are frozen and announced. */
  end(at: Reached, messageId: string, user: User): Promise<void>;
  /** Ends every poll whose time is up (the sweeper's turn, and a vote on one). */
  sweep(): Promise<void>;
  /** Stops the throttled events' timers (closing). */
  close(): void;
}

interface PollState {
  seq: number;
  author_id: string;
  answers: string;
  allow_multiselect: number;
  expires_at: string;
  ended_at: string | null;
}

/**
 * Polls (issue 50): votes, their live counts (`poll_vote`, throttled), the end (early by the
 * author or at expiry) that freezes the results and announces them with a message from the poll's
 * author replying to it (Discord's "poll results" message).
 */
export function createPolls({
  db,
  clock,
  messages,
  userById,
  log,
}: {
  db: DB;
  clock: Clock;
  messages: Pick<MessageStore, 'announcePoll' | 'create'>;
  /** The poll's author, to announce its results in their name (null: gone: no announcement). */
  userById: (id: string) => User | null;
  log: Log;
}): Polls {
  const pollOf = db.prepare<[string], PollState>(
    `SELECT p.message_seq AS seq, m.author_id, p.answers, p.allow_multiselect, p.expires_at, p.ended_at
       FROM polls p JOIN messages m ON m.seq = p.message_seq WHERE m.id = ?`,
  );
  const insertVote = db.prepare('INSERT OR IGNORE INTO poll_votes (message_seq, answer_id, user_id, created_at) VALUES (?, ?, ?, ?)');
  const deleteVote = db.prepare('DELETE FROM poll_votes WHERE message_seq = ? AND answer_id = ? AND user_id = ?');
  const deleteOtherVotes = db.prepare('DELETE FROM poll_votes WHERE message_seq = ? AND user_id = ? AND answer_id <> ?');
  const votersOf = db.prepare<
    [number, string, string, number],
    { user_id: string; username: string; display_name: string | null; avatar_url: string | null; bot: number }
  >(
    `SELECT v.user_id, u.username, u.display_name, u.avatar_url, u.bot FROM poll_votes v JOIN profiles u ON u.id = v.user_id
      WHERE v.message_seq = ? AND v.answer_id = ? AND v.user_id > ? ORDER BY v.user_id LIMIT ?`,
  );
  const countsOf = db.prepare<[number], { answer_id: string; n: number }>(
    'SELECT answer_id, COUNT(*) AS n FROM poll_votes WHERE message_seq = ? GROUP BY answer_id',
  );
  const freeze = db.prepare('UPDATE polls SET ended_at = ?, results = ? WHERE message_seq = ? AND ended_at IS NULL');
  const expired = db.prepare<[string], { id: string; question: string; channel_id: string | null; conversation_id: string | null; server_id: string | null }>(
    `SELECT m.id, p.question, m.channel_id, m.conversation_id, c.server_id
       FROM polls p JOIN messages m ON m.seq = p.message_seq LEFT JOIN channels c ON c.id = m.channel_id
      WHERE p.ended_at IS NULL AND p.expires_at <= ?`,
  );
  const questionOf = db.prepare<[number], string>('SELECT question FROM polls WHERE message_seq = ?').pluck();

  const find = (messageId: string): PollState => {
    const poll = pollOf.get(messageId);
    if (!poll) throw notFound('this message has no poll');
    return poll;
  };
  const answerOf = (poll: PollState, answerId: string) => {
    const answer = (JSON.parse(poll.answers) as { answer_id: string; text: string }[]).find((a) => a.answer_id === answerId);
    if (!answer) throw notFound('answer not found');
    return answer;
  };

  // poll_vote, throttled per poll: at once when none was sent in the last second, else once at its end.
  const cooling = new Map<string, { at: Reached; dirty: boolean; timer: NodeJS.Timeout }>();
  const announce = (at: Reached, messageId: string, now = false) => {
    const cool = cooling.get(messageId);
    if (cool && !now) {
      cool.dirty = true;
      cool.at = at;
      return;
    }
    if (cool) clearTimeout(cool.timer);
    messages.announcePoll(at, messageId);
    const state = {
      at,
      dirty: false,
      timer: after(
        POLL_EVENT_MS,
        'poll-vote',
        () => {
          cooling.delete(messageId);
          if (state.dirty) announce(state.at, messageId);
        },
        log,
      ),
    };
    cooling.set(messageId, state);
  };

  /** Freezes the results (once) and tells everyone: the last poll_vote (ended) and the results message. */
  async function finish(at: Reached, messageId: string, seq: number, authorId: string): Promise<void> {
    const results: PollResult[] = [];
    const ended = db.transaction(() => {
      const counts = new Map(countsOf.all(seq).map((c) => [c.answer_id, c.n]));
      const answers = JSON.parse(pollOf.get(messageId)!.answers) as { answer_id: string; text: string }[];
      for (const a of answers) results.push({ answer_id: a.answer_id, count: counts.get(a.answer_id) ?? 0 });
      return freeze.run(iso(clock.now()), JSON.stringify(results), seq).changes === 1 ? answers : null;
    })();
    if (!ended) return;
    announce(at, messageId, true);
    const author = userById(authorId);
    if (!author) return;
    const top = Math.max(...results.map((r) => r.count));
    const winners = top === 0 ? [] : ended.filter((a, i) => results[i].count === top).map((a) => `“${a.text}”`);
    const total = results.reduce((n, r) => n + r.count, 0);
    const question = questionOf.get(seq)!;
    const content =
      winners.length === 0
        ? `📊 The poll “${question}” has ended with no votes.`
        : `📊 The poll “${question}” has ended: ${winners.join(' and ')} won with ${top} of ${total} vote${total === 1 ? '' : 's'}.`;
    await messages.create(at.container, author, { content, replyTo: messageId, files: [] }, { mayMentionEveryone: false });
  }

  const whereOf = (row: { channel_id: string | null; conversation_id: string | null; server_id: string | null }): Reached =>
    reachedWhole(
      row.channel_id ? ({ kind: 'channel', id: row.channel_id, serverId: row.server_id! } as Container) : { kind: 'conversation', id: row.conversation_id! },
    );

  return {
    vote(at, messageId, user, answerId) {
      const poll = find(messageId);
      answerOf(poll, answerId);
      // An expired poll the sweeper has not reached yet is ended all the same.
      if (poll.ended_at !== null || poll.expires_at <= iso(clock.now())) throw conflict('this poll has ended');
      db.transaction(() => {
        if (poll.allow_multiselect === 0) deleteOtherVotes.run(poll.seq, user.id, answerId);
        insertVote.run(poll.seq, answerId, user.id, iso(clock.now()));
      })();
      announce(at, messageId);
    },
    unvote(at, messageId, user, answerId) {
      const poll = find(messageId);
      answerOf(poll, answerId);
      if (poll.ended_at !== null || poll.expires_at <= iso(clock.now())) throw conflict('this poll has ended');
      if (deleteVote.run(poll.seq, answerId, user.id).changes > 0) announce(at, messageId);
    },
    voters(_at, messageId, answerId, afterId, limit) {
      const poll = find(messageId);
      answerOf(poll, answerId);
      return votersOf.all(poll.seq, answerId, afterId ?? '', limit).map((u) => userRef(u));
    },
    async end(at, messageId, user) {
      const poll = find(messageId);
      if (poll.author_id !== user.id) throw forbidden('only its author can end a poll');
      if (poll.ended_at !== null) throw conflict('this poll has ended');
      await finish(at, messageId, poll.seq, poll.author_id);
    },
    async sweep() {
      for (const row of expired.all(iso(clock.now()))) {
        const poll = pollOf.get(row.id);
        if (poll) await finish(whereOf(row), row.id, poll.seq, poll.author_id).catch(logFailure(log, 'poll expiry'));
      }
    },
    close() {
      for (const { timer } of cooling.values()) clearTimeout(timer);
      cooling.clear();
    },
  };
}

/** 400 unless `value` is a count of voters to page, 1 to MAX_VOTERS_PAGE (25 when absent). */
export function votersLimit(value: string | null): number {
  if (value === null) return 25;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_VOTERS_PAGE) throw badRequest(`limit must be an integer from 1 to ${MAX_VOTERS_PAGE}`);
  return n;
}
