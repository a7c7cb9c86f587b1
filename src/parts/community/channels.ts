import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';

/**
 * Writes to a server's channels that more than one route makes: a new channel goes after the
 * others (its position is the next free one). The routes of src/api/channels.ts make the rest.
 */
export interface ChannelStore {
  /** Inside the caller's transaction: a new channel at the end of the server's list; its id. */
  add(serverId: string, name: string): string;
}

export function createChannelStore({ db, clock }: { db: DB; clock: Clock }): ChannelStore {
  const insert = db.prepare(
    `INSERT INTO channels (id, server_id, name, position, created_at)
     VALUES (?, ?, ?, (SELECT COALESCE(MAX(position) + 1, 0) FROM channels WHERE server_id = ?), ?)`,
  );
  return {
    add(serverId, name) {
      const id = crypto.randomUUID();
      insert.run(id, serverId, name, serverId, iso(clock.now()));
      return id;
    },
  };
}
