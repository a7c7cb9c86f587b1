import crypto from 'node:crypto';
import { requestOrigin } from '../auth';
import { DAY, iso } from '../clock';
import { badRequest, conflict, forbidden, notFound } from '../http/errors';
import { HANDLED, created, json, noContent } from '../http/respond';
import type { Services } from '../services';
import { channelWithState, serverEntry } from '../ready';
import { assertAllowed } from '../standing';
import type { Ctx, PublicCtx, Route } from '../types';
import { bool, text } from '../validate';

export const INVITE_LIFETIME_MS = 7 * DAY;
export const MAX_NAME_CHARS = 100;
/** Caps on what one user can make exist (docs/security.md "Caps"), so no one fills the database. */
export const MAX_SERVERS_PER_USER = 100;
export const MAX_CHANNELS_PER_SERVER = 500;
export const MAX_ROLES_PER_SERVER = 250;
export const MAX_LIVE_INVITES_PER_SERVER = 1000;
export const FIRST_CHANNEL_NAME = 'general';
const INVITE_TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

type Deps = Pick<Services, 'db' | 'clock' | 'config' | 'perms' | 'hub' | 'staticFiles' | 'limits' | 'directory' | 'readStates' | 'presence'>;

/** Servers, channels, roles, members and invites (spec section 4; who may do what: src/permissions.ts). */
export function serverRoutes(deps: Deps): Route[] {
  const h = serverHandlers(deps);
  const S = '/api/servers/:server_id';
  return [
    { method: 'POST', path: '/api/servers', auth: 'user', body: 'json', handler: h.createServer },
    { method: 'GET', path: '/api/servers', auth: 'user', body: 'none', handler: h.listServers },
    { method: 'GET', path: S, auth: 'user', body: 'none', handler: h.getServer },
    { method: 'GET', path: `${S}/channels`, auth: 'user', body: 'none', handler: h.listChannels },
    { method: 'POST', path: `${S}/channels`, auth: 'user', body: 'json', handler: h.createChannel },
    { method: 'GET', path: `${S}/members`, auth: 'user', body: 'none', handler: h.listMembers },
    { method: 'DELETE', path: `${S}/members/:user_id`, auth: 'user', body: 'none', handler: h.removeMember },
    { method: 'GET', path: `${S}/roles`, auth: 'user', body: 'none', handler: h.listRoles },
    { method: 'POST', path: `${S}/roles`, auth: 'user', body: 'json', handler: h.createRole },
    { method: 'PUT', path: `${S}/members/:user_id/role`, auth: 'user', body: 'json', handler: h.assignRole },
    { method: 'POST', path: `${S}/invites`, auth: 'user', body: 'none', handler: h.createInvite },
    { method: 'GET', path: '/api/invites/:token', auth: 'none', body: 'none', handler: h.getInvite },
    { method: 'POST', path: '/api/invites/:token/accept', auth: 'user', body: 'none', handler: h.acceptInvite },
    { method: 'GET', path: '/invites/:token', auth: 'none', body: 'none', handler: h.invitePage },
  ];
}

interface RoleRow {
  id: string;
  server_id: string;
  name: string;
  full_server_admin: number;
  created_at: string;
}
interface MemberRow {
  user_id: string;
  username: string;
  role: string | null;
  is_owner: number;
  joined_at: string;
}

