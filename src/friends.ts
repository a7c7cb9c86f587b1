import crypto from 'node:crypto';
import type { App, Route } from './app';
import { readUsername } from './accounts';
import { iso } from './clock';
import type { DB } from './db';
import { badRequest, conflict, notFound } from './http/errors';
import { created, json, noContent } from './http/respond';

/**
 * The unordered pair of two users: friend_requests.pair_key and conversations.dm_key. Whoever
 * asks or opens first, the key is the same, so the UNIQUE index allows one row per pair.
 */
export const pairKey = (a: string, b: string): string => (a < b ? `${a}:${b}` : `${b}:${a}`);

/** Whether two users are friends (an accepted request between them, in either direction). */
export function createFriendCheck(db: DB): (a: string, b: string) => boolean {
  const accepted = db.prepare<[string], { id: string }>(
    "SELECT id FROM friend_requests WHERE pair_key = ? AND status = 'accepted'",
  );
  return (a, b) => accepted.get(pairKey(a, b)) !== undefined;
}

interface RequestRow {
  id: string;
  from_user: string;
  from_username: string;
  to_user: string;
  to_username: string;
  status: 'pending' | 'accepted';
  created_at: string;
}

const REQUEST_COLUMNS = `r.id, r.from_user, f.username AS from_username, r.to_user, t.username AS to_username,
  r.status, r.created_at`;
const REQUEST_FROM = 'friend_requests r JOIN users f ON f.id = r.from_user JOIN users t ON t.id = r.to_user';

const requestRecord = (r: RequestRow) => ({
  id: r.id,
  from: { user_id: r.from_user, username: r.from_username },
  to: { user_id: r.to_user, username: r.to_username },
  status: r.status,
  created_at: r.created_at,
});

/**
 * Friends and friend requests (spec section 4 "Friends", section 3 "Friend request").
 * One friend_requests row per pair: pending, then accepted (a friendship). Rejecting a request
 * or removing a friend deletes the row, so the two can start over.
 */
