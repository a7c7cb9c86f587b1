import { type Clock, MINUTE, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { attachmentUrl } from '../../core/message-record';
import { type AutoArchiveMinutes, FIRST_LINES_CHARS, type FirstMessage, type ThreadRecord } from '../../core/records';
import { type UserRef, userRef } from '../../core/types';
import { badRequest } from '../../core/http/errors';
import { MAX_ACTIVE_THREADS_PER_SERVER } from '../../rules/sizes';
import { createChannelStore } from './channels';

/** A thread to make: its channel's name, and what is its own. */
export interface NewThread {
  name: string;
  ownerId: string;
  private?: boolean;
  /** 1440 (a day) unless said. */
  autoArchiveMinutes?: AutoArchiveMinutes;
  appliedTags?: string[];
  starterMessageId?: string | null;
  /** An import: as it was (archived, locked, its last activity). */
  archived?: boolean;
  locked?: boolean;
}

/** What `PATCH …/channels/{thread_id}` changes of a thread (each absent: unchanged). */
export interface ThreadChange {
  name?: string;
  archived?: boolean;
  locked?: boolean;
  autoArchiveMinutes?: AutoArchiveMinutes;
  appliedTags?: string[];
}

/** A member of a thread as `GET …/members` lists them. */
export type ThreadMember = UserRef & { joined_at: string };

/** A thread as a channel's list gives it: with a forum post's first message and where that is (its seq), for the route to check. */
export interface ListedRow {
  thread: ThreadRecord;
  first: (FirstMessage & { seq: number }) | null;
}

/** Where an archived page starts: after the thread with this archive time and id (newest first). */
export interface ArchivedCursor {
  archivedAt: string;
  id: string;
}

/**
 * The one writer of `threads` and `thread_members` rows (schema.sql), and their reads: a thread's
 * record, a channel's active and archived threads, who follows what. A thread's channels row is
 * the channel store's (the one writer of channels), written here in the same step; everything runs
 * inside the caller's transaction where it writes several rows. Built on any connection
 * (`createThreadStore({ db, clock })`): the routes, the archiver and the importer's worker.
 *
 * A thread's message count and last activity are kept by schema.sql's triggers on messages,
 * whoever writes them; `archive_at` is when it archives by itself: its last activity (made, a
 * message, unarchived, a new auto_archive_minutes) plus auto_archive_minutes.
 */
export interface ThreadStore {
  /** A new thread of `parentId`; its (channel) id. */
  add(serverId: string, parentId: string, thread: NewThread, createdAt?: string): string;
  get(threadId: string): ThreadRecord | undefined;
  /** Whose thread a message started (a message id), if any. */
  ofStarter(messageId: string): string | null;
  update(threadId: string, change: ThreadChange): void;
  /** An import's thread, once its messages are in: the message it was started from, and whether it has archived since. */
  settle(threadId: string, starterMessageId: string | null, archiveIfDue: boolean): void;
  /** The thread and its channel go (its messages with it: schema.sql's cascades). */
  remove(threadId: string): void;
  /** These users follow the thread from now; the ones who did not already. */
  join(threadId: string, serverId: string, userIds: readonly string[]): string[];
  /** False when they did not follow it. */
  leave(threadId: string, userId: string): boolean;
  isMember(threadId: string, userId: string): boolean;
  members(threadId: string): ThreadMember[];
  /** The threads a user follows, of every server or one. */
  followedBy(userId: string, serverId?: string): Set<string>;
  /** A channel's active threads, the latest activity first (each with a forum post's first message). */
  active(parentId: string): ListedRow[];
  /**
   * A channel's archived threads that a reader who sees the channel sees (the private ones they
   * follow, or all with manage_threads there), the latest archived first, after `before` (each
   * with a forum post's first message).
   */
  archived(parentId: string, reader: { userId: string; managesThreads: boolean }, before: ArchivedCursor | null, limit: number): ListedRow[];
  /** The active threads of these servers (`ready`). */
  activeIn(serverIds: readonly string[]): ThreadRecord[];
  /** Active threads of a server (the cap). */
  activeCount(serverId: string): number;
  /** Past the active threads a server may hold, one more (a new thread, or one unarchived): 400 (archive some first). */
  requireRoom(serverId: string): void;
  /** Active threads whose archive time has come. */
  due(now: string, limit: number): ThreadRecord[];
  /** The posts of a forum keep only these tags (the others were removed from it); the posts that lost one. */
  keepTags(forumId: string, tagIds: readonly string[]): string[];
}

type Row = Omit<ThreadRecord, 'permissions_synced' | 'archived' | 'locked' | 'private' | 'applied_tags' | 'type' | 'parent_id' | 'auto_archive_minutes'> & {
  permissions_synced: number;
  archived: number;
  locked: number;
  private: number;
  applied_tags: string;
  parent_id: string;
  auto_archive_minutes: number;
};

const COLUMNS = `c.id, c.server_id, c.parent_id, c.name, c.position, c.created_at, c.topic, c.slowmode_seconds, c.category_id, c.permissions_synced,
  t.owner_id, t.archived, t.archived_at, t.locked, t.private, t.auto_archive_minutes, t.message_count,
  (SELECT COUNT(*) FROM thread_members tm WHERE tm.thread_id = t.channel_id) AS member_count,
  t.last_message_at, t.applied_tags, t.starter_message_id`;
const FROM = 'FROM threads t JOIN channels c ON c.id = t.channel_id';
/**
 * The lists' own: a forum post's first message (its starter, inside the thread; a text channel's
 * thread starts from a message of its parent, or none) and its first image, in the same statement
 * (no query per post). Only the first lines leave the database.
 */
const LISTED = `${COLUMNS}, m.seq AS first_seq, substr(m.content, 1, ${FIRST_LINES_CHARS}) AS first_content,
  (SELECT a.id FROM attachments a WHERE a.message_seq = m.seq AND a.preview_kind = 'image' ORDER BY a.position LIMIT 1) AS first_image
  ${FROM} LEFT JOIN messages m ON m.id = t.starter_message_id AND m.channel_id = t.channel_id`;
type ListRow = Row & { first_seq: number | null; first_content: string | null; first_image: string | null };

const listedRow = (row: ListRow): ListedRow => ({
  thread: threadRecord(row),
  first: row.first_seq === null ? null : { seq: row.first_seq, content: row.first_content ?? '', image: row.first_image && attachmentUrl(row.first_image) },
});

/** Field by field: a list of a thousand threads makes a thousand of these. */
export const threadRecord = (row: Row): ThreadRecord => ({
  id: row.id,
  server_id: row.server_id,
  type: 'thread',
  parent_id: row.parent_id,
  name: row.name,
  position: row.position,
  created_at: row.created_at,
  topic: row.topic,
  slowmode_seconds: row.slowmode_seconds,
  category_id: row.category_id,
  permissions_synced: row.permissions_synced === 1,
  owner_id: row.owner_id,
  archived: row.archived === 1,
  archived_at: row.archived_at,
  locked: row.locked === 1,
  private: row.private === 1,
  auto_archive_minutes: row.auto_archive_minutes as AutoArchiveMinutes,
  message_count: row.message_count,
  member_count: row.member_count,
  last_message_at: row.last_message_at,
  applied_tags: JSON.parse(row.applied_tags) as string[],
  starter_message_id: row.starter_message_id,
});

/** `at` plus `minutes`, as the trigger writes archive_at (ISO 8601, milliseconds, Z). */
const plus = (at: string, minutes: number) => iso(Date.parse(at) + minutes * MINUTE);

export function createThreadStore({ db, clock }: { db: DB; clock: Clock }): ThreadStore {
  const channels = createChannelStore({ db, clock });
  const insert = db.prepare(
    `INSERT INTO threads (channel_id, server_id, parent_id, owner_id, private, archived, archived_at, locked, auto_archive_minutes, archive_at, applied_tags, starter_message_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const one = db.prepare<[string], Row>(`SELECT ${COLUMNS} ${FROM} WHERE t.channel_id = ?`);
  const byStarter = db.prepare<[string], string>('SELECT channel_id FROM threads WHERE starter_message_id = ?').pluck();
  const setArchived = db.prepare<[number, string | null, string | null, string]>(
    // Unarchived: activity now, so it stays up for its whole auto-archive time from here.
    'UPDATE threads SET archived = ?, archived_at = COALESCE(?, archived_at), archive_at = COALESCE(?, archive_at) WHERE channel_id = ?',
  );
  const setLocked = db.prepare('UPDATE threads SET locked = ? WHERE channel_id = ?');
  const setMinutes = db.prepare('UPDATE threads SET auto_archive_minutes = ?, archive_at = ? WHERE channel_id = ?');
  const setTags = db.prepare('UPDATE threads SET applied_tags = ? WHERE channel_id = ?');
  const setStarter = db.prepare('UPDATE threads SET starter_message_id = ? WHERE channel_id = ?');
  const archiveIfDue = db.prepare('UPDATE threads SET archived = 1, archived_at = archive_at WHERE channel_id = ? AND archived = 0 AND archive_at <= ?');
  const addMember = db.prepare(
    'INSERT OR IGNORE INTO thread_members (thread_id, user_id, server_id, joined_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM members WHERE server_id = ? AND user_id = ?)',
  );
  const removeMember = db.prepare('DELETE FROM thread_members WHERE thread_id = ? AND user_id = ?');
  const memberRow = db.prepare<[string, string], number>('SELECT 1 FROM thread_members WHERE thread_id = ? AND user_id = ?').pluck();
  const membersOf = db.prepare<[string], Parameters<typeof userRef>[0] & { joined_at: string }>(
    `SELECT u.id AS user_id, u.username, u.display_name, u.avatar_url, u.bot, tm.joined_at
       FROM thread_members tm JOIN profiles u ON u.id = tm.user_id WHERE tm.thread_id = ? ORDER BY tm.joined_at, u.username`,
  );
  const followedAll = db.prepare<[string], string>('SELECT thread_id FROM thread_members WHERE user_id = ?').pluck();
  const followedIn = db.prepare<[string, string], string>('SELECT thread_id FROM thread_members WHERE user_id = ? AND server_id = ?').pluck();
  const activeOf = db.prepare<[string], ListRow>(
    `SELECT ${LISTED} WHERE t.parent_id = ? AND t.archived = 0 ORDER BY COALESCE(t.last_message_at, c.created_at) DESC, c.id DESC`,
  );
  // Archived threads as one reader sees them: the public ones, and the private ones they follow
  // (all of them for manage_threads, 1), so a page is one statement however many are hidden.
  const SEEN = 't.private = 0 OR ? = 1 OR EXISTS (SELECT 1 FROM thread_members tm WHERE tm.thread_id = t.channel_id AND tm.user_id = ?)';
  const archivedFirst = db.prepare<[string, number, string, number], ListRow>(
    `SELECT ${LISTED} WHERE t.parent_id = ? AND t.archived = 1 AND (${SEEN}) ORDER BY t.archived_at DESC, t.channel_id DESC LIMIT ?`,
  );
  const archivedAfter = db.prepare<[string, number, string, string, string, string, number], ListRow>(
    `SELECT ${LISTED} WHERE t.parent_id = ? AND t.archived = 1 AND (${SEEN}) AND (t.archived_at < ? OR (t.archived_at = ? AND t.channel_id < ?))
      ORDER BY t.archived_at DESC, t.channel_id DESC LIMIT ?`,
  );
  const activeOfServers = db.prepare<[string], Row>(
    `SELECT ${COLUMNS} ${FROM} WHERE t.server_id IN (SELECT value FROM json_each(?)) AND t.archived = 0 ORDER BY c.created_at, c.id`,
  );
  const countActive = db.prepare<[string], number>('SELECT COUNT(*) FROM threads WHERE server_id = ? AND archived = 0').pluck();
  const dueAt = db.prepare<[string, number], Row>(`SELECT ${COLUMNS} ${FROM} WHERE t.archived = 0 AND t.archive_at <= ? ORDER BY t.archive_at LIMIT ?`);
  const filterTags = db
    .prepare<[string, string, string], string>(
      `UPDATE threads SET applied_tags = (SELECT json_group_array(value) FROM json_each(threads.applied_tags) WHERE value IN (SELECT value FROM json_each(?)))
        WHERE parent_id = ? AND EXISTS (SELECT 1 FROM json_each(threads.applied_tags) WHERE value NOT IN (SELECT value FROM json_each(?)))
        RETURNING channel_id`,
    )
    .pluck();

  const now = () => iso(clock.now());
  const minutesOf = (threadId: string) => one.get(threadId)?.auto_archive_minutes ?? 1440;

  return {
    add(serverId, parentId, thread, createdAt = now()) {
      const id = channels.add(serverId, { name: thread.name, type: 'thread', parentId });
      const minutes = thread.autoArchiveMinutes ?? 1440;
      const archived = thread.archived ?? false;
      insert.run(
        id,
        serverId,
        parentId,
        thread.ownerId,
        thread.private ? 1 : 0,
        archived ? 1 : 0,
        archived ? createdAt : null,
        thread.locked ? 1 : 0,
        minutes,
        plus(createdAt, minutes),
        JSON.stringify(thread.appliedTags ?? []),
        thread.starterMessageId ?? null,
      );
      return id;
    },

    get(threadId) {
      const row = one.get(threadId);
      return row && threadRecord(row);
    },

    ofStarter: (messageId) => byStarter.get(messageId) ?? null,

    update(threadId, change) {
      if (change.name !== undefined) channels.rename(threadId, change.name);
      if (change.autoArchiveMinutes !== undefined) setMinutes.run(change.autoArchiveMinutes, plus(now(), change.autoArchiveMinutes), threadId);
      if (change.archived === true) setArchived.run(1, now(), null, threadId);
      if (change.archived === false) setArchived.run(0, null, plus(now(), change.autoArchiveMinutes ?? minutesOf(threadId)), threadId);
      if (change.locked !== undefined) setLocked.run(change.locked ? 1 : 0, threadId);
      if (change.appliedTags !== undefined) setTags.run(JSON.stringify(change.appliedTags), threadId);
    },

    settle(threadId, starterMessageId, archive) {
      if (starterMessageId !== null) setStarter.run(starterMessageId, threadId);
      if (archive) archiveIfDue.run(threadId, now());
    },

    remove: (threadId) => channels.remove(threadId),

    join(threadId, serverId, userIds) {
      const at = now();
      // Only members of the server follow its threads (someone who left is not brought back).
      return [...new Set(userIds)].filter((userId) => addMember.run(threadId, userId, serverId, at, serverId, userId).changes > 0);
    },

    leave: (threadId, userId) => removeMember.run(threadId, userId).changes > 0,

    isMember: (threadId, userId) => memberRow.get(threadId, userId) !== undefined,

    members: (threadId) => membersOf.all(threadId).map((row) => ({ ...userRef(row), joined_at: row.joined_at })),

    followedBy: (userId, serverId) => new Set(serverId === undefined ? followedAll.all(userId) : followedIn.all(userId, serverId)),

    active: (parentId) => activeOf.all(parentId).map(listedRow),

    archived(parentId, reader, before, limit) {
      const all = reader.managesThreads ? 1 : 0;
      const rows = before
        ? archivedAfter.all(parentId, all, reader.userId, before.archivedAt, before.archivedAt, before.id, limit)
        : archivedFirst.all(parentId, all, reader.userId, limit);
      return rows.map(listedRow);
    },

    activeIn: (serverIds) => (serverIds.length === 0 ? [] : activeOfServers.all(JSON.stringify(serverIds)).map(threadRecord)),

    activeCount: (serverId) => countActive.get(serverId) ?? 0,
    requireRoom(serverId) {
      if ((countActive.get(serverId) ?? 0) >= MAX_ACTIVE_THREADS_PER_SERVER) {
        throw badRequest(`a server may have at most ${MAX_ACTIVE_THREADS_PER_SERVER} active threads: archive some first`);
      }
    },

    due: (at, limit) => dueAt.all(at, limit).map(threadRecord),

    keepTags(forumId, tagIds) {
      const kept = JSON.stringify(tagIds);
      return filterTags.all(kept, forumId, kept);
    },
  };
}
