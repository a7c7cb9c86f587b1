import type { ChannelTails, Tail, TailMessage } from './channel-tails';
import type { DB } from '../../core/db';
import type { Directory } from '../community/directory';
import { badRequest } from '../../core/http/errors';
import type { Container, Reached } from '../../core/types';
import type { ChannelRecord, ChannelState, ContainerState, ConversationState, ThreadState } from '../../core/records';
import type { ThreadStore } from '../community/threads';
import { VIEW, namesOf } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';

/**
 * Read state: how far each user has read each channel and conversation, and what that leaves
 * unread. A marker is a message seq and only moves forward; without one, the seq of the newest
 * message when the user joined is the marker, so a new member starts with everything read.
 *
 * A channel's state is counted from its newest messages kept in memory (src/parts/messages/channel-tails.ts),
 * so a user in thousands of channels costs one query for their markers; a channel whose marker
 * is older than what is kept, and every conversation, is counted in SQL: index ranges, capped.
 * `unread_count` and `mention_count` stop at UNREAD_CAP, so a client shows "99+" from 100 on,
 * and a channel a user left for a year costs no more than one they read yesterday.
 */
export const UNREAD_CAP = 100;

export interface ReadStates {
  /**
   * The states of the channels of one server, or of every server the user is in (in position
   * order), with what the user may do in each: only the channels they see, each `position` its
   * place among them (0..k-1: a hidden channel leaves no gap).
   */
  channels(userId: string, serverId?: string): Map<string, ChannelState>;
  /**
   * The active threads of one server's channels, or of every server's, that the user sees (a
   * private one only as its member or with manage_threads): each with `following`, and the read
   * state of those they follow (an unfollowed thread counts nothing, as Element's threads do not).
   */
  threads(userId: string, serverId?: string): Map<string, ThreadState>;
  /** The states of the user's conversations (or one of them). */
  conversations(userId: string, conversationId?: string): Map<string, ConversationState>;
  /** The state of one container. */
  of(userId: string, container: Container): ContainerState;
  /**
   * Moves the marker forward to `messageId` (a message of the container above the reader's
   * history floor, else 400). Returns true when it moved; an older id changes nothing.
   */
  markRead(userId: string, at: Reached, messageId: string): boolean;
  /** Inside a message insert: the sender has read up to what they sent. */
  advance(userId: string, containerId: string, seq: number): void;
  /** Inside the caller's write: the markers of these containers go (deleted), or one user's (who left). */
  forget(containerIds: string[], userId?: string): void;
  /** The marker a member starts with: the newest message seq now. */
  newestSeq(): number;
}

const CAP = UNREAD_CAP;

// The marker of the row at hand: the user's read state, or the seq they joined at.
const MARKER = 'COALESCE(rs.last_read_seq, mb.joined_seq)';

const CHANNELS_OF_MEMBER = `FROM members mb
  JOIN channels c ON c.server_id = mb.server_id
  LEFT JOIN read_states rs ON rs.user_id = mb.user_id AND rs.container_id = c.id
  LEFT JOIN notification_settings ns ON ns.user_id = mb.user_id AND ns.target_id = mb.server_id`;

// In a channel, never below the history floor (`:floor`, src/rules/channel-access.ts historyFloor):
// what was sent before a member without read_history joined is neither unread nor named.
const CHANNEL_MARKER = `MAX(${MARKER}, :floor)`;

// The full count in SQL: for a channel whose marker is older than its tail (src/parts/messages/channel-tails.ts).
const channelState = `
  (SELECT m.id FROM messages m WHERE m.channel_id = c.id AND m.seq > :floor ORDER BY m.seq DESC LIMIT 1) AS last_message_id,
  (SELECT m.id FROM messages m WHERE m.channel_id = c.id AND m.seq <= ${CHANNEL_MARKER} AND m.seq > :floor ORDER BY m.seq DESC LIMIT 1) AS last_read_id,
  (SELECT COUNT(*) FROM (SELECT 1 FROM messages m
      WHERE m.channel_id = c.id AND m.seq > ${CHANNEL_MARKER} AND m.author_id <> mb.user_id LIMIT ${CAP})) AS unread_count,
  (SELECT COUNT(*) FROM (
      SELECT mm.message_seq FROM message_mentions mm
       WHERE mm.user_id = mb.user_id AND mm.container_id = c.id AND mm.message_seq > ${CHANNEL_MARKER}
      UNION
      SELECT e.seq FROM messages e
       WHERE e.channel_id = c.id AND e.mention_everyone = 1 AND e.seq > ${CHANNEL_MARKER} AND e.author_id <> mb.user_id
         AND COALESCE(ns.suppress_everyone, 0) = 0
      UNION
      SELECT e.seq FROM messages e JOIN json_each(e.mention_roles) j
        JOIN member_roles mr ON mr.role_id = j.value AND mr.server_id = mb.server_id AND mr.user_id = mb.user_id
       WHERE e.channel_id = c.id AND e.mention_roles IS NOT NULL AND e.seq > ${CHANNEL_MARKER} AND e.author_id <> mb.user_id
         AND COALESCE(ns.suppress_roles, 0) = 0
      LIMIT ${CAP})) AS mention_count
  ${CHANNELS_OF_MEMBER}`;

