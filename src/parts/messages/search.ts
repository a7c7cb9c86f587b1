import type { DB } from '../../core/db';
import { notFound } from '../../core/http/errors';
import type { MessageRecord } from '../../core/message-record';
import { COLUMNS, type MessageStore, type PlacedRow } from './message-store';
import { type Term, highlight, matchExpression } from '../../core/search-query';
import { VIEW } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';

/** `has=` values: a kind of attachment, any attachment, or a link in the text. */
export const HAS_VALUES = ['attachment', 'image', 'video', 'audio', 'file', 'link'] as const;
export type Has = (typeof HAS_VALUES)[number];

/** Where to look: everything the user sees now, or one server, channel or conversation of theirs. */
export type SearchScope =
  { kind: 'all' } | { kind: 'server'; serverId: string } | { kind: 'channel'; channelId: string } | { kind: 'conversation'; conversationId: string };

export interface SearchRequest {
  userId: string;
  terms: Term[];
  scope: SearchScope;
  authorId: string | null;
  has: Set<Has>;
  before: string | null;
  after: string | null;
  limit: number;
}

/** A result, its matched words marked; in a thread, which thread and of which channel. */
export type SearchResult = MessageRecord & { highlight: [number, number][]; in_thread?: { id: string; name: string; parent_id: string } };

export interface Search {
  /** Newest first; `next_before` is null when the page is not full. */
  find(request: SearchRequest): { results: SearchResult[]; next_before: string | null };
}

/**
 * The rooms a user sees now: channels of their servers but those hidden from them (`:hidden`, a
 * JSON array: listed channels, and private threads they may not see), and the threads of the
 * channels they see (`c`: the message's channel row, whose parent_id names a thread's channel);
 * their conversations (`:user`); in a channel where they lack read_history (and its threads), only
 * messages after the seq they joined at (`:floors`, a JSON object of channel id to seq).
 */
const VISIBLE = `((m.channel_id IN (SELECT ch.id FROM channels ch JOIN members mb ON mb.server_id = ch.server_id WHERE mb.user_id = :user)
                   AND m.channel_id NOT IN (SELECT value FROM json_each(:hidden))
                   AND COALESCE(c.parent_id, '') NOT IN (SELECT value FROM json_each(:hidden))
                   AND m.seq > COALESCE(json_extract(:floors, '$."' || COALESCE(c.parent_id, m.channel_id) || '"'), 0))
                  OR m.conversation_id IN (SELECT cm.conversation_id FROM conversation_members cm WHERE cm.user_id = :user))`;
/** A message's key in the index is `(range << 32) | seq` (schema.sql, `search_ranges`). */
const SEQ_BITS = 32n;
/** The range of the messages of conversations. */
const CONVERSATIONS = 0;

/**
 * Message search on the FTS5 index `messages_fts` (schema.sql), which triggers keep in step with
 * `messages` inside the very transactions that insert, edit and delete. Each server's messages
 * are one range of the index's keys, and the conversations' one more, so visibility drives the
 * query: it reads only the ranges of the servers the caller is in (newest range first, and stops
 * once no range left can hold a newer match), each newest first, checked against the caller's
 * rooms and the filters until the page is full. A word common in servers the caller is not in
 * costs them nothing.
 */
