import crypto from 'node:crypto';
import type { Clock } from '../../core/clock';
import { iso } from '../../core/clock';
import type { DB } from '../../core/db';
import type { Session } from '../../core/types';

/**
 * Web Push subscriptions: the one owner of push_subscriptions. A subscription belongs to the
 * session that made it and, when that session's browser is remembered, to its device: it ends
 * when that session ends (sign-out, revocation, a password change, expiry) or its device is
 * forgotten (a foreign key), and when the push service says it is gone (404, 410). Sessions live
 * in memory: at start, the subscriptions of sessions that were not remembered end too.
 */
export interface PushSubscriptionRecord {
  id: string;
  endpoint: string;
  /** Whether pushes to this device carry the message's text (otherwise room and sender only). */
  show_text: boolean;
  user_agent: string;
  created_at: string;
}

/** What sending needs. */
export interface Target {
  id: string;
  user_id: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  show_text: number;
}

/** Subscriptions one user may hold; a new one past it replaces their oldest. */
export const MAX_SUBSCRIPTIONS_PER_USER = 10;

export interface PushSubscriptions {
  add(session: Session, sub: { endpoint: string; p256dh: string; auth: string; showText: boolean }): PushSubscriptionRecord;
  list(userId: string): PushSubscriptionRecord[];
  setShowText(userId: string, id: string, showText: boolean): PushSubscriptionRecord | null;
  remove(userId: string, id: string): boolean;
  /** The push service answered 404 or 410: the browser unsubscribed or the subscription expired. */
  gone(id: string): void;
  /** The subscriptions of these users, for sending. */
  targetsOf(userIds: readonly string[]): Target[];
  /** Whether any user holds one (nothing to work out otherwise). */
  any(): boolean;
  endSession(session: Session): void;
}

type Row = Omit<PushSubscriptionRecord, 'show_text'> & { show_text: number };
const toRecord = (row: Row): PushSubscriptionRecord => ({ ...row, show_text: row.show_text === 1 });
const COLUMNS = 'id, endpoint, show_text, user_agent, created_at';

export function createPushSubscriptions(db: DB, clock: Clock): PushSubscriptions {
  // Sessions that were not remembered ended with the last process: so did their subscriptions.
  db.prepare('DELETE FROM push_subscriptions WHERE device_id IS NULL').run();
  const insert = db.prepare<[string, string, string, string, string, string, string | null, number, string, string]>(
    `INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, session_id, device_id, show_text, user_agent, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const byEndpoint = db.prepare<[string]>('DELETE FROM push_subscriptions WHERE endpoint = ?');
  const oldestBeyond = db.prepare<[string, number]>(
    `DELETE FROM push_subscriptions WHERE id IN (SELECT id FROM push_subscriptions WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
  );
  const one = db.prepare<[string, string], Row>(`SELECT ${COLUMNS} FROM push_subscriptions WHERE id = ? AND user_id = ?`);
  const ofUser = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM push_subscriptions WHERE user_id = ? ORDER BY created_at DESC, rowid DESC`);
  const showText = db.prepare<[number, string, string]>('UPDATE push_subscriptions SET show_text = ? WHERE id = ? AND user_id = ?');
  const remove = db.prepare<[string, string]>('DELETE FROM push_subscriptions WHERE id = ? AND user_id = ?');
  const removeById = db.prepare<[string]>('DELETE FROM push_subscriptions WHERE id = ?');
  const removeBySession = db.prepare<[string]>('DELETE FROM push_subscriptions WHERE session_id = ?');
  const targets = db.prepare<[string], Target>(
    'SELECT id, user_id, endpoint, p256dh, auth, show_text FROM push_subscriptions WHERE user_id IN (SELECT value FROM json_each(?))',
  );
  const count = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM push_subscriptions');
  let total = count.get()!.n;
  const recount = () => (total = count.get()!.n);

  const add = db.transaction((session: Session, sub: { endpoint: string; p256dh: string; auth: string; showText: boolean }) => {
    // The same endpoint again (the browser subscribed anew, or another account signed in on it): the newest wins.
    byEndpoint.run(sub.endpoint);
    const id = crypto.randomUUID();
    insert.run(
      id,
      session.userId,
      sub.endpoint,
      sub.p256dh,
      sub.auth,
      session.id,
      session.deviceId ?? null,
      Number(sub.showText),
      session.userAgent,
      iso(clock.now()),
    );
    oldestBeyond.run(session.userId, MAX_SUBSCRIPTIONS_PER_USER);
    return toRecord(one.get(id, session.userId)!);
  });

  return {
    add(session, sub) {
      const record = add(session, sub);
      recount();
      return record;
    },
    list: (userId) => ofUser.all(userId).map(toRecord),
    setShowText(userId, id, value) {
      showText.run(Number(value), id, userId);
      const row = one.get(id, userId);
      return row ? toRecord(row) : null;
    },
    remove(userId, id) {
      const removed = remove.run(id, userId).changes > 0;
      recount();
      return removed;
    },
    gone(id) {
      removeById.run(id);
      recount();
    },
    targetsOf: (userIds) => (userIds.length === 0 ? [] : targets.all(JSON.stringify(userIds))),
    // Only add() makes more; devices forgotten elsewhere cascade without passing here, which leaves the count high, never low.
    any: () => total > 0,
    endSession(session) {
      if (removeBySession.run(session.id).changes > 0) recount();
    },
  };
}
