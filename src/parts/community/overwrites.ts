import type { DB } from '../../core/db';
import { OVERWRITE_ORDER } from '../../rules/channel-access';
import { type Flag, type Flags, type Overwrite, namesOf } from '../../rules/channel-permissions';

/** Where overwrites live: a channel, or a category its synced channels follow. */
export type Scope = { channelId: string } | { categoryId: string };

/** An overwrite as the API shows it. */
export interface OverwriteRecord {
  /** The server's id (everyone), a role's id or a member's user id. */
  target_id: string;
  kind: 'everyone' | 'role' | 'member';
  allow: Flag[];
  deny: Flag[];
}

/**
 * The one owner of the overwrite tables (schema.sql channel_overwrites, category_overwrites) and
 * of a channel's syncing: the overwrite routes, channel moves, category and role deletion all
 * write through here, inside their own transaction.
 *
 * A synced channel follows its category. Whenever it stops following (its own overwrite is set,
 * it leaves the category, the category goes), it keeps what it followed as its own first, so no
 * move or deletion ever opens a private channel.
 */
export interface OverwriteStore {
  /** The overwrites stored on a channel or category. */
  list(scope: Scope): OverwriteRecord[];
  /** Sets (adds or replaces) one overwrite. */
  put(scope: Scope, serverId: string, targetId: string, kind: OverwriteRecord['kind'], allow: Flags, deny: Flags): void;
  /** Removes one; false when there was none. */
  remove(scope: Scope, targetId: string): boolean;
  /** A synced channel with a category takes the category's overwrites as its own and stops following it. */
  detach(channelId: string): void;
  /** The channel drops its own overwrites and follows its category again. */
  sync(channelId: string): void;
  /** Every overwrite naming a target of a server (a role deleted) goes. */
  forgetTarget(serverId: string, targetId: string): void;
}

interface Row {
  target_id: string;
  kind: OverwriteRecord['kind'];
  allow: number;
  deny: number;
}

const record = (row: Row): OverwriteRecord => ({ target_id: row.target_id, kind: row.kind, allow: namesOf(row.allow), deny: namesOf(row.deny) });
/** An overwrite as the access rules hold it (src/rules/channel-access.ts), as the API shows it. */
export const overwriteRecord = (o: Overwrite): OverwriteRecord => record({ target_id: o.targetId, kind: o.kind, allow: o.allow, deny: o.deny });
const ORDER = OVERWRITE_ORDER;

export function createOverwriteStore(db: DB): OverwriteStore {
  const ofChannel = db.prepare<[string], Row>(`SELECT target_id, kind, allow, deny FROM channel_overwrites WHERE channel_id = ? ${ORDER}`);
  const ofCategory = db.prepare<[string], Row>(`SELECT target_id, kind, allow, deny FROM category_overwrites WHERE category_id = ? ${ORDER}`);
  const channelRow = db.prepare<[string], { category_id: string | null; permissions_synced: number }>(
    'SELECT category_id, permissions_synced FROM channels WHERE id = ?',
  );
  const putChannel = db.prepare('INSERT OR REPLACE INTO channel_overwrites (channel_id, target_id, kind, allow, deny, server_id) VALUES (?, ?, ?, ?, ?, ?)');
  const putCategory = db.prepare('INSERT OR REPLACE INTO category_overwrites (category_id, target_id, kind, allow, deny, server_id) VALUES (?, ?, ?, ?, ?, ?)');
  const removeChannel = db.prepare('DELETE FROM channel_overwrites WHERE channel_id = ? AND target_id = ?');
  const removeCategory = db.prepare('DELETE FROM category_overwrites WHERE category_id = ? AND target_id = ?');
  const copyFromCategory = db.prepare(
    `INSERT OR REPLACE INTO channel_overwrites (channel_id, target_id, kind, allow, deny, server_id)
     SELECT ?, target_id, kind, allow, deny, server_id FROM category_overwrites WHERE category_id = ?`,
  );
  const dropOwn = db.prepare('DELETE FROM channel_overwrites WHERE channel_id = ?');
  const setSynced = db.prepare('UPDATE channels SET permissions_synced = ? WHERE id = ?');
  const forgetOnChannels = db.prepare('DELETE FROM channel_overwrites WHERE server_id = ? AND target_id = ?');
  const forgetOnCategories = db.prepare('DELETE FROM category_overwrites WHERE server_id = ? AND target_id = ?');

  const list = (scope: Scope) => ('channelId' in scope ? ofChannel.all(scope.channelId) : ofCategory.all(scope.categoryId)).map(record);

  return {
    list,
    put(scope, serverId, targetId, kind, allow, deny) {
      if ('channelId' in scope) putChannel.run(scope.channelId, targetId, kind, allow, deny, serverId);
      else putCategory.run(scope.categoryId, targetId, kind, allow, deny, serverId);
    },
    remove(scope, targetId) {
      return ('channelId' in scope ? removeChannel.run(scope.channelId, targetId) : removeCategory.run(scope.categoryId, targetId)).changes > 0;
    },
    detach(channelId) {
      const row = channelRow.get(channelId);
      if (!row || row.permissions_synced !== 1) return;
      if (row.category_id !== null) {
        dropOwn.run(channelId);
        copyFromCategory.run(channelId, row.category_id);
      }
      setSynced.run(0, channelId);
    },
    sync(channelId) {
      dropOwn.run(channelId);
      setSynced.run(1, channelId);
    },
    forgetTarget(serverId, targetId) {
      forgetOnChannels.run(serverId, targetId);
      forgetOnCategories.run(serverId, targetId);
    },
  };
}