export function createSearch(db: DB, messages: Pick<MessageStore, 'records'>, perms: Pick<Permissions, 'channelRulesOf'>): Search {
  // A cursor is resolved only among the messages the caller sees: any other id is 404, as a
  // random one is, so the bound tells nothing of messages they cannot see.
  const visibleSeq = db.prepare<{ id: string; user: string; hidden: string; floors: string }, { seq: number }>(
    `SELECT m.seq FROM messages m LEFT JOIN channels c ON c.id = m.channel_id WHERE m.id = :id AND ${VISIBLE}`,
  );
  const rangeOf = db.prepare<[string], number>('SELECT n FROM search_ranges WHERE container_id = ?').pluck();
  const serverOfChannel = db.prepare<[string], string>('SELECT server_id FROM channels WHERE id = ?').pluck();
  const parentOf = db.prepare<[string], string | null>('SELECT parent_id FROM channels WHERE id = ?').pluck();
  const serversOfUser = db.prepare<[string], string>('SELECT server_id FROM members WHERE user_id = ?').pluck();
  // The listed channels and the private threads: a public thread is seen with its parent.
  const channelsOfServer = db
    .prepare<[string, string], string>(
      'SELECT id FROM channels WHERE server_id = ? AND parent_id IS NULL UNION ALL SELECT channel_id FROM threads WHERE server_id = ? AND private = 1',
    )
    .pluck();

  /** The channels of the servers in scope hidden from the user, and the floors where they lack read_history. */
  function restrictions(userId: string, scope: SearchScope): { hidden: string; floors: string; floorOf: (channelId: string) => number } {
    const serverIds =
      scope.kind === 'all'
        ? serversOfUser.all(userId)
        : scope.kind === 'server'
          ? [scope.serverId]
          : scope.kind === 'channel'
            ? [serverOfChannel.get(scope.channelId) ?? '']
            : [];
    const hidden: string[] = [];
    const floors: Record<string, number> = {};
    const rulesOf = perms.channelRulesOf(serverIds);
    for (const serverId of serverIds) {
      const rules = rulesOf.get(serverId);
      if (!rules) continue;
      for (const channelId of channelsOfServer.all(serverId, serverId)) {
        if (!(rules.flags(userId, channelId) & VIEW)) hidden.push(channelId);
        else if (rules.parentOf(channelId) === null && rules.historyFloor(userId, channelId) > 0) floors[channelId] = rules.historyFloor(userId, channelId);
      }
    }
    // A thread's floor is its parent's.
    const floorOf = (channelId: string) => floors[parentOf.get(channelId) ?? channelId] ?? 0;
    return { hidden: JSON.stringify(hidden), floors: JSON.stringify(floors), floorOf };
  }
  // The caller's servers' ranges with the newest message in each, and their conversations' newest.
  const serverRanges = db.prepare<[string], { n: number; newest: number | null }>(
    `SELECT r.n, MAX((SELECT MAX(m.seq) FROM messages m WHERE m.channel_id = ch.id)) AS newest
       FROM members mb JOIN search_ranges r ON r.container_id = mb.server_id JOIN channels ch ON ch.server_id = mb.server_id
      WHERE mb.user_id = ? GROUP BY r.n`,
  );
  const newestInConversations = db
    .prepare<[string], number | null>(
      `SELECT MAX((SELECT MAX(m.seq) FROM messages m WHERE m.conversation_id = cm.conversation_id))
       FROM conversation_members cm WHERE cm.user_id = ?`,
    )
    .pluck();
  // One statement for every combination: an unused filter is a NULL or 0 parameter. The rooms
  // are the caller's now (members, conversation_members), so leaving a room hides it at once.
  const find = db.prepare<Record<string, string | number | bigint | null>, PlacedRow & { parent_id: string | null; channel_name: string | null }>(
    `SELECT ${COLUMNS}, c.server_id, c.parent_id, c.name AS channel_name
       FROM messages_fts
       JOIN messages m ON m.seq = (messages_fts.rowid & 0xFFFFFFFF)
       JOIN profiles u ON u.id = m.author_id
       LEFT JOIN channels c ON c.id = m.channel_id
      WHERE messages_fts MATCH :match
        AND messages_fts.rowid > :low AND messages_fts.rowid < :high
        AND ${VISIBLE}
        AND (:channel IS NULL OR m.channel_id = :channel)
        AND (:conversation IS NULL OR m.conversation_id = :conversation)
        AND (:author IS NULL OR m.author_id = :author)
        AND (:attachment = 0 OR EXISTS (SELECT 1 FROM attachments a WHERE a.message_seq = m.seq))
        AND (:image = 0 OR EXISTS (SELECT 1 FROM attachments a WHERE a.message_seq = m.seq AND a.preview_kind = 'image'))
        AND (:video = 0 OR EXISTS (SELECT 1 FROM attachments a WHERE a.message_seq = m.seq AND a.preview_kind = 'video'))
        AND (:audio = 0 OR EXISTS (SELECT 1 FROM attachments a WHERE a.message_seq = m.seq AND a.preview_kind = 'audio'))
        AND (:file = 0 OR EXISTS (SELECT 1 FROM attachments a WHERE a.message_seq = m.seq
                                   AND a.preview_kind NOT IN ('image', 'video', 'audio')))
        AND (:link = 0 OR m.content LIKE '%http://%' OR m.content LIKE '%https://%')
      ORDER BY messages_fts.rowid DESC
      LIMIT :limit`,
  );

  const cursor = (id: string | null, key: string, user: string, fallback: number, seen: { hidden: string; floors: string }) => {
    if (id === null) return fallback;
    const row = visibleSeq.get({ id, user, ...seen });
    if (!row) throw notFound(`${key}: no such message`);
    return row.seq;
  };

  /** The ranges to read, newest message first; `newest` null when unknown (one range only). */
  function rangesFor(userId: string, scope: SearchScope): { n: number; newest: number | null }[] {
    switch (scope.kind) {
      case 'conversation':
        return [{ n: CONVERSATIONS, newest: null }];
      case 'channel':
        return [{ n: rangeOf.get(scope.channelId) ?? -1, newest: null }];
      case 'server':
        return [{ n: rangeOf.get(scope.serverId) ?? -1, newest: null }];
      case 'all':
        return [...serverRanges.all(userId), { n: CONVERSATIONS, newest: newestInConversations.get(userId) ?? null }]
          .filter((r) => r.newest !== null)
          .sort((a, b) => b.newest! - a.newest!);
    }
  }

  return {
    find({ userId, terms, scope, authorId, has, before, after, limit }) {
      const flag = (h: Has) => (has.has(h) ? 1 : 0);
      const { floorOf, ...seen } = restrictions(userId, scope);
      const beforeSeq = cursor(before, 'before', userId, 2 ** 32, seen);
      const afterSeq = cursor(after, 'after', userId, 0, seen);
      const parameters = {
        match: matchExpression(terms),
        user: userId,
        ...seen,
        channel: scope.kind === 'channel' ? scope.channelId : null,
        conversation: scope.kind === 'conversation' ? scope.conversationId : null,
        author: authorId,
        attachment: flag('attachment'),
        image: flag('image'),
        video: flag('video'),
        audio: flag('audio'),
        file: flag('file'),
        link: flag('link'),
        limit,
      };
      let rows: (PlacedRow & { parent_id: string | null; channel_name: string | null })[] = [];
      for (const { n, newest } of rangesFor(userId, scope)) {
        if (n < 0) continue;
        // A full page already holds everything newer than this range's newest message.
        if (rows.length === limit && newest !== null && newest <= rows[limit - 1].seq) break;
        const base = BigInt(n) << SEQ_BITS;
        // Keys are bound as BigInt: FTS5 seeks on an integer bound, and scans on a float one.
        const found = find.all({ ...parameters, low: base + BigInt(afterSeq), high: base + BigInt(beforeSeq) });
        rows = [...rows, ...found].sort((a, b) => b.seq - a.seq).slice(0, limit);
      }
      const threadOf = new Map(
        rows.filter((r) => r.parent_id !== null).map((r) => [r.id, { id: r.channel_id!, name: r.channel_name!, parent_id: r.parent_id! }]),
      );
      const results = messages.records(rows, userId, floorOf).map((record): SearchResult => {
        const found: SearchResult = Object.assign(record, { highlight: highlight(record.content, terms) });
        const thread = threadOf.get(record.id);
        if (thread) found.in_thread = thread;
        return found;
      });
      return { results, next_before: results.length === limit ? results[results.length - 1].id : null };
    },
  };
}
