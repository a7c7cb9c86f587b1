import { type Clock, iso } from '../core/clock';
import type { DB } from '../core/db';
import { conflict, forbidden, notFound } from '../core/http/errors';
import type { Container, Reached, User } from '../core/types';
import { type ChannelAccess, type ServerAccess, createChannelAccess } from './channel-access';
import { ALL, type Flag, type Flags, MODERATION, POWERS, TWO_FACTOR_POWERS, VIEW, has, namesOf } from './channel-permissions';
import { postingGate } from './verification';
import type { PostingGate, VerificationLevel } from '../core/records';

/**
 * Who may see what, and who may do what inside a server or conversation (spec section 5.6):
 * the one place that decides. Routes, downloads, sockets and reports all ask here.
 *
 * Someone outside a server or conversation gets 404 for anything inside it, exactly as for one
 * that does not exist, so ids cannot be probed. A member who lacks a permission gets 403.
 */
export type Rank = 'owner' | 'admin' | 'member';

/**
 * The owner and full server administrators, named once: they hold every flag (issue 53). A
 * moderator's power is asked by its own flag (requireServerFlag, holds, requireChannelFlag); this
 * rank rule is left to what stays theirs alone (requireServerAdmin, a report's edit history).
 */
export const moderates = (rank: Rank): boolean => rank !== 'member';

/**
 * Never granting a flag one lacks (issue 53, as on Discord): a change to a role's flags, to
 * everyone's or to an overwrite may move only flags the caller holds there (`mine`; the owner and
 * full server administrators hold every one). `changed`: the flags whose allow or deny moves.
 */
export function requireGrantable(mine: Flags, changed: Flags): void {
  const lacking = namesOf(changed & ~mine);
  if (lacking.length > 0) throw forbidden(`you cannot grant or take a permission you do not have: ${lacking.join(', ')}`);
}

/**
 * Who reads a message's earlier versions (its edit history): its author, a moderator of its
 * server (no one else in a conversation), a site administrator. Everything that shows versions
 * asks this: the history route and the answer to a report.
 */
export const readsEditHistory = (user: Pick<User, 'id' | 'isAdmin'>, rank: Rank, authorId: string): boolean =>
  authorId === user.id || moderates(rank) || user.isAdmin;

/**
 * A container the caller may see, their rank there ('member' in a conversation), what they may
 * do in it (src/rules/channel-permissions.ts; every flag in a conversation) and their history
 * floor there (src/core/types.ts Reached: without read_history, the seq they joined at).
 */
export interface Access extends Reached {
  rank: Rank;
  flags: Flags;
}

/** What each flag lets one do, as a refusal names it. */
const FLAG_ACTIONS: Record<Flag, string> = {
  view_channel: 'see this channel',
  send_messages: 'send messages in this channel',
  attach_files: 'attach files in this channel',
  add_reactions: 'add reactions in this channel',
  mention_everyone: 'mention @everyone or roles in this channel',
  read_history: 'read the history of this channel',
  create_public_threads: 'start threads in this channel',
  create_private_threads: 'start private threads in this channel',
  send_messages_in_threads: 'send messages in threads of this channel',
  manage_threads: 'manage the threads of this channel',
  connect: 'connect to this voice channel',
  speak: 'speak in this voice channel',
  video: 'use video in this voice channel',
  mute_members: 'mute members in this voice channel',
  deafen_members: 'deafen members in this voice channel',
  move_members: 'move members out of this voice channel',
  manage_emojis: 'manage the emoji and stickers of this server',
  send_polls: 'send polls in this channel',
  manage_messages: "delete or pin others' messages in this channel",
  moderate_members: 'time out members of this server',
  kick_members: 'kick members from this server',
  ban_members: 'ban members from this server',
  manage_channels: 'manage the channels of this server',
  manage_roles: 'manage the roles and channel permissions of this server',
  manage_server: 'manage this server',
  manage_webhooks: 'manage the webhooks of this channel',
  view_audit_log: 'read the audit log of this server',
};

