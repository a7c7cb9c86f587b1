/** The message record: its fields, its limits and the one function that shapes it. */
import type { Embed } from './embed';
import { type Container, type UserRef, userRef } from './types';

export const MAX_CONTENT_CHARS = 4000;
export const REPLY_PREVIEW_CHARS = 100;

export interface Attachment {
  id: string;
  name: string;
  url: string;
  content_type: string;
  size: number;
  preview_kind: 'code' | 'image' | 'audio' | 'video';
}

/** A server's custom emoji as a reaction shows it (issue 50); `available: false` once deleted: shown as `:name:` text. */
export interface CustomEmoji {
  id: string;
  name: string;
  animated: boolean;
  available: boolean;
}

export interface Reaction {
  /** A Unicode emoji as the spec has it, or a custom emoji (never merged with a Unicode one of the same name). */
  emoji: string | CustomEmoji;
  count: number;
  reacted: boolean;
}

/** The key a reaction is stored and counted under: the emoji itself, or a custom emoji's id. */
export const reactionKey = (emoji: Reaction['emoji']): string => (typeof emoji === 'string' ? emoji : emoji.id);

/** A poll as a message carries it (issue 50): the counts live until it ends, frozen after. */
export interface PollRecord {
  question: string;
  answers: { answer_id: string; text: string; emoji: string | null }[];
  allow_multiselect: boolean;
  expires_at: string;
  /** Expired, or ended early by its author: `results` no longer move. */
  ended: boolean;
  results: PollResult[];
}
export interface PollResult {
  answer_id: string;
  count: number;
}

/** A row of `polls` (schema.sql). */
export interface PollRow {
  question: string;
  answers: string;
  allow_multiselect: number;
  expires_at: string;
  ended_at: string | null;
  results: string | null;
}

/** A poll as records show it: the frozen results once ended, else `counts` (answer id -> votes). */
export function toPoll(row: PollRow, counts: ReadonlyMap<string, number>): PollRecord {
  const answers = JSON.parse(row.answers) as PollRecord['answers'];
  return {
    question: row.question,
    answers,
    allow_multiselect: row.allow_multiselect === 1,
    expires_at: row.expires_at,
    ended: row.ended_at !== null,
    results:
      row.results !== null ? (JSON.parse(row.results) as PollResult[]) : answers.map((a) => ({ answer_id: a.answer_id, count: counts.get(a.answer_id) ?? 0 })),
  };
}

/** The message record: REST responses and WebSocket events alike. */
export interface MessageRecord {
  id: string;
  server_id?: string;
  channel_id?: string;
  conversation_id?: string;
  author_id: string;
  author: UserRef;
  content: string;
  /** The users the content mentions (`@name`), and whether it mentions everyone. */
  mentions: string[];
  mention_everyone: boolean;
  /** The mentionable roles the content mentions (`@rolename`): each holder counts it as a mention. */
  mention_roles: string[];
  reply_to: string | null;
  /** null when there is no reply, or when the replied message was deleted. */
  reply_preview: { id: string; author: UserRef; content: string } | null;
  /** Pinned to its channel or conversation. */
  pinned: boolean;
  attachments: Attachment[];
  reactions: Reaction[];
  created_at: string;
  edited_at: string | null;
  /** A webhook's message (docs/api.md "Webhooks"): the webhook, gone or not. Absent otherwise. */
  webhook_id?: string;
  /** The avatar link a webhook gave for this message: shown as a link, never fetched. */
  webhook_avatar_url?: string;
  /** The same image through our media proxy (src/core/media-url.ts): what the browser shows. */
  webhook_avatar_proxy_url?: string;
  /** Rich cards (src/core/embed.ts): from webhooks and bots, and link previews. Absent when none. */
  embeds?: Embed[];
  /** A message a thread was started from (in the thread's parent): the thread, as its starter shows it. Absent otherwise. */
  thread?: ThreadSummary;
  /** A poll (issue 50). Absent otherwise. */
  poll?: PollRecord;
  /** Stickers (issue 50), at most 3, drawn as images; `available: false` once deleted (shown by name). Absent when none. */
  stickers?: MessageSticker[];
}

export interface MessageSticker {
  id: string;
  name: string;
  animated: boolean;
  url: string;
  available: boolean;
}

/** A thread as the message it was started from shows it: "N replies · last reply …". */
export interface ThreadSummary {
  id: string;
  name: string;
  message_count: number;
  last_message_at: string | null;
  archived: boolean;
  locked: boolean;
}

