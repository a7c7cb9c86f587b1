import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import type { Hub } from '../delivery/hub';
import type { DeviceStore } from './devices';
import type { SessionStore } from './sessions';
import { SUSPENDED, botStanding, standingForWarnings } from '../../rules/standing';

/**
 * The writes to an account that several places make, each done once, here: the routes and the
 * command line (`src/cli.ts`) call the same function. The password (and the sessions and
 * remembered devices it ends), the standing and the warnings it follows (and what a suspension
 * closes), two-factor sign-in turned on or off, the remembered devices, the administrator flag. The command line runs in a process of its own, without sessions or sockets: the server
 * sees its changes at the next request (the users generation, schema.sql).
 */
export interface AccountChanges {
  /**
   * Stores a new password hash, and `also` (a token being used up) in the same transaction;
   * then the user's sessions end: all of them, all but `keep`, or none (a rehash at login).
   */
  setPassword(userId: string, hash: string, sessions: 'all' | { keep: string } | 'none', also?: () => void): void;
  /**
   * Sets the standing by hand: it stays until an administrator changes it (warnings raise it,
   * never lower it); the user's streams learn it, and a suspension closes their sockets.
   */
  setStanding(userId: string, standing: number): void;
  /**
   * A warning by an administrator; the standing follows the count (spec section 3), but never
   * below a standing set by hand. Returns the new standing.
   */
  warn(userId: string, issuedBy: string, reason: string, warningId?: string): number;
  /** Removes a warning; the standing follows the count. Returns the new standing. */
  removeWarning(userId: string, warningId: string): number;
  /** Removes every warning of the user; the standing follows (0). Returns how many went. */
  clearWarnings(userId: string): number;
  /**
   * Two-factor sign-in was turned on or off: every remembered device ends, and when it was turned
   * on every session but `keep` too.
   */
  twoFactorChanged(userId: string, on: boolean, keep: string): void;
  /**
   * Ends remembered devices (all of the user's, or the one `only`) and the sessions they opened,
   * but `keep`; how many devices ended (0: `only` is none of the user's).
   */
  endDevices(userId: string, options?: { only?: string; keep?: string }): number;
  /** The administrator flag of the account with this name (any case); false when there is none. */
  setAdmin(username: string, isAdmin: boolean): boolean;
}

export interface AccountChangeParts {
  db: DB;
  clock: Clock;
  /** Present in the server; the command line has none. */
  sessions?: Pick<SessionStore, 'endAllForUser' | 'endForDevices'>;
  devices: Pick<DeviceStore, 'endAll' | 'end'>;
  hub?: Pick<Hub, 'toUsers' | 'dropUser'>;
  /** A suspended user's sockets that are not the hub's (voice calls) end here too. */
  suspended?: (userId: string) => void;
}

export function createAccountChanges({ db, clock, sessions, hub, devices, suspended }: AccountChangeParts): AccountChanges {
  const storePassword = db.prepare('UPDATE users SET password_hash = ? WHERE id = ?');
  const storeStanding = db.prepare('UPDATE users SET standing = ? WHERE id = ?');
  const storeStandingByHand = db.prepare('UPDATE users SET standing = ?, standing_by_hand = ? WHERE id = ?');
  const byHand = db.prepare<[string], number>('SELECT standing_by_hand FROM users WHERE id = ?').pluck();
  const storeAdmin = db.prepare('UPDATE users SET is_admin = ? WHERE username = ? COLLATE NOCASE');
  const insertWarning = db.prepare('INSERT INTO warnings (id, user_id, issued_by, reason, created_at) VALUES (?, ?, ?, ?, ?)');
  const deleteWarning = db.prepare('DELETE FROM warnings WHERE id = ? AND user_id = ?');
  const deleteWarnings = db.prepare('DELETE FROM warnings WHERE user_id = ?');
  const countWarnings = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM warnings WHERE user_id = ?');
  const botsOf = db.prepare<[string], { id: string; standing: number }>(
    'SELECT id, standing FROM users WHERE bot_owner_id = ? AND bot = 1 AND deleted_at IS NULL',
  );

  /** Inside a warning write: the standing follows the warning count, never below what an administrator set by hand. */
  const recalculate = (userId: string): number => {
    const standing = Math.max(byHand.get(userId) ?? 0, standingForWarnings(countWarnings.get(userId)!.n));
    storeStanding.run(standing, userId);
    return standing;
  };
  const endDevices = (userId: string, { only, keep }: { only?: string; keep?: string } = {}) => {
    const ended = only === undefined ? devices.endAll(userId) : devices.end(userId, only) ? [only] : [];
    sessions?.endForDevices(userId, ended, keep);
    return ended.length;
  };
  /**
   * After the commit: the user's streams learn it, and a suspension closes every socket and device
   * at once. Their bots stand as they do (src/rules/standing.ts botStanding): the same for them.
   */
  const announce = (userId: string, standing: number) => {
    hub?.toUsers([userId], { event: 'standing', account_standing: standing });
    if (standing >= SUSPENDED) {
      hub?.dropUser(userId);
      suspended?.(userId);
      endDevices(userId);
    }
    for (const bot of botsOf.all(userId)) {
      const own = botStanding(bot.standing, standing);
      hub?.toUsers([bot.id], { event: 'standing', account_standing: own });
      if (own >= SUSPENDED) hub?.dropUser(bot.id);
    }
  };

  return {
    setPassword(userId, hash, end, also) {
      db.transaction(() => {
        also?.();
        storePassword.run(hash, userId);
      })();
      if (end === 'none') return;
      endDevices(userId, end === 'all' ? {} : { keep: end.keep });
      if (end === 'all') sessions?.endAllForUser(userId);
      else sessions?.endAllForUser(userId, end.keep);
    },
    twoFactorChanged(userId, on, keep) {
      endDevices(userId, { keep });
      if (on) sessions?.endAllForUser(userId, keep);
    },
    endDevices,
    setStanding(userId, standing) {
      storeStandingByHand.run(standing, standing, userId);
      announce(userId, standing);
    },
    warn(userId, issuedBy, reason, warningId = crypto.randomUUID()) {
      const standing = db.transaction(() => {
        insertWarning.run(warningId, userId, issuedBy, reason, iso(clock.now()));
        return recalculate(userId);
      })();
      announce(userId, standing);
      return standing;
    },
    removeWarning(userId, warningId) {
      const standing = db.transaction(() => {
        deleteWarning.run(warningId, userId);
        return recalculate(userId);
      })();
      announce(userId, standing);
      return standing;
    },
    clearWarnings(userId) {
      const { removed, standing } = db.transaction(() => ({ removed: deleteWarnings.run(userId).changes, standing: recalculate(userId) }))();
      announce(userId, standing);
      return removed;
    },
    setAdmin(username, isAdmin) {
      return storeAdmin.run(isAdmin ? 1 : 0, username).changes > 0;
    },
  };
}
