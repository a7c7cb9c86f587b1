import crypto from 'node:crypto';
import { iso } from '../core/clock';
import { badRequest, conflict, forbidden, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import { mutedNow, serverEntry, serverSummary } from '../parts/live/ready';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { JOIN_RATE_ACTIONS, type RoleRecord, type ServerRecord, type VerificationLevel } from '../core/records';
import { MAX_JOIN_RATE_THRESHOLD } from '../parts/community/join-rate';
import { auditReason, bool, integer, oneOf, subsetOf, text, uuid } from '../core/validate';
import { EVERYONE_DEFAULT, FLAGS, type Flag, type Flags, POWERS, flagsOf, namesOf } from '../rules/channel-permissions';
import { requireGrantable } from '../rules/permissions';

import { MAX_NAME_CHARS } from '../rules/sizes';
export { MAX_NAME_CHARS };
export const MAX_DESCRIPTION_CHARS = 1000;
export const FIRST_CHANNEL_NAME = 'general';
/** Caps on what one user can make exist (docs/security.md "Caps"), so no one fills the database. */
import { MAX_ROLES_PER_SERVER } from '../rules/sizes';
export { MAX_ROLES_PER_SERVER };
export { MAX_SERVERS_PER_USER } from '../parts/community/members';

type Deps = Pick<
  Services,
  | 'db'
  | 'clock'
  | 'notifications'
  | 'perms'
  | 'hub'
  | 'limits'
  | 'directory'
  | 'readStates'
  | 'presence'
  | 'members'
  | 'audit'
  | 'uploads'
  | 'channels'
  | 'overwrites'
  | 'accessChanges'
  | 'users'
  | 'twoFactor'
>;

/** Servers, their members and roles (spec section 4; who may do what: src/rules/permissions.ts). */
export function serverRoutes(deps: Deps): Route[] {
  const h = serverHandlers(deps);
  const S = '/api/servers/:server_id';
  return [
    { method: 'POST', path: '/api/servers', auth: 'user', body: 'json', handler: h.createServer },
    { method: 'GET', path: '/api/servers', auth: 'user', body: 'none', handler: h.listServers },
    { method: 'GET', path: S, auth: 'user', body: 'none', handler: h.getServer },
    { method: 'PATCH', path: S, auth: 'user', body: 'json', handler: h.updateServer },
    { method: 'DELETE', path: S, auth: 'user', body: 'none', handler: h.deleteServer },
    { method: 'PUT', path: `${S}/owner`, auth: 'user', body: 'json', handler: h.transferOwnership },
    { method: 'GET', path: `${S}/members`, auth: 'user', body: 'none', handler: h.listMembers },
    { method: 'DELETE', path: `${S}/members/:user_id`, auth: 'user', body: 'none', handler: h.removeMember },
    { method: 'GET', path: `${S}/roles`, auth: 'user', body: 'none', handler: h.listRoles },
    { method: 'POST', path: `${S}/roles`, auth: 'user', body: 'json', handler: h.createRole },
    { method: 'PATCH', path: `${S}/roles/:role_id`, auth: 'user', body: 'json', handler: h.updateRole },
    { method: 'DELETE', path: `${S}/roles/:role_id`, auth: 'user', body: 'none', handler: h.deleteRole },
    { method: 'PUT', path: `${S}/members/:user_id/role`, auth: 'user', body: 'json', handler: h.assignRole },
    { method: 'DELETE', path: `${S}/members/:user_id/roles/:role_id`, auth: 'user', body: 'none', handler: h.unassignRole },
    { method: 'PUT', path: `${S}/members/@me/roles/:role_id`, auth: 'user', body: 'none', handler: h.takeRole },
    { method: 'DELETE', path: `${S}/members/@me/roles/:role_id`, auth: 'user', body: 'none', handler: h.dropRole },
  ];
}

interface RoleRow {
  id: string;
  server_id: string;
  name: string;
  full_server_admin: number;
  created_at: string;
  color: number | null;
  position: number;
  hoist: number;
  mentionable: number;
  permissions: number;
  self_assignable: number;
}

const roleRecord = (r: RoleRow): RoleRecord => ({
  ...r,
  full_server_admin: r.full_server_admin === 1,
  hoist: r.hoist === 1,
  mentionable: r.mentionable === 1,
  permissions: namesOf(r.permissions),
  self_assignable: r.self_assignable === 1,
});
const ROLE_COLUMNS = 'id, server_id, name, full_server_admin, created_at, color, position, hoist, mentionable, permissions, self_assignable';

/**
 * A self-assignable role carries no power (issue 53): neither full_server_admin nor any flag of
 * POWERS (the moderators' flags, managing threads and emoji, the voice moderators', @everyone),
 * so taking one never lifts anyone's rights; 400 for a role that would.
 */
function requirePowerless(selfAssignable: boolean, admin: boolean, flags: Flags): void {
  if (!selfAssignable) return;
  const powers = namesOf(flags & POWERS);
  if (admin || powers.length > 0) {
    throw badRequest(`a self-assignable role carries no power: ${admin ? 'full_server_admin' : powers.join(', ')} cannot be on a role members take themselves`);
  }
}

/** `permissions`: channel permission names (src/rules/channel-permissions.ts FLAGS). */
const flagsParam = (body: Record<string, unknown>): Flags => flagsOf(subsetOf(body, 'permissions', FLAGS));
/** The largest colour, 0xFFFFFF. */
const MAX_COLOR = 0xffffff;

/** `color`: an integer 0 to 0xFFFFFF, or null for none. */
function color(body: Record<string, unknown>): number | null {
  return body.color === null ? null : integer(body, 'color', 0, MAX_COLOR);
}

function serverHandlers(deps: Deps) {
  const {
    db,
    clock,
    perms,
    hub,
    limits,
    directory,
    readStates,
    members,
    audit,
    uploads,
    channels,
    overwrites,
    accessChanges,
    notifications,
    users,
    twoFactor,
  } = deps;
  // Everyone's flags written out: a database migrated from before threads keeps an older column default.
  const insertServer = db.prepare('INSERT INTO servers (id, name, owner_id, created_at, everyone_permissions) VALUES (?, ?, ?, ?, ?)');
  const updateServerRow = db.prepare(
    `UPDATE servers SET name = ?, description = ?, everyone_permissions = ?, link_previews = ?, verification_level = ?, two_factor_for_moderators = ?,
       join_rate_threshold = ?, join_rate_action = ?, invites_paused = ?, joins_paused = ? WHERE id = ?`,
  );
  const setOwner = db.prepare('UPDATE servers SET owner_id = ? WHERE id = ?');
  const deleteServerRow = db.prepare('DELETE FROM servers WHERE id = ?');
  const attachmentsOfServer = db.prepare<[string], { id: string }>(
    `SELECT a.id FROM attachments a JOIN messages m ON m.seq = a.message_seq JOIN channels c ON c.id = m.channel_id WHERE c.server_id = ?`,
  );
  const channelIdsOf = db.prepare<[string], { id: string }>('SELECT id FROM channels WHERE server_id = ?');
  const insertRemoval = db.prepare('INSERT OR REPLACE INTO server_removals (server_id, user_id, removed_by, removed_at) VALUES (?, ?, ?, ?)');
  const insertRole = db.prepare(
    `INSERT INTO roles (id, server_id, name, full_server_admin, created_at, color, hoist, mentionable, permissions, self_assignable, position)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT COUNT(*) FROM roles WHERE server_id = ?))`,
  );
  const roleById = db.prepare<[string], RoleRow>(`SELECT ${ROLE_COLUMNS} FROM roles WHERE id = ?`);
  const roleByName = db.prepare<[string, string], { id: string; name: string }>('SELECT id, name FROM roles WHERE server_id = ? AND name = ? COLLATE NOCASE');
  const rolesOfServer = db.prepare<[string], RoleRow>(`SELECT ${ROLE_COLUMNS} FROM roles WHERE server_id = ? ORDER BY position, created_at, rowid`);
  const roleCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM roles WHERE server_id = ?');
  const updateRoleRow = db.prepare(
    'UPDATE roles SET name = ?, full_server_admin = ?, color = ?, hoist = ?, mentionable = ?, permissions = ?, self_assignable = ? WHERE id = ?',
  );
  const setRolePosition = db.prepare('UPDATE roles SET position = ? WHERE id = ?');
  const deleteRoleRow = db.prepare('DELETE FROM roles WHERE id = ?');
  const holdersOf = db.prepare<[string], { user_id: string }>('SELECT user_id FROM member_roles WHERE role_id = ?');
  const reorderRoles = (serverId: string, roleId: string | null, position: number) =>
    placed(
      rolesOfServer.all(serverId).map((r) => r.id),
      roleId,
      position,
    ).forEach((id, index) => setRolePosition.run(index, id));
  /** Every role change reaches the server's members as the whole list, in position order. */
  const announceRoles = (serverId: string) =>
    hub.toServer(serverId, { event: 'roles_updated', server_id: serverId, roles: rolesOfServer.all(serverId).map(roleRecord) });

  /** A role of this server (404 otherwise, like anything of a server one cannot see). */
  const roleIn = (serverId: string, roleId: string) => {
    const role = roleById.get(roleId);
    if (!role || role.server_id !== serverId) throw notFound('role not found');
    return role;
  };
  const announceServer = (serverId: string) => {
    const server = directory.server(serverId)!;
    hub.toServer(serverId, { event: 'server_updated', server_id: serverId, server });
    return server;
  };
  const announceMembers = (serverId: string, userIds: string[]) => {
    for (const userId of userIds) {
      const member = members.record(serverId, userId);
      if (member) hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
    }
  };

  return {
    createServer,
    listServers,
    getServer,
    updateServer,
    deleteServer,
    transferOwnership,
    listMembers,
    removeMember,
    listRoles,
    createRole,
    updateRole,
    deleteRole,
    assignRole,
    unassignRole,
    takeRole,
    dropRole,
  };

  /** 201 server; the caller owns it and is its first member; a "general" channel comes with it. */
  function createServer(ctx: Ctx) {
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    members.requireRoom(ctx.user.id);
    limits.serversPerUser.take(ctx.user.id, 'servers created');
    const id = crypto.randomUUID();
    const now = iso(clock.now());
    db.transaction(() => {
      insertServer.run(id, name, ctx.user.id, now, EVERYONE_DEFAULT);
      members.add(id, ctx.user.id);
      channels.add(id, { name: FIRST_CHANNEL_NAME });
    })();
    const server = directory.server(id)!;
    hub.toUsers([ctx.user.id], { event: 'server_joined', server: serverEntry(deps, ctx.user.id, server) });
    return created(server);
  }

  /** The servers the caller belongs to, in the order joined, each with `unread` and `mention_count`. */
  function listServers(ctx: Ctx) {
    const states = [...readStates.channels(ctx.user.id).values()];
    const threads = [...readStates.threads(ctx.user.id).values()];
    const muted = mutedNow(notifications.list(ctx.user.id), clock.now());
    return json(
      directory.serversOf(ctx.user.id).map((server) => ({
        ...server,
        ...serverSummary(
          server.id,
          states.filter((state) => state.server_id === server.id),
          muted,
          threads.filter((thread) => thread.server_id === server.id),
        ),
        posting_gate: perms.postingGate(ctx.user.id, server.id),
      })),
    );
  }

  /** One server, members only. */
  function getServer(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(directory.server(ctx.params.server_id));
  }

  /**
   * manage_server: {name?, description?, permissions?} (permissions: what everyone may do in
   * channels unless overwritten; changing them also needs manage_roles, and moves only flags the
   * caller holds); 200 server; audited (server_update); members get
   * server_updated, and those whose access changed the channel events of it.
   */
  function updateServer(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_server');
    const reason = auditReason(ctx);
    const before = directory.server(serverId)!;
    const name = ctx.body.name === undefined ? before.name : text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const description =
      ctx.body.description === undefined ? before.description : text(ctx.body, 'description', { min: 0, max: MAX_DESCRIPTION_CHARS, multiline: true });
    const everyone = ctx.body.permissions === undefined ? flagsOf(before.permissions as Flag[]) : flagsParam(ctx.body);
    const linkPreviews = ctx.body.link_previews === undefined ? before.link_previews : bool(ctx.body, 'link_previews');
    const safety = safetySettings(ctx, before);
    const changes = diff(before, { name, description, permissions: namesOf(everyone), link_previews: linkPreviews, ...safety });
    if (changes.permissions) {
      perms.requireServerFlag(ctx.user, serverId, 'manage_roles');
      requireGrantable(myFlags(ctx, serverId), everyone ^ flagsOf(before.permissions as Flag[]));
    }
    // Turning it on or off needs it on one's own account, as on Discord: a password alone cannot lift it.
    if (changes.two_factor_for_moderators && !twoFactor.isOn(ctx.user.id)) {
      throw forbidden('turn on two-factor authentication for your own account before changing what this server asks of its moderators');
    }
    const write = () =>
      db.transaction(() => {
        updateServerRow.run(
          name,
          description,
          everyone,
          linkPreviews ? 1 : 0,
          safety.verification_level,
          safety.two_factor_for_moderators ? 1 : 0,
          safety.join_rate_threshold,
          safety.join_rate_action,
          safety.invites_paused ? 1 : 0,
          safety.joins_paused ? 1 : 0,
          serverId,
        );
        audit.write({ serverId, action: 'server_update', actorId: ctx.user.id, targetId: serverId, targetKind: 'server', reason, changes });
      })();
    if (changes.permissions) accessChanges.around(serverId, write);
    else write();
    return json(announceServer(serverId));
  }

  /**
   * The raid-protection settings of a PATCH (docs/moderation.md "Verification levels", "Raid
   * protection"), each kept as it was when absent.
   */
  function safetySettings(ctx: Ctx, before: ServerRecord) {
    const { body } = ctx;
    return {
      verification_level: body.verification_level === undefined ? before.verification_level : (integer(body, 'verification_level', 0, 3) as VerificationLevel),
      two_factor_for_moderators: body.two_factor_for_moderators === undefined ? before.two_factor_for_moderators : bool(body, 'two_factor_for_moderators'),
      join_rate_threshold:
        body.join_rate_threshold === undefined ? before.join_rate_threshold : integer(body, 'join_rate_threshold', 0, MAX_JOIN_RATE_THRESHOLD),
      join_rate_action: body.join_rate_action === undefined ? before.join_rate_action : oneOf(body, 'join_rate_action', JOIN_RATE_ACTIONS),
      invites_paused: body.invites_paused === undefined ? before.invites_paused : bool(body, 'invites_paused'),
      joins_paused: body.joins_paused === undefined ? before.joins_paused : bool(body, 'joins_paused'),
    };
  }

  /**
   * Owner only: the server, its channels, messages, invites and roles go in one transaction; the
   * attachment files after the commit; every member gets server_left (reason "deleted"). 204.
   */
  function deleteServer(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireOwner(ctx.user, serverId, 'delete the server');
    const memberIds = directory.serverMemberIds(serverId);
    const fileIds = db.transaction(() => {
      const ids = attachmentsOfServer.all(serverId).map((a) => a.id);
      readStates.forget(channelIdsOf.all(serverId).map((c) => c.id));
      deleteServerRow.run(serverId);
      return ids;
    })();
    uploads.deleteFiles(fileIds);
    for (const userId of memberIds) hub.dropUser(userId, { serverId });
    hub.toUsers(memberIds, { event: 'server_left', server_id: serverId, reason: 'deleted' });
    return noContent();
  }

  /**
   * Owner only: {user_id} of a member becomes the owner (the old owner stays a member); audited
   * (owner_transfer). Never a bot (409): a bot owning a server would hold its person's account
   * and the bot itself undeletable (both refuse while they own servers).
   */
  function transferOwnership(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireOwner(ctx.user, serverId, 'transfer ownership');
    const userId = uuid(ctx.body, 'user_id');
    const reason = auditReason(ctx);
    if (userId === ctx.user.id) throw conflict('you own this server already');
    if (!perms.rank(userId, serverId)) throw notFound('member not found');
    if (users.byId(userId)?.bot) throw conflict('a bot cannot own a server: transfer it to a person');
    accessChanges.around(
      serverId,
      () =>
        db.transaction(() => {
          setOwner.run(userId, serverId);
          audit.write({
            serverId,
            action: 'owner_transfer',
            actorId: ctx.user.id,
            targetId: userId,
            targetKind: 'user',
            reason,
            changes: { owner_id: userId },
          });
        })(),
      [ctx.user.id, userId],
    );
    announceMembers(serverId, [ctx.user.id, userId]);
    return json(announceServer(serverId));
  }

  /** Members with is_owner, their role, presence and timeout, members only. */
  function listMembers(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(members.list(ctx.params.server_id));
  }

  /**
   * Leave (oneself; not the owner) or kick (the owner; an admin kicks plain members; audited);
   * 204; their room sockets close and their invites are revoked; a kicked member needs a new
   * invite from the owner or an administrator to come back.
   */
  function removeMember(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireCanRemove(ctx.user, serverId, userId);
    const kicked = userId !== ctx.user.id;
    const reason = kicked ? auditReason(ctx) : null;
    db.transaction(() => {
      members.remove(serverId, userId);
      if (!kicked) return;
      insertRemoval.run(serverId, userId, ctx.user.id, iso(clock.now()));
      audit.write({ serverId, action: 'member_kick', actorId: ctx.user.id, targetId: userId, targetKind: 'user', reason });
    })();
    hub.dropUser(userId, { serverId });
    hub.toUsers([userId], { event: 'server_left', server_id: serverId, reason: kicked ? 'kicked' : 'left' });
    hub.toServer(serverId, { event: 'member_left', server_id: serverId, user_id: userId });
    return noContent();
  }

  /** What the caller holds in the server as a whole (every flag for the owner and full administrators). */
  function myFlags(ctx: Ctx, serverId: string): Flags {
    return perms.channelRules(serverId)?.serverFlags(ctx.user.id) ?? 0;
  }

  /**
   * The role the path names, when the caller may change it: manage_roles, and the role below their
   * highest (the owner: any; a full server administrator: any but a full_server_admin role); 403
   * otherwise, 404 for no such role.
   */
  function manageableRole(ctx: Ctx, serverId: string): RoleRow {
    perms.requireServerFlag(ctx.user, serverId, 'manage_roles');
    const role = roleIn(serverId, ctx.params.role_id);
    if (!perms.isAboveRole(ctx.user.id, serverId, role)) throw forbidden('you can change only roles below your highest role');
    return role;
  }

  /** The roles, members only, in position order. */
  function listRoles(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(rolesOfServer.all(ctx.params.server_id).map(roleRecord));
  }

  /**
   * Owner only: {name, full_server_admin?, color?, hoist?, mentionable?, permissions?}; 201 role, placed last;
   * 409 for a name already used (any case); 400 past 250; audited.
   */
  function createRole(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireOwner(ctx.user, serverId, 'create roles');
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const admin = ctx.body.full_server_admin === undefined ? false : bool(ctx.body, 'full_server_admin');
    const colour = ctx.body.color === undefined ? null : color(ctx.body);
    const hoist = ctx.body.hoist === undefined ? false : bool(ctx.body, 'hoist');
    const mentionable = ctx.body.mentionable === undefined ? false : bool(ctx.body, 'mentionable');
    const flags = ctx.body.permissions === undefined ? 0 : flagsParam(ctx.body);
    const selfAssignable = ctx.body.self_assignable === undefined ? false : bool(ctx.body, 'self_assignable');
    const reason = auditReason(ctx);
    requirePowerless(selfAssignable, admin, flags);
    if (roleByName.get(serverId, name)) throw conflict(`a role named "${name}" already exists in this server`);
    if (roleCount.get(serverId)!.n >= MAX_ROLES_PER_SERVER) throw badRequest(`a server may have at most ${MAX_ROLES_PER_SERVER} roles`);
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    const id = crypto.randomUUID();
    db.transaction(() => {
      insertRole.run(id, serverId, name, admin ? 1 : 0, iso(clock.now()), colour, hoist ? 1 : 0, mentionable ? 1 : 0, flags, selfAssignable ? 1 : 0, serverId);
      audit.write({
        serverId,
        action: 'role_create',
        actorId: ctx.user.id,
        targetId: id,
        targetKind: 'role',
        reason,
        changes: { name, full_server_admin: admin, color: colour, hoist, mentionable, permissions: namesOf(flags), self_assignable: selfAssignable },
      });
    })();
    announceRoles(serverId);
    return created(roleRecord(roleById.get(id)!));
  }

  /**
   * manage_roles, for a role below one's highest (src/rules/permissions.ts isAboveRole; the owner:
   * any): {name?, full_server_admin? (the owner only), color?, hoist?, mentionable?, permissions?
   * (moving only flags one holds), position? (below one's highest)};
   * 200 role; positions stay 0..n-1 (a move renumbers the others); 409 for a name in use; audited;
   * holders get member_updated (and the channel events of what they now see), everyone roles_updated. A move is told by roles_updated alone: it carries
   * the order a member's `roles` follow, and a member_updated per holder of every role would be
   * holders x members frames for one drag.
   */
  function updateRole(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    const before = manageableRole(ctx, serverId);
    const name = ctx.body.name === undefined ? before.name : text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const admin = ctx.body.full_server_admin === undefined ? before.full_server_admin === 1 : bool(ctx.body, 'full_server_admin');
    const colour = ctx.body.color === undefined ? before.color : color(ctx.body);
    const hoist = ctx.body.hoist === undefined ? before.hoist === 1 : bool(ctx.body, 'hoist');
    const mentionable = ctx.body.mentionable === undefined ? before.mentionable === 1 : bool(ctx.body, 'mentionable');
    const flags = ctx.body.permissions === undefined ? before.permissions : flagsParam(ctx.body);
    const position = ctx.body.position === undefined ? null : integer(ctx.body, 'position', 0, MAX_ROLES_PER_SERVER);
    const selfAssignable = ctx.body.self_assignable === undefined ? before.self_assignable === 1 : bool(ctx.body, 'self_assignable');
    const reason = auditReason(ctx);
    requirePowerless(selfAssignable, admin, flags);
    if (admin !== (before.full_server_admin === 1)) perms.requireOwner(ctx.user, serverId, 'make or unmake a full server administrator role');
    requireGrantable(myFlags(ctx, serverId), flags ^ before.permissions);
    if (position !== null && !perms.isAboveRole(ctx.user.id, serverId, { position, full_server_admin: 0 })) {
      throw forbidden('you can place a role only below your highest role');
    }
    const clash = roleByName.get(serverId, name);
    if (clash && clash.id !== before.id) throw conflict(`a role named "${name}" already exists in this server`);
    const holders = holdersOf.all(before.id).map((r) => r.user_id);
    let after: RoleRow | undefined;
    const write = () =>
      db.transaction(() => {
        updateRoleRow.run(name, admin ? 1 : 0, colour, hoist ? 1 : 0, mentionable ? 1 : 0, flags, selfAssignable ? 1 : 0, before.id);
        if (position !== null) reorderRoles(serverId, before.id, position);
        after = roleById.get(before.id)!;
        const changes = diff(roleRecord(before), {
          name,
          full_server_admin: admin,
          color: colour,
          hoist,
          mentionable,
          permissions: namesOf(flags),
          position: after.position,
          self_assignable: selfAssignable,
        });
        audit.write({ serverId, action: 'role_update', actorId: ctx.user.id, targetId: before.id, targetKind: 'role', reason, changes });
      })();
    if (flags !== before.permissions || admin !== (before.full_server_admin === 1)) accessChanges.around(serverId, write, holders);
    else write();
    announceMembers(serverId, holders);
    announceRoles(serverId);
    return json(roleRecord(after!));
  }

  /**
   * manage_roles, for a role below one's highest (as updateRole): 204; members holding it lose it
   * (member_updated), and its overwrites go; the others move up; audited.
   */
  function deleteRole(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    const role = manageableRole(ctx, serverId);
    const reason = auditReason(ctx);
    const holders = holdersOf.all(role.id).map((r) => r.user_id);
    accessChanges.around(
      serverId,
      () =>
        db.transaction(() => {
          overwrites.forgetTarget(serverId, role.id);
          deleteRoleRow.run(role.id);
          reorderRoles(serverId, null, 0);
          audit.write({ serverId, action: 'role_delete', actorId: ctx.user.id, targetId: role.id, targetKind: 'role', reason, changes: { name: role.name } });
        })(),
      holders,
    );
    announceMembers(serverId, holders);
    announceRoles(serverId);
    return noContent();
  }

  /**
   * Owner only: gives the member the named role, beside those they hold (`role: null` takes them
   * all); 200 member; 404 unknown role or member; audited (role_assign).
   */
  function assignRole(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireOwner(ctx.user, serverId, 'assign roles');
    let roleId: string | null = null;
    let roleName: string | null = null;
    if (ctx.body.role !== null) {
      roleName = text(ctx.body, 'role', { max: MAX_NAME_CHARS });
      const role = roleByName.get(serverId, roleName);
      if (!role) throw notFound('role not found');
      roleId = role.id;
      roleName = role.name;
    }
    return changeRoles(ctx, userId, 'role_assign', { role: roleName, role_id: roleId }, () => {
      if (roleId) members.addRole(serverId, userId, roleId);
      else members.clearRoles(serverId, userId);
    });
  }

  /** Owner only: takes one role from the member; 200 member; 404 unknown role, member, or a role they do not hold; audited (role_unassign). */
  function unassignRole(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireOwner(ctx.user, serverId, 'remove roles');
    const role = roleIn(serverId, ctx.params.role_id);
    return changeRoles(ctx, userId, 'role_unassign', { role: role.name, role_id: role.id }, () => {
      if (!members.removeRole(serverId, userId, role.id)) throw notFound('the member does not hold this role');
    });
  }

  /**
   * A change to the roles of the member the path names (404 for a non-member): made in one
   * transaction with its audit entry (the role named, the roles before and after), then told: the
   * member's new access to channels, and their record to the server.
   */
  function changeRoles(
    ctx: Ctx,
    userId: string,
    action: 'role_assign' | 'role_unassign',
    named: { role: string | null; role_id: string | null; self?: true },
    change: () => void,
  ) {
    const serverId = ctx.params.server_id;
    const reason = auditReason(ctx);
    if (!perms.rank(userId, serverId)) throw notFound('member not found');
    const before = members.record(serverId, userId)!.roles;
    const write = db.transaction(() => {
      change();
      const after = members.record(serverId, userId)!.roles;
      audit.write({
        serverId,
        action,
        actorId: ctx.user.id,
        targetId: userId,
        targetKind: 'user',
        reason,
        changes: { ...named, roles: { from: before, to: after } },
      });
    });
    accessChanges.around(serverId, () => write(), [userId]);
    return json(announceMember(serverId, userId));
  }

  /**
   * A role the caller may take or drop themselves (issue 53, docs/moderation.md "Self-assigned
   * roles"): 404 for a non-member or another server's role; 403 for a role not self-assignable,
   * one carrying a power (refused when marked, checked again here), or one placed above a role
   * with a power (its holders would stand above moderators in the hierarchy, out of their reach).
   */
  function selfAssignableRole(ctx: Ctx): RoleRow {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    const role = roleIn(serverId, ctx.params.role_id);
    if (role.self_assignable !== 1) throw forbidden('this role is not self-assignable: ask a moderator for it');
    const problem = perms.strangerRoleProblem(serverId, role);
    if (problem === 'power') throw forbidden('a role with a power is never self-assigned');
    if (problem === 'above') throw forbidden('this role sits above a moderator role: move it below them before members take it');
    return role;
  }

  /** PUT …/members/@me/roles/{role_id}: the caller takes a self-assignable role; 200 member (unchanged if held already); audited (role_assign, self). */
  function takeRole(ctx: Ctx) {
    const role = selfAssignableRole(ctx);
    const serverId = ctx.params.server_id;
    if (members.record(serverId, ctx.user.id)?.role_ids.includes(role.id)) return json(members.record(serverId, ctx.user.id));
    return changeRoles(ctx, ctx.user.id, 'role_assign', { role: role.name, role_id: role.id, self: true }, () =>
      members.addRole(serverId, ctx.user.id, role.id),
    );
  }

  /** DELETE …/members/@me/roles/{role_id}: the caller drops a self-assignable role; 200 member; 404 when not held; audited (role_unassign, self). */
  function dropRole(ctx: Ctx) {
    const role = selfAssignableRole(ctx);
    const serverId = ctx.params.server_id;
    return changeRoles(ctx, ctx.user.id, 'role_unassign', { role: role.name, role_id: role.id, self: true }, () => {
      if (!members.removeRole(serverId, ctx.user.id, role.id)) throw notFound('you do not hold this role');
    });
  }

  /** The member's record after a change, told to the server. */
  function announceMember(serverId: string, userId: string) {
    const member = members.record(serverId, userId)!;
    hub.toServer(serverId, { event: 'member_updated', server_id: serverId, member });
    return member;
  }
}

/**
 * Ids in their new order, for anything kept in a dense `position` (channels, roles, categories):
 * `moving` taken out and put back at `position` (clamped to the end), or, with null, the same
 * order with the gaps closed. A row's new position is its index.
 */
export function placed(ids: readonly string[], moving: string | null, position: number): string[] {
  const order = ids.filter((id) => id !== moving);
  if (moving !== null) order.splice(Math.min(position, order.length), 0, moving);
  return order;
}

/** The fields that change, as {field: {from, to}}, for an audit entry. */
export function diff(before: object, after: Record<string, unknown>): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const [key, to] of Object.entries(after)) {
    const from = (before as Record<string, unknown>)[key];
    // Lists (permissions) compare by what they hold.
    if (Array.isArray(from) && Array.isArray(to) ? from.join() !== to.join() : from !== to) changes[key] = { from, to };
  }
  return changes;
}
