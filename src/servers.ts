import crypto from 'node:crypto';
import type { App, Route } from './app';
import { DAY, iso } from './clock';
import { conflict, notFound } from './http/errors';
import { HANDLED, created, json, noContent } from './http/respond';
import { assertAllowed } from './standing';
import { bool, text } from './validate';

export const INVITE_LIFETIME_MS = 7 * DAY;
export const MAX_NAME_CHARS = 100;
export const FIRST_CHANNEL_NAME = 'general';
const INVITE_TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

interface ServerRow {
  id: string;
  name: string;
  owner_id: string;
  created_at: string;
}

/** Servers, channels, roles, members and invites (spec section 4, permissions in 5.6). */
export function serversRoutes(app: App): Route[] {
  const { db, perms } = app;
  const insertServer = db.prepare('INSERT INTO servers (id, name, owner_id, created_at) VALUES (?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT OR IGNORE INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const insertChannel = db.prepare(
    `INSERT INTO channels (id, server_id, name, position, created_at)
     VALUES (?, ?, ?, (SELECT COALESCE(MAX(position) + 1, 0) FROM channels WHERE server_id = ?), ?)`,
  );
  const serverById = db.prepare<[string], ServerRow>('SELECT id, name, owner_id, created_at FROM servers WHERE id = ?');
  const serversOfUser = db.prepare<[string], ServerRow>(
    `SELECT s.id, s.name, s.owner_id, s.created_at
       FROM members m JOIN servers s ON s.id = m.server_id WHERE m.user_id = ? ORDER BY m.joined_at, s.name`,
  );
  const channelByName = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? AND name = ? COLLATE NOCASE',
  );
  const channelById = db.prepare('SELECT id, server_id, name, position, created_at FROM channels WHERE id = ?');
  const channelsOfServer = db.prepare(
    'SELECT id, server_id, name, position, created_at FROM channels WHERE server_id = ? ORDER BY position',
  );
  const membersOfServer = db.prepare<[string], { user_id: string; username: string; role: string | null; is_owner: number; joined_at: string }>(
    `SELECT m.user_id, u.username, r.name AS role, (s.owner_id = m.user_id) AS is_owner, m.joined_at
       FROM members m
       JOIN users u ON u.id = m.user_id
       JOIN servers s ON s.id = m.server_id
       LEFT JOIN roles r ON r.id = m.role_id
      WHERE m.server_id = ? ORDER BY is_owner DESC, u.username`,
  );
  const memberOf = db.prepare<[string, string], { user_id: string }>(
    'SELECT user_id FROM members WHERE server_id = ? AND user_id = ?',
  );
  const removeMember = db.prepare('DELETE FROM members WHERE server_id = ? AND user_id = ?');
  const insertRole = db.prepare(
    'INSERT INTO roles (id, server_id, name, full_server_admin, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const roleById = db.prepare<[string], { id: string; server_id: string; name: string; full_server_admin: number; created_at: string }>(
    'SELECT id, server_id, name, full_server_admin, created_at FROM roles WHERE id = ?',
  );
  const roleByName = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM roles WHERE server_id = ? AND name = ? COLLATE NOCASE',
  );
  const rolesOfServer = db.prepare<[string], { id: string; server_id: string; name: string; full_server_admin: number; created_at: string }>(
    'SELECT id, server_id, name, full_server_admin, created_at FROM roles WHERE server_id = ? ORDER BY created_at, rowid',
  );
  const setMemberRole = db.prepare('UPDATE members SET role_id = ? WHERE server_id = ? AND user_id = ?');
  const insertInvite = db.prepare(
    'INSERT INTO invites (token, server_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
  );
  const inviteByToken = db.prepare<[string], { server_id: string; expires_at: string; server_name: string }>(
    `SELECT i.server_id, i.expires_at, s.name AS server_name
       FROM invites i JOIN servers s ON s.id = i.server_id WHERE i.token = ?`,
  );
  const memberCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM members WHERE server_id = ?');

  const roleRecord = (r: { id: string; server_id: string; name: string; full_server_admin: number; created_at: string }) => ({
    ...r,
    full_server_admin: r.full_server_admin === 1,
  });
  const memberRecord = (m: { user_id: string; username: string; role: string | null; is_owner: number; joined_at: string }) => ({
    user_id: m.user_id,
    username: m.username,
    is_owner: m.is_owner === 1,
    role: m.role,
    roles: m.role ? [m.role] : [],
    joined_at: m.joined_at,
  });
  const validInvite = (token: string) => {
    const invite = INVITE_TOKEN.test(token) ? inviteByToken.get(token) : undefined;
    if (!invite || Date.parse(invite.expires_at) <= app.clock.now()) throw notFound('invite not found or expired');
    return invite;
  };

  return [
    {
      // POST /api/servers {name}
      // - 201 server {id, name, owner_id, created_at}; the caller owns it and is its first member.
      // - A first channel, "general", is created with it so the server is usable at once.
      method: 'POST',
      path: '/api/servers',
      body: 'json',
      handler: (ctx) => {
        const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
        const id = crypto.randomUUID();
        const now = iso(app.clock.now());
        db.transaction(() => {
          insertServer.run(id, name, ctx.user.id, now);
          insertMember.run(id, ctx.user.id, now);
          insertChannel.run(crypto.randomUUID(), id, FIRST_CHANNEL_NAME, id, now);
        })();
        return created(serverById.get(id));
      },
    },
    {
      // GET /api/servers: the servers the caller belongs to, in the order joined.
      method: 'GET',
      path: '/api/servers',
      handler: (ctx) => json(serversOfUser.all(ctx.user.id)),
    },
    {
      // GET /api/servers/{server_id}: one server (members only).
      method: 'GET',
      path: '/api/servers/:server_id',
      handler: (ctx) => {
        perms.requireMember(ctx.user, ctx.params.server_id);
        return json(serverById.get(ctx.params.server_id));
      },
    },
    {
      // GET /api/servers/{server_id}/channels: members only, in position order.
      method: 'GET',
      path: '/api/servers/:server_id/channels',
      handler: (ctx) => {
        perms.requireMember(ctx.user, ctx.params.server_id);
        return json(channelsOfServer.all(ctx.params.server_id));
      },
    },
    {
      // POST /api/servers/{server_id}/channels {name}
      // - Owner or full server administrator; 201 channel; 409 for a name already used (any case).
      method: 'POST',
      path: '/api/servers/:server_id/channels',
      body: 'json',
      handler: (ctx) => {
        const serverId = ctx.params.server_id;
        perms.requireServerAdmin(ctx.user, serverId, 'create channels');
        const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
        if (channelByName.get(serverId, name)) throw conflict(`a channel named "${name}" already exists in this server`);
        const id = crypto.randomUUID();
        insertChannel.run(id, serverId, name, serverId, iso(app.clock.now()));
        return created(channelById.get(id));
      },
    },
    {
      // GET /api/servers/{server_id}/members: members with is_owner and their role.
      method: 'GET',
      path: '/api/servers/:server_id/members',
      handler: (ctx) => {
        perms.requireMember(ctx.user, ctx.params.server_id);
        return json(membersOfServer.all(ctx.params.server_id).map(memberRecord));
      },
    },
    {
      // DELETE /api/servers/{server_id}/members/{user_id}
      // - Oneself: leave (the owner cannot). Another member: kick, by the owner, or by a full
      //   server administrator for members without an admin role. 204; their sockets close.
      method: 'DELETE',
      path: '/api/servers/:server_id/members/:user_id',
      handler: (ctx) => {
        const { server_id: serverId, user_id: userId } = ctx.params;
        perms.requireCanRemove(ctx.user, serverId, userId);
        removeMember.run(serverId, userId);
        app.hub.dropUser(userId, { serverId });
        return noContent();
      },
    },
    {
      // GET /api/servers/{server_id}/roles: members only, in creation order.
      method: 'GET',
      path: '/api/servers/:server_id/roles',
      handler: (ctx) => {
        perms.requireMember(ctx.user, ctx.params.server_id);
        return json(rolesOfServer.all(ctx.params.server_id).map(roleRecord));
      },
    },
    {
      // POST /api/servers/{server_id}/roles {name, full_server_admin}
      // - Owner only; 201 role; full_server_admin (a boolean) defaults to false.
      // - 409 for a name already used in the server (any case).
      method: 'POST',
      path: '/api/servers/:server_id/roles',
      body: 'json',
      handler: (ctx) => {
        const serverId = ctx.params.server_id;
        perms.requireOwner(ctx.user, serverId, 'create roles');
        const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
        const admin = ctx.body.full_server_admin === undefined ? false : bool(ctx.body, 'full_server_admin');
        if (roleByName.get(serverId, name)) throw conflict(`a role named "${name}" already exists in this server`);
        const id = crypto.randomUUID();
        insertRole.run(id, serverId, name, admin ? 1 : 0, iso(app.clock.now()));
        return created(roleRecord(roleById.get(id)!));
      },
    },
    {
      // PUT /api/servers/{server_id}/members/{user_id}/role {role}
      // - Owner only. Sets the member's custom role by name (a member has at most one);
      //   `role: null` clears it. 404 for an unknown role or a non-member. Returns the member.
      method: 'PUT',
      path: '/api/servers/:server_id/members/:user_id/role',
      body: 'json',
      handler: (ctx) => {
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
        return json(memberRecord(membersOfServer.all(serverId).find((m) => m.user_id === userId)!));
      },
    },
    {
      // POST /api/servers/{server_id}/invites
      // - Any member; 201 {token, server_id, expires_at, url}; valid seven days.
      method: 'POST',
      path: '/api/servers/:server_id/invites',
      handler: (ctx) => {
        const serverId = ctx.params.server_id;
        perms.requireMember(ctx.user, serverId);
        const token = crypto.randomBytes(18).toString('base64url');
        const now = app.clock.now();
        const expiresAt = iso(now + INVITE_LIFETIME_MS);
        insertInvite.run(token, serverId, ctx.user.id, iso(now), expiresAt);
        return created({ token, server_id: serverId, expires_at: expiresAt, url: `${app.config.baseUrl}/invites/${token}` });
      },
    },
    {
      // GET /api/invites/{token}: what an invite leads to, for the invite page; no auth
      // (holding the token is what entitles one to see it). 404 unknown or expired.
      method: 'GET',
      path: '/api/invites/:token',
      auth: 'none',
      handler: (ctx) => {
        const invite = validInvite(ctx.params.token);
        return json({
          server_id: invite.server_id,
          server_name: invite.server_name,
          expires_at: invite.expires_at,
          member_count: memberCount.get(invite.server_id)!.n,
        });
      },
    },
    {
      // POST /api/invites/{token}/accept
      // - 200 {server_id}; joining twice is harmless (same answer, one membership).
      // - Standing 1 or higher: 403 (spec section 3: "cannot accept invites"), even when already
      //   a member. Unknown or expired token: 404.
      method: 'POST',
      path: '/api/invites/:token/accept',
      handler: (ctx) => {
        assertAllowed(ctx.user, 'join_server');
        const invite = validInvite(ctx.params.token);
        insertMember.run(invite.server_id, ctx.user.id, iso(app.clock.now()));
        return json({ server_id: invite.server_id });
      },
    },
    {
      // GET /invites/{token}: the browser page naming the server, with a join button.
      method: 'GET',
      path: '/invites/:token',
      auth: 'none',
      handler: (ctx) => {
        app.staticFiles.page('invite.html', ctx.res);
        return HANDLED;
      },
    },
  ];
}