const roleRecord = (r: RoleRow) => ({ ...r, full_server_admin: r.full_server_admin === 1 });
function serverHandlers(deps: Deps) {
  const { db, clock, config, perms, hub, staticFiles, limits, directory, readStates, presence } = deps;
  const memberRecord = (m: MemberRow) => ({
    user_id: m.user_id,
    username: m.username,
    is_owner: m.is_owner === 1,
    role: m.role,
    roles: m.role ? [m.role] : [],
    joined_at: m.joined_at,
    presence: presence.of(m.user_id),
  });
  const insertServer = db.prepare('INSERT INTO servers (id, name, owner_id, created_at) VALUES (?, ?, ?, ?)');
  // A new member starts with everything already in the server read.
  const insertMember = db.prepare(
    'INSERT OR IGNORE INTO members (server_id, user_id, joined_at, joined_seq) VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) FROM messages))',
  );
  const insertChannel = db.prepare(
    `INSERT INTO channels (id, server_id, name, position, created_at)
     VALUES (?, ?, ?, (SELECT COALESCE(MAX(position) + 1, 0) FROM channels WHERE server_id = ?), ?)`,
  );
  const channelByName = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? AND name = ? COLLATE NOCASE',
  );
  const MEMBER_COLUMNS = `m.user_id, u.username, r.name AS role, (s.owner_id = m.user_id) AS is_owner, m.joined_at
       FROM members m
       JOIN users u ON u.id = m.user_id
       JOIN servers s ON s.id = m.server_id
       LEFT JOIN roles r ON r.id = m.role_id`;
  const membersOfServer = db.prepare<[string], MemberRow>(`SELECT ${MEMBER_COLUMNS} WHERE m.server_id = ? ORDER BY is_owner DESC, u.username`);
  const memberById = db.prepare<[string, string], MemberRow>(`SELECT ${MEMBER_COLUMNS} WHERE m.server_id = ? AND m.user_id = ?`);
  const memberOf = db.prepare<[string, string], { user_id: string }>(
    'SELECT user_id FROM members WHERE server_id = ? AND user_id = ?',
  );
  const deleteMember = db.prepare('DELETE FROM members WHERE server_id = ? AND user_id = ?');
  const insertRole = db.prepare(
    'INSERT INTO roles (id, server_id, name, full_server_admin, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const roleById = db.prepare<[string], RoleRow>('SELECT id, server_id, name, full_server_admin, created_at FROM roles WHERE id = ?');
  const roleByName = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM roles WHERE server_id = ? AND name = ? COLLATE NOCASE',
  );
  const rolesOfServer = db.prepare<[string], RoleRow>(
    'SELECT id, server_id, name, full_server_admin, created_at FROM roles WHERE server_id = ? ORDER BY created_at, rowid',
  );
  const setMemberRole = db.prepare('UPDATE members SET role_id = ? WHERE server_id = ? AND user_id = ?');
  const insertInvite = db.prepare(
    'INSERT INTO invites (token, server_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  );
  const inviteByToken = db.prepare<[string], { server_id: string; expires_at: string; server_name: string; created_by: string; created_at: string }>(
    `SELECT i.server_id, i.expires_at, s.name AS server_name, i.created_by, i.created_at
       FROM invites i JOIN servers s ON s.id = i.server_id WHERE i.token = ?`,
  );
  const memberCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM members WHERE server_id = ?');
  const serverCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM members WHERE user_id = ?');
  const channelCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM channels WHERE server_id = ?');
  const roleCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM roles WHERE server_id = ?');
  const liveInviteCount = db.prepare<[string, string], { n: number }>(
    'SELECT COUNT(*) AS n FROM invites WHERE server_id = ? AND expires_at > ?',
  );
  const insertRemoval = db.prepare(
    'INSERT OR REPLACE INTO server_removals (server_id, user_id, removed_by, removed_at) VALUES (?, ?, ?, ?)',
  );
  const removalOf = db.prepare<[string, string], { removed_at: string }>(
    'SELECT removed_at FROM server_removals WHERE server_id = ? AND user_id = ?',
  );
  const deleteRemoval = db.prepare('DELETE FROM server_removals WHERE server_id = ? AND user_id = ?');
  const deleteInvitesBy = db.prepare('DELETE FROM invites WHERE server_id = ? AND created_by = ?');

  /** 403 once the user is in as many servers as one account may be. */
  const requireRoomForServer = (userId: string) => {
    if (serverCount.get(userId)!.n >= MAX_SERVERS_PER_USER) {
      throw forbidden(`you are in ${MAX_SERVERS_PER_USER} servers, the most one account may be in; leave one first`);
    }
  };

  const validInvite = (token: string) => {
    const invite = INVITE_TOKEN.test(token) ? inviteByToken.get(token) : undefined;
    if (!invite || Date.parse(invite.expires_at) <= clock.now()) throw notFound('invite not found or expired');
    return invite;
  };

  return {
    createServer,
    listServers,
    getServer,
    listChannels,
    createChannel,
    listMembers,
    removeMember,
    listRoles,
    createRole,
    assignRole,
    createInvite,
    getInvite,
    acceptInvite,
    invitePage,
  };

  /** 201 server; the caller owns it and is its first member; a "general" channel comes with it. */
  function createServer(ctx: Ctx) {
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    requireRoomForServer(ctx.user.id);
    limits.serversPerUser.take(ctx.user.id, 'servers created');
    const id = crypto.randomUUID();
    const now = iso(clock.now());
    db.transaction(() => {
      insertServer.run(id, name, ctx.user.id, now);
      insertMember.run(id, ctx.user.id, now);
      insertChannel.run(crypto.randomUUID(), id, FIRST_CHANNEL_NAME, id, now);
    })();
    const server = directory.server(id)!;
    hub.toUsers([ctx.user.id], { payload: { event: 'server_joined', server: serverEntry(deps, ctx.user.id, server) } });
    return created(server);
  }

  /** The servers the caller belongs to, in the order joined, each with `unread` and `mention_count`. */
  function listServers(ctx: Ctx) {
    const states = [...readStates.channels(ctx.user.id).values()];
    return json(
      directory.serversOf(ctx.user.id).map((server) => {
        const mine = states.filter((state) => state.server_id === server.id);
        return { ...server, unread: mine.some((c) => c.unread_count > 0), mention_count: mine.reduce((sum, c) => sum + c.mention_count, 0) };
      }),
    );
  }

  /** One server, members only. */
  function getServer(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(directory.server(ctx.params.server_id));
  }

  /** The channels, members only, in position order, each with the caller's read state. */
  function listChannels(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    const states = readStates.channels(ctx.user.id, serverId);
    return json(directory.channelsOf(serverId).map((channel) => channelWithState(channel, states)));
  }

  /** Owner or full server administrator; 201 channel; 409 for a name already used (any case); 400 past 500. */
  function createChannel(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerAdmin(ctx.user, serverId, 'create channels');
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    if (channelByName.get(serverId, name)) throw conflict(`a channel named "${name}" already exists in this server`);
    if (channelCount.get(serverId)!.n >= MAX_CHANNELS_PER_SERVER) {
      throw badRequest(`a server may have at most ${MAX_CHANNELS_PER_SERVER} channels`);
    }
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    const id = crypto.randomUUID();
    insertChannel.run(id, serverId, name, serverId, iso(clock.now()));
    const channel = directory.channel(id)!;
    hub.toServer(serverId, { payload: { event: 'channel_created', server_id: serverId, channel_id: id, channel: channelWithState(channel, new Map()) } });
    return created(channel);
  }

  /** Members with is_owner and their role, members only. */
  function listMembers(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(membersOfServer.all(ctx.params.server_id).map(memberRecord));
  }

  /**
   * Leave (oneself; not the owner) or kick (the owner; an admin kicks plain members); 204; their
   * sockets close and their invites are revoked; a kicked member needs a new invite from the
   * owner or an administrator to come back.
   */
  function removeMember(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireCanRemove(ctx.user, serverId, userId);
    const kicked = userId !== ctx.user.id;
    db.transaction(() => {
      deleteMember.run(serverId, userId);
      deleteInvitesBy.run(serverId, userId);
      if (kicked) insertRemoval.run(serverId, userId, ctx.user.id, iso(clock.now()));
    })();
    hub.dropUser(userId, { serverId });
    hub.toUsers([userId], { payload: { event: 'server_left', server_id: serverId, reason: kicked ? 'kicked' : 'left' } });
    hub.toServer(serverId, { payload: { event: 'member_left', server_id: serverId, user_id: userId } });
    return noContent();
  }

  /** The roles, members only, in creation order. */
  function listRoles(ctx: Ctx) {
    perms.serverAccess(ctx.user, ctx.params.server_id);
    return json(rolesOfServer.all(ctx.params.server_id).map(roleRecord));
  }

  /** Owner only; 201 role (full_server_admin defaults to false); 409 for a name already used (any case); 400 past 250. */
  function createRole(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireOwner(ctx.user, serverId, 'create roles');
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const admin = ctx.body.full_server_admin === undefined ? false : bool(ctx.body, 'full_server_admin');
    if (roleByName.get(serverId, name)) throw conflict(`a role named "${name}" already exists in this server`);
    if (roleCount.get(serverId)!.n >= MAX_ROLES_PER_SERVER) throw badRequest(`a server may have at most ${MAX_ROLES_PER_SERVER} roles`);
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    const id = crypto.randomUUID();
    insertRole.run(id, serverId, name, admin ? 1 : 0, iso(clock.now()));
    return created(roleRecord(roleById.get(id)!));
  }

  /** Owner only: the member's one custom role by name (`role: null` clears it); 404 unknown role or member. */
  function assignRole(ctx: Ctx) {
    const { server_id: serverId, user_id: userId } = ctx.params;
    perms.requireOwner(ctx.user, serverId, 'assign roles');
    let roleId: string | null = null;
    if (ctx.body.role !== null) {
      const role = roleByName.get(serverId, text(ctx.body, 'role', { max: MAX_NAME_CHARS }));
      if (!role) throw notFound('role not found');
      roleId = role.id;
    }
    if (!memberOf.get(serverId, userId)) throw notFound('member not found');
    setMemberRole.run(roleId, serverId, userId);
    const member = memberRecord(memberById.get(serverId, userId)!);
    hub.toServer(serverId, { payload: { event: 'member_updated', server_id: serverId, member } });
    return json(member);
  }

  /** Any member; 201 {token, server_id, expires_at, url (BASE_URL, else the address the caller used)}; valid seven days; 400 past 1000 live invites. */
  function createInvite(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    const now = clock.now();
    if (liveInviteCount.get(serverId, iso(now))!.n >= MAX_LIVE_INVITES_PER_SERVER) {
      throw badRequest(`a server may have at most ${MAX_LIVE_INVITES_PER_SERVER} live invites`);
    }
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    const token = crypto.randomBytes(18).toString('base64url');
    const expiresAt = iso(now + INVITE_LIFETIME_MS);
    insertInvite.run(token, serverId, ctx.user.id, iso(now), expiresAt);
    // Without BASE_URL, the link leads where this browser already is (a LAN address, say),
    // where the user is signed in; never a guess like localhost.
    const base = config.baseUrlConfigured ? config.baseUrl : (requestOrigin(ctx.req, config.trustProxy) ?? config.baseUrl);
    return created({ token, server_id: serverId, expires_at: expiresAt, url: `${base}/invites/${token}` });
  }

  /** What an invite leads to, for the invite page; holding the token is what entitles one to see it. */
  function getInvite(ctx: PublicCtx) {
    const invite = validInvite(ctx.params.token);
    return json({
      server_id: invite.server_id,
      server_name: invite.server_name,
      expires_at: invite.expires_at,
      member_count: memberCount.get(invite.server_id)!.n,
    });
  }

  /**
   * 200 {server_id}, harmless twice; standing 1 and above 403 even when already a member; 404
   * unknown or expired; a kicked member 403 unless the invite is the owner's or an
   * administrator's, made after the removal; 403 past the servers cap.
   */
  function acceptInvite(ctx: Ctx) {
    assertAllowed(ctx.user, 'join_server');
    const invite = validInvite(ctx.params.token);
    if (perms.rank(ctx.user.id, invite.server_id)) return json({ server_id: invite.server_id });
    const removal = removalOf.get(invite.server_id, ctx.user.id);
    const inviterRank = perms.rank(invite.created_by, invite.server_id);
    const invitedAnew = removal && invite.created_at >= removal.removed_at && (inviterRank === 'owner' || inviterRank === 'admin');
    if (removal && !invitedAnew) {
      throw forbidden('you were removed from this server; ask its owner or an administrator for a new invite');
    }
    requireRoomForServer(ctx.user.id);
    db.transaction(() => {
      insertMember.run(invite.server_id, ctx.user.id, iso(clock.now()));
      deleteRemoval.run(invite.server_id, ctx.user.id);
    })();
    const server = directory.server(invite.server_id)!;
    hub.toUsers([ctx.user.id], { payload: { event: 'server_joined', server: serverEntry(deps, ctx.user.id, server) } });
    const member = memberRecord(memberById.get(server.id, ctx.user.id)!);
    hub.toServer(server.id, { payload: { event: 'member_joined', server_id: server.id, member } });
    return json({ server_id: invite.server_id });
  }

  /** The browser page naming the server, with a join button. */
  function invitePage(ctx: PublicCtx) {
    staticFiles.page('invite.html', ctx.res);
    return HANDLED;
  }
}