export interface MessageRow {
  seq: number;
  id: string;
  channel_id: string | null;
  conversation_id: string | null;
  author_id: string;
  /** The author as the profiles view shows them. */
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  content: string;
  reply_to: string | null;
  created_at: string;
  edited_at: string | null;
  /** A JSON array of user ids, or null. */
  mentions: string | null;
  mention_everyone: number;
  /** A JSON array of role ids, or null. */
  mention_roles: string | null;
  pinned_at: string | null;
  /** The author's kind (users.bot): 0 a person, 1 a bot, 2 a webhook. */
  bot: number;
  webhook_id: string | null;
  /** The name and avatar link a webhook gave for this message. */
  author_name: string | null;
  author_avatar: string | null;
  /** A JSON array of embeds, or null. */
  embeds: string | null;
}

/** The replied-to message, as much as a reply preview shows. */
export interface ReplyRow {
  seq: number;
  id: string;
  author_id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  bot: number;
  /** The name a webhook gave for the replied message. */
  author_name: string | null;
  content: string;
}

/** Where an attachment downloads (src/api/uploads.ts): for whoever may read its message. */
export const attachmentUrl = (id: string) => `/uploads/${id}`;

export const toAttachment = (a: Omit<Attachment, 'url'>): Attachment => ({
  id: a.id,
  name: a.name,
  url: attachmentUrl(a.id),
  content_type: a.content_type,
  size: a.size,
  preview_kind: a.preview_kind,
});

/** The one place a message record is shaped, for pages, single reads and new messages alike. */
export function toRecord(row: MessageRow, container: Container, attachments: Attachment[], reactions: Reaction[], reply: ReplyRow | undefined): MessageRecord {
  const record: MessageRecord = {
    id: row.id,
    author_id: row.author_id,
    author: userRef({ ...row, user_id: row.author_id, display_name: row.author_name ?? row.display_name }),
    content: row.content,
    mentions: row.mentions ? (JSON.parse(row.mentions) as string[]) : [],
    mention_everyone: row.mention_everyone === 1,
    mention_roles: row.mention_roles ? (JSON.parse(row.mention_roles) as string[]) : [],
    reply_to: row.reply_to,
    reply_preview: reply
      ? {
          id: reply.id,
          author: userRef({ ...reply, user_id: reply.author_id, display_name: reply.author_name ?? reply.display_name }),
          content: [...reply.content].slice(0, REPLY_PREVIEW_CHARS).join(''),
        }
      : null,
    pinned: row.pinned_at !== null,
    attachments,
    reactions,
    created_at: row.created_at,
    edited_at: row.edited_at,
  };
  if (row.webhook_id !== null) record.webhook_id = row.webhook_id;
  if (row.author_avatar !== null) record.webhook_avatar_url = row.author_avatar;
  if (row.embeds !== null) record.embeds = JSON.parse(row.embeds) as Embed[];
  return withContainer(record, row, container);
}

/**
 * Whether a reader sees what a reply answers, by their history floor (src/rules/channel-access.ts
 * historyFloor; 0 with read_history and in conversations): below a floor, only a replied message
 * sent after it, and still there (`replySeq` null: deleted, its place unknown). Otherwise the
 * reply names neither the message nor its words (`withoutReply`).
 */
export const showsReplyTo = (floor: number, replySeq: number | null): boolean => floor === 0 || (replySeq !== null && replySeq > floor);

/** A record as a reader gets it who may not see what it replies to: no reply at all. */
export const withoutReply = (record: MessageRecord): MessageRecord => ({ ...record, reply_to: null, reply_preview: null });

/** Where a container is, as records and events name it. */
export type Place = { server_id: string; channel_id: string } | { conversation_id: string };

export const placeOf = (container: Container): Place =>
  container.kind === 'channel' ? { server_id: container.serverId, channel_id: container.id } : { conversation_id: container.id };

function withContainer(record: MessageRecord, row: MessageRow, container: Container): MessageRecord {
  const ids =
    container.kind === 'channel' ? { id: row.id, server_id: container.serverId, channel_id: container.id } : { id: row.id, conversation_id: container.id };
  // Object.assign, not `{ ...ids, ...record }`: V8 builds a literal of two spreads on a slow
  // path, about 8 µs a message, half the time of a page of history (bench/history.ts).
  // Same keys in the same order: id comes first either way.
  return Object.assign(ids, record);
}