// In a DM or group every message from someone else is for the caller: mentions equal unread.
const conversationState = `
  mb.conversation_id,
  (SELECT m.id FROM messages m WHERE m.conversation_id = mb.conversation_id ORDER BY m.seq DESC LIMIT 1) AS last_message_id,
  (SELECT m.id FROM messages m WHERE m.conversation_id = mb.conversation_id AND m.seq <= ${MARKER} ORDER BY m.seq DESC LIMIT 1) AS last_read_id,
  (SELECT COUNT(*) FROM (SELECT 1 FROM messages m
      WHERE m.conversation_id = mb.conversation_id AND m.seq > ${MARKER} AND m.author_id <> mb.user_id LIMIT ${CAP})) AS unread_count
  FROM conversation_members mb
  LEFT JOIN read_states rs ON rs.user_id = mb.user_id AND rs.container_id = mb.conversation_id`;

type ConversationRow = Omit<ConversationState, 'mention_count'>;
/** server_id, joined_seq, and whether the user's settings suppress `@everyone` and role mentions there (1). */
type Membership = [string, number, number, number];
/** What counts as a mention of the user in one server: `@everyone`, and the roles they hold (none when suppressed). */
interface Mentions {
  everyone: boolean;
  holds(roleId: string): boolean;
}

export function createReadStates(
  db: DB,
  tails: ChannelTails,
  directory: Pick<Directory, 'channelsOfMany'>,
  perms: Pick<Permissions, 'channelRulesOf'>,
  threadStore: Pick<ThreadStore, 'activeIn' | 'followedBy' | 'get'>,
): ReadStates {
  // Each membership with what the user's settings for the server take out of mentions (docs/api.md "Notifications").
  const MEMBERSHIP = `SELECT mb.server_id, mb.joined_seq, COALESCE(ns.suppress_everyone, 0), COALESCE(ns.suppress_roles, 0) FROM members mb
    LEFT JOIN notification_settings ns ON ns.user_id = mb.user_id AND ns.target_id = mb.server_id WHERE mb.user_id = ?`;
  const memberships = db.prepare<[string], Membership>(MEMBERSHIP).raw();
  const membership = db.prepare<[string, string], Membership>(`${MEMBERSHIP} AND mb.server_id = ?`).raw();
  // The user's markers: one range of the primary key (conversations' come along, unused).
  const markersOfUser = db.prepare<[string], [string, number]>('SELECT container_id, last_read_seq FROM read_states WHERE user_id = ?').raw();
  const markersInServer = db
    .prepare<[string, string], [string, number]>(
      'SELECT c.id, rs.last_read_seq FROM channels c JOIN read_states rs ON rs.user_id = ? AND rs.container_id = c.id WHERE c.server_id = ?',
    )
    .raw();
  const counted = db.prepare<{ user: string; channel: string; floor: number }, ContainerState>(
    `SELECT ${channelState} WHERE mb.user_id = :user AND c.id = :channel`,
  );
  const rolesOfUser = db.prepare<[string], string>('SELECT role_id FROM member_roles WHERE user_id = ?').pluck();

  /**
   * The channels of the given memberships with the caller's state: the records from the
   * directory, the state from each channel's tail, or counted in SQL when the marker is older.
   */
  function channelStates(userId: string, servers: Membership[], markers: Map<string, number>): Map<string, ChannelState> {
    tails.refresh();
    const states = new Map<string, ChannelState>();
    // Asked only when a kept message mentions a role; ids are unique across servers, so one set
    // serves every channel.
    let roles: Set<string> | undefined;
    const holdsRole = (roleId: string) => (roles ??= new Set(rolesOfUser.all(userId))).has(roleId);
    // Every server's lists and rules at once: one check of each generation, not one per server.
    const serverIds = servers.map(([serverId]) => serverId);
    const lists = directory.channelsOfMany(serverIds);
    const rulesOf = perms.channelRulesOf(serverIds);
    for (const [serverId, joinedSeq, suppressEveryone, suppressRoles] of servers) {
      const rules = rulesOf.get(serverId);
      const mentions: Mentions = { everyone: suppressEveryone === 0, holds: suppressRoles === 0 ? holdsRole : () => false };
      // A channel's position is its place among those the user sees: a hidden one takes none.
      let position = 0;
      for (const channel of lists.get(serverId) ?? []) {
        const flags = rules?.flags(userId, channel.id) ?? 0;
        if (!(flags & VIEW)) continue;
        const floor = rules!.historyFloor(userId, channel.id);
        const state =
          stateInTail(tails.get(channel.id), userId, mentions, markers.get(channel.id) ?? joinedSeq, floor) ??
          counted.get({ user: userId, channel: channel.id, floor })!;
        states.set(channel.id, withFields(channel, position++, state, namesOf(flags), rules!.isPrivate(channel.id)));
      }
    }
    return states;
  }
  function channelsOf(userId: string, serverId?: string): Map<string, ChannelState> {
    if (serverId === undefined) return channelStates(userId, memberships.all(userId), new Map(markersOfUser.all(userId)));
    const member = membership.get(userId, serverId);
    return member ? channelStates(userId, [member], new Map(markersInServer.all(userId, serverId))) : new Map();
  }

  /** A thread's (or channel's) state for a user at their marker: from its tail, or counted. */
  function stateOf(userId: string, channelId: string, member: Membership, marker: number | undefined, floor: number, mentions?: Mentions): ContainerState {
    const [, joinedSeq, suppressEveryone, suppressRoles] = member;
    const holds = (roleId: string) => new Set(rolesOfUser.all(userId)).has(roleId);
    const counting = mentions ?? { everyone: suppressEveryone === 0, holds: suppressRoles === 0 ? holds : () => false };
    return stateInTail(tails.get(channelId), userId, counting, marker ?? joinedSeq, floor) ?? counted.get({ user: userId, channel: channelId, floor })!;
  }

  function threadsOf(userId: string, serverId?: string): Map<string, ThreadState> {
    const servers = serverId === undefined ? memberships.all(userId) : [membership.get(userId, serverId)].filter((m) => m !== undefined);
    const states = new Map<string, ThreadState>();
    if (servers.length === 0) return states;
    const byServer = new Map(servers.map((m) => [m[0], m]));
    const rulesOf = perms.channelRulesOf([...byServer.keys()]);
    const followed = threadStore.followedBy(userId, serverId);
    let markers: Map<string, number> | undefined;
    tails.refresh();
    for (const thread of threadStore.activeIn([...byServer.keys()])) {
      const rules = rulesOf.get(thread.server_id);
      if (!rules || !(rules.flags(userId, thread.id) & VIEW)) continue;
      if (!followed.has(thread.id)) {
        states.set(thread.id, { ...thread, following: false });
        continue;
      }
      markers ??= new Map(serverId === undefined ? markersOfUser.all(userId) : markersInServer.all(userId, serverId));
      const state = stateOf(userId, thread.id, byServer.get(thread.server_id)!, markers.get(thread.id), rules.historyFloor(userId, thread.id));
      states.set(thread.id, { ...thread, following: true, ...state });
    }
    return states;
  }
  const conversationsOfUser = db.prepare<[string], ConversationRow>(`SELECT ${conversationState} WHERE mb.user_id = ?`);
  const oneConversation = db.prepare<[string, string], ConversationRow>(`SELECT ${conversationState} WHERE mb.user_id = ? AND mb.conversation_id = ?`);
  const messageSeq = db.prepare<[string, string, string], { seq: number }>('SELECT seq FROM messages WHERE id = ? AND (channel_id = ? OR conversation_id = ?)');
  // Forward only: an older marker never replaces a newer one.
  const forgetAll = db.prepare('DELETE FROM read_states WHERE container_id IN (SELECT value FROM json_each(?))');
  const forgetOne = db.prepare('DELETE FROM read_states WHERE user_id = ? AND container_id IN (SELECT value FROM json_each(?))');
  const upsert = db.prepare<[string, string, number]>(
    `INSERT INTO read_states (user_id, container_id, last_read_seq) VALUES (?, ?, ?)
     ON CONFLICT (user_id, container_id) DO UPDATE SET last_read_seq = excluded.last_read_seq
     WHERE excluded.last_read_seq > read_states.last_read_seq`,
  );
  const currentMarker = db.prepare<[string, string, string, string, string, string], { marker: number }>(
    `SELECT COALESCE(
       (SELECT last_read_seq FROM read_states WHERE user_id = ? AND container_id = ?),
       (SELECT joined_seq FROM members m JOIN channels c ON c.server_id = m.server_id WHERE m.user_id = ? AND c.id = ?),
       (SELECT joined_seq FROM conversation_members WHERE user_id = ? AND conversation_id = ?),
       0) AS marker`,
  );
  const newest = db.prepare<[], { seq: number }>('SELECT COALESCE(MAX(seq), 0) AS seq FROM messages');

  const withMentions = (row: ConversationRow): ConversationState => ({ ...row, mention_count: row.unread_count });
  const byId = <T>(rows: T[], key: (row: T) => string) => new Map(rows.map((row) => [key(row), row]));
  const empty: ContainerState = { last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0 };

  const markerOf = db.prepare<[string, string], number>('SELECT last_read_seq FROM read_states WHERE user_id = ? AND container_id = ?').pluck();

  const states: ReadStates = {
    channels: channelsOf,
    threads: threadsOf,
    conversations: (userId, conversationId) =>
      byId(
        (conversationId ? [oneConversation.get(userId, conversationId)].filter((r) => r !== undefined) : conversationsOfUser.all(userId)).map(withMentions),
        (s) => s.conversation_id,
      ),
    of(userId, container) {
      if (container.kind === 'channel') {
        const rules = perms.channelRulesOf([container.serverId]).get(container.serverId);
        if (rules?.parentOf(container.id)) {
          // A thread: counted alone (threads are in no channel list).
          const member = membership.get(userId, container.serverId);
          if (!member || !(rules.flags(userId, container.id) & VIEW)) return empty;
          tails.refresh();
          return stateOf(userId, container.id, member, markerOf.get(userId, container.id), rules.historyFloor(userId, container.id));
        }
        const found = channelsOf(userId, container.serverId).get(container.id);
        if (!found) return empty;
        const { last_message_id, last_read_id, unread_count, mention_count } = found;
        return { last_message_id, last_read_id, unread_count, mention_count };
      }
      const row = oneConversation.get(userId, container.id);
      return row ? withMentions(row) : empty;
    },
    markRead(userId, { container, historyFloor }, messageId) {
      const found = messageSeq.get(messageId, container.id, container.id);
      // A field naming no message of this room the caller may read (another room's, none, one
      // before their history floor): 400, issue 16's status, one answer for all of them.
      if (!found || found.seq <= historyFloor) {
        throw badRequest(`message_id must name a message of this ${container.kind}`);
      }
      const before = currentMarker.get(userId, container.id, userId, container.id, userId, container.id)!.marker;
      if (found.seq <= before) return false;
      upsert.run(userId, container.id, found.seq);
      return true;
    },
    advance: (userId, containerId, seq) => void upsert.run(userId, containerId, seq),
    forget(containerIds, userId) {
      if (userId === undefined) forgetAll.run(JSON.stringify(containerIds));
      else forgetOne.run(userId, JSON.stringify(containerIds));
    },
    newestSeq: () => newest.get()!.seq,
  };
  return states;
}