/** An attachment the caller may download. */
export interface AttachmentAccess extends Access {
  id: string;
  name: string;
  content_type: string;
}

export interface Permissions {
  /** The user's rank in a server, or null when not a member. */
  rank(userId: string, serverId: string): Rank | null;
  /**
   * The one visibility rule: a channel is seen by the members of its server who have
   * view_channel there (src/rules/channel-access.ts), a conversation by its own members.
   */
  rankIn(userId: string, container: Container): Rank | null;
  /** A server's channel rules, current now (null: no such server): for deciding about many channels or members at once. */
  channelRules(serverId: string): ServerAccess | null;
  /** The same for many servers at once (one query for their generations). */
  channelRulesOf(serverIds: readonly string[]): Map<string, ServerAccess>;
  /** 403 naming what the flag allows, when `access` lacks it. */
  requireFlag(access: Pick<Access, 'flags'>, flag: Flag): void;
  /**
   * A server-wide flag (src/rules/channel-permissions.ts serverFlags; a channel-scoped one asked
   * of the server as a whole, such as manage_channels to make a channel, as its roles give it):
   * 404 to a non-member, 403 naming what it allows to a member without it, and 403 to a member
   * timed out (they read, they do not act).
   */
  requireServerFlag(user: User, serverId: string, flag: Flag): Rank;
  /** Whether requireServerFlag would let the caller (a member) pass. */
  holdsInServer(user: User, serverId: string, flag: Flag): boolean;
  /**
   * Whether the caller may use a moderator's channel flag (manage_messages, manage_webhooks,
   * manage_roles, manage_channels) where `access` is: in a channel, with the flag there and not
   * timed out (the owner and full server administrators always, unless timed out); never in a
   * conversation, where there is no moderator.
   */
  holds(user: User, access: Access, flag: Flag): boolean;
  /** A channel of the server (404 as channelAccess) where the caller `holds` the flag (403 naming what it allows otherwise). */
  requireChannelFlag(user: User, channelId: string, serverId: string, flag: Flag): Access;
  /**
   * Whether `actor` may change a role (issue 53, docs/moderation.md):
   * the owner, any; a full server administrator, any but a full_server_admin role; anyone else,
   * a role placed below their own highest, never a full_server_admin one.
   */
  isAboveRole(actorId: string, serverId: string, role: { position: number; full_server_admin: number }): boolean;
  /**
   * Why a role may not go to members without a moderator's hand (taken by themselves, or given by
   * an onboarding answer; issue 53): 'power', it carries full_server_admin or a power
   * (channel-permissions.ts POWERS); 'above', it sits above a role that does, so its holders would
   * stand above the moderators, out of their reach; null when it may.
   */
  strangerRoleProblem(serverId: string, role: { position: number; full_server_admin: number; permissions: number }): 'power' | 'above' | null;

  // One access function per kind of thing: each answers 404 to anyone who may not see it.
  serverAccess(user: User, serverId: string): Rank;
  /** A channel; with `serverId`, it must also be a channel of that server. */
  channelAccess(user: User, channelId: string, serverId?: string): Access;
  conversationAccess(user: User, conversationId: string): Container;
  /**
   * Any message, wherever it lives (reports): in a channel, one the caller sees, and without
   * read_history only one sent after they joined.
   */
  messageAccess(user: User, messageId: string): Access;
  /**
   * Where a message lives, whoever asks: only for site administrators acting on reports
   * (GET /api/admin/reports/{id}, DELETE /api/admin/messages/{id}), behind auth 'admin'.
   */
  locateMessage(messageId: string): Container | null;
  attachmentAccess(user: User, attachmentId: string): AttachmentAccess;

