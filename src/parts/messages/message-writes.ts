import type { DB } from '../../core/db';
import { type Embed, embedText, isPreview } from '../../core/embed';
import type { Attachment, MessageRow } from '../../core/message-record';
import type { Container } from '../../core/types';
import type { Mentioned } from './mentions';
import type { ReceivedFile } from './upload-store';

/** A file of a message, stored under its id (an upload, or a file an import brought). */
export type StoredFile = Pick<ReceivedFile, 'id' | 'name' | 'contentType' | 'size'> & { previewKind: string };

/** A new message as it is written: what a writer leaves out is NULL (or none). */
export interface NewMessage {
  id: string;
  container: Container;
  authorId: string;
  content: string;
  replyTo: string | null;
  createdAt: string;
  /** An imported message edited where it came from. */
  editedAt?: string | null;
  mentions: Mentioned;
  /** Its attachments, in order, their files already under DATA_DIR (docs/internals.md "Files before rows"). */
  files: readonly StoredFile[];
  embeds?: Embed[];
  /** Posted through a webhook: which, and the name and avatar link it gave for this message. */
  webhook?: { id: string; name: string | null; avatarUrl: string | null };
  /** An imported message pinned where it came from. */
  pinned?: { at: string; by: string } | null;
}

/** The row as inserted (without its author's profile) and its attachments. */
export interface InsertedMessage {
  row: Omit<MessageRow, 'username' | 'display_name' | 'avatar_url' | 'bot'>;
  attachments: Omit<Attachment, 'url'>[];
}

/**
 * Every write of a `messages` row, and of the rows that hang on it (attachments, the rows that
 * count mentions, reactions): the store, the import worker and claims all write through these
 * functions, each on its own connection, so a column has one place to go.
 */
export interface MessageWrites {
  /** The message, its attachments and the mention rows of who it names (not its author). */
  insert(message: NewMessage): InsertedMessage;
  /** The same write, answering only the new seq: for a writer with no record to build (the import's million rows). */
  add(message: NewMessage): number;
  /**
   * New text and what it mentions. `editedAt`: when an edit wrote it; null for a rewrite that is
   * no edit (a claim renaming `@placeholder`), which leaves `edited_at` as it was. The rows that
   * count mentions are the caller's (an edit recounts them, a claim moves them).
   */
  setText(seq: number, content: string, mentions: Mentioned, editedAt: string | null): void;
  /** Keeps the text an edit replaces, as it was written then (the message's history). */
  keepVersion(seq: number, content: string, writtenAt: string): void;
  /** The rows that count a message's mentions, written again for what it names now (an edit). */
  recountMentions(seq: number, container: Container, authorId: string, mentions: Mentioned): void;
  /** Pins (when and by whom) or unpins (null). */
  setPinned(seq: number, pinned: { at: string; by: string } | null): void;
  setAuthor(seq: number, authorId: string): void;
  /** Every message of one author to another; how many. */
  moveAuthor(fromId: string, toId: string): number;
  /** Deletes a message (its attachments, reactions and mentions with it): the ids of its files, to remove after the commit. */
  remove(seq: number): string[];
  /** A reaction, once (a second one of the same person and emoji is nothing). */
  addReaction(seq: number, emoji: string, userId: string, at: string): void;
  /**
   * A message's cards from now (a webhook's edit of its own, previews found or removed), with what
   * search finds of them: its own cards' text, never a preview's (none: NULL); `suppressed` marks
   * its previews removed for good. The one statement sets `content` to itself, so the search
   * index (whose triggers fire on content) takes the new text at once: an index entry written
   * with other text than the row holds could not be deleted right later.
   */
  setEmbeds(seq: number, embeds: readonly Embed[], suppressed?: boolean): void;
  /** Text whose custom emoji now point at a server's own (an import's refresh): no edit, mentions as they were. */
  relink(seq: number, content: string): void;
  /** A message's reactions (named and counted) from one emoji key to another: an emoji an import brought later. */
  moveReactions(seq: number, from: string, to: string): void;
  /** The stickers a message carries, in order (issue 50). */
  addStickers(seq: number, stickerIds: readonly string[]): void;
  /**
   * A message's poll: its answers as JSON [{answer_id, text, emoji}]; `ended` with its frozen
   * results for a poll that is over (an import's).
   */
  addPoll(
    seq: number,
    poll: { question: string; answers: string; allowMultiselect: boolean; expiresAt: string; ended?: { at: string; results: string } },
  ): void;
}

