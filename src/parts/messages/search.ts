import type { DB } from '../../core/db';
import { notFound } from '../../core/http/errors';
import type { MessageRecord } from '../../core/message-record';
import { COLUMNS, type MessageStore, type PlacedRow } from './message-store';
import { type Term, highlight, matchExpression } from '../../core/search-query';

/** `has=` values: a kind of attachment, any attachment, or a link in the text. */
export const HAS_VALUES = ['attachment', 'image', 'video', 'audio', 'file', 'link'] as const;
export type Has = (typeof HAS_VALUES)[number];

/** Where to look: everything the user sees now, or one server, channel or conversation of theirs. */
export type SearchScope =
  | { kind: 'all' }
  | { kind: 'server'; serverId: string }
  | { kind: 'channel'; channelId: string }
  | { kind: 'conversation'; conversationId: string };

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

export type SearchResult = MessageRecord & { highlight: [number, number][] };

export interface Search {
  /** Newest first; `next_before` is null when the page is not full. */
  find(request: SearchRequest): { results: SearchResult[]; next_before: string | null };
}

/**
 * Message search on the FTS5 index `messages_fts` (schema.sql), which triggers keep in step with
 * `messages` inside the very transactions that insert, edit and delete. The index drives: it
 * yields matches newest first and each is checked against the caller's rooms and the filters,
 * until the page is full.
 */
export function createSearch(db: DB, messages: Pick<MessageStore, 'records'>): Search {
  const seqOf = db.prepare<[string], { seq: number }>('SELECT seq FROM messages WHERE id = ?');
  // One statement for every combination: an unused filter is a NULL or 0 parameter. The rooms
  // are the caller's now (members, conversation_members), so leaving a room hides it at once.
  const find = db.prepare<Record<string, string | number | null>, PlacedRow>(
    `SELECT ${COLUMNS}, c.server_id
       FROM messages_fts
       JOIN messages m ON m.seq = messages_fts.rowid
       JOIN profiles u ON u.id = m.author_id
       LEFT JOIN channels c ON c.id = m.channel_id
      WHERE messages_fts MATCH :match
        AND messages_fts.rowid < :before AND messages_fts.rowid > :after
        AND (m.channel_id IN (SELECT ch.id FROM channels ch JOIN members mb ON mb.server_id = ch.server_id
                               WHERE mb.user_id = :user AND :channels = 1
                                 AND (:server IS NULL OR ch.server_id = :server)
                                 AND (:channel IS NULL OR ch.id = :channel))
          OR m.conversation_id IN (SELECT cm.conversation_id FROM conversation_members cm
                                    WHERE cm.user_id = :user AND :conversations = 1
                                      AND (:conversation IS NULL OR cm.conversation_id = :conversation)))
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

  const cursor = (id: string | null, key: string, fallback: number) => {
    if (id === null) return fallback;
    const row = seqOf.get(id);
    if (!row) throw notFound(`${key}: no such message`);
    return row.seq;
  };

  return {
    find({ userId, terms, scope, authorId, has, before, after, limit }) {
      const flag = (h: Has) => (has.has(h) ? 1 : 0);
      const rows = find.all({
        match: matchExpression(terms),
        before: cursor(before, 'before', Number.MAX_SAFE_INTEGER),
        after: cursor(after, 'after', 0),
        user: userId,
        channels: scope.kind === 'conversation' ? 0 : 1,
        conversations: scope.kind === 'all' || scope.kind === 'conversation' ? 1 : 0,
        server: scope.kind === 'server' ? scope.serverId : null,
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
      });
      const results = messages
        .records(rows, userId)
        .map((record) => Object.assign(record, { highlight: highlight(record.content, terms) }));
      return { results, next_before: results.length === limit ? results[results.length - 1].id : null };
    },
  };
}
