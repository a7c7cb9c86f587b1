import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import type { ChannelType, ForumSort, ForumTag } from '../../core/records';
import { DEFAULT_VOICE_BITRATE } from '../../rules/sizes';

/** A channel to make: its name, and what else it starts with. */
export interface NewChannel {
  name: string;
  /** 'text' by default. */
  type?: ChannelType;
  /** The channel it belongs to (a thread's parent); none by default. */
  parentId?: string | null;
  /** '' by default. */
  topic?: string;
  /** The category it is listed under; none by default. */
  categoryId?: string | null;
  /** A voice channel's: at most this many people at once (0, the default: no limit). */
  userLimit?: number;
  /** A voice channel's audio bitrate, bits per second (DEFAULT_VOICE_BITRATE by default). */
  bitrate?: number;
  /** A forum's settings (none, null and 'latest_activity' by default). */
  forum?: ForumSettings;
}

/** What is a forum's own (on its channels row: docs/api.md "Threads and forums"). */
export interface ForumSettings {
  availableTags: ForumTag[];
  defaultReaction: string | null;
  defaultSort: ForumSort;
}

/** What a channel's settings route changes of it, all at once. */
export interface ChannelChange {
  name: string;
  topic: string;
  slowmodeSeconds: number;
  categoryId: string | null;
  /** A forum's, when they change. */
  forum?: ForumSettings;
  /** A voice channel's (ignored for others). */
  userLimit?: number;
  bitrate?: number;
}

/**
 * The one writer of `channels` rows (schema.sql), whoever writes them: the channel and category
 * routes, a new server's first channel, the importer on its worker's connection. A new column
 * goes here: what a new channel starts with, and what changes it. (Whether a channel follows its
 * category's overwrites, `permissions_synced`, is the overwrite store's: syncing copies
 * overwrites in the same step.)
 *
 * Built on any connection (`createChannelStore({ db, clock })`); every write runs inside the
 * caller's transaction, which also writes the audit log and decides what the change announces.
 */
export interface ChannelStore {
  /** A new channel at the end of the server's list (a thread: in no list); its id. */
  add(serverId: string, channel: NewChannel): string;
  /** Its name, topic, slow mode and category (and a forum's settings). */
  update(channelId: string, change: ChannelChange): void;
  /** A new name alone (a thread's). */
  rename(channelId: string, name: string): void;
  /** Positions 0..n-1 in this order (a server's channels, all of them). */
  setOrder(channelIds: readonly string[]): void;
  /** The channel goes, and with it (schema.sql's cascades) its messages, overwrites and webhooks. */
  remove(channelId: string): void;
  /**
   * Every channel of a category goes under none (the category is being deleted). Written out
   * rather than left to the foreign key's `ON DELETE SET NULL`, so that the channels' own
   * triggers move the generation their cached lists watch.
   */
  leaveCategory(categoryId: string): void;
}

export function createChannelStore({ db, clock }: { db: DB; clock: Clock }): ChannelStore {
  // A listed channel goes last among the listed ones; a thread (in no list) at 0.
  const insert = db.prepare(
    `INSERT INTO channels (id, server_id, type, parent_id, name, position, created_at, topic, category_id, available_tags, default_reaction, default_sort, user_limit, bitrate)
     VALUES (?, ?, ?, ?, ?, CASE WHEN ? IS NULL THEN (SELECT COALESCE(MAX(position) + 1, 0) FROM channels WHERE server_id = ? AND parent_id IS NULL) ELSE 0 END,
             ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const updateRow = db.prepare('UPDATE channels SET name = ?, topic = ?, slowmode_seconds = ?, category_id = ? WHERE id = ?');
  const updateForum = db.prepare('UPDATE channels SET available_tags = ?, default_reaction = ?, default_sort = ? WHERE id = ?');
  // Only a voice channel has the two: another kind's stay NULL.
  const updateVoice = db.prepare("UPDATE channels SET user_limit = ?, bitrate = ? WHERE id = ? AND type = 'voice'");
  const renameRow = db.prepare('UPDATE channels SET name = ? WHERE id = ?');
  const setPosition = db.prepare('UPDATE channels SET position = ? WHERE id = ?');
  const deleteRow = db.prepare('DELETE FROM channels WHERE id = ?');
  const letGo = db.prepare('UPDATE channels SET category_id = NULL WHERE category_id = ?');
  return {
    add(serverId, { name, type = 'text', parentId = null, topic = '', categoryId = null, forum, userLimit = 0, bitrate = DEFAULT_VOICE_BITRATE }) {
      const id = crypto.randomUUID();
      const voice = type === 'voice';
      insert.run(
        id,
        serverId,
        type,
        parentId,
        name,
        parentId,
        serverId,
        iso(clock.now()),
        topic,
        categoryId,
        JSON.stringify(forum?.availableTags ?? []),
        forum?.defaultReaction ?? null,
        forum?.defaultSort ?? 'latest_activity',
        voice ? userLimit : null,
        voice ? bitrate : null,
      );
      return id;
    },
    update(channelId, { name, topic, slowmodeSeconds, categoryId, forum, userLimit, bitrate }) {
      updateRow.run(name, topic, slowmodeSeconds, categoryId, channelId);
      if (forum) updateForum.run(JSON.stringify(forum.availableTags), forum.defaultReaction, forum.defaultSort, channelId);
      if (userLimit !== undefined && bitrate !== undefined) updateVoice.run(userLimit, bitrate, channelId);
    },
    rename(channelId, name) {
      renameRow.run(name, channelId);
    },
    setOrder(channelIds) {
      channelIds.forEach((id, index) => setPosition.run(index, id));
    },
    remove(channelId) {
      deleteRow.run(channelId);
    },
    leaveCategory(categoryId) {
      letGo.run(categoryId);
    },
  };
}
