import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { forbidden } from '../../core/http/errors';
import type { MemberRecord, Shown } from '../../core/records';
import { MODERATION } from '../../rules/channel-permissions';

/** Servers one user may be in (owned or joined): docs/security.md "Caps". */
export const MAX_SERVERS_PER_USER = 100;

/**
 * Server membership: the one place members are added, removed and shaped, for the member
 * routes, invites, bans and the live events alike. Writes are meant to run inside the caller's
 * transaction; the caller announces after the commit.
 */
export interface Members {
  record(serverId: string, userId: string): MemberRecord | undefined;
  list(serverId: string): MemberRecord[];
  /** Adds a member who starts with everything in the server read. */
  add(serverId: string, userId: string): void;
  /** Removes a member and revokes the invites they created. */
  remove(serverId: string, userId: string): void;
  /** Gives the member a role (nothing when they hold it already). */
  addRole(serverId: string, userId: string, roleId: string): void;
  /** Takes one role from the member; false when they did not hold it. */
  removeRole(serverId: string, userId: string, roleId: string): boolean;
  /** Takes every role from the member. */
  clearRoles(serverId: string, userId: string): void;
  /** Until when the member may only read (null: not timed out). */
  setTimeout(serverId: string, userId: string, until: string | null): void;
  /**
   * Whether the member is in membership screening now (src/parts/community/onboarding.ts): marked
   * pending, and neither the owner nor a holder of powers (full_server_admin or a moderator's
   * flag, by a role or by everyone's flags), who never wait.
   */
  isPending(serverId: string, userId: string): boolean;
  /** Marks the member pending or lets them in; false when nothing changed. */
  setPending(serverId: string, userId: string, pending: boolean): boolean;
  /** Lets every pending member of the server in (screening turned off): who was waiting (isPending). */
  clearPending(serverId: string): string[];
  /** 403 once the user is in as many servers as one account may be. */
  requireRoom(userId: string): void;
}

/** What others see of a user's presence: src/parts/live/presence.ts answers. */
export interface PresenceOf {
  of(userId: string): Shown;
}

interface Row {
  user_id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  /** JSON: [[id, name], ...] in position order. */
  roles: string;
  is_owner: number;
  bot: number;
  joined_at: string;
  timeout_until: string | null;
  pending: number;
}

/**
 * Pending as the member stands now (members.isPending): the one expression, for one member and
 * for the member list. Those with powers are never pending, whatever the row says.
 */
const PENDING_NOW = `(m.pending = 1 AND s.owner_id <> m.user_id AND (s.everyone_permissions & ${MODERATION}) = 0
  AND NOT EXISTS (SELECT 1 FROM member_roles mr JOIN roles r ON r.id = mr.role_id
                   WHERE mr.server_id = m.server_id AND mr.user_id = m.user_id AND (r.full_server_admin = 1 OR (r.permissions & ${MODERATION}) <> 0)))`;

