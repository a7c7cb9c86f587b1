import type { User } from './auth';
import type { DB } from './db';
import { badRequest, forbidden, notFound } from './http/errors';
import type { Container } from './messages';

/**
 * Server and conversation permissions (spec section 5.6): the one place that decides who may
 * do what inside a server or conversation.
 *
 * Someone outside a server or conversation gets 404 for anything inside it, exactly as for one
 * that does not exist, so ids cannot be probed. A member who lacks a permission gets 403.
 */
export type Rank = 'owner' | 'admin' | 'member';

export interface Permissions {
  /** The caller's rank in the server, or null when not a member. */
  rank(userId: string, serverId: string): Rank | null;
  requireMember(user: User, serverId: string): Rank;
  /** Owner or a role with full_server_admin (channel creation, deleting others' messages). */
  requireServerAdmin(user: User, serverId: string, action: string): Rank;
  requireOwner(user: User, serverId: string, action: string): void;
  /**
   * Removing a member: oneself (leaving; not the owner), or another member by the owner, or by
   * a full server administrator when the other is a plain member.
   */
  requireCanRemove(user: User, serverId: string, targetId: string): void;
  /** A channel of a server the caller belongs to. */
  requireChannel(user: User, serverId: string, channelId: string): { container: Container; rank: Rank };
  /** The same, from a channel id alone (WebSocket path). */
  requireChannelById(user: User, channelId: string): { container: Container; rank: Rank };
  requireConversation(user: User, conversationId: string): Container;
  isConversationMember(userId: string, conversationId: string): boolean;
}

export function createPermissions(db: DB): Permissions {
  const membership = db.prepare<[string, string], { owner_id: string; full_server_admin: number | null }>(
    `SELECT s.owner_id, r.full_server_admin
       FROM members m
       JOIN servers s ON s.id = m.server_id
       LEFT JOIN roles r ON r.id = m.role_id
      WHERE m.server_id = ? AND m.user_id = ?`,
  );
  const channelServer = db.prepare<[string], { server_id: string }>('SELECT server_id FROM channels WHERE id = ?');
  const conversationMember = db.prepare<[string, string], { user_id: string }>(
    'SELECT user_id FROM conversation_members WHERE conversation_id = ? AND user_id = ?',
  );

  const rank = (userId: string, serverId: string): Rank | null => {
    const row = membership.get(serverId, userId);
    if (!row) return null;
    if (row.owner_id === userId) return 'owner';
    return row.full_server_admin === 1 ? 'admin' : 'member';
  };

  const requireMember = (user: User, serverId: string): Rank => {
    const found = rank(user.id, serverId);
    if (!found) throw notFound('server not found');
    return found;
  };

  const requireChannelById = (user: User, channelId: string) => {
    const channel = channelServer.get(channelId);
    const found = channel ? rank(user.id, channel.server_id) : null;
    if (!channel || !found) throw notFound('channel not found');
    return { container: { kind: 'channel' as const, id: channelId, serverId: channel.server_id }, rank: found };
  };

  return {
    rank,
    requireMember,
    requireServerAdmin(user, serverId, action) {
      const found = requireMember(user, serverId);
      if (found === 'member') throw forbidden(`only the owner or a full server administrator can ${action}`);
      return found;
    },
    requireOwner(user, serverId, action) {
      if (requireMember(user, serverId) !== 'owner') throw forbidden(`only the server owner can ${action}`);
    },
    requireCanRemove(user, serverId, targetId) {
      const callerRank = requireMember(user, serverId);
      const targetRank = rank(targetId, serverId);
      if (!targetRank) throw notFound('member not found');
      if (targetId === user.id) {
        if (callerRank === 'owner') throw badRequest('the owner cannot leave their own server');
        return;
      }
      if (callerRank === 'member' || targetRank === 'owner' || (callerRank === 'admin' && targetRank === 'admin')) {
        throw forbidden('you cannot remove this member');
      }
    },
    requireChannel(user, serverId, channelId) {
      const found = requireChannelById(user, channelId);
      if (found.container.serverId !== serverId) {
        requireMember(user, serverId);
        throw notFound('channel not found');
      }
      return found;
    },
    requireChannelById,
    requireConversation(user, conversationId) {
      if (!conversationMember.get(conversationId, user.id)) throw notFound('conversation not found');
      return { kind: 'conversation', id: conversationId };
    },
    isConversationMember: (userId, conversationId) => conversationMember.get(conversationId, userId) !== undefined,
  };
}
