import crypto from 'node:crypto';
import { requestOrigin } from '../core/http/client';
import { DAY, MINUTE, iso } from '../core/clock';
import { badRequest, forbidden, notFound } from '../core/http/errors';
import { HANDLED, created, json, noContent } from '../core/http/respond';
import { serverEntry } from '../parts/live/ready';
import type { Services } from '../parts/services';
import { assertAllowed } from '../rules/standing';
import { requirePassed } from '../rules/verification';
import type { Ctx, PublicCtx, Route } from '../core/types';
import { auditReason, integer } from '../core/validate';

export const INVITE_LIFETIME_MS = 7 * DAY;
export const MIN_INVITE_SECONDS = (5 * MINUTE) / 1000;
export const MAX_INVITE_SECONDS = INVITE_LIFETIME_MS / 1000;
export const MAX_INVITE_USES = 1000;
export const MAX_LIVE_INVITES_PER_SERVER = 1000;
const INVITE_TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

type Deps = Pick<
  Services,
  | 'db'
  | 'clock'
  | 'config'
  | 'perms'
  | 'hub'
  | 'limits'
  | 'staticFiles'
  | 'directory'
  | 'readStates'
  | 'presence'
  | 'members'
  | 'audit'
  | 'notifications'
  | 'joinGate'
  | 'onboarding'
>;

/** Invites: made by any member, revoked by their creator, the owner or an administrator. */
export function inviteRoutes(deps: Deps): Route[] {
  const h = inviteHandlers(deps);
  return [
    { method: 'POST', path: '/api/servers/:server_id/invites', auth: 'user', body: 'json-optional', handler: h.createInvite },
    { method: 'GET', path: '/api/servers/:server_id/invites', auth: 'user', body: 'none', handler: h.listInvites },
    { method: 'GET', path: '/api/invites/:token', auth: 'none', body: 'none', handler: h.getInvite },
    { method: 'DELETE', path: '/api/invites/:token', auth: 'user', body: 'none', handler: h.revokeInvite },
    { method: 'POST', path: '/api/invites/:token/accept', auth: 'user', body: 'none', handler: h.acceptInvite },
    { method: 'GET', path: '/invites/:token', auth: 'none', body: 'none', handler: h.invitePage },
  ];
}

interface InviteRow {
  token: string;
  server_id: string;
  server_name: string;
  created_by: string;
  creator_username: string;
  created_at: string;
  expires_at: string;
  max_uses: number | null;
  uses: number;
}

