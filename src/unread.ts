import type { DB } from './db';
import type { ChannelRecord } from './directory';
import { badRequest } from './http/errors';
import type { Container } from './types';

/**
 * Read state: how far each user has read each channel and conversation, and what that leaves
 * unread. A marker is a message seq and only moves forward; without one, the seq of the newest
 * message when the user joined is the marker, so a new member starts with everything read.
 *
 * Counting is an index range, capped: `unread_count` and `mention_count` stop at UNREAD_CAP, so
 * a client shows "99+" from 100 on, and a channel a user left for a year costs no more than one
 * they read yesterday.
 */
export const UNREAD_CAP = 100;

export interface ContainerState {
  last_message_id: string | null;
  /** The newest message at or before the marker (null when there is none). */
  last_read_id: string | null;
  /** Messages after the marker by others (at most UNREAD_CAP). */
  unread_count: number;
  /** Of those, the ones that mention the caller or everyone; in a DM or group all of them. */
  mention_count: number;
}

/** A channel's own fields under `channel_id`, read in the same row as its state (the sidebar needs both). */
export type ChannelFields = Omit<ChannelRecord, 'id'> & { channel_id: string };

export type ChannelState = ChannelFields & ContainerState;

export interface ConversationState extends ContainerState {
  conversation_id: string;
}

export interface ReadStates {
  /** The states of the channels of one server, or of every server the user is in (in position order). */
  channels(userId: string, serverId?: string): Map<string, ChannelState>;
  /** The states of the user's conversations (or one of them). */
  conversations(userId: string, conversationId?: string): Map<string, ConversationState>;
  /** The state of one container. */
  of(userId: string, container: Container): ContainerState;
  /**
   * Moves the marker forward to `messageId` (which must be a message of the container, else 400).
   * Returns true when it moved; an older id changes nothing.
   */
  markRead(userId: string, container: Container, messageId: string): boolean;
  /** Inside a message insert: the sender has read up to what they sent. */
  advance(userId: string, containerId: string, seq: number): void;
  /** The marker a member starts with: the newest message seq now. */
  newestSeq(): number;
}

const CAP = UNREAD_CAP;

// The marker of the row at hand: the user's read state, or the seq they joined at.
const MARKER = 'COALESCE(rs.last_read_seq, mb.joined_seq)';

// Most channels are read to the end: one index lookup (the newest seq is not past the marker)
// says so, and the counts, which walk rows, are skipped for them.
const PAST_MARKER = `(SELECT MAX(m.seq) FROM messages m WHERE m.channel_id = c.id) > ${MARKER}`;

const channelState = `
  c.id AS channel_id, c.server_id, c.name, c.position, c.created_at, c.topic, c.slowmode_seconds,
  (SELECT m.id FROM messages m WHERE m.channel_id = c.id ORDER BY m.seq DESC LIMIT 1) AS last_message_id,
  (SELECT m.id FROM messages m WHERE m.channel_id = c.id AND m.seq <= ${MARKER} ORDER BY m.seq DESC LIMIT 1) AS last_read_id,
  CASE WHEN ${PAST_MARKER} THEN (SELECT COUNT(*) FROM (SELECT 1 FROM messages m
      WHERE m.channel_id = c.id AND m.seq > ${MARKER} AND m.author_id <> mb.user_id LIMIT ${CAP})) ELSE 0 END AS unread_count,
  CASE WHEN ${PAST_MARKER} THEN (SELECT COUNT(*) FROM (
      SELECT mm.message_seq FROM message_mentions mm
       WHERE mm.user_id = mb.user_id AND mm.container_id = c.id AND mm.message_seq > ${MARKER}
      UNION
      SELECT e.seq FROM messages e
       WHERE e.channel_id = c.id AND e.mention_everyone = 1 AND e.seq > ${MARKER} AND e.author_id <> mb.user_id
      LIMIT ${CAP})) ELSE 0 END AS mention_count
  FROM members mb
  JOIN channels c ON c.server_id = mb.server_id
  LEFT JOIN read_states rs ON rs.user_id = mb.user_id AND rs.container_id = c.id`;

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

export function createReadStates(db: DB): ReadStates {
  const channelsOfUser = db.prepare<[string], ChannelState>(`SELECT ${channelState} WHERE mb.user_id = ? ORDER BY c.server_id, c.position`);
  const channelsOfServer = db.prepare<[string, string], ChannelState>(
    `SELECT ${channelState} WHERE mb.user_id = ? AND mb.server_id = ? ORDER BY c.position`,
  );
  const oneChannel = db.prepare<[string, string], ChannelState>(`SELECT ${channelState} WHERE mb.user_id = ? AND c.id = ?`);
  const conversationsOfUser = db.prepare<[string], ConversationRow>(`SELECT ${conversationState} WHERE mb.user_id = ?`);
  const oneConversation = db.prepare<[string, string], ConversationRow>(
    `SELECT ${conversationState} WHERE mb.user_id = ? AND mb.conversation_id = ?`,
  );
  const messageSeq = db.prepare<[string, string, string], { seq: number }>(
    'SELECT seq FROM messages WHERE id = ? AND (channel_id = ? OR conversation_id = ?)',
  );
  // Forward only: an older marker never replaces a newer one.
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

  const states: ReadStates = {
    channels: (userId, serverId) =>
      byId(serverId ? channelsOfServer.all(userId, serverId) : channelsOfUser.all(userId), (s) => s.channel_id),
    conversations: (userId, conversationId) =>
      byId((conversationId ? [oneConversation.get(userId, conversationId)].filter((r) => r !== undefined) : conversationsOfUser.all(userId)).map(withMentions), (s) => s.conversation_id),
    of(userId, container) {
      if (container.kind === 'channel') {
        const row = oneChannel.get(userId, container.id);
        if (!row) return empty;
        const { channel_id, server_id, last_message_id, last_read_id, unread_count, mention_count } = row;
        return { channel_id, server_id, last_message_id, last_read_id, unread_count, mention_count };
      }
      const row = oneConversation.get(userId, container.id);
      return row ? withMentions(row) : empty;
    },
    markRead(userId, container, messageId) {
      const found = messageSeq.get(messageId, container.id, container.id);
      if (!found) throw badRequest(`message_id must name a message of this ${container.kind}`);
      const before = currentMarker.get(userId, container.id, userId, container.id, userId, container.id)!.marker;
      if (found.seq <= before) return false;
      upsert.run(userId, container.id, found.seq);
      return true;
    },
    advance: (userId, containerId, seq) => void upsert.run(userId, containerId, seq),
    newestSeq: () => newest.get()!.seq,
  };
  return states;
}
