import type { DB } from '../core/db';
import { ALL, type Flags, NONE, type Overwrite, VIEW, has, resolve, serverFlags } from './channel-permissions';

/**
 * Channel access as it is decided on every request and every fan-out: each server's rules (its
 * owner, everyone's flags, its roles, its channels' overwrites) kept in memory, and what the rule
 * of src/rules/channel-permissions.ts makes of them for each member, remembered. A server's copy
 * is kept while its row of `access_generations` stays (schema.sql: triggers move it at every
 * change to what decides access, in the same transaction), so what is kept is what is committed.
 *
 * Members are read one by one as they are asked about; the whole list only for `viewers` (who
 * receives a channel's events). One generation check per `server()` call: a caller deciding for
 * many channels of one server asks once and keeps the answer for the moment at hand.
 */
export interface ChannelAccess {
  /** The rules of a server, current now; null when there is no such server. */
  server(serverId: string): ServerAccess | null;
  /** The same for many servers, their generations read in one query (`ready`: a hundred servers). */
  servers(serverIds: readonly string[]): Map<string, ServerAccess>;
}

export interface ServerAccess {
  readonly serverId: string;
  /**
   * What a user may do in one of its channels: NONE for a non-member, a hidden or unknown channel.
   * A thread's are its parent's as a thread resolves them (src/rules/channel-permissions.ts step 8),
   * and a private thread is seen only by its members and by manage_threads there.
   */
  flags(userId: string, channelId: string): Flags;
  /** What a user may do in the server as a whole (src/rules/channel-permissions.ts serverFlags): NONE for a non-member. */
  serverFlags(userId: string): Flags;
  /** The channel a thread belongs to; null for any other channel (or none). */
  parentOf(channelId: string): string | null;
  /** The members who see a channel (every moderator, and whoever has view_channel there). */
  viewers(channelId: string): readonly string[];
  /** Whether a member with no role and no overwrite of their own would not see the channel (a private thread, or one of a private channel, is). */
  isPrivate(channelId: string): boolean;
  /** The overwrites a channel follows (its category's when synced to one; a thread, its parent's): everyone, roles, members, each by id. */
  overwritesOf(channelId: string): readonly Overwrite[];
  /** The newest message seq when the user joined (what read_history hides below); null for a non-member. */
  joinedSeq(userId: string): number | null;
  /**
   * The history floor, the one rule of read_history: the messages of a channel up to this seq
   * (those sent before the user joined) do not exist for a member without read_history there.
   * 0 with read_history (nothing hidden); Infinity for a non-member, or a member who does not see
   * the channel (a room socket not yet closed hears nothing of it). Every read path applies it:
   * REST (src/rules/permissions.ts Access.historyFloor), search, read states and live delivery.
   */
  historyFloor(userId: string, channelId: string): number;
  /**
   * Who the user is in the server, before any timeout: its owner, a holder of a full_server_admin
   * role, a plain member; null for a non-member (src/rules/permissions.ts makes the rank of it).
   */
  standingIn(userId: string): 'owner' | 'admin' | 'member' | null;
  /** Until when a member is timed out (ISO 8601), or null. */
  timeoutUntil(userId: string): string | null;
  /**
   * A key shared by every member whose flags are the same in every channel: a moderator, or the
   * roles they hold (and their own id when an overwrite names them); null for a non-member. Lets
   * a change be judged once per kind of member rather than once per member.
   */
  subjectKey(userId: string): string | null;
}

/** How overwrites are listed: everyone first, then roles, then members, each by id. */
export const OVERWRITE_ORDER = "ORDER BY CASE kind WHEN 'everyone' THEN 0 WHEN 'role' THEN 1 ELSE 2 END, target_id";

/** Servers whose rules are kept at most (all are dropped past it). */
const KEPT_SERVERS = 4096;

interface Member {
  roles: Set<string>;
  joinedSeq: number;
  /** Holds a full_server_admin role. */
  admin: boolean;
  timeoutUntil: string | null;
}

interface OverwriteRow {
  scope_id: string;
  target_id: string;
  kind: Overwrite['kind'];
  allow: number;
  deny: number;
}