  // What a member may do.
  /** Owner or a role with full_server_admin, for what no flag gives (moving a voice member who is in no call). */
  requireServerAdmin(user: User, serverId: string, action: string): Rank;
  requireOwner(user: User, serverId: string, action: string): void;
  /**
   * Removing a member: oneself (leaving; not the owner), or another member by a holder of
   * kick_members who stands above them (requireCanModerate's hierarchy).
   */
  requireCanRemove(user: User, serverId: string, targetId: string): void;
  /**
   * Acting on another user in a server (ban: ban_members, timeout: moderate_members): a holder of
   * the flag (the owner and full server administrators hold every one), not timed out; never on
   * the owner or oneself; and only on someone they stand above: the owner above everyone, a full
   * server administrator above everyone but the owner and other administrators (the spec's rule,
   * whatever their roles' places), anyone else above a member who is no administrator and whose
   * highest role is placed lower than theirs (a member with no role is above no one).
   * `mustBeMember`: 404 when the target is not a member (a ban may name anyone).
   */
  requireCanModerate(user: User, serverId: string, targetId: string, action: string, mustBeMember: boolean, flag: Flag): Rank;
  /** 403 naming the end when the member is timed out in this server: they may read, not write. */
  requireNotTimedOut(user: User, serverId: string): void;
  /**
   * What keeps a member from posting and reacting in the server now: its verification level
   * (src/rules/verification.ts); null when nothing does, or for a non-member.
   */
  postingGate(userId: string, serverId: string): PostingGate | null;
  /** Blocks either way between two users stop DMs, groups and friend requests (403). */
  requireNotBlocked(a: string, b: string, action: string): void;
  /**
   * A group chat never holds two people one of whom blocked the other: 403 (naming no one) when
   * any of `newcomers` and any of `others` are so.
   */
  requireNoBlockAmong(newcomers: string[], others: string[]): void;
  /** Whether `blocker` blocked `blocked` (one direction). */
  hasBlocked(blocker: string, blocked: string): boolean;
}