function inviteHandlers(deps: Deps) {
  const { db, clock, config, perms, hub, limits, staticFiles, directory, members, audit, joinGate, onboarding } = deps;
  const insertInvite = db.prepare('INSERT INTO invites (token, server_id, created_by, created_at, expires_at, max_uses) VALUES (?, ?, ?, ?, ?, ?)');
  const COLUMNS = `i.token, i.server_id, s.name AS server_name, i.created_by, u.username AS creator_username, i.created_at,
      i.expires_at, i.max_uses, i.uses
    FROM invites i JOIN servers s ON s.id = i.server_id JOIN users u ON u.id = i.created_by`;
  const inviteByToken = db.prepare<[string], InviteRow>(`SELECT ${COLUMNS} WHERE i.token = ?`);
  const invitesOfServer = db.prepare<[string, string], InviteRow>(
    `SELECT ${COLUMNS} WHERE i.server_id = ? AND i.expires_at > ? ORDER BY i.created_at DESC, i.rowid DESC`,
  );
  const invitesBy = db.prepare<[string, string, string], InviteRow>(
    `SELECT ${COLUMNS} WHERE i.server_id = ? AND i.created_by = ? AND i.expires_at > ? ORDER BY i.created_at DESC, i.rowid DESC`,
  );
  const deleteInvite = db.prepare('DELETE FROM invites WHERE token = ?');
  const useInvite = db.prepare('UPDATE invites SET uses = uses + 1 WHERE token = ? AND (max_uses IS NULL OR uses < max_uses)');
  const memberCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM members WHERE server_id = ?');
  const liveInviteCount = db.prepare<[string, string], { n: number }>('SELECT COUNT(*) AS n FROM invites WHERE server_id = ? AND expires_at > ?');
  const removalOf = db.prepare<[string, string], { removed_at: string }>('SELECT removed_at FROM server_removals WHERE server_id = ? AND user_id = ?');
  const deleteRemoval = db.prepare('DELETE FROM server_removals WHERE server_id = ? AND user_id = ?');
  const banOf = db.prepare<[string, string], { reason: string | null }>('SELECT reason FROM bans WHERE server_id = ? AND user_id = ?');

  /** An invite that still works: unknown, expired, used up and revoked all answer the same 404. */
  const validInvite = (token: string) => {
    const invite = INVITE_TOKEN.test(token) ? inviteByToken.get(token) : undefined;
    const usedUp = invite && invite.max_uses !== null && invite.uses >= invite.max_uses;
    if (!invite || usedUp || Date.parse(invite.expires_at) <= clock.now()) throw notFound('invite not found or expired');
    return invite;
  };
  const baseFor = (ctx: Ctx) =>
    // Without BASE_URL, the link leads where this browser already is (a LAN address, say), where
    // the user is signed in; never a guess like localhost.
    config.baseUrlConfigured ? config.baseUrl : (requestOrigin(ctx.req, config.trustProxy) ?? config.baseUrl);
  const inviteRecord = (row: InviteRow, base: string) => ({
    token: row.token,
    server_id: row.server_id,
    created_by: { user_id: row.created_by, username: row.creator_username },
    created_at: row.created_at,
    expires_at: row.expires_at,
    max_uses: row.max_uses,
    uses: row.uses,
    url: `${base}/invites/${row.token}`,
  });

  return { createInvite, listInvites, getInvite, revokeInvite, acceptInvite, invitePage };

  /**
   * Any member who may take part (not waiting in screening, past the server's verification level:
   * a newcomer held back does not bring others in); optional {max_uses: 1..1000, expires_in_seconds: 300..604800} (default: seven
   * days, unlimited); 201 {token, server_id, expires_at, url, ...}; 400 past 1000 live invites.
   */
  function createInvite(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    onboarding.requireAccepted(ctx.user, serverId);
    requirePassed(perms.postingGate(ctx.user.id, serverId));
    const maxUses = ctx.body.max_uses === undefined || ctx.body.max_uses === null ? null : integer(ctx.body, 'max_uses', 1, MAX_INVITE_USES);
    const seconds =
      ctx.body.expires_in_seconds === undefined || ctx.body.expires_in_seconds === null
        ? MAX_INVITE_SECONDS
        : integer(ctx.body, 'expires_in_seconds', MIN_INVITE_SECONDS, MAX_INVITE_SECONDS);
    const now = clock.now();
    if (liveInviteCount.get(serverId, iso(now))!.n >= MAX_LIVE_INVITES_PER_SERVER) {
      throw badRequest(`a server may have at most ${MAX_LIVE_INVITES_PER_SERVER} live invites`);
    }
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    const token = crypto.randomBytes(18).toString('base64url');
    insertInvite.run(token, serverId, ctx.user.id, iso(now), iso(now + seconds * 1000), maxUses);
    return created(inviteRecord(inviteByToken.get(token)!, baseFor(ctx)));
  }

  /** Live invites: every one for holders of manage_server (the owner and full server administrators hold it), a member's own for a member. */
  function listInvites(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    const now = iso(clock.now());
    const rows = perms.holdsInServer(ctx.user, serverId, 'manage_server') ? invitesOfServer.all(serverId, now) : invitesBy.all(serverId, ctx.user.id, now);
    const base = baseFor(ctx);
    return json(rows.filter((r) => r.max_uses === null || r.uses < r.max_uses).map((r) => inviteRecord(r, base)));
  }

  /** What an invite leads to, for the invite page; holding the token is what entitles one to see it. */
  function getInvite(ctx: PublicCtx) {
    const invite = validInvite(ctx.params.token);
    return json({
      server_id: invite.server_id,
      server_name: invite.server_name,
      expires_at: invite.expires_at,
      member_count: memberCount.get(invite.server_id)!.n,
      // The invite page shows "Open" rather than "Join" to someone already in.
      member: ctx.user ? perms.rank(ctx.user.id, invite.server_id) !== null : false,
    });
  }

  /** Its creator, or a holder of manage_server; 204; it then answers 404 like an expired one; audited (invite_revoke). */
  function revokeInvite(ctx: Ctx) {
    const invite = INVITE_TOKEN.test(ctx.params.token) ? inviteByToken.get(ctx.params.token) : undefined;
    if (!invite) throw notFound('invite not found or expired');
    perms.serverAccess(ctx.user, invite.server_id);
    if (invite.created_by !== ctx.user.id && !perms.holdsInServer(ctx.user, invite.server_id, 'manage_server')) {
      throw forbidden('only its creator or a member with manage_server can revoke an invite');
    }
    const reason = auditReason(ctx);
    db.transaction(() => {
      deleteInvite.run(invite.token);
      audit.write({ serverId: invite.server_id, action: 'invite_revoke', actorId: ctx.user.id, targetId: invite.token, targetKind: 'invite', reason });
    })();
    return noContent();
  }

  /**
   * 200 {server_id}, harmless twice; standing 1 and above 403 even when already a member; 404
   * unknown, expired, used up or revoked; 403 banned; a kicked member 403 unless the invite is
   * the owner's or an administrator's, made after the removal; 403 past the servers cap.
   */
  function acceptInvite(ctx: Ctx) {
    assertAllowed(ctx.user, 'join_server');
    const invite = validInvite(ctx.params.token);
    const serverId = invite.server_id;
    if (perms.rank(ctx.user.id, serverId)) return json({ server_id: serverId });
    if (banOf.get(serverId, ctx.user.id)) throw forbidden('you are banned from this server');
    const removal = removalOf.get(serverId, ctx.user.id);
    const inviterRank = perms.rank(invite.created_by, serverId);
    const invitedAnew = removal && invite.created_at >= removal.removed_at && (inviterRank === 'owner' || inviterRank === 'admin');
    if (removal && !invitedAnew) {
      throw forbidden('you were removed from this server; ask its owner or an administrator for a new invite');
    }
    joinGate.requireOpen(serverId, 'invite');
    members.requireRoom(ctx.user.id);
    db.transaction(() => {
      // Counted in the same transaction: two people cannot both take the last use.
      if (useInvite.run(invite.token).changes === 0) throw notFound('invite not found or expired');
      members.add(serverId, ctx.user.id);
      if (joinGate.screens(serverId)) onboarding.markPending(serverId, ctx.user.id);
      deleteRemoval.run(serverId, ctx.user.id);
    })();
    const server = directory.server(serverId)!;
    hub.toUsers([ctx.user.id], { event: 'server_joined', server: serverEntry(deps, ctx.user.id, server) });
    hub.toServer(serverId, { event: 'member_joined', server_id: serverId, member: members.record(serverId, ctx.user.id)! });
    joinGate.joined(serverId, ctx.user.id);
    return json({ server_id: serverId });
  }

  /** The browser page naming the server, with a join button. */
  function invitePage(ctx: PublicCtx) {
    staticFiles.page('invite.html', ctx.res);
    return HANDLED;
  }
}