/**
 * The read state at `marker` from a channel's newest messages, or null when the marker is older
 * than the tail and the tail is not the whole channel (the counts may reach past it). Nothing at
 * or below `floor` (the history floor) counts or is named.
 */
function stateInTail(tail: Tail, userId: string, { everyone, holds }: Mentions, readUpTo: number, floor: number): ContainerState | null {
  const { messages } = tail;
  const marker = Math.max(readUpTo, floor);
  const shown = (m: TailMessage | undefined) => (m !== undefined && m.seq > floor ? m.id : null);
  let first = messages.length;
  while (first > 0 && messages[first - 1].seq > marker) first--;
  if (first === 0 && !tail.complete && messages.length > 0) return null;
  let unread = 0;
  let mentioned = 0;
  for (let i = first; i < messages.length; i++) {
    const m = messages[i];
    if (m.author_id === userId) continue;
    unread++;
    if ((everyone && m.everyone) || m.mentions?.includes(userId) || m.roles?.some(holds)) mentioned++;
  }
  return {
    last_message_id: shown(messages.at(-1)),
    last_read_id: shown(messages[first - 1]),
    unread_count: Math.min(unread, CAP),
    mention_count: Math.min(mentioned, CAP),
  };
}

/** Field by field, not by spreads: `ready` makes thousands of these. */
function withFields(channel: ChannelRecord, position: number, state: ContainerState, permissions: string[], isPrivate: boolean): ChannelState {
  const entry: ChannelState = {
    id: channel.id,
    server_id: channel.server_id,
    type: channel.type,
    parent_id: channel.parent_id,
    name: channel.name,
    position,
    created_at: channel.created_at,
    topic: channel.topic,
    slowmode_seconds: channel.slowmode_seconds,
    category_id: channel.category_id,
    permissions_synced: channel.permissions_synced,
    last_message_id: state.last_message_id,
    last_read_id: state.last_read_id,
    unread_count: state.unread_count,
    mention_count: state.mention_count,
    permissions,
    private: isPrivate,
  };
  if (channel.type === 'voice') {
    entry.user_limit = channel.user_limit;
    entry.bitrate = channel.bitrate;
  }
  // A forum's settings come along (no other channel has them).
  if (channel.available_tags === undefined) return entry;
  return { ...entry, available_tags: channel.available_tags, default_reaction: channel.default_reaction, default_sort: channel.default_sort };
}