export function createMessageWrites(db: DB): MessageWrites {
  // RETURNING: the new message's record is built from the row as written, without reading it back.
  type Columns = [
    string,
    string | null,
    string | null,
    string,
    string,
    string | null,
    string,
    string | null,
    string | null,
    number,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
    string | null,
  ];
  const INSERT_MESSAGE = `INSERT INTO messages (id, channel_id, conversation_id, author_id, content, reply_to, created_at, edited_at, mentions, mention_everyone, mention_roles,
                           pinned_at, pinned_by, webhook_id, author_name, author_avatar, embeds, embed_text)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  const insertMessage = db.prepare<Columns, InsertedMessage['row']>(
    `${INSERT_MESSAGE}
     RETURNING seq, id, channel_id, conversation_id, author_id, content, reply_to, created_at, edited_at, mentions, mention_everyone, mention_roles, pinned_at,
               webhook_id, author_name, author_avatar, embeds`,
  );
  const insertMessageSeq = db.prepare<Columns, number>(`${INSERT_MESSAGE} RETURNING seq`).pluck();
  const INSERT_ATTACHMENT = `INSERT INTO attachments (id, message_seq, name, content_type, size, preview_kind, position, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
  const insertAttachment = db.prepare<[string, number, string, string, number, string, number, string], InsertedMessage['attachments'][number]>(
    `${INSERT_ATTACHMENT} RETURNING id, name, content_type, size, preview_kind`,
  );
  const addAttachment = db.prepare(INSERT_ATTACHMENT);
  const insertMention = db.prepare('INSERT OR IGNORE INTO message_mentions (user_id, container_id, message_seq) VALUES (?, ?, ?)');
  const deleteMentions = db.prepare('DELETE FROM message_mentions WHERE message_seq = ?');
  /** The rows that let a user's mentions be counted; the author's own name is not one. */
  const countMentions = (seq: number, container: Container, authorId: string, mentions: Mentioned) => {
    for (const userId of mentions.userIds) if (userId !== authorId) insertMention.run(userId, container.id, seq);
  };
  const updateText = db.prepare(
    'UPDATE messages SET content = ?, edited_at = COALESCE(?, edited_at), mentions = ?, mention_everyone = ?, mention_roles = ? WHERE seq = ?',
  );
  const insertVersion = db.prepare('INSERT INTO message_edits (message_seq, content, written_at) VALUES (?, ?, ?)');
  const updateEmbeds = db.prepare('UPDATE messages SET embeds = ?, embed_text = ?, embeds_suppressed = ?, content = content WHERE seq = ?');
  const updatePinned = db.prepare('UPDATE messages SET pinned_at = ?, pinned_by = ? WHERE seq = ?');
  const updateAuthor = db.prepare('UPDATE messages SET author_id = ? WHERE seq = ?');
  const moveAuthorOf = db.prepare('UPDATE messages SET author_id = ? WHERE author_id = ?');
  const deleteMessage = db.prepare('DELETE FROM messages WHERE seq = ?');
  const attachmentIdsOf = db.prepare<[number], string>('SELECT id FROM attachments WHERE message_seq = ?').pluck();
  const insertReaction = db.prepare('INSERT OR IGNORE INTO reactions (message_seq, emoji, user_id, created_at) VALUES (?, ?, ?, ?)');
  const updateContent = db.prepare('UPDATE messages SET content = ? WHERE seq = ?');
  // OR IGNORE, then the rest deleted: someone who reacted with both keeps one reaction.
  const moveReactionRows = db.prepare('UPDATE OR IGNORE reactions SET emoji = ? WHERE message_seq = ? AND emoji = ?');
  const dropReactionRows = db.prepare('DELETE FROM reactions WHERE message_seq = ? AND emoji = ?');
  const moveExtras = db.prepare('UPDATE OR IGNORE reaction_extras SET emoji = ? WHERE message_seq = ? AND emoji = ?');
  const dropExtras = db.prepare('DELETE FROM reaction_extras WHERE message_seq = ? AND emoji = ?');
  const insertSticker = db.prepare('INSERT INTO message_stickers (message_seq, position, sticker_id) VALUES (?, ?, ?)');
  const insertPoll = db.prepare(
    'INSERT INTO polls (message_seq, question, answers, allow_multiselect, expires_at, ended_at, results) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );

  const idsJson = (ids: readonly string[]) => (ids.length ? JSON.stringify(ids) : null);
  const columns = (m: NewMessage): Columns => {
    const embeds = m.embeds?.length ? m.embeds : null;
    return [
      m.id,
      m.container.kind === 'channel' ? m.container.id : null,
      m.container.kind === 'conversation' ? m.container.id : null,
      m.authorId,
      m.content,
      m.replyTo,
      m.createdAt,
      m.editedAt ?? null,
      idsJson(m.mentions.userIds),
      m.mentions.everyone ? 1 : 0,
      idsJson(m.mentions.roleIds),
      m.pinned?.at ?? null,
      m.pinned?.by ?? null,
      m.webhook?.id ?? null,
      m.webhook?.name ?? null,
      m.webhook?.avatarUrl ?? null,
      embeds && JSON.stringify(embeds),
      // What search finds of the cards: written with them, never apart (docs/internals.md "A second writer").
      embeds && embedText(embeds),
    ];
  };

  return {
    insert(m) {
      const row = insertMessage.get(...columns(m))!;
      const attachments = m.files.map((f, position) =>
        insertAttachment.get(f.id, row.seq, f.name, f.contentType, f.size, f.previewKind, position, m.createdAt)!,
      );
      countMentions(row.seq, m.container, m.authorId, m.mentions);
      return { row, attachments };
    },

    add(m) {
      const seq = insertMessageSeq.get(...columns(m))!;
      m.files.forEach((f, position) => addAttachment.run(f.id, seq, f.name, f.contentType, f.size, f.previewKind, position, m.createdAt));
      countMentions(seq, m.container, m.authorId, m.mentions);
      return seq;
    },

    setText(seq, content, mentions, editedAt) {
      updateText.run(content, editedAt, idsJson(mentions.userIds), mentions.everyone ? 1 : 0, idsJson(mentions.roleIds), seq);
    },

    keepVersion: (seq, content, writtenAt) => void insertVersion.run(seq, content, writtenAt),

    setEmbeds(seq, embeds, suppressed = false) {
      const own = embeds.filter((e) => !isPreview(e));
      updateEmbeds.run(embeds.length ? JSON.stringify(embeds) : null, own.length ? embedText(own) : null, suppressed ? 1 : 0, seq);
    },

    recountMentions(seq, container, authorId, mentions) {
      deleteMentions.run(seq);
      countMentions(seq, container, authorId, mentions);
    },

    setPinned: (seq, pinned) => void updatePinned.run(pinned?.at ?? null, pinned?.by ?? null, seq),

    setAuthor: (seq, authorId) => void updateAuthor.run(authorId, seq),

    moveAuthor: (fromId, toId) => moveAuthorOf.run(toId, fromId).changes,

    remove(seq) {
      const fileIds = attachmentIdsOf.all(seq);
      deleteMessage.run(seq);
      return fileIds;
    },

    addReaction: (seq, emoji, userId, at) => void insertReaction.run(seq, emoji, userId, at),

    relink: (seq, content) => void updateContent.run(content, seq),

    moveReactions(seq, from, to) {
      moveReactionRows.run(to, seq, from);
      dropReactionRows.run(seq, from);
      moveExtras.run(to, seq, from);
      dropExtras.run(seq, from);
    },

    addStickers(seq, stickerIds) {
      stickerIds.forEach((id, i) => insertSticker.run(seq, i, id));
    },

    addPoll: (seq, poll) =>
      void insertPoll.run(seq, poll.question, poll.answers, poll.allowMultiselect ? 1 : 0, poll.expiresAt, poll.ended?.at ?? null, poll.ended?.results ?? null),
  };
}
