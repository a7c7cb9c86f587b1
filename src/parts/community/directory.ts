import { type DB, generationWatch } from '../../core/db';
import { type UserRef, userRef } from '../../core/types';
import { namesOf } from '../../rules/channel-permissions';
import { DEFAULT_VOICE_BITRATE } from '../../rules/sizes';
import {
  type CategoryRecord,
  type ChannelRecord,
  type ConversationRecord,
  type ForumSort,
  type ForumTag,
  type FriendRecord,
  type ServerRecord,
  friendRecord,
} from '../../core/records';

/**
 * The read side of servers, channels, conversations and friends: the records the API lists and
 * the user stream's `ready` snapshot sends, shaped in one place so both say the same.
 */
export interface Directory {
  server(id: string): ServerRecord | undefined;
  /** The servers a user belongs to, in the order joined. */
  serversOf(userId: string): ServerRecord[];
  /** Any channel (a thread too, as a channel record: src/parts/community/threads.ts has its own). */
  channel(id: string): ChannelRecord | undefined;
  /** A server's listed channels (no thread) in position order (shared: kept in memory until a channel changes). */
  channelsOf(serverId: string): readonly ChannelRecord[];
  /** The channel lists of many servers, their generation checked once (`ready`). */
  channelsOfMany(serverIds: readonly string[]): Map<string, readonly ChannelRecord[]>;
  /** A server's categories in position order. */
  categoriesOf(serverId: string): CategoryRecord[];
  /** The categories of many servers, the generation checked once (`ready`). */
  categoriesOfMany(serverIds: readonly string[]): Map<string, CategoryRecord[]>;
  conversation(id: string): ConversationRecord | undefined;
  /** A user's DMs and groups, most recent activity first. */
  conversationsOf(userId: string): ConversationRecord[];
  friendsOf(userId: string): FriendRecord[];
  /** Who can see what happens in a server or conversation: its members. */
  serverMemberIds(serverId: string): string[];
  conversationMemberIds(conversationId: string): string[];
  /** Pending friend requests addressed to a user. */
  incomingRequestCount(userId: string): number;
  /** The roles a user holds, by server (one server's, or every server's they are in). */
  roleIdsOf(userId: string, serverId?: string): Map<string, string[]>;
  /** Everyone who sees a user's name somewhere: friends, members of shared servers and conversations, themselves. */
  peopleWhoSee(userId: string): string[];
}

interface ConversationRow {
  id: string;
  kind: 'dm' | 'group';
  name: string | null;
  created_by: string;
  created_at: string;
  last_message_at: string | null;
}

interface ConversationMemberRow extends Omit<UserRef, 'bot'> {
  conversation_id: string;
  bot: number;
}

type ServerRow = Omit<ServerRecord, 'permissions' | 'link_previews' | 'two_factor_for_moderators' | 'invites_paused' | 'joins_paused'> & {
  everyone_permissions: number;
  link_previews: number;
  two_factor_for_moderators: number;
  invites_paused: number;
  joins_paused: number;
};
const serverRecord = ({ everyone_permissions, link_previews, two_factor_for_moderators, invites_paused, joins_paused, ...row }: ServerRow): ServerRecord => ({
  ...row,
  permissions: namesOf(everyone_permissions),
  link_previews: link_previews === 1,
  two_factor_for_moderators: two_factor_for_moderators === 1,
  invites_paused: invites_paused === 1,
  joins_paused: joins_paused === 1,
});
type ChannelRow = Omit<ChannelRecord, 'permissions_synced' | 'available_tags' | 'default_reaction' | 'default_sort' | 'user_limit' | 'bitrate'> & {
  permissions_synced: number;
  available_tags: string;
  default_reaction: string | null;
  default_sort: ForumSort;
  user_limit: number | null;
  bitrate: number | null;
};
/** A channel's record: a forum's carries its settings, a voice channel its user_limit and bitrate, any other channel none of them. */
export const channelRecord = ({
  permissions_synced,
  available_tags,
  default_reaction,
  default_sort,
  user_limit,
  bitrate,
  ...row
}: ChannelRow): ChannelRecord =>
  row.type === 'forum'
    ? { ...row, permissions_synced: permissions_synced === 1, available_tags: JSON.parse(available_tags) as ForumTag[], default_reaction, default_sort }
    : row.type === 'voice'
      ? { ...row, permissions_synced: permissions_synced === 1, user_limit: user_limit ?? 0, bitrate: bitrate ?? DEFAULT_VOICE_BITRATE }
      : { ...row, permissions_synced: permissions_synced === 1 };