export function createPermissions(db: DB, clock: Clock): Permissions {
  const channelServer = db.prepare<[string], { server_id: string }>('SELECT server_id FROM channels WHERE id = ?');
  const conversationMember = db.prepare<[string, string], { user_id: string }>(
    'SELECT user_id FROM conversation_members WHERE conversation_id = ? AND user_id = ?',
  );
  const messageContainer = db.prepare<[string], { seq: number; channel_id: string | null; conversation_id: string | null; server_id: string | null }>(
    `SELECT m.seq, m.channel_id, m.conversation_id, c.server_id
       FROM messages m LEFT JOIN channels c ON c.id = m.channel_id WHERE m.id = ?`,
  );
  const attachmentById = db.prepare<
    [string],
    { id: string; name: string; content_type: string; seq: number; channel_id: string | null; conversation_id: string | null; server_id: string | null }
  >(
    `SELECT a.id, a.name, a.content_type, m.seq, m.channel_id, m.conversation_id, c.server_id
       FROM attachments a
       JOIN messages m ON m.seq = a.message_seq
       LEFT JOIN channels c ON c.id = m.channel_id
      WHERE a.id = ?`,
  );

  const blockRow = db.prepare<[string, string], { one: number }>('SELECT 1 AS one FROM blocks WHERE blocker_id = ? AND blocked_id = ?');
  const hasBlocked = (blocker: string, blocked: string) => blockRow.get(blocker, blocked) !== undefined;

  const topRoleOf = db
    .prepare<[string, string], number | null>(
      'SELECT MIN(r.position) FROM member_roles mr JOIN roles r ON r.id = mr.role_id WHERE mr.server_id = ? AND mr.user_id = ?',
    )
    .pluck();
  /** The place of a member's highest role (0 the top: role positions), or null with none: the hierarchy's measure. */
  const topRole = (userId: string, serverId: string): number | null => topRoleOf.get(serverId, userId) ?? null;

  const channels: ChannelAccess = createChannelAccess(db);
  /** The lowest place (largest position) of a role with a power. */
  const lowestPoweredRole = db
    .prepare<[string, number], number | null>('SELECT MAX(position) FROM roles WHERE server_id = ? AND (full_server_admin = 1 OR permissions & ? <> 0)')
    .pluck();
  /** The end of a member's timeout while it runs, else null. */
  const timeoutEnd = (userId: string, serverId: string): string | null => {
    const until = channels.server(serverId)?.timeoutUntil(userId);
    return until && until > iso(clock.now()) ? until : null;
  };
  const timedOut = (userId: string, serverId: string): boolean => timeoutEnd(userId, serverId) !== null;
  const twoFactorRow = db.prepare<[string, string], { asked: number; enabled: number }>(
    'SELECT s.two_factor_for_moderators AS asked, u.totp_secret IS NOT NULL AS enabled FROM servers s, users u WHERE s.id = ? AND u.id = ?',
  );
  /**
   * Two-factor for moderators (issue 53, Discord's "2FA requirement for moderation"): in a server
   * that asks it, a power (channel-permissions.ts TWO_FACTOR_POWERS) is not used from an account
   * without two-factor sign-in, the owner's and full administrators' included: a stolen password
   * alone does not ban, delete or reconfigure. Ranks' own actions (requireServerAdmin) ask it too.
   */
  const lacksTwoFactor = (userId: string, serverId: string): boolean => {
    const row = twoFactorRow.get(serverId, userId);
    return !!row && row.asked === 1 && row.enabled === 0;
  };
  const TWO_FACTOR_REFUSAL = 'this server asks its moderators to sign in with two-factor authentication: turn it on in your account settings to use this power';
  const requireTwoFactorFor = (user: User, serverId: string, flag: Flag): void => {
    if (has(TWO_FACTOR_POWERS, flag) && lacksTwoFactor(user.id, serverId)) throw forbidden(TWO_FACTOR_REFUSAL);
  };
  /** 403 for a member without `flag` server-wide, or timed out, or (a power) without two-factor where the server asks it. */
  const requireServerFlag = (user: User, serverId: string, flag: Flag): Rank => {
    const found = serverAccess(user, serverId);
    if (!has(channels.server(serverId)?.serverFlags(user.id) ?? 0, flag)) throw forbidden(`you do not have permission to ${FLAG_ACTIONS[flag]}`);
    requireNotTimedOut(user, serverId);
    requireTwoFactorFor(user, serverId, flag);
    return found;
  };
  const holdsInServer = (user: User, serverId: string, flag: Flag): boolean =>
    has(channels.server(serverId)?.serverFlags(user.id) ?? 0, flag) &&
    !timedOut(user.id, serverId) &&
    !(has(TWO_FACTOR_POWERS, flag) && lacksTwoFactor(user.id, serverId));
  const gateFacts = db.prepare<[string, string], { level: VerificationLevel; created_at: string; email_verified: number; bot: number; joined_at: string }>(
    `SELECT s.verification_level AS level, u.created_at, u.email_verified, u.bot, m.joined_at
       FROM members m JOIN servers s ON s.id = m.server_id JOIN users u ON u.id = m.user_id WHERE m.server_id = ? AND m.user_id = ?`,
  );
  const requireNotTimedOut = (user: User, serverId: string): void => {
    const until = timeoutEnd(user.id, serverId);
    if (until) throw forbidden(`you are timed out in this server until ${until}`);
  };
  const holds = (user: User, access: Access, flag: Flag): boolean =>
    access.container.kind === 'channel' &&
    has(access.flags, flag) &&
    !timedOut(user.id, access.container.serverId) &&
    !(has(TWO_FACTOR_POWERS, flag) && lacksTwoFactor(user.id, access.container.serverId));
  /** The hierarchy (requireCanModerate): whether `actorId` stands above `targetId` in the server. */
  const standsAbove = (actorId: string, targetId: string, serverId: string): boolean => {
    const rules = channels.server(serverId);
    const actor = rules?.standingIn(actorId);
    const target = rules?.standingIn(targetId) ?? null;
    if (actor === 'owner') return true;
    if (target === 'owner' || target === 'admin') return false;
    if (actor === 'admin') return true;
    const mine = topRole(actorId, serverId);
    const theirs = target === null ? null : topRole(targetId, serverId);
    return mine !== null && (theirs === null || mine < theirs);
  };
  /**
   * A full server administrator who is timed out acts as a plain member until the timeout ends.
   * From the server's rules kept in memory (src/rules/channel-access.ts), current as long as their
   * generation is: a membership, a role or a timeout that changes moves it.
   */
  const rankFrom = (rules: ServerAccess, userId: string): Rank | null => {
    const standing = rules.standingIn(userId);
    if (standing !== 'admin') return standing;
    const until = rules.timeoutUntil(userId);
    return until !== null && until > iso(clock.now()) ? 'member' : 'admin';
  };
  const rank = (userId: string, serverId: string): Rank | null => {
    const rules = channels.server(serverId);
    return rules ? rankFrom(rules, userId) : null;
  };
  /**
   * The one visibility rule, and what the user may do there: a conversation's members may do
   * everything in it; a channel is seen by the members of its server with view_channel there
   * (src/rules/channel-access.ts), and without read_history their history floor is the seq they
   * joined at. Null when the user does not see it.
   */
  const accessTo = (userId: string, container: Container): Access | null => {
    if (container.kind === 'conversation')
      return conversationMember.get(container.id, userId) ? { container, rank: 'member', flags: ALL, historyFloor: 0 } : null;
    const rules = channels.server(container.serverId);
    const flags = rules?.flags(userId, container.id) ?? 0;
    const found = flags & VIEW && rules ? rankFrom(rules, userId) : null;
    if (!rules || !found) return null;
    return { container, rank: found, flags, historyFloor: rules.historyFloor(userId, container.id) };
  };
  const rankIn = (userId: string, container: Container): Rank | null => accessTo(userId, container)?.rank ?? null;
  /** A message the user sees where it lives (the access to it), or null: without read_history, only one sent after they joined. */
  const accessToMessage = (
    userId: string,
    row: { seq: number; channel_id: string | null; conversation_id: string | null; server_id: string | null },
  ): Access | null => {
    const found = accessTo(userId, containerOf(row));
    return found && row.seq > found.historyFloor ? found : null;
  };

  const containerOf = (row: { channel_id: string | null; conversation_id: string | null; server_id: string | null }): Container =>
    row.channel_id ? { kind: 'channel', id: row.channel_id, serverId: row.server_id as string } : { kind: 'conversation', id: row.conversation_id as string };

  const serverAccess = (user: User, serverId: string): Rank => {
    const found = rank(user.id, serverId);
    if (!found) throw notFound('server not found');
    return found;
  };

  const channelAccess = (user: User, channelId: string, serverId?: string): Access => {
    const channel = channelServer.get(channelId);
    // A channel hidden from a member is one that does not exist, as for outsiders.
    const found = channel ? accessTo(user.id, { kind: 'channel', id: channelId, serverId: channel.server_id }) : null;
    if (!found) throw notFound('channel not found');
    if (serverId && found.container.kind === 'channel' && found.container.serverId !== serverId) {
      // The channel exists elsewhere: outside the named server, that server is "not found".
      serverAccess(user, serverId);
      throw notFound('channel not found');
    }
    return found;
  };

  return {
    rank,
    rankIn,
    channelRules: (serverId) => channels.server(serverId),
    channelRulesOf: (serverIds) => channels.servers(serverIds),
    requireFlag(access, flag) {
      if (!has(access.flags, flag)) throw forbidden(`you do not have permission to ${FLAG_ACTIONS[flag]}`);
    },
    requireServerFlag,
    holdsInServer,
    holds,
    requireChannelFlag(user, channelId, serverId, flag) {
      const access = channelAccess(user, channelId, serverId);
      if (access.container.kind === 'channel' && has(access.flags, flag)) requireTwoFactorFor(user, access.container.serverId, flag);
      if (!holds(user, access, flag)) throw forbidden(`you do not have permission to ${FLAG_ACTIONS[flag]}`);
      return access;
    },
    isAboveRole(actorId, serverId, role) {
      const standing = channels.server(serverId)?.standingIn(actorId);
      if (standing === 'owner') return true;
      if (role.full_server_admin === 1) return false;
      if (standing === 'admin') return true;
      const mine = topRole(actorId, serverId);
      return mine !== null && mine < role.position;
    },
    strangerRoleProblem(serverId, role) {
      if (role.full_server_admin === 1 || (role.permissions & POWERS) !== 0) return 'power';
      const lowest = lowestPoweredRole.get(serverId, POWERS);
      return lowest !== null && lowest !== undefined && role.position < lowest ? 'above' : null;
    },
    serverAccess,
    channelAccess,
    conversationAccess(user, conversationId) {
      if (!conversationMember.get(conversationId, user.id)) throw notFound('conversation not found');
      return { kind: 'conversation', id: conversationId };
    },
    messageAccess(user, messageId) {
      const row = messageContainer.get(messageId);
      const found = row ? accessToMessage(user.id, row) : null;
      if (!found) throw notFound('message not found');
      return found;
    },
    locateMessage(messageId) {
      const row = messageContainer.get(messageId);
      return row ? containerOf(row) : null;
    },
    attachmentAccess(user, attachmentId) {
      const row = attachmentById.get(attachmentId);
      const found = row ? accessToMessage(user.id, row) : null;
      if (!row || !found) throw notFound('attachment not found');
      return { id: row.id, name: row.name, content_type: row.content_type, ...found };
    },
    requireServerAdmin(user, serverId, action) {
      const found = serverAccess(user, serverId);
      if (!moderates(found)) throw forbidden(`only the owner or a full server administrator can ${action}`);
      if (lacksTwoFactor(user.id, serverId)) throw forbidden(TWO_FACTOR_REFUSAL);
      return found;
    },
    requireOwner(user, serverId, action) {
      if (serverAccess(user, serverId) !== 'owner') throw forbidden(`only the server owner can ${action}`);
    },
    requireCanRemove(user, serverId, targetId) {
      const callerRank = serverAccess(user, serverId);
      const targetRank = rank(targetId, serverId);
      if (!targetRank) throw notFound('member not found');
      if (targetId === user.id) {
        if (callerRank === 'owner') throw conflict('the owner cannot leave their own server: transfer it or delete it');
        return;
      }
      requireServerFlag(user, serverId, 'kick_members');
      if (!standsAbove(user.id, targetId, serverId)) throw forbidden('you cannot remove this member: they stand at or above you');
    },
    requireCanModerate(user, serverId, targetId, action, mustBeMember, flag) {
      const callerRank = requireServerFlag(user, serverId, flag);
      const targetRank = rank(targetId, serverId);
      if (mustBeMember && !targetRank) throw notFound('member not found');
      if (targetId === user.id) throw conflict(`you cannot ${action} yourself`);
      if (targetRank === 'owner') throw forbidden(`the owner cannot be the target of ${action}`);
      if (!standsAbove(user.id, targetId, serverId)) {
        throw forbidden(
          callerRank === 'admin'
            ? `only the owner can ${action} a full server administrator`
            : `you can ${action} only members whose highest role is below yours`,
        );
      }
      return callerRank;
    },
    requireNotTimedOut,
    postingGate(userId, serverId) {
      const row = gateFacts.get(serverId, userId);
      if (!row || row.level === 0) return null;
      const rules = channels.server(serverId);
      const standing = rules?.standingIn(userId);
      const exempt = row.bot !== 0 || standing === 'owner' || standing === 'admin' || ((rules?.serverFlags(userId) ?? 0) & MODERATION) !== 0;
      return postingGate({
        level: row.level,
        now: clock.now(),
        emailVerified: row.email_verified === 1,
        accountCreatedAt: row.created_at,
        joinedAt: row.joined_at,
        exempt,
      });
    },
    requireNoBlockAmong(newcomers, others) {
      for (const a of newcomers) {
        for (const b of others) {
          if (a !== b && (hasBlocked(a, b) || hasBlocked(b, a))) throw forbidden('a block between two of these people keeps them out of one group chat');
        }
      }
    },
    requireNotBlocked(a, b, action) {
      if (hasBlocked(a, b)) throw forbidden(`you blocked this user: unblock them to ${action}`);
      if (hasBlocked(b, a)) throw forbidden(`this user does not accept ${action} from you`);
    },
    hasBlocked,
  };
}
