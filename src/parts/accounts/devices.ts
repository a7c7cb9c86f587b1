import crypto from 'node:crypto';
import { type Clock, DAY, SECOND, iso } from '../../core/clock';
import type { DB } from '../../core/db';

/**
 * Remembered devices (docs/security.md "Remembered devices"): a browser that signed in with
 * "remember this device" holds a random secret in a cookie of its own, which opens a new session
 * after a restart without the password or a two-factor code. Only its SHA-256 is stored. It
 * rotates at every use; a secret that was rotated away and comes back is a copy, and ends every
 * device of the account.
 */
export const DEVICE_IDLE_MS = 30 * DAY;
export const MAX_DEVICES_PER_USER = 20;
/**
 * Two requests that carry the same secret at once (two tabs after a restart) are not a theft:
 * a secret rotated away less than this long ago is refused without ending anything.
 */
export const DEVICE_REUSE_GRACE_MS = 10 * SECOND;

export interface Device {
  id: string;
  userId: string;
  userAgent: string;
  address: string;
  createdAt: string;
  lastUsedAt: string;
}

export type Redeemed =
  /** A new secret in place of the one used: set it in the cookie. */
  | { outcome: 'opened'; device: Device; secret: string }
  /** Unknown, ended or expired: clear the cookie. */
  | { outcome: 'unknown' }
  /** Rotated away moments ago (another tab was first): refused, nothing ended. */
  | { outcome: 'raced' }
  /** Rotated away earlier: a copy. The caller ends every device of the account. */
  | { outcome: 'replayed'; userId: string };

export interface DeviceStore {
  /** A new remembered device; the account's oldest go past MAX_DEVICES_PER_USER. */
  issue(userId: string, seen: { userAgent: string; address: string }): { device: Device; secret: string };
  redeem(secret: string): Redeemed;
  list(userId: string): Device[];
  /** Ends one device of the user; false when they have none by that id. */
  end(userId: string, id: string): boolean;
  /** Ends every device of the user but `keep`; the ids that ended. */
  endAll(userId: string, keep?: string): string[];
  /** Forgets expired devices and retired secrets past any use. */
  sweep(): void;
}

const hash = (secret: string) => crypto.createHash('sha256').update(secret).digest('hex');
const newSecret = () => crypto.randomBytes(32).toString('base64url');

interface DeviceRow {
  id: string;
  user_id: string;
  user_agent: string;
  address: string;
  created_at: string;
  last_used_at: string;
}
const toDevice = (r: DeviceRow): Device => ({
  id: r.id,
  userId: r.user_id,
  userAgent: r.user_agent,
  address: r.address,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});
const COLUMNS = 'id, user_id, user_agent, address, created_at, last_used_at';

export function createDeviceStore(db: DB, clock: Clock, graceMs = DEVICE_REUSE_GRACE_MS): DeviceStore {
  const insert = db.prepare('INSERT INTO devices (id, user_id, secret_hash, user_agent, address, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const byUser = db.prepare<[string], DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE user_id = ? ORDER BY last_used_at DESC, id`);
  const bySecret = db.prepare<[string], DeviceRow>(`SELECT ${COLUMNS} FROM devices WHERE secret_hash = ?`);
  const retiredBy = db.prepare<[string], { user_id: string; retired_at: string }>(
    'SELECT user_id, retired_at FROM device_retired_secrets WHERE secret_hash = ?',
  );
  const retire = db.prepare('INSERT OR REPLACE INTO device_retired_secrets (secret_hash, user_id, retired_at) VALUES (?, ?, ?)');
  const rotate = db.prepare('UPDATE devices SET secret_hash = ?, last_used_at = ? WHERE id = ?');
  const deleteOne = db.prepare('DELETE FROM devices WHERE user_id = ? AND id = ?');
  const deleteExpired = db.prepare('DELETE FROM devices WHERE last_used_at < ?');
  const deleteRetired = db.prepare('DELETE FROM device_retired_secrets WHERE retired_at < ?');
  const oldestBeyondCap = db
    .prepare<[string, number], string>('SELECT id FROM devices WHERE user_id = ? ORDER BY last_used_at DESC, id LIMIT -1 OFFSET ?')
    .pluck();

  const expired = (row: { last_used_at: string }, now: number) => Date.parse(row.last_used_at) < now - DEVICE_IDLE_MS;

  const endAll = db.transaction((userId: string, keep?: string) => {
    const ended = byUser
      .all(userId)
      .filter((d) => d.id !== keep)
      .map((d) => d.id);
    for (const id of ended) deleteOne.run(userId, id);
    return ended;
  });

  const issue = db.transaction((userId: string, seen: { userAgent: string; address: string }) => {
    const now = iso(clock.now());
    const secret = newSecret();
    const device: Device = { id: crypto.randomUUID(), userId, userAgent: seen.userAgent, address: seen.address, createdAt: now, lastUsedAt: now };
    insert.run(device.id, userId, hash(secret), device.userAgent, device.address, now, now);
    for (const id of oldestBeyondCap.all(userId, MAX_DEVICES_PER_USER)) deleteOne.run(userId, id);
    return { device, secret };
  });

  const redeem = db.transaction((secret: string): Redeemed => {
    const now = clock.now();
    const presented = hash(secret);
    const row = bySecret.get(presented);
    if (row && !expired(row, now)) {
      const next = newSecret();
      retire.run(presented, row.user_id, iso(now));
      rotate.run(hash(next), iso(now), row.id);
      return { outcome: 'opened', device: toDevice({ ...row, last_used_at: iso(now) }), secret: next };
    }
    const retired = retiredBy.get(presented);
    if (!retired) return { outcome: 'unknown' };
    if (now - Date.parse(retired.retired_at) < graceMs) return { outcome: 'raced' };
    return { outcome: 'replayed', userId: retired.user_id };
  });

  return {
    issue,
    redeem: (secret) => (secret.length > 128 ? { outcome: 'unknown' } : redeem(secret)),
    list: (userId) => {
      const now = clock.now();
      return byUser
        .all(userId)
        .filter((r) => !expired(r, now))
        .map(toDevice);
    },
    end: (userId, id) => deleteOne.run(userId, id).changes > 0,
    endAll: (userId, keep) => endAll(userId, keep),
    sweep() {
      const cutoff = iso(clock.now() - DEVICE_IDLE_MS);
      deleteExpired.run(cutoff);
      // A retired secret is worth keeping while its device could still have been used.
      deleteRetired.run(cutoff);
    },
  };
}