export function createChannelAccess(db: DB): ChannelAccess {
  const generationOf = db.prepare<[string], number>('SELECT n FROM access_generations WHERE server_id = ?').pluck();
  const generationsOf = db
    .prepare<[string], [string, number]>('SELECT server_id, n FROM access_generations WHERE server_id IN (SELECT value FROM json_each(?))')
    .raw();
  const serverRow = db.prepare<[string], { owner_id: string; everyone_permissions: number }>('SELECT owner_id, everyone_permissions FROM servers WHERE id = ?');
  const rolesOf = db.prepare<[string], { id: string; permissions: number; full_server_admin: number }>(
    'SELECT id, permissions, full_server_admin FROM roles WHERE server_id = ?',
  );
  const channelsOf = db.prepare<[string], { id: string; category_id: string | null; permissions_synced: number }>(
    'SELECT id, category_id, permissions_synced FROM channels WHERE server_id = ? AND parent_id IS NULL',
  );
  // Threads: their parent and whether private never change; a private thread's members move the generation.
  const threadsOf = db.prepare<[string], [string, string, number]>('SELECT channel_id, parent_id, private FROM threads WHERE server_id = ?').raw();
  const privateThreadMembers = db
    .prepare<[string], [string, string]>(
      'SELECT tm.thread_id, tm.user_id FROM thread_members tm JOIN threads t ON t.channel_id = tm.thread_id WHERE t.server_id = ? AND t.private = 1',
    )
    .raw();
  const channelOverwrites = db.prepare<[string], OverwriteRow>(
    `SELECT channel_id AS scope_id, target_id, kind, allow, deny FROM channel_overwrites WHERE server_id = ? ${OVERWRITE_ORDER}`,
  );
  const categoryOverwrites = db.prepare<[string], OverwriteRow>(
    `SELECT category_id AS scope_id, target_id, kind, allow, deny FROM category_overwrites WHERE server_id = ? ${OVERWRITE_ORDER}`,
  );
  const memberRow = db.prepare<[string, string], { joined_seq: number; timeout_until: string | null; roles: string | null }>(
    `SELECT m.joined_seq, m.timeout_until,
            (SELECT group_concat(role_id) FROM member_roles mr WHERE mr.server_id = m.server_id AND mr.user_id = m.user_id) AS roles
       FROM members m WHERE m.server_id = ? AND m.user_id = ?`,
  );
  const allMembers = db.prepare<[string], { user_id: string; joined_seq: number; timeout_until: string | null }>(
    'SELECT user_id, joined_seq, timeout_until FROM members WHERE server_id = ?',
  );
  const allMemberRoles = db.prepare<[string], { user_id: string; role_id: string }>('SELECT user_id, role_id FROM member_roles WHERE server_id = ?');

  const kept = new Map<string, { generation: number | undefined; access: ServerAccess }>();

  function load(serverId: string): ServerAccess | null {
    const server = serverRow.get(serverId);
    if (!server) return null;
    const ownerId = server.owner_id;
    const everyone = server.everyone_permissions & ALL;
    const roleFlags = new Map<string, Flags>();
    const adminRoles = new Set<string>();
    for (const role of rolesOf.all(serverId)) {
      roleFlags.set(role.id, role.permissions & ALL);
      if (role.full_server_admin === 1) adminRoles.add(role.id);
    }
    const grouped = (rows: OverwriteRow[]) => {
      const by = new Map<string, Overwrite[]>();
      for (const row of rows) {
        const list = by.get(row.scope_id) ?? [];
        list.push({ kind: row.kind, targetId: row.target_id, allow: row.allow & ALL, deny: row.deny & ALL });
        by.set(row.scope_id, list);
      }
      return by;
    };
    const own = grouped(channelOverwrites.all(serverId));
    const ofCategory = grouped(categoryOverwrites.all(serverId));
    // The members an overwrite names: their flags are their own.
    const named = new Set<string>();
    for (const list of [...own.values(), ...ofCategory.values()]) for (const o of list) if (o.kind === 'member') named.add(o.targetId);
    // The overwrites each channel follows: its category's when synced to one, its own otherwise.
    const overwrites = new Map<string, readonly Overwrite[]>();
    for (const c of channelsOf.all(serverId)) {
      overwrites.set(c.id, (c.permissions_synced === 1 && c.category_id !== null ? ofCategory.get(c.category_id) : own.get(c.id)) ?? []);
    }
    const threads = new Map<string, { parentId: string; private: boolean }>();
    for (const [id, parentId, isPrivate] of threadsOf.all(serverId)) threads.set(id, { parentId, private: isPrivate === 1 });
    const privateMembers = new Map<string, Set<string>>();
    for (const [threadId, userId] of privateThreadMembers.all(serverId)) {
      const set = privateMembers.get(threadId) ?? new Set<string>();
      set.add(userId);
      privateMembers.set(threadId, set);
    }

    const members = new Map<string, Member | null>();
    let everyMember = false;
    const memberOf = (roles: Set<string>, joinedSeq: number, timeoutUntil: string | null): Member => ({
      roles,
      joinedSeq,
      admin: [...roles].some((id) => adminRoles.has(id)),
      timeoutUntil,
    });
    const member = (userId: string): Member | null => {
      let found = members.get(userId);
      if (found === undefined) {
        if (everyMember) return null;
        const row = memberRow.get(serverId, userId);
        found = row ? memberOf(new Set(row.roles ? row.roles.split(',') : []), row.joined_seq, row.timeout_until) : null;
        members.set(userId, found);
      }
      return found;
    };
    const loadEveryMember = () => {
      if (everyMember) return;
      const roles = new Map<string, Set<string>>();
      for (const { user_id, role_id } of allMemberRoles.all(serverId)) {
        const set = roles.get(user_id) ?? new Set<string>();
        set.add(role_id);
        roles.set(user_id, set);
      }
      members.clear();
      for (const row of allMembers.all(serverId)) members.set(row.user_id, memberOf(roles.get(row.user_id) ?? new Set(), row.joined_seq, row.timeout_until));
      everyMember = true;
    };
    /**
     * The owner and full server administrators see and may do everything in every channel. A
     * timeout does not change what one sees: it stops writing, which the routes check apart
     * (src/rules/permissions.ts requireNotTimedOut).
     */
    const moderates = (userId: string, m: Member) => userId === ownerId || m.admin;

    // What plain members may do, per channel (and in its threads) and user: it changes only with the generation.
    const remembered = new Map<string, Map<string, Flags>>();
    const resolved = (userId: string, m: Member, channelId: string, inThread: boolean): Flags => {
      const list = overwrites.get(channelId);
      if (!list) return NONE;
      const subject = { userId, moderator: moderates(userId, m), roleIds: m.roles };
      if (subject.moderator) return resolve(everyone, roleFlags, subject, list, inThread);
      const key = inThread ? `${channelId}/threads` : channelId;
      let byUser = remembered.get(key);
      if (!byUser) remembered.set(key, (byUser = new Map()));
      let found = byUser.get(userId);
      if (found === undefined) {
        found = resolve(everyone, roleFlags, subject, list, inThread);
        byUser.set(userId, found);
      }
      return found;
    };
    const flags = (userId: string, channelId: string): Flags => {
      const m = member(userId);
      if (!m) return NONE;
      const thread = threads.get(channelId);
      if (!thread) return resolved(userId, m, channelId, false);
      // A thread inherits its parent's overwrites; a private one shows only to its members and to manage_threads.
      const found = resolved(userId, m, thread.parentId, true);
      if (thread.private && !has(found, 'manage_threads') && !privateMembers.get(channelId)?.has(userId)) return NONE;
      return found;
    };

    const privacy = new Map<string, boolean>();
    const viewerLists = new Map<string, string[]>();
    const viewers = (channelId: string): readonly string[] => {
      const thread = threads.get(channelId);
      // A public thread is seen by exactly who sees its parent (step 8 leaves view_channel as it
      // is): its parent's list serves, rather than one more list of every member per thread.
      if (thread && !thread.private) return viewers(thread.parentId);
      let ids = viewerLists.get(channelId);
      if (ids) return ids;
      if (thread) ids = viewers(thread.parentId).filter((userId) => flags(userId, channelId) & VIEW);
      else {
        loadEveryMember();
        ids = [];
        for (const [userId, m] of members) if (m && flags(userId, channelId) & VIEW) ids.push(userId);
      }
      viewerLists.set(channelId, ids);
      return ids;
    };

    const isPrivate = (channelId: string): boolean => {
      const thread = threads.get(channelId);
      if (thread) return thread.private || isPrivate(thread.parentId);
      let found = privacy.get(channelId);
      if (found === undefined) {
        const list = overwrites.get(channelId) ?? [];
        found = (resolve(everyone, new Map(), { userId: '', moderator: false, roleIds: new Set() }, list) & VIEW) === 0;
        privacy.set(channelId, found);
      }
      return found;
    };

    return {
      serverId,
      flags,
      serverFlags(userId) {
        const m = member(userId);
        return m ? serverFlags(everyone, roleFlags, { userId, moderator: moderates(userId, m), roleIds: m.roles }) : NONE;
      },
      parentOf: (channelId) => threads.get(channelId)?.parentId ?? null,
      viewers,
      isPrivate,
      overwritesOf: (channelId) => overwrites.get(threads.get(channelId)?.parentId ?? channelId) ?? [],
      joinedSeq: (userId) => member(userId)?.joinedSeq ?? null,
      historyFloor(userId, channelId) {
        const m = member(userId);
        if (!m) return Infinity;
        const found = flags(userId, channelId);
        if (!(found & VIEW)) return Infinity;
        return has(found, 'read_history') ? 0 : m.joinedSeq;
      },
      standingIn(userId) {
        const m = member(userId);
        return !m ? null : userId === ownerId ? 'owner' : m.admin ? 'admin' : 'member';
      },
      timeoutUntil: (userId) => member(userId)?.timeoutUntil ?? null,
      subjectKey(userId) {
        const m = member(userId);
        if (!m) return null;
        if (moderates(userId, m)) return 'moderator';
        return `${[...m.roles].sort().join(',')}${named.has(userId) ? `|${userId}` : ''}`;
      },
    };
  }

  /** The kept rules of a server at `generation`, or freshly loaded ones. */
  function current(serverId: string, generation: number | undefined): ServerAccess | null {
    const found = kept.get(serverId);
    if (found && found.generation === generation) return found.access;
    const access = load(serverId);
    if (!access) {
      kept.delete(serverId);
      return null;
    }
    if (kept.size >= KEPT_SERVERS) kept.clear();
    kept.set(serverId, { generation, access });
    return access;
  }

  return {
    server: (serverId) => current(serverId, generationOf.get(serverId)),
    servers(serverIds) {
      const generations = new Map(generationsOf.all(JSON.stringify(serverIds)));
      const found = new Map<string, ServerAccess>();
      for (const serverId of serverIds) {
        const access = current(serverId, generations.get(serverId));
        if (access) found.set(serverId, access);
      }
      return found;
    },
  };
}