/** Servers whose channel lists are kept in memory at most (all are dropped past it). */
const CHANNEL_LISTS = 4096;

const SERVER_COLUMNS =
  's.id, s.name, s.owner_id, s.created_at, s.description, s.everyone_permissions, s.link_previews, ' +
  's.verification_level, s.two_factor_for_moderators, s.join_rate_threshold, s.join_rate_action, s.invites_paused, s.joins_paused';
const CHANNEL_COLUMNS =
  'c.id, c.server_id, c.type, c.parent_id, c.name, c.position, c.created_at, c.topic, c.slowmode_seconds, c.category_id, c.permissions_synced, c.available_tags, c.default_reaction, c.default_sort, c.user_limit, c.bitrate';
// The last message is found through messages_by_conversation (conversation_id, seq).
const CONVERSATION_COLUMNS = `c.id, c.kind, c.name, c.created_by, c.created_at,
  (SELECT m.created_at FROM messages m WHERE m.conversation_id = c.id ORDER BY m.seq DESC LIMIT 1) AS last_message_at`;

export function createDirectory(db: DB): Directory {
  const serverById = db.prepare<[string], ServerRow>(`SELECT ${SERVER_COLUMNS} FROM servers s WHERE s.id = ?`);
  const serversOfUser = db.prepare<[string], ServerRow>(
    `SELECT ${SERVER_COLUMNS} FROM members m JOIN servers s ON s.id = m.server_id WHERE m.user_id = ? ORDER BY m.joined_at, s.name`,
  );
  const channelById = db.prepare<[string], ChannelRow>(`SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.id = ?`);
  const categoriesOfServer = db.prepare<[string], CategoryRecord>(
    'SELECT id, server_id, name, position, created_at FROM categories WHERE server_id = ? ORDER BY position',
  );
  // A server's list: its threads are not in it (their parent's threads are listed apart).
  const channelsOfServer = db.prepare<[string], ChannelRow>(
    `SELECT ${CHANNEL_COLUMNS} FROM channels c WHERE c.server_id = ? AND c.parent_id IS NULL ORDER BY c.position`,
  );
  // Kept while the channels generation stays (schema.sql: channels and categories move it), so
  // a list kept is the committed one; at most CHANNEL_LISTS servers' lists of each.
  const channelsChanged = generationWatch(db, 'channels');
  const channelLists = new Map<string, readonly ChannelRecord[]>();
  const categoryLists = new Map<string, CategoryRecord[]>();
  function kept<T>(lists: Map<string, T>, serverId: string, load: (serverId: string) => T, checked = false): T {
    if ((!checked && channelsChanged()) || channelLists.size >= CHANNEL_LISTS || categoryLists.size >= CHANNEL_LISTS) {
      channelLists.clear();
      categoryLists.clear();
    }
    let list = lists.get(serverId);
    if (list === undefined) {
      list = load(serverId);
      lists.set(serverId, list);
    }
    return list;
  }
  /** The generation checked now, for a run of lookups that need not check it again. */
  const checkOnce = () => {
    if (channelsChanged()) {
      channelLists.clear();
      categoryLists.clear();
    }
    return true;
  };
  const channelsOf = (serverId: string): readonly ChannelRecord[] => kept(channelLists, serverId, (id) => channelsOfServer.all(id).map(channelRecord));
  const conversationById = db.prepare<[string], ConversationRow>(`SELECT ${CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?`);
  const conversationsOfUser = db.prepare<[string], ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS}
       FROM conversation_members cm JOIN conversations c ON c.id = cm.conversation_id
      WHERE cm.user_id = ?
      ORDER BY COALESCE(last_message_at, c.created_at) DESC, c.rowid DESC`,
  );
  const membersOfConversation = db.prepare<[string], ConversationMemberRow>(
    `SELECT cm.conversation_id, u.id AS user_id, u.username, u.display_name, u.avatar_url, u.bot
       FROM conversation_members cm JOIN profiles u ON u.id = cm.user_id
      WHERE cm.conversation_id = ? ORDER BY u.username, u.id`,
  );
  // Every member of every conversation of one user in one query: the list has no N+1.
  const membersOfUsersConversations = db.prepare<[string], ConversationMemberRow>(
    `SELECT cm.conversation_id, u.id AS user_id, u.username, u.display_name, u.avatar_url, u.bot
       FROM conversation_members cm JOIN profiles u ON u.id = cm.user_id
      WHERE cm.conversation_id IN (SELECT conversation_id FROM conversation_members WHERE user_id = ?)
      ORDER BY u.username, u.id`,
  );
  // Two indexed halves rather than an OR: a friendship is stored in the direction it was asked.
  const friendsOfUser = db.prepare<[string, string], Omit<FriendRecord, 'bot'> & { bot: number }>(
    `SELECT u.id AS user_id, u.username, u.display_name, u.avatar_url, u.bot, f.since
       FROM (SELECT to_user AS other, accepted_at AS since FROM friend_requests WHERE from_user = ? AND status = 'accepted'
             UNION ALL
             SELECT from_user, accepted_at FROM friend_requests WHERE to_user = ? AND status = 'accepted') f
       JOIN profiles u ON u.id = f.other
      ORDER BY u.username, u.id`,
  );
  const serverMembers = db.prepare<[string], { user_id: string }>('SELECT user_id FROM members WHERE server_id = ?');
  const conversationMembers = db.prepare<[string], { user_id: string }>('SELECT user_id FROM conversation_members WHERE conversation_id = ?');
  const peopleWhoSee = db.prepare<Record<string, string>, { user_id: string }>(
    `SELECT :id AS user_id
     UNION SELECT to_user FROM friend_requests WHERE from_user = :id AND status = 'accepted'
     UNION SELECT from_user FROM friend_requests WHERE to_user = :id AND status = 'accepted'
     UNION SELECT m2.user_id FROM members m1 JOIN members m2 ON m2.server_id = m1.server_id WHERE m1.user_id = :id
     UNION SELECT c2.user_id FROM conversation_members c1 JOIN conversation_members c2 ON c2.conversation_id = c1.conversation_id
      WHERE c1.user_id = :id`,
  );
  const incomingRequests = db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM friend_requests WHERE to_user = ? AND status = 'pending'");
  const rolesOfUser = db.prepare<[string], [string, string]>('SELECT server_id, role_id FROM member_roles WHERE user_id = ?').raw();
  const rolesOfMember = db.prepare<[string, string], [string, string]>('SELECT server_id, role_id FROM member_roles WHERE user_id = ? AND server_id = ?').raw();

  const conversationRecord = (row: ConversationRow, members: ConversationMemberRow[]): ConversationRecord => ({
    id: row.id,
    kind: row.kind,
    name: row.name,
    created_by: row.created_by,
    members: members.map(userRef),
    created_at: row.created_at,
    last_message_at: row.last_message_at,
  });

  return {
    server(id) {
      const row = serverById.get(id);
      return row && serverRecord(row);
    },
    serversOf: (userId) => serversOfUser.all(userId).map(serverRecord),
    channel(id) {
      const row = channelById.get(id);
      return row && channelRecord(row);
    },
    channelsOf,
    channelsOfMany(serverIds) {
      const checked = checkOnce();
      return new Map(serverIds.map((id) => [id, kept(channelLists, id, (serverId) => channelsOfServer.all(serverId).map(channelRecord), checked)]));
    },
    categoriesOfMany(serverIds) {
      const checked = checkOnce();
      return new Map(serverIds.map((id) => [id, [...kept(categoryLists, id, (serverId) => categoriesOfServer.all(serverId), checked)]]));
    },
    // A copy: callers may keep or change what they get.
    categoriesOf: (serverId) => [...kept(categoryLists, serverId, (id) => categoriesOfServer.all(id))],
    conversation(id) {
      const row = conversationById.get(id);
      return row && conversationRecord(row, membersOfConversation.all(id));
    },
    conversationsOf(userId) {
      const members = new Map<string, ConversationMemberRow[]>();
      for (const m of membersOfUsersConversations.all(userId)) {
        const list = members.get(m.conversation_id) ?? [];
        list.push(m);
        members.set(m.conversation_id, list);
      }
      return conversationsOfUser.all(userId).map((c) => conversationRecord(c, members.get(c.id) ?? []));
    },
    friendsOf: (userId) => friendsOfUser.all(userId, userId).map(friendRecord),
    serverMemberIds: (serverId) => serverMembers.all(serverId).map((r) => r.user_id),
    conversationMemberIds: (id) => conversationMembers.all(id).map((r) => r.user_id),
    incomingRequestCount: (userId) => incomingRequests.get(userId)!.n,
    roleIdsOf(userId, serverId) {
      const roles = new Map<string, string[]>();
      for (const [server, role] of serverId === undefined ? rolesOfUser.all(userId) : rolesOfMember.all(userId, serverId)) {
        const list = roles.get(server);
        if (list) list.push(role);
        else roles.set(server, [role]);
      }
      return roles;
    },
    peopleWhoSee: (userId) => peopleWhoSee.all({ id: userId }).map((r) => r.user_id),
  };
}
