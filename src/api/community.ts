import { iso } from '../core/clock';
import { notFound } from '../core/http/errors';
import { json, noContent } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Ctx, Route, UserRef } from '../core/types';
import { auditReason, integer, limitParam, text, uuidParam } from '../core/validate';

/** Timeouts last from a minute to 28 days, as on Discord. */
export const MIN_TIMEOUT_SECONDS = 60;
export const MAX_TIMEOUT_SECONDS = 2_419_200;
export const MAX_BAN_REASON_CHARS = 512;

type Deps = Pick<Services, 'db' | 'clock' | 'perms' | 'hub' | 'members' | 'audit'>;

/** A server's moderation tools: bans, timeouts and the audit log (the owner and full server administrators). */
export function communityRoutes(deps: Deps): Route[] {
  const h = communityHandlers(deps);
  const S = '/api/servers/:server_id';
  return [
    { method: 'GET', path: `${S}/bans`, auth: 'user', body: 'none', handler: h.listBans },
    { method: 'PUT', path: `${S}/bans/:user_id`, auth: 'user', body: 'json-optional', handler: h.banUser },
    { method: 'DELETE', path: `${S}/bans/:user_id`, auth: 'user', body: 'none', handler: h.unbanUser },
    { method: 'PUT', path: `${S}/members/:user_id/timeout`, auth: 'user', body: 'json', handler: h.timeOutMember },
    { method: 'DELETE', path: `${S}/members/:user_id/timeout`, auth: 'user', body: 'none', handler: h.endTimeout },
    { method: 'GET', path: `${S}/audit-log`, auth: 'user', body: 'none', handler: h.listAuditLog },
  ];
}

interface BanRow extends UserRef {
  reason: string | null;
  banned_by: string;
  created_at: string;
}

function communityHandlers({ db, clock, perms, hub, members, audit }: Deps) {
  const insertBan = db.prepare('INSERT OR REPLACE INTO bans (server_id, user_id, reason, banned_by, created_at) VALUES (?, ?, ?, ?, ?)');
  const deleteBan = db.prepare('DELETE FROM bans WHERE server_id = ? AND user_id = ?');
  const bansOf = db.prepare<[string], BanRow>(
    `SELECT b.user_id, u.username, u.display_name, u.avatar_url, b.reason, b.banned_by, b.created_at
       FROM bans b JOIN profiles u ON u.id = b.user_id WHERE b.server_id = ? ORDER BY b.created_at DESC, u.username`,
  );
  const userExists = db.prepare<[string], { id: string }>('SELECT id FROM users WHERE id = ?');

  const announceMember = (serverId: string, userId: string) => {
    const member = members.record(serverId, userId);
    if (member) hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
  };

  return { listBans, banUser, unbanUser, timeOutMember, endTimeout, listAuditLog };

  /** ban_members (the owner and full server administrators hold it): [{user_id, username, reason, banned_by, created_at}], newest first. */
  function listBans(ctx: Ctx) {
    perms.requireServerFlag(ctx.user, ctx.params.server_id, 'ban_members');
    return json(bansOf.all(ctx.params.server_id));
  }

  /**
   * {reason?}: the user is removed (room sockets close, invites revoked, server_left "banned") and
   * invites refuse them (403) until unbanned; ban_members, and only below one in the hierarchy
   * (src/rules/permissions.ts requireCanModerate: never the owner, an admin only by the owner); 204; audited.
   */
  function banUser(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireCanModerate(ctx.user, serverId, userId, 'ban', false, 'ban_members');
    if (!userExists.get(userId)) throw notFound('user not found');
    const reason = ctx.body.reason === undefined || ctx.body.reason === null ? null : text(ctx.body, 'reason', { max: MAX_BAN_REASON_CHARS, multiline: true });
    const auditNote = auditReason(ctx) ?? reason;
    const wasMember = perms.rank(userId, serverId) !== null;
    db.transaction(() => {
      insertBan.run(serverId, userId, reason, ctx.user.id, iso(clock.now()));
      if (wasMember) members.remove(serverId, userId);
      audit.write({ serverId, action: 'member_ban', actorId: ctx.user.id, targetId: userId, targetKind: 'user', reason: auditNote });
    })();
    if (wasMember) {
      hub.dropUser(userId, { serverId });
      hub.toUsers([userId], { event: 'server_left', server_id: serverId, reason: 'banned' });
      hub.toServer(serverId, { event: 'member_left', server_id: serverId, user_id: userId });
    }
    return noContent();
  }

  /** ban_members; 204; 404 when not banned; audited (member_unban). */
  function unbanUser(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireServerFlag(ctx.user, serverId, 'ban_members');
    const reason = auditReason(ctx);
    db.transaction(() => {
      if (deleteBan.run(serverId, userId).changes === 0) throw notFound('ban not found');
      audit.write({ serverId, action: 'member_unban', actorId: ctx.user.id, targetId: userId, targetKind: 'user', reason });
    })();
    return noContent();
  }

  /**
   * {seconds: 60..2419200}: the member can read but not send, edit, react or type in the server
   * until then; moderate_members, and only below one in the hierarchy (never the owner, an admin
   * only by the owner); 200 member (timeout_until); audited.
   */
  function timeOutMember(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireCanModerate(ctx.user, serverId, userId, 'time out', true, 'moderate_members');
    const seconds = integer(ctx.body, 'seconds', MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS);
    const reason = auditReason(ctx);
    const until = iso(clock.now() + seconds * 1000);
    db.transaction(() => {
      members.setTimeout(serverId, userId, until);
      audit.write({
        serverId,
        action: 'member_timeout',
        actorId: ctx.user.id,
        targetId: userId,
        targetKind: 'user',
        reason,
        changes: { timeout_until: until },
      });
    })();
    announceMember(serverId, userId);
    return json(members.record(serverId, userId));
  }

  /** Lifts a timeout (the same people, the same hierarchy); 200 member; audited (member_timeout_remove). */
  function endTimeout(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireCanModerate(ctx.user, serverId, userId, 'time out', true, 'moderate_members');
    const reason = auditReason(ctx);
    db.transaction(() => {
      members.setTimeout(serverId, userId, null);
      audit.write({ serverId, action: 'member_timeout_remove', actorId: ctx.user.id, targetId: userId, targetKind: 'user', reason });
    })();
    announceMember(serverId, userId);
    return json(members.record(serverId, userId));
  }

  /** view_audit_log: newest first, `before` an entry id, `limit` 1-100 (50). */
  function listAuditLog(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'view_audit_log');
    return json(audit.list(serverId, uuidParam(ctx.query, 'before'), limitParam(ctx.query)));
  }
}
