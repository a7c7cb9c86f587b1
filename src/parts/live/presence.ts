import { after } from '../../core/callbacks';
import type { DB } from '../../core/db';
import type { Hub } from '../delivery/hub';
import type { Log } from '../../core/types';
import type { Shown, Status } from '../../core/records';

/**
 * Presence: `online` while a user has at least one open socket, `offline` a grace period after
 * the last one closes (a reload does not flap), and whatever the user chose meanwhile: `idle`,
 * `dnd`, or `invisible`, which others see as `offline`.
 *
 * Who hears of a change: the user's friends and the members of servers they share, except in
 * large servers (over LARGE_SERVER_MEMBERS): there nobody is told, members read presence from the
 * member list when they open it. So a change costs at most friends + LARGE_SERVER_MEMBERS per
 * small server, however large the servers a user is in, and 2 000 people connecting to one big
 * server send each other nothing.
 */
export const STATUSES: readonly Status[] = ['online', 'idle', 'dnd', 'invisible'];
export const LARGE_SERVER_MEMBERS = 250;

/** How long after the last socket closes a user turns offline: a reload does not flap. */
export const PRESENCE_GRACE_MS = 5_000;

export interface PresenceParts {
  db: DB;
  hub: Pick<Hub, 'toUsers'>;
  log: Log;
  /** Read at each use, so a test may change them on a running server. */
  settings: {
    /** PRESENCE_GRACE_MS; tests shorten it. */
    presenceGraceMs: number;
    /** LARGE_SERVER_MEMBERS: servers with more members tell nobody of presence changes. */
    largeServerMembers: number;
  };
}

export interface Presence {
  /** What others see. */
  of(userId: string): Shown;
  /** What the user chose (their own view). */
  chosen(userId: string): Status;
  set(userId: string, status: Status): void;
  online(userId: string): void;
  offline(userId: string): void;
  close(): void;
}

export function createPresence({ db, hub, log, settings }: PresenceParts): Presence {
  const chosenOf = db.prepare<[string], { presence: Status }>('SELECT presence FROM users WHERE id = ?');
  const setChosen = db.prepare('UPDATE users SET presence = ? WHERE id = ?');
  // Friends, and members of the small servers the user is in.
  const audienceOf = db.prepare<[string, string, string, string, number], { user_id: string }>(
    `SELECT to_user AS user_id FROM friend_requests WHERE from_user = ? AND status = 'accepted'
     UNION SELECT from_user FROM friend_requests WHERE to_user = ? AND status = 'accepted'
     UNION SELECT m2.user_id FROM members m1 JOIN members m2 ON m2.server_id = m1.server_id
      WHERE m1.user_id = ? AND m2.user_id <> ?
        AND (SELECT COUNT(*) FROM members x WHERE x.server_id = m1.server_id) <= ?`,
  );
  const connected = new Set<string>();
  const leaving = new Map<string, NodeJS.Timeout>();
  /** What connected users chose, read once per connection (only set() changes it). */
  const choices = new Map<string, Status>();
  let closed = false;

  const chosen = (userId: string): Status => {
    let status = choices.get(userId);
    if (status === undefined) {
      status = chosenOf.get(userId)?.presence ?? 'online';
      if (connected.has(userId)) choices.set(userId, status);
    }
    return status;
  };
  const of = (userId: string): Shown => {
    if (!connected.has(userId)) return 'offline';
    const status = chosen(userId);
    return status === 'invisible' ? 'offline' : status;
  };
  /** Tells the audience (and the user's own streams) what they now see. */
  const announce = (userId: string, before: Shown) => {
    const now = of(userId);
    if (now !== before) {
      const audience = audienceOf.all(userId, userId, userId, userId, settings.largeServerMembers).map((r) => r.user_id);
      hub.toUsers(audience, { event: 'presence', user_id: userId, presence: now });
    }
    hub.toUsers([userId], { event: 'presence', user_id: userId, presence: now, status: chosen(userId) });
  };

  return {
    of,
    chosen,
    set(userId, status) {
      const before = of(userId);
      setChosen.run(status, userId);
      if (connected.has(userId)) choices.set(userId, status);
      announce(userId, before);
    },
    online(userId) {
      const pending = leaving.get(userId);
      if (pending) {
        clearTimeout(pending);
        leaving.delete(userId);
        return;
      }
      const before = of(userId);
      connected.add(userId);
      if (of(userId) !== before) announce(userId, before);
    },
    offline(userId) {
      // At shutdown every socket closes: nobody is left to tell, and the database is closing.
      if (closed) return;
      const timer = after(
        settings.presenceGraceMs,
        'presence',
        () => {
          leaving.delete(userId);
          const before = of(userId);
          connected.delete(userId);
          choices.delete(userId);
          if (of(userId) !== before) announce(userId, before);
        },
        log,
      );
      leaving.set(userId, timer);
    },
    close() {
      closed = true;
      for (const timer of leaving.values()) clearTimeout(timer);
      leaving.clear();
    },
  };
}