export function friendsRoutes(app: App): Route[] {
  const { db } = app;
  const insertRequest = db.prepare(
    "INSERT INTO friend_requests (id, from_user, to_user, status, pair_key, created_at) VALUES (?, ?, ?, 'pending', ?, ?)",
  );
  const requestByPair = db.prepare<[string], { id: string; from_user: string; status: string }>(
    'SELECT id, from_user, status FROM friend_requests WHERE pair_key = ?',
  );
  const requestById = db.prepare<[string], RequestRow>(`SELECT ${REQUEST_COLUMNS} FROM ${REQUEST_FROM} WHERE r.id = ?`);
  const pendingIncoming = db.prepare<[string], RequestRow>(
    `SELECT ${REQUEST_COLUMNS} FROM ${REQUEST_FROM}
      WHERE r.to_user = ? AND r.status = 'pending' ORDER BY r.created_at DESC, r.rowid DESC`,
  );
  const pendingOutgoing = db.prepare<[string], RequestRow>(
    `SELECT ${REQUEST_COLUMNS} FROM ${REQUEST_FROM}
      WHERE r.from_user = ? AND r.status = 'pending' ORDER BY r.created_at DESC, r.rowid DESC`,
  );
  const acceptRequest = db.prepare(
    "UPDATE friend_requests SET status = 'accepted', accepted_at = ? WHERE id = ? AND to_user = ? AND status = 'pending'",
  );
  const rejectRequest = db.prepare("DELETE FROM friend_requests WHERE id = ? AND to_user = ? AND status = 'pending'");
  // Two indexed halves rather than an OR: a friendship is stored in the direction it was asked.
  const friendsOf = db.prepare<[string, string], { user_id: string; username: string; since: string }>(
    `SELECT u.id AS user_id, u.username, f.since
       FROM (SELECT to_user AS other, accepted_at AS since FROM friend_requests WHERE from_user = ? AND status = 'accepted'
             UNION ALL
             SELECT from_user, accepted_at FROM friend_requests WHERE to_user = ? AND status = 'accepted') f
       JOIN users u ON u.id = f.other
      ORDER BY u.username, u.id`,
  );
  const friendRecord = db.prepare<[string], { user_id: string; username: string; since: string }>(
    `SELECT u.id AS user_id, u.username, r.accepted_at AS since
       FROM friend_requests r JOIN users u ON u.id = r.from_user WHERE r.id = ?`,
  );
  const removeFriendship = db.prepare("DELETE FROM friend_requests WHERE pair_key = ? AND status = 'accepted'");

  return [
    {
      // POST /api/friends/requests {username}
      // - 201 request {id, from, to, status: 'pending', created_at}.
      // - 404 unknown username; 400 oneself; 409 when a request exists between the two in
      //   either direction (the reason says to accept theirs when they asked first) or when
      //   they are already friends.
      // - Rate limited per sender, failed attempts included, so usernames cannot be probed fast.
      method: 'POST',
      path: '/api/friends/requests',
      body: 'json',
      handler: (ctx) => {
        const username = readUsername(ctx.body);
        app.limits.friendRequestsPerUser.take(ctx.user.id, 'friend requests');
        const target = app.users.byUsername(username);
        if (!target) throw notFound(`no user named ${username}`);
        if (target.id === ctx.user.id) throw badRequest('you cannot send a friend request to yourself');
        const id = crypto.randomUUID();
        const key = pairKey(ctx.user.id, target.id);
        db.transaction(() => {
          const existing = requestByPair.get(key);
          if (existing?.status === 'accepted') throw conflict(`you are already friends with ${target.username}`);
          if (existing?.from_user === ctx.user.id) throw conflict(`you already sent a friend request to ${target.username}`);
          if (existing) {
            throw conflict(
              `${target.username} already sent you a friend request; accept theirs instead ` +
                `(POST /api/friends/requests/${existing.id}/accept)`,
            );
          }
          insertRequest.run(id, ctx.user.id, target.id, key, iso(app.clock.now()));
        })();
        return created(requestRecord(requestById.get(id)!));
      },
    },
    {
      // GET /api/friends/requests?direction=incoming|outgoing
      // - Pending requests addressed to the caller (default), or with direction=outgoing the
      //   caller's own pending requests; newest first.
      method: 'GET',
      path: '/api/friends/requests',
      handler: (ctx) => {
        const direction = ctx.query.get('direction') ?? 'incoming';
        if (direction !== 'incoming' && direction !== 'outgoing') {
          throw badRequest('direction must be one of incoming, outgoing');
        }
        const rows = (direction === 'incoming' ? pendingIncoming : pendingOutgoing).all(ctx.user.id);
        return json(rows.map(requestRecord));
      },
    },
    {
      // POST /api/friends/requests/{request_id}/accept
      // - Only the addressee of a pending request (404 for anyone else, the sender included).
      // - 200 friend record {user_id, username, since} of the sender; both now list each other.
      method: 'POST',
      path: '/api/friends/requests/:request_id/accept',
      handler: (ctx) => {
        const id = ctx.params.request_id;
        const { changes } = acceptRequest.run(iso(app.clock.now()), id, ctx.user.id);
        if (changes === 0) throw notFound('friend request not found');
        return json(friendRecord.get(id));
      },
    },
    {
      // POST /api/friends/requests/{request_id}/reject
      // - Only the addressee of a pending request (404 otherwise); 204. The request is
      //   deleted, so the sender may ask again later.
      method: 'POST',
      path: '/api/friends/requests/:request_id/reject',
      handler: (ctx) => {
        const { changes } = rejectRequest.run(ctx.params.request_id, ctx.user.id);
        if (changes === 0) throw notFound('friend request not found');
        return noContent();
      },
    },
    {
      // GET /api/friends: [{user_id, username, since}] sorted by username.
      method: 'GET',
      path: '/api/friends',
      handler: (ctx) => json(friendsOf.all(ctx.user.id, ctx.user.id)),
    },
    {
      // DELETE /api/friends/{user_id}
      // - 204; 404 when the two are not friends. Either may then send a new request.
      // - Existing DMs and groups stay (history is kept); a new DM needs friendship again.
      method: 'DELETE',
      path: '/api/friends/:user_id',
      handler: (ctx) => {
        const { changes } = removeFriendship.run(pairKey(ctx.user.id, ctx.params.user_id));
        if (changes === 0) throw notFound('not a friend');
        return noContent();
      },
    },
  ];
}