export function createMembers({ db, clock, presence }: { db: DB; clock: Clock; presence: PresenceOf }): Members {
  const COLUMNS = `m.user_id, u.username, u.display_name, u.avatar_url, u.bot, (s.owner_id = m.user_id) AS is_owner, m.joined_at, m.timeout_until,
       ${PENDING_NOW} AS pending,
       (SELECT json_group_array(json_array(id, name)) FROM (
          SELECT r.id, r.name FROM member_roles mr JOIN roles r ON r.id = mr.role_id
           WHERE mr.server_id = m.server_id AND mr.user_id = m.user_id ORDER BY r.position)) AS roles
       FROM members m
       JOIN profiles u ON u.id = m.user_id
       JOIN servers s ON s.id = m.server_id`;
  const all = db.prepare<[string], Row>(`SELECT ${COLUMNS} WHERE m.server_id = ? ORDER BY is_owner DESC, u.username`);
  const one = db.prepare<[string, string], Row>(`SELECT ${COLUMNS} WHERE m.server_id = ? AND m.user_id = ?`);
  // Whoever joins a server whose screening is on (any way in: an invite, a claim, join-rate
  // protection's merge) starts pending; a bot, added by a manager, never does.
  const insert = db.prepare<{ server: string; user: string; at: string }>(
    `INSERT OR IGNORE INTO members (server_id, user_id, joined_at, joined_seq, pending)
     VALUES (:server, :user, :at, (SELECT COALESCE(MAX(seq), 0) FROM messages),
             EXISTS (SELECT 1 FROM server_onboarding WHERE server_id = :server AND enabled = 1)
             AND NOT EXISTS (SELECT 1 FROM users WHERE id = :user AND bot <> 0))`,
  );
  const pendingNow = db
    .prepare<[string, string], number>(`SELECT ${PENDING_NOW} FROM members m JOIN servers s ON s.id = m.server_id WHERE m.server_id = ? AND m.user_id = ?`)
    .pluck();
  const updatePending = db.prepare('UPDATE members SET pending = ? WHERE server_id = ? AND user_id = ? AND pending <> ?');
  const pendingOf = db
    .prepare<[string], string>(`SELECT m.user_id FROM members m JOIN servers s ON s.id = m.server_id WHERE m.server_id = ? AND ${PENDING_NOW}`)
    .pluck();
  const releaseAll = db.prepare('UPDATE members SET pending = 0 WHERE server_id = ? AND pending = 1');
  const deleteMember = db.prepare('DELETE FROM members WHERE server_id = ? AND user_id = ?');
  const deleteInvitesBy = db.prepare('DELETE FROM invites WHERE server_id = ? AND created_by = ?');
  const insertRole = db.prepare('INSERT OR IGNORE INTO member_roles (server_id, user_id, role_id) VALUES (?, ?, ?)');
  const deleteRole = db.prepare('DELETE FROM member_roles WHERE server_id = ? AND user_id = ? AND role_id = ?');
  const deleteRoles = db.prepare('DELETE FROM member_roles WHERE server_id = ? AND user_id = ?');
  const updateTimeout = db.prepare('UPDATE members SET timeout_until = ? WHERE server_id = ? AND user_id = ?');
  const serverCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM members WHERE user_id = ?');

  const record = (row: Row): MemberRecord => {
    const roles = JSON.parse(row.roles) as [string, string][];
    return {
      user_id: row.user_id,
      username: row.username,
      display_name: row.display_name,
      avatar_url: row.avatar_url,
      is_owner: row.is_owner === 1,
      // The first role in position order: what `role` held when a member had one.
      role: roles[0]?.[1] ?? null,
      roles: roles.map(([, name]) => name),
      role_ids: roles.map(([id]) => id),
      joined_at: row.joined_at,
      presence: presence.of(row.user_id),
      timeout_until: row.timeout_until && row.timeout_until > iso(clock.now()) ? row.timeout_until : null,
      pending: row.pending === 1,
      ...(row.bot !== 0 ? { bot: true as const } : {}),
    };
  };

  return {
    record(serverId, userId) {
      const row = one.get(serverId, userId);
      return row && record(row);
    },
    list: (serverId) => all.all(serverId).map(record),
    add: (serverId, userId) => void insert.run({ server: serverId, user: userId, at: iso(clock.now()) }),
    remove(serverId, userId) {
      deleteMember.run(serverId, userId);
      // Someone outside a server does not hand out its way in.
      deleteInvitesBy.run(serverId, userId);
    },
    addRole: (serverId, userId, roleId) => void insertRole.run(serverId, userId, roleId),
    removeRole: (serverId, userId, roleId) => deleteRole.run(serverId, userId, roleId).changes > 0,
    clearRoles: (serverId, userId) => void deleteRoles.run(serverId, userId),
    setTimeout: (serverId, userId, until) => void updateTimeout.run(until, serverId, userId),
    isPending: (serverId, userId) => pendingNow.get(serverId, userId) === 1,
    setPending: (serverId, userId, pending) => updatePending.run(pending ? 1 : 0, serverId, userId, pending ? 1 : 0).changes > 0,
    clearPending(serverId) {
      const waiting = pendingOf.all(serverId);
      releaseAll.run(serverId);
      return waiting;
    },
    requireRoom(userId) {
      if (serverCount.get(userId)!.n >= MAX_SERVERS_PER_USER) {
        throw forbidden(`you are in ${MAX_SERVERS_PER_USER} servers, the most one account may be in; leave one first`);
      }
    },
  };
}
