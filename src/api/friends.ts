import crypto from 'node:crypto';
import { iso } from '../core/clock';
import { pairKey } from '../rules/friendship';
import { badRequest, conflict, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { Services } from '../parts/services';
import { type Ctx, type Route, type UserRef, refOf, userRef } from '../core/types';
import { readUsername } from '../parts/accounts/users';
import { type FriendRecord, friendRecord as friendOf } from '../core/records';

type Deps = Pick<Services, 'db' | 'clock' | 'users' | 'limits' | 'hub' | 'directory' | 'presence' | 'perms'>;

/**
 * Friends and friend requests (spec section 4 "Friends", section 3 "Friend request").
 * One friend_requests row per pair: pending, then accepted (a friendship). Rejecting a request
 * or removing a friend deletes the row, so the two can start over.
 */
export function friendRoutes(deps: Deps): Route[] {
  const h = friendHandlers(deps);
  const R = '/api/friends/requests';
  return [
    { method: 'POST', path: R, auth: 'user', body: 'json', handler: h.sendFriendRequest },
    { method: 'GET', path: R, auth: 'user', body: 'none', handler: h.listFriendRequests },
    { method: 'POST', path: `${R}/:request_id/accept`, auth: 'user', body: 'none', handler: h.acceptFriendRequest },
    { method: 'POST', path: `${R}/:request_id/reject`, auth: 'user', body: 'none', handler: h.rejectFriendRequest },
    { method: 'GET', path: '/api/friends', auth: 'user', body: 'none', handler: h.listFriends },
    { method: 'DELETE', path: '/api/friends/:user_id', auth: 'user', body: 'none', handler: h.removeFriend },
    { method: 'GET', path: '/api/blocks', auth: 'user', body: 'none', handler: h.listBlocks },
    { method: 'PUT', path: '/api/users/:user_id/block', auth: 'user', body: 'none', handler: h.blockUser },
    { method: 'DELETE', path: '/api/users/:user_id/block', auth: 'user', body: 'none', handler: h.unblockUser },
  ];
}

interface RequestRow {
  id: string;
  from_user: string;
  from_username: string;
  from_display_name: string | null;
  from_avatar_url: string | null;
  from_bot: number;
  to_user: string;
  to_username: string;
  to_display_name: string | null;
  to_avatar_url: string | null;
  to_bot: number;
  status: 'pending' | 'accepted';
  created_at: string;
}

const REQUEST_COLUMNS = `r.id, r.from_user, f.username AS from_username, f.display_name AS from_display_name,
  f.avatar_url AS from_avatar_url, f.bot AS from_bot, r.to_user, t.username AS to_username, t.display_name AS to_display_name,
  t.avatar_url AS to_avatar_url, t.bot AS to_bot, r.status, r.created_at`;
const REQUEST_FROM = 'friend_requests r JOIN profiles f ON f.id = r.from_user JOIN profiles t ON t.id = r.to_user';

const requestRecord = (r: RequestRow) => ({
  id: r.id,
  from: userRef({ user_id: r.from_user, username: r.from_username, display_name: r.from_display_name, avatar_url: r.from_avatar_url, bot: r.from_bot }),
  to: userRef({ user_id: r.to_user, username: r.to_username, display_name: r.to_display_name, avatar_url: r.to_avatar_url, bot: r.to_bot }),
  status: r.status,
  created_at: r.created_at,
});

function friendHandlers({ db, clock, users, limits, hub, directory, presence, perms }: Deps) {
  const insertRequest = db.prepare("INSERT INTO friend_requests (id, from_user, to_user, status, pair_key, created_at) VALUES (?, ?, ?, 'pending', ?, ?)");
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
  const acceptRequest = db.prepare("UPDATE friend_requests SET status = 'accepted', accepted_at = ? WHERE id = ? AND to_user = ? AND status = 'pending'");
  const rejectRequest = db.prepare("DELETE FROM friend_requests WHERE id = ? AND to_user = ? AND status = 'pending'");
  const friendRow = db.prepare<[string], Omit<FriendRecord, 'bot'> & { bot: number }>(
    `SELECT u.id AS user_id, u.username, u.display_name, u.avatar_url, u.bot, r.accepted_at AS since
       FROM friend_requests r JOIN profiles u ON u.id = r.from_user WHERE r.id = ?`,
  );
  const friendRecord = (requestId: string): FriendRecord => friendOf(friendRow.get(requestId)!);
  const removeFriendship = db.prepare("DELETE FROM friend_requests WHERE pair_key = ? AND status = 'accepted'");

  const insertBlock = db.prepare('INSERT OR IGNORE INTO blocks (blocker_id, blocked_id, created_at) VALUES (?, ?, ?)');
  const deleteBlock = db.prepare('DELETE FROM blocks WHERE blocker_id = ? AND blocked_id = ?');
  const deletePair = db.prepare<[string], { status: string }>('DELETE FROM friend_requests WHERE pair_key = ? RETURNING status');
  const blocksOf = db.prepare<[string], UserRef & { created_at: string }>(
    `SELECT b.blocked_id AS user_id, u.username, u.display_name, u.avatar_url, b.created_at FROM blocks b JOIN profiles u ON u.id = b.blocked_id
      WHERE b.blocker_id = ? ORDER BY u.username`,
  );

  return {
    sendFriendRequest,
    listFriendRequests,
    acceptFriendRequest,
    rejectFriendRequest,
    listFriends,
    removeFriend,
    listBlocks,
    blockUser,
    unblockUser,
  };

  /**
   * 201 pending request; 404 unknown name, 400 oneself, 409 when a request exists either way or
   * they are friends already; limited per sender, failures included, so names cannot be probed fast.
   */
  function sendFriendRequest(ctx: Ctx) {
    const username = readUsername(ctx.body);
    limits.friendRequestsPerUser.take(ctx.user.id, 'friend requests');
    const target = users.byUsername(username);
    // Someone who blocked the caller does not exist for the caller's requests: the same 404.
    if (!target || perms.hasBlocked(target.id, ctx.user.id)) throw notFound(`no user named ${username}`);
    if (target.id === ctx.user.id) throw badRequest('you cannot send a friend request to yourself');
    perms.requireNotBlocked(ctx.user.id, target.id, 'friend requests');
    const id = crypto.randomUUID();
    const key = pairKey(ctx.user.id, target.id);
    db.transaction(() => {
      const existing = requestByPair.get(key);
      if (existing?.status === 'accepted') throw conflict(`you are already friends with ${target.username}`);
      if (existing?.from_user === ctx.user.id) throw conflict(`you already sent a friend request to ${target.username}`);
      if (existing) {
        throw conflict(`${target.username} already sent you a friend request; accept theirs instead ` + `(POST /api/friends/requests/${existing.id}/accept)`);
      }
      insertRequest.run(id, ctx.user.id, target.id, key, iso(clock.now()));
    })();
    const request = requestRecord(requestById.get(id)!);
    hub.toUsers([target.id], { event: 'friend_request', request });
    return created(request);
  }

  /** Pending requests to the caller (default), or with direction=outgoing the caller's own; newest first. */
  function listFriendRequests(ctx: Ctx) {
    const direction = ctx.query.get('direction') ?? 'incoming';
    if (direction !== 'incoming' && direction !== 'outgoing') {
      throw badRequest('direction must be one of incoming, outgoing');
    }
    const rows = (direction === 'incoming' ? pendingIncoming : pendingOutgoing).all(ctx.user.id);
    return json(rows.map(requestRecord));
  }

  /** The addressee only (404 for anyone else, the sender included); 200 the sender's friend record. */
  function acceptFriendRequest(ctx: Ctx) {
    const id = ctx.params.request_id;
    const { changes } = acceptRequest.run(iso(clock.now()), id, ctx.user.id);
    if (changes === 0) throw notFound('friend request not found');
    const sender = friendRecord(id);
    const since = sender.since;
    // Each side learns of the other, with the presence they may now see.
    hub.toUsers([ctx.user.id], { event: 'friend_added', friend: { ...sender, presence: presence.of(sender.user_id) } });
    const me = { ...refOf(ctx.user), since, presence: presence.of(ctx.user.id) };
    hub.toUsers([sender.user_id], { event: 'friend_added', friend: me });
    return json(sender);
  }

  /** The addressee only (404 otherwise); 204; the request is deleted, so it may be sent again. */
  function rejectFriendRequest(ctx: Ctx) {
    const { changes } = rejectRequest.run(ctx.params.request_id, ctx.user.id);
    if (changes === 0) throw notFound('friend request not found');
    return noContent();
  }

  /** [{user_id, username, since, presence}] sorted by username. */
  function listFriends(ctx: Ctx) {
    return json(directory.friendsOf(ctx.user.id).map((friend) => ({ ...friend, presence: presence.of(friend.user_id) })));
  }

  /** 204, 404 when not friends; existing DMs and groups stay, a new DM needs friendship again. */
  function removeFriend(ctx: Ctx) {
    const { changes } = removeFriendship.run(pairKey(ctx.user.id, ctx.params.user_id));
    if (changes === 0) throw notFound('not a friend');
    hub.toUsers([ctx.user.id], { event: 'friend_removed', user_id: ctx.params.user_id });
    hub.toUsers([ctx.params.user_id], { event: 'friend_removed', user_id: ctx.user.id });
    return noContent();
  }

  /** The users the caller blocked: [{user_id, username, created_at}] by username. */
  function listBlocks(ctx: Ctx) {
    return json(blocksOf.all(ctx.user.id));
  }

  /**
   * 204: a friendship or request between the two ends (the blocked user sees only what an
   * unfriend shows: friend_removed); they can no longer DM, group or befriend each other.
   */
  function blockUser(ctx: Ctx) {
    const userId = ctx.params.user_id;
    if (userId === ctx.user.id) throw conflict('you cannot block yourself');
    if (!users.byId(userId)) throw notFound('user not found');
    const ended = db.transaction(() => {
      insertBlock.run(ctx.user.id, userId, iso(clock.now()));
      return deletePair.all(pairKey(ctx.user.id, userId)).map((r) => r.status);
    })();
    if (ended.includes('accepted')) {
      hub.toUsers([ctx.user.id], { event: 'friend_removed', user_id: userId });
      hub.toUsers([userId], { event: 'friend_removed', user_id: ctx.user.id });
    }
    return noContent();
  }

  /** 204; 404 when the caller had not blocked them. Nothing that the block ended comes back. */
  function unblockUser(ctx: Ctx) {
    if (deleteBlock.run(ctx.user.id, ctx.params.user_id).changes === 0) throw notFound('not blocked');
    return noContent();
  }
}
