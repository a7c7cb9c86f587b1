import type { DB } from '../core/db';

/**
 * The unordered pair of two users: friend_requests.pair_key and conversations.dm_key. Whoever
 * asks or opens first, the key is the same, so the UNIQUE index allows one row per pair.
 */
export const pairKey = (a: string, b: string): string => (a < b ? `${a}:${b}` : `${b}:${a}`);

/** Whether two users are friends (an accepted request between them, in either direction). */
export function createFriendCheck(db: DB): (a: string, b: string) => boolean {
  const accepted = db.prepare<[string], { id: string }>("SELECT id FROM friend_requests WHERE pair_key = ? AND status = 'accepted'");
  return (a, b) => accepted.get(pairKey(a, b)) !== undefined;
}
