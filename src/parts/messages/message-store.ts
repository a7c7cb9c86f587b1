import crypto from 'node:crypto';
import type { ChannelTails } from './channel-tails';
import type { Clock } from '../../core/clock';
import { HOUR, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { createGroupCommit } from '../../core/group-commit';
import { badRequest, forbidden, notFound } from '../../core/http/errors';
import { type Mentioned, createMentions } from './mentions';
import { createMessageWrites } from './message-writes';
import { type Embed, isPreview } from '../../core/embed';
import { type MediaUrls, withMediaUrls } from '../../core/media-url';
import {
  type Attachment,
  type CustomEmoji,
  type MessageRecord,
  type MessageRow,
  type MessageSticker,
  type PollRecord,
  type PollRow,
  type Reaction,
  type ReplyRow,
  type ThreadSummary,
  showsReplyTo,
  toAttachment,
  toPoll,
  toRecord,
  withoutReply,
} from '../../core/message-record';
import type { Metrics } from '../../core/metrics';
import type { Hub } from '../delivery/hub';
import { type Container, type Reached, type User, reachedWhole } from '../../core/types';
import { isUuid } from '../../core/http/router';
import type { ReadStates } from './unread';
import type { ReceivedFile, UploadStore } from './upload-store';

/** Different emoji on one message, as Discord allows. */
export const MAX_REACTION_EMOJI = 20;
/** Emoji one user may put on one message. */
export const MAX_REACTIONS_PER_USER = 10;

export interface MessageInput {
  content: string;
  replyTo: string | null;
  files: ReceivedFile[];
  /** Rich cards (webhooks and bots); the message may then have no content. */
  embeds?: Embed[];
  /** Posted through a webhook: which, and the name and avatar link it gave for this message. */
  webhook?: { id: string; name: string | null; avatarUrl: string | null };
  /** Which of the mentions found may notify (Discord's allowed_mentions); absent: all of them. */
  allowedMentions?: AllowedMentions;
  /** A poll (issue 50; checked by the caller: src/api/messages.ts readPoll). */
  poll?: PollInput;
  /** Stickers of servers the author is in (issue 50; checked by the caller), at most 3. */
  stickerIds?: string[];
}

/** A poll as a message brings it. */
export interface PollInput {
  question: string;
  answers: { text: string; emoji: string | null }[];
  durationHours: number;
  allowMultiselect: boolean;
}

/** Discord's allowed_mentions: the kinds parsed from the text, and ids let through by name. */
export interface AllowedMentions {
  parse: ('users' | 'roles' | 'everyone')[];
  users: string[];
  roles: string[];
}

/** What the author may do here beyond writing (src/parts/messages/posting.ts decides it). */
export interface AuthorRights {
  /** Mention @everyone and roles (mention_everyone; a webhook unless its allowed_mentions says not). */
  mayMentionEveryone: boolean;
  /** The author's history floor here (src/core/types.ts Reached): a reply names a message above it. Absent: 0. */
  historyFloor?: number;
}

export interface Paging {
  before: string | null;
  after: string | null;
  /** The page centred on this message (docs/api.md "Paging"). */
  around: string | null;
  limit: number;
}

/** A message row with the server of its channel (null in a conversation): enough to place it. */
export type PlacedRow = MessageRow & { server_id: string | null };

/**
 * A message written inside a caller's transaction (MessageStore.insert), not yet announced: what
 * MessageStore.announce needs once that transaction committed.
 */
export interface Written {
  container: Container;
  row: MessageRow;
  reply: MessageRow | undefined;
  attachments: Attachment[];
  poll?: PollRecord;
  stickers?: MessageSticker[];
}

/**
 * Every function that reads or acts on messages already there takes the container as its reader
 * reached it (`at`): below their history floor, a message does not exist for them (404).
 */
export interface MessageStore {
  /** Newest first; with `after`, the messages after that one, oldest first. */
  list(at: Reached, viewerId: string, paging: Paging): MessageRecord[];
  get(at: Reached, messageId: string, viewerId: string): MessageRecord;
  /** Records of rows from anywhere (search results), in the given order; `floorOf`: the viewer's history floor in a channel. */
  records(rows: PlacedRow[], viewerId: string, floorOf: (channelId: string) => number): MessageRecord[];
  /**
   * Resolves once the message committed (with others of the same turn: src/core/group-commit.ts),
   * then announces it. Whether the author may post it is src/parts/messages/posting.ts's to say.
   * `alongside` runs in the message's own write, all or nothing with it (a thread's: its members, unarchiving).
   */
  create(container: Container, author: User, input: MessageInput, rights: AuthorRights, alongside?: (written: Written) => void): Promise<MessageRecord>;
  /**
   * The same write inside the caller's own transaction (a forum post: a thread and its first
   * message, all or nothing); the caller announces it after the commit, and not if it rolled back.
   */
  insert(container: Container, author: User, input: MessageInput, rights: AuthorRights): Written;
  /** Tells of a message `insert` wrote, once its transaction committed: the channel's tail, the metrics, the sockets. */
  announce(written: Written): MessageRecord;
  /** `embeds`: new cards too (a webhook editing its own message); absent, the cards stay. */
  edit(at: Reached, messageId: string, editor: User, content: string, rights: AuthorRights, embeds?: Embed[]): MessageRecord;
  /** `write` runs in the delete's transaction (the audit entry of a moderator's delete). */
  remove(at: Reached, messageId: string, remover: User, canModerate: boolean, write?: () => void): void;
  react(at: Reached, messageId: string, user: User, emoji: string, add: boolean): MessageRecord;
  /** Tells the readers of a message its poll as it now stands (`poll_vote`). */
  announcePoll(at: Reached, messageId: string): void;
  /** emoji -> users who reacted with it, for per-recipient `reacted` in live events. */
  reactors(messageId: string): Map<string, Set<string>>;
  /** Pins or unpins (idempotent); 400 past MAX_PINS. `write` runs in the same transaction (the audit entry). */
  pin(at: Reached, messageId: string, user: User, pinned: boolean, write?: () => void): MessageRecord;
  /** The pinned messages, most recently pinned first. */
  pins(at: Reached, viewerId: string): MessageRecord[];
  /** Every version of a message, oldest first, the current one last. */
  history(at: Reached, messageId: string): { author_id: string; versions: MessageVersion[] };
  /** The row's author (who may read its history, delete it...). */
  authorOf(at: Reached, messageId: string): string;
  /**
   * A message's link previews as the fetcher found them for `content` (src/parts/messages/previews.ts),
   * replacing those it had (its rich embeds stay), announced as message_updated. Nothing is
   * written, and false is answered, when the message is gone, its previews were removed, its
   * text changed meanwhile, or the previews are those it has.
   */
  setPreviews(container: Container, messageId: string, content: string, previews: Embed[]): boolean;
  /** Removes a message's link previews for good (`suppress_embeds`): its author, or a moderator (`canModerate`). */
  suppressEmbeds(at: Reached, messageId: string, user: User, canModerate: boolean): MessageRecord;
  /** Deletes every message a webhook posted in the channel, with `write` (the webhook's own delete) in the same transaction; the count. */
  removeByWebhook(container: Container, webhookId: string, write: (count: number) => void): number;
}

export const COLUMNS = `m.seq, m.id, m.channel_id, m.conversation_id, m.author_id, u.username, u.display_name, u.avatar_url, u.bot, m.content, m.reply_to,
  m.created_at, m.edited_at, m.mentions, m.mention_everyone, m.mention_roles, m.pinned_at, m.webhook_id, m.author_name, m.author_avatar, m.embeds`;

/** Pinned messages one channel or conversation may hold. */
export const MAX_PINS = 50;

/** One version of a message, oldest first in a history. */
export interface MessageVersion {
  content: string;
  /** When this version was written by an edit; null for the original. */
  edited_at: string | null;
}

export interface MessageStoreParts {
  db: DB;
  clock: Clock;
  hub: Hub;
  uploads: UploadStore;
  metrics: Pick<Metrics, 'messageSent'>;
  readStates: Pick<ReadStates, 'advance'>;
  /** Told of every committed, edited and deleted channel message. */
  tails: Pick<ChannelTails, 'added' | 'changed'>;
  /** The proxy URLs of the remote images records show. */
  media: MediaUrls;
}

/**
 * The message store: every read and write of messages, reactions, mentions and attachment
 * rows, and the live events they cause (committed first, then announced).
 */
export function createMessageStore({ db, clock, hub, uploads, metrics, readStates, tails, media }: MessageStoreParts): MessageStore {
  const mentions = createMentions(db);
  const writes = createMessageWrites(db);
  const commits = createGroupCommit(db);

  // Channel and conversation messages differ only in the column naming the container.
  const byContainer = (column: 'channel_id' | 'conversation_id') => ({
    newest: db.prepare<[string, number], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN profiles u ON u.id = m.author_id
        WHERE m.${column} = ? ORDER BY m.seq DESC LIMIT ?`,
    ),
    before: db.prepare<[string, number, number], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN profiles u ON u.id = m.author_id
        WHERE m.${column} = ? AND m.seq < ? ORDER BY m.seq DESC LIMIT ?`,
    ),
    after: db.prepare<[string, number, number], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN profiles u ON u.id = m.author_id
        WHERE m.${column} = ? AND m.seq > ? ORDER BY m.seq ASC LIMIT ?`,
    ),
    one: db.prepare<[string, string], MessageRow>(`SELECT ${COLUMNS} FROM messages m JOIN profiles u ON u.id = m.author_id WHERE m.id = ? AND m.${column} = ?`),
  });
  const queries = { channel: byContainer('channel_id'), conversation: byContainer('conversation_id') };

  /** The mentions allowed_mentions lets notify: a kind in `parse`, or an id named in `users`/`roles`. */
  const allowedOnly = (found: Mentioned, allowed: AllowedMentions | undefined): Mentioned =>
    allowed
      ? {
          ...found,
          userIds: found.userIds.filter((id) => allowed.parse.includes('users') || allowed.users.includes(id)),
          roleIds: found.roleIds.filter((id) => allowed.parse.includes('roles') || allowed.roles.includes(id)),
          everyone: found.everyone && allowed.parse.includes('everyone'),
        }
      : found;
  const mentionsOf = (container: Container, input: MessageInput, rights: AuthorRights) =>
    allowedOnly(mentions.find(container, input.content, rights.mayMentionEveryone), input.allowedMentions);
  const requireSomething = (input: MessageInput) => {
    if (input.content.trim() === '' && input.files.length === 0 && !input.embeds?.length && !input.poll && !input.stickerIds?.length) {
      throw badRequest('content must not be empty unless the message has attachments');
    }
  };
  // One write, all or nothing: the message, its attachments and mentions, and the sender's read
  // marker, which moves to what they sent. Always inside a transaction: the group commit's (a
  // savepoint of its own for each write) or the caller's (insert).
  const write = (container: Container, author: User, input: MessageInput, found: Mentioned, rights: AuthorRights): Written => {
    const reply = input.replyTo ? replyIn({ container, historyFloor: rights.historyFloor ?? 0 }, input.replyTo) : undefined;
    const { row, attachments } = writes.insert({
      id: timeOrderedUuid(clock.now()),
      container,
      authorId: author.id,
      content: input.content,
      replyTo: input.replyTo,
      createdAt: iso(clock.now()),
      mentions: found,
      files: input.files,
      embeds: input.embeds,
      webhook: input.webhook,
    });
    readStates.advance(author.id, container.id, row.seq);
    const bot = input.webhook ? 2 : author.bot ? 1 : 0;
    return {
      container,
      row: { ...row, username: author.username, display_name: author.displayName, avatar_url: author.avatarUrl, bot },
      reply,
      attachments: attachments.map(toAttachment),
      ...(input.poll ? { poll: insertPoll(row.seq, input.poll) } : {}),
      ...(input.stickerIds?.length ? { stickers: insertStickers(row.seq, input.stickerIds) } : {}),
    };
  };
  function insertStickers(seq: number, ids: string[]): MessageSticker[] {
    writes.addStickers(seq, ids);
    return stickersOf(JSON.stringify([seq])).get(seq) ?? [];
  }
  const stickersOfPage = db.prepare<[string], { message_seq: number; id: string; name: string; animated: number; deleted_at: string | null }>(
    `SELECT ms.message_seq, s.id, s.name, s.animated, s.deleted_at FROM message_stickers ms JOIN stickers s ON s.id = ms.sticker_id
      WHERE ms.message_seq IN (SELECT value FROM json_each(?)) ORDER BY ms.message_seq, ms.position`,
  );
  function stickersOf(seqs: string): Map<number, MessageSticker[]> {
    const by = new Map<number, MessageSticker[]>();
    for (const s of stickersOfPage.all(seqs)) {
      const list = by.get(s.message_seq) ?? [];
      list.push({ id: s.id, name: s.name, animated: s.animated === 1, url: `/stickers/${s.id}`, available: s.deleted_at === null });
      by.set(s.message_seq, list);
    }
    return by;
  }
  function insertPoll(seq: number, poll: PollInput): PollRecord {
    const answers = poll.answers.map((a) => ({ answer_id: crypto.randomUUID(), text: a.text, emoji: a.emoji }));
    const expiresAt = iso(clock.now() + poll.durationHours * HOUR);
    writes.addPoll(seq, { question: poll.question, answers: JSON.stringify(answers), allowMultiselect: poll.allowMultiselect, expiresAt });
    return toPoll(
      {
        question: poll.question,
        answers: JSON.stringify(answers),
        allow_multiselect: poll.allowMultiselect ? 1 : 0,
        expires_at: expiresAt,
        ended_at: null,
        results: null,
      },
      new Map(),
    );
  }
  const pollsOfPage = db.prepare<[string], PollRow & { message_seq: number }>(
    'SELECT message_seq, question, answers, allow_multiselect, expires_at, ended_at, results FROM polls WHERE message_seq IN (SELECT value FROM json_each(?))',
  );
  const votesOfPage = db.prepare<[string], { message_seq: number; answer_id: string; n: number }>(
    'SELECT message_seq, answer_id, COUNT(*) AS n FROM poll_votes WHERE message_seq IN (SELECT value FROM json_each(?)) GROUP BY message_seq, answer_id',
  );
  /** The polls of a page of messages, by seq: two queries whatever its size. */
  function pollsOf(seqs: string): Map<number, PollRecord> {
    const polls = new Map<number, PollRecord>();
    const rows = pollsOfPage.all(seqs);
    if (rows.length === 0) return polls;
    const counts = new Map<number, Map<string, number>>();
    for (const v of votesOfPage.all(JSON.stringify(rows.filter((r) => r.ended_at === null).map((r) => r.message_seq)))) {
      const of = counts.get(v.message_seq) ?? new Map<string, number>();
      of.set(v.answer_id, v.n);
      counts.set(v.message_seq, of);
    }
    for (const row of rows) polls.set(row.message_seq, toPoll(row, counts.get(row.message_seq) ?? new Map()));
    return polls;
  }
  const versionsOf = db.prepare<[number], { content: string; written_at: string }>(
    'SELECT content, written_at FROM message_edits WHERE message_seq = ? ORDER BY rowid',
  );
  const byColumn = (column: 'channel_id' | 'conversation_id') => ({
    pinCount: db.prepare<[string], { n: number }>(`SELECT COUNT(*) AS n FROM messages WHERE ${column} = ? AND pinned_at IS NOT NULL`),
    pinned: db.prepare<[string], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN profiles u ON u.id = m.author_id
        WHERE m.${column} = ? AND m.pinned_at IS NOT NULL ORDER BY m.pinned_at DESC, m.seq DESC`,
    ),
  });
  const pinQueries = { channel: byColumn('channel_id'), conversation: byColumn('conversation_id') };
  const editContent = db.transaction((container: Container, row: MessageRow, content: string, found: Mentioned, now: string, embeds?: Embed[]) => {
    // The version this edit replaces is kept: the history, and what a report of it shows.
    writes.keepVersion(row.seq, row.content, row.edited_at ?? row.created_at);
    writes.setText(row.seq, content, found, now);
    if (embeds) writes.setEmbeds(row.seq, embeds);
    // An edit recounts its mentions: a name added is now mentioned, a name removed is not.
    writes.recountMentions(row.seq, container, row.author_id, found);
  });
  const webhookMessages = db.prepare<[string, string], { seq: number; id: string }>('SELECT seq, id FROM messages WHERE webhook_id = ? AND channel_id = ?');
  const deleteReaction = db.prepare('DELETE FROM reactions WHERE message_seq = ? AND emoji = ? AND user_id = ?');
  const hasEmoji = db.prepare<[number, string], { one: number }>('SELECT 1 AS one FROM reactions WHERE message_seq = ? AND emoji = ? LIMIT 1');
  const distinctEmoji = db.prepare<[number], { n: number }>('SELECT COUNT(DISTINCT emoji) AS n FROM reactions WHERE message_seq = ?');
  const reactionsOfUser = db.prepare<[number, string], { n: number }>('SELECT COUNT(*) AS n FROM reactions WHERE message_seq = ? AND user_id = ?');
  const hasReaction = db.prepare<[number, string, string], { one: number }>(
    'SELECT 1 AS one FROM reactions WHERE message_seq = ? AND emoji = ? AND user_id = ?',
  );
  /** Adds a reaction unless it would pass a cap: a message's emoji stay few, so its record stays small. */
  const addReaction = db.transaction((seq: number, emoji: string, userId: string, now: string) => {
    if (hasReaction.get(seq, emoji, userId)) return;
    if (!hasEmoji.get(seq, emoji) && distinctEmoji.get(seq)!.n >= MAX_REACTION_EMOJI) {
      throw badRequest(`a message may carry at most ${MAX_REACTION_EMOJI} different reactions`);
    }
    if (reactionsOfUser.get(seq, userId)!.n >= MAX_REACTIONS_PER_USER) {
      throw badRequest(`you may react to one message with at most ${MAX_REACTIONS_PER_USER} emoji`);
    }
    writes.addReaction(seq, emoji, userId, now);
  });
  const reactorRows = db.prepare<[string], { emoji: string; user_id: string }>(
    `SELECT r.emoji, r.user_id FROM reactions r JOIN messages m ON m.seq = r.message_seq WHERE m.id = ?`,
  );

  // A page is hydrated with three queries whatever its size (no N+1): reactions, attachments, replies.
  // Reactions an import counted without naming who reacted (reaction_extras) add to the count.
  const reactionsOfPage = db.prepare<Record<string, string>, { message_seq: number; emoji: string; count: number; mine: number }>(
    `SELECT message_seq, emoji, SUM(n) AS count, MAX(mine) AS mine FROM (
       SELECT message_seq, emoji, COUNT(*) AS n, MAX(user_id = :viewer) AS mine, MIN(created_at) AS first
         FROM reactions WHERE message_seq IN (SELECT value FROM json_each(:seqs)) GROUP BY message_seq, emoji
       UNION ALL
       SELECT message_seq, emoji, extra, 0, NULL FROM reaction_extras WHERE message_seq IN (SELECT value FROM json_each(:seqs)))
      GROUP BY message_seq, emoji ORDER BY message_seq, MIN(first) IS NULL, MIN(first), emoji`,
  );
  const attachmentsOfPage = db.prepare<[string], { message_seq: number } & Omit<Attachment, 'url'>>(
    `SELECT message_seq, id, name, content_type, size, preview_kind
       FROM attachments WHERE message_seq IN (SELECT value FROM json_each(?)) ORDER BY message_seq, position`,
  );
  // The threads started from messages of a page (only messages of a channel can start one).
  const threadsOfPage = db.prepare<
    [string],
    Omit<ThreadSummary, 'archived' | 'locked'> & { starter_message_id: string; parent_id: string; archived: number; locked: number }
  >(
    `SELECT t.starter_message_id, t.parent_id, c.id, c.name, t.message_count, t.last_message_at, t.archived, t.locked
       FROM threads t JOIN channels c ON c.id = t.channel_id WHERE t.starter_message_id IN (SELECT value FROM json_each(?))`,
  );
  const repliesOfPage = db.prepare<[string], ReplyRow>(
    `SELECT m.seq, m.id, m.author_id, u.username, u.display_name, u.avatar_url, u.bot, m.author_name, m.content
       FROM messages m JOIN profiles u ON u.id = m.author_id WHERE m.id IN (SELECT value FROM json_each(?))`,
  );

  // A custom emoji's reactions are stored under its id (a UUID, which no Unicode emoji is); deleted ones keep their row.
  const customEmojiRows = db.prepare<[string], { id: string; name: string; animated: number; deleted_at: string | null }>(
    'SELECT id, name, animated, deleted_at FROM emojis WHERE id IN (SELECT value FROM json_each(?))',
  );
  /** How reactions stored under `keys` show: a custom emoji's id becomes the emoji; a Unicode emoji stays itself. */
  function shownEmoji(keys: Iterable<string>): (key: string) => Reaction['emoji'] {
    const ids = [...new Set(keys)].filter(isUuid);
    const custom = new Map<string, CustomEmoji>();
    if (ids.length > 0) {
      for (const e of customEmojiRows.all(JSON.stringify(ids))) {
        custom.set(e.id, { id: e.id, name: e.name, animated: e.animated === 1, available: e.deleted_at === null });
      }
    }
    return (key) => custom.get(key) ?? key;
  }

  function hydrate(rows: MessageRow[], viewerId: string, at: Reached | ((row: MessageRow) => Reached)): MessageRecord[] {
    if (typeof at !== 'function') rows = rows.filter((row) => isShown(at, row));
    if (rows.length === 0) return [];
    const seqs = JSON.stringify(rows.map((r) => r.seq));
    const reactions = new Map<number, Reaction[]>();
    const reactionRows = reactionsOfPage.all({ viewer: viewerId, seqs });
    const shown = shownEmoji(reactionRows.map((r) => r.emoji));
    for (const r of reactionRows) {
      const list = reactions.get(r.message_seq) ?? [];
      list.push({ emoji: shown(r.emoji), count: r.count, reacted: r.mine === 1 });
      reactions.set(r.message_seq, list);
    }
    const attachments = new Map<number, Attachment[]>();
    for (const { message_seq, ...a } of attachmentsOfPage.all(seqs)) {
      const list = attachments.get(message_seq) ?? [];
      list.push(toAttachment(a));
      attachments.set(message_seq, list);
    }
    const replyIds = rows.map((r) => r.reply_to).filter((id): id is string => id !== null);
    const replies = new Map(replyIds.length ? repliesOfPage.all(JSON.stringify(replyIds)).map((r) => [r.id, r]) : []);
    const inChannels = rows.filter((r) => r.channel_id !== null).map((r) => r.id);
    const threads = new Map<string, { parent: string; summary: ThreadSummary }>();
    if (inChannels.length > 0) {
      for (const { starter_message_id, parent_id, archived, locked, ...t } of threadsOfPage.all(JSON.stringify(inChannels))) {
        threads.set(starter_message_id, { parent: parent_id, summary: { ...t, archived: archived === 1, locked: locked === 1 } });
      }
    }
    const reachedOf = typeof at === 'function' ? at : () => at;
    const polls = pollsOf(seqs);
    const stickers = stickersOf(seqs);
    return rows.map((row) => {
      const { container, historyFloor } = reachedOf(row);
      const reply = row.reply_to ? replies.get(row.reply_to) : undefined;
      const record = withMediaUrls(toRecord(row, container, attachments.get(row.seq) ?? [], reactions.get(row.seq) ?? [], reply), media);
      const poll = polls.get(row.seq);
      if (poll) record.poll = poll;
      const carried = stickers.get(row.seq);
      if (carried) record.stickers = carried;
      // A thread shows on the message it was started from, in its parent (a forum post's first message is inside it).
      const thread = threads.get(row.id);
      if (thread && thread.parent === row.channel_id) record.thread = thread.summary;
      // What the reply answers, only to who may read that (read_history): else no reply at all.
      return row.reply_to === null || showsReplyTo(historyFloor, reply?.seq ?? null) ? record : withoutReply(record);
    });
  }

  /** A message of the container the viewer may see (not one hidden by their lack of read_history), or undefined. */
  function rowIn(at: Reached, messageId: string): MessageRow | undefined {
    const row = queries[at.container.kind].one.get(messageId, at.container.id);
    return row && isShown(at, row) ? row : undefined;
  }

  function findRow(at: Reached, messageId: string): MessageRow {
    const row = rowIn(at, messageId);
    if (!row) throw notFound('message not found');
    return row;
  }

  /** The message a reply names: a field of the request, so one not in this room is a 400 (the spec's rule). */
  function replyIn(at: Reached, messageId: string): MessageRow {
    const row = rowIn(at, messageId);
    if (!row) throw badRequest(`reply_to must name a message in this ${at.container.kind}`);
    return row;
  }
  /** The message a paging cursor names: 404 when this room has none such (deleted meanwhile, or never here). */
  function cursorIn(at: Reached, messageId: string, what: string): MessageRow {
    const row = rowIn(at, messageId);
    if (!row) throw notFound(`${what}: no such message in this ${at.container.kind}`);
    return row;
  }

  const seqOf = db.prepare<[string], number>('SELECT seq FROM messages WHERE id = ?').pluck();
  /**
   * A changed message as live delivery tells it: the record as a reader of the whole history
   * sees it, its seq and its reply's (the hub gives each reader their share, src/parts/delivery/hub.ts);
   * and as the one who changed it sees it (their history floor applied), for their answer.
   */
  function changed(at: Reached, row: MessageRow, actorId: string) {
    const message = store.get(reachedWhole(at.container), row.id, actorId);
    const replySeq = row.reply_to === null ? null : (seqOf.get(row.reply_to) ?? null);
    const own = row.reply_to === null || showsReplyTo(at.historyFloor, replySeq) ? message : withoutReply(message);
    return { live: { seq: row.seq, replySeq, message }, own };
  }

  const embedsOf = db.prepare<[string], { seq: number; content: string; embeds: string | null; embeds_suppressed: number }>(
    'SELECT seq, content, embeds, embeds_suppressed FROM messages WHERE id = ?',
  );
  /** The embeds a message keeps when its previews change: its own (a webhook's, a bot's). */
  const ownEmbeds = (embeds: string | null) => (embeds ? (JSON.parse(embeds) as Embed[]).filter((e) => !isPreview(e)) : []);
  /** Tells the readers of a message whose embeds changed (message_updated). */
  const announceChanged = (at: Reached, messageId: string, actorId: string) => {
    if (at.container.kind === 'channel') tails.changed(at.container.id);
    const { container } = at;
    const row = findRow(at, messageId);
    const { live, own } = changed(at, row, actorId);
    hub.message(container, { kind: 'updated', ...live, reactors: () => store.reactors(messageId) });
    return own;
  };

  const reactionCount = db.prepare<Record<string, number | string>, { n: number }>(
    `SELECT (SELECT COUNT(*) FROM reactions WHERE message_seq = :seq AND emoji = :emoji)
          + COALESCE((SELECT extra FROM reaction_extras WHERE message_seq = :seq AND emoji = :emoji), 0) AS n`,
  );

  const store: MessageStore = {
    list(at, viewerId, { before, after, around, limit }) {
      if ([before, after, around].filter(Boolean).length > 1) throw badRequest('use one of before, after and around');
      const { container } = at;
      const q = queries[container.kind];
      if (around) {
        // The message, up to half the rest newer and the others older; newest first like every page.
        const centre = cursorIn(at, around, 'around');
        const newer = q.after.all(container.id, centre.seq, Math.floor((limit - 1) / 2)).reverse();
        const older = q.before.all(container.id, centre.seq, limit - 1 - Math.floor((limit - 1) / 2));
        return hydrate([...newer, centre, ...older], viewerId, at);
      }
      if (before) return hydrate(q.before.all(container.id, cursorIn(at, before, 'before').seq, limit), viewerId, at);
      if (after) return hydrate(q.after.all(container.id, cursorIn(at, after, 'after').seq, limit), viewerId, at);
      return hydrate(q.newest.all(container.id, limit), viewerId, at);
    },

    get(at, messageId, viewerId) {
      return hydrate([findRow(at, messageId)], viewerId, at)[0];
    },

    records(rows, viewerId, floorOf) {
      return hydrate(rows, viewerId, (row) => {
        const { channel_id, conversation_id, server_id } = row as PlacedRow;
        if (!channel_id) return reachedWhole({ kind: 'conversation', id: conversation_id! });
        return { container: { kind: 'channel', id: channel_id, serverId: server_id! }, historyFloor: floorOf(channel_id) };
      });
    },

    async create(container, author, input, rights, alongside) {
      requireSomething(input);
      const found = mentionsOf(container, input, rights);
      let written: Written;
      try {
        written = await commits.run(() => {
          const done = write(container, author, input, found, rights);
          alongside?.(done);
          return done;
        });
      } catch (err) {
        // The room was deleted between the access check and the batch's turn.
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw notFound(`${container.kind} not found`);
        throw err;
      }
      return store.announce(written);
    },

    insert(container, author, input, rights) {
      // Its rows are one write only inside the caller's transaction: outside one, each statement would commit alone.
      if (!db.inTransaction) throw new Error("MessageStore.insert runs inside the caller's transaction");
      requireSomething(input);
      return write(container, author, input, mentionsOf(container, input, rights), rights);
    },

    announce({ container, row, reply, attachments, poll, stickers }) {
      tails.added(row);
      // A new message has no reactions yet; everything else came back from the inserts.
      const record = withMediaUrls(toRecord(row, container, attachments, [], reply), media);
      if (poll) record.poll = poll;
      if (stickers) record.stickers = stickers;
      metrics.messageSent();
      hub.message(container, { kind: 'created', seq: row.seq, replySeq: reply?.seq ?? null, message: record });
      return record;
    },

    edit(at, messageId, editor, content, rights, embeds) {
      const { container } = at;
      const row = findRow(at, messageId);
      if (row.author_id !== editor.id) throw forbidden('only the author can edit a message');
      const current = store.get(at, messageId, editor.id);
      if (content.trim() === '' && current.attachments.length === 0 && !(embeds ?? current.embeds ?? []).length) {
        throw badRequest('content must not be empty unless the message has attachments');
      }
      editContent(container, row, content, mentions.find(container, content, rights.mayMentionEveryone), iso(clock.now()), embeds);
      if (container.kind === 'channel') tails.changed(container.id);
      const { live, own } = changed(at, row, editor.id);
      hub.message(container, { kind: 'edited', ...live, reactors: () => store.reactors(messageId) });
      return own;
    },

    setPreviews(container, messageId, content, previews) {
      const wrote = db.transaction(() => {
        const row = embedsOf.get(messageId);
        if (!row || row.embeds_suppressed === 1 || row.content !== content) return false;
        const embeds = [...ownEmbeds(row.embeds), ...previews];
        if (JSON.stringify(embeds) === (row.embeds ?? '[]')) return false;
        writes.setEmbeds(row.seq, embeds, false);
        return true;
      })();
      if (wrote) announceChanged(reachedWhole(container), messageId, findRow(reachedWhole(container), messageId).author_id);
      return wrote;
    },

    suppressEmbeds(at, messageId, user, canModerate) {
      const row = findRow(at, messageId);
      if (row.author_id !== user.id && !canModerate) throw forbidden("only the author or a moderator can remove a message's previews");
      db.transaction(() => {
        const current = embedsOf.get(messageId)!;
        writes.setEmbeds(current.seq, ownEmbeds(current.embeds), true);
      })();
      return announceChanged(at, messageId, user.id);
    },

    remove(at, messageId, remover, canModerate, audit) {
      const { container } = at;
      const row = findRow(at, messageId);
      if (row.author_id !== remover.id && !canModerate) {
        throw forbidden(
          container.kind === 'channel' ? 'only the author or a full server administrator can delete a message' : 'only the author can delete a message',
        );
      }
      const fileIds = db.transaction(() => {
        const ids = writes.remove(row.seq);
        audit?.();
        return ids;
      })();
      if (container.kind === 'channel') tails.changed(container.id);
      // Files go after the commit: a failed delete never leaves a message pointing at nothing.
      uploads.deleteFiles(fileIds);
      hub.message(container, { kind: 'deleted', messageId, seq: row.seq });
    },

    removeByWebhook(container, webhookId, alongside) {
      const { rows, fileIds } = db.transaction(() => {
        const rows = webhookMessages.all(webhookId, container.id);
        const fileIds = rows.flatMap((row) => writes.remove(row.seq));
        alongside(rows.length);
        return { rows, fileIds };
      })();
      if (rows.length > 0) tails.changed(container.id);
      uploads.deleteFiles(fileIds);
      for (const row of rows) hub.message(container, { kind: 'deleted', messageId: row.id, seq: row.seq });
      return rows.length;
    },

    react(at, messageId, user, emoji, add) {
      const row = findRow(at, messageId);
      if (add) addReaction(row.seq, emoji, user.id, iso(clock.now()));
      else deleteReaction.run(row.seq, emoji, user.id);
      const { live, own } = changed(at, row, user.id);
      const count = reactionCount.get({ seq: row.seq, emoji })!.n;
      hub.message(at.container, {
        kind: 'reaction',
        ...live,
        reactors: () => store.reactors(messageId),
        emoji: shownEmoji([emoji])(emoji),
        userId: user.id,
        added: add,
        count,
      });
      return own;
    },

    announcePoll(at, messageId) {
      const row = findRow(at, messageId);
      const { live } = changed(at, row, row.author_id);
      if (live.message.poll) hub.message(at.container, { kind: 'poll', ...live, poll: live.message.poll });
    },

    pin(at, messageId, user, pinned, audit) {
      const { container } = at;
      const row = findRow(at, messageId);
      db.transaction(() => {
        if ((row.pinned_at !== null) === pinned) return;
        // 400, issue 18's status for the cap (issue 45: a published status is kept).
        if (pinned && pinQueries[container.kind].pinCount.get(container.id)!.n >= MAX_PINS) {
          throw badRequest(`a ${container.kind} may have at most ${MAX_PINS} pinned messages`);
        }
        writes.setPinned(row.seq, pinned ? { at: iso(clock.now()), by: user.id } : null);
        audit?.();
      })();
      const { live, own } = changed(at, row, user.id);
      hub.message(container, { kind: pinned ? 'pinned' : 'unpinned', ...live, reactors: () => store.reactors(messageId) });
      return own;
    },

    pins: (at, viewerId) => hydrate(pinQueries[at.container.kind].pinned.all(at.container.id), viewerId, at),

    history(at, messageId) {
      const row = findRow(at, messageId);
      const earlier = versionsOf.all(row.seq).map((v, i) => ({ content: v.content, edited_at: i === 0 ? null : v.written_at }));
      return { author_id: row.author_id, versions: [...earlier, { content: row.content, edited_at: row.edited_at }] };
    },

    authorOf: (at, messageId) => findRow(at, messageId).author_id,

    reactors(messageId) {
      const map = new Map<string, Set<string>>();
      for (const { emoji, user_id } of reactorRows.all(messageId)) {
        const set = map.get(emoji) ?? new Set<string>();
        set.add(user_id);
        map.set(emoji, set);
      }
      return map;
    },
  };
  return store;
}

/** Whether a message is shown to whoever reached its container (read_history: src/core/types.ts Reached). */
const isShown = (at: Reached, row: { seq: number }) => row.seq > at.historyFloor;

/**
 * A UUID version 7 (RFC 9562): 48 bits of milliseconds, then random bits. Message ids grow
 * with time, so inserting one appends to the id index instead of writing to a random page of
 * it, which keeps posting fast however long a history gets. Message ids are not secrets
 * (access is checked by membership), so telling their time is fine.
 */
export function timeOrderedUuid(nowMs: number): string {
  // randomUUID draws from a cached entropy pool; randomBytes(16) costs a system call each time.
  const random = crypto.randomUUID(); // xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx: keep its variant and tail
  const time = nowMs.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}
