import crypto from 'node:crypto';
import type { App, Ctx, Route } from './app';
import type { User } from './auth';
import { iso } from './clock';
import { type Body, mediaType, readJson } from './http/body';
import { badRequest, forbidden, notFound } from './http/errors';
import { created, json, noContent } from './http/respond';
import { type RestrictedAction, assertAllowed } from './standing';
import type { ReceivedFile } from './uploads';
import { limitParam, text, uuid, uuidParam } from './validate';

/** Where a message lives. Channel and conversation messages share one model and one serializer. */
export type Container = { kind: 'channel'; id: string; serverId: string } | { kind: 'conversation'; id: string };

export const MAX_CONTENT_CHARS = 4000;
export const REPLY_PREVIEW_CHARS = 100;
export const MAX_EMOJI_UTF16 = 32;

export interface Attachment {
  id: string;
  name: string;
  url: string;
  content_type: string;
  size: number;
  preview_kind: 'code' | 'image' | 'audio' | 'video';
}

export interface Reaction {
  emoji: string;
  count: number;
  reacted: boolean;
}

/** The message record: REST responses and WebSocket events alike. */
export interface MessageRecord {
  id: string;
  server_id?: string;
  channel_id?: string;
  conversation_id?: string;
  author_id: string;
  author: { user_id: string; username: string };
  content: string;
  reply_to: string | null;
  /** null when there is no reply, or when the replied message was deleted. */
  reply_preview: { id: string; author: { user_id: string; username: string }; content: string } | null;
  attachments: Attachment[];
  reactions: Reaction[];
  created_at: string;
  edited_at: string | null;
}

// One emoji, built the way Unicode builds them (UTS #51): a pictograph with an optional
// variation selector or skin tone and optional tag characters (subdivision flags), possibly
// joined to more of the same by ZWJ; or a flag (two regional indicators); or a keycap.
// Anything else, such as text, two emoji, or an emoji under stacked combining marks, is not one.
const PICTOGRAPH = String.raw`\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:[\u{E0020}-\u{E007E}]+\u{E007F})?`;
const ONE_EMOJI = new RegExp(
  String.raw`^(?:\p{Regional_Indicator}{2}|[0-9#*]\uFE0F?\u20E3|${PICTOGRAPH}(?:\u200D${PICTOGRAPH})*)$`,
  'u',
);

// A named emoji as chat clients write them (`:thumbsup:`, `:+1:`), for clients that send names.
const SHORTCODE = /^:[a-z0-9_+-]{1,30}:$/;

/**
 * One emoji (flags, keycaps and ZWJ sequences included) or one `:shortcode:`, at most
 * MAX_EMOJI_UTF16 code units: never free text.
 */
export function isEmoji(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_EMOJI_UTF16 && (ONE_EMOJI.test(value) || SHORTCODE.test(value));
}

interface MessageRow {
  seq: number;
  id: string;
  channel_id: string | null;
  conversation_id: string | null;
  author_id: string;
  username: string;
  content: string;
  reply_to: string | null;
  created_at: string;
  edited_at: string | null;
}

export interface MessageInput {
  content: string;
  replyTo: string | null;
  files: ReceivedFile[];
}

export interface Paging {
  before: string | null;
  after: string | null;
  limit: number;
}

export interface MessageStore {
  /** Newest first; with `after`, the messages after that one, oldest first. */
  list(container: Container, viewerId: string, paging: Paging): MessageRecord[];
  get(container: Container, messageId: string, viewerId: string): MessageRecord;
  create(container: Container, author: User, input: MessageInput): MessageRecord;
  edit(container: Container, messageId: string, editor: User, content: string): MessageRecord;
  remove(container: Container, messageId: string, remover: User, canModerate: boolean): void;
  react(container: Container, messageId: string, user: User, emoji: string, add: boolean): MessageRecord;
  /** emoji -> users who reacted with it, for per-recipient `reacted` in live events. */
  reactors(messageId: string): Map<string, Set<string>>;
  /** The container a message belongs to (reports, downloads); null if it does not exist. */
  locate(messageId: string): Container | null;
}

const COLUMNS = `m.seq, m.id, m.channel_id, m.conversation_id, m.author_id, u.username, m.content, m.reply_to,
  m.created_at, m.edited_at`;

export function createMessageStore(app: App): MessageStore {
  const { db } = app;

  // Channel and conversation messages differ only in the column naming the container.
  const byContainer = (column: 'channel_id' | 'conversation_id') => ({
    newest: db.prepare<[string, number], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN users u ON u.id = m.author_id
        WHERE m.${column} = ? ORDER BY m.seq DESC LIMIT ?`,
    ),
    before: db.prepare<[string, number, number], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN users u ON u.id = m.author_id
        WHERE m.${column} = ? AND m.seq < ? ORDER BY m.seq DESC LIMIT ?`,
    ),
    after: db.prepare<[string, number, number], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN users u ON u.id = m.author_id
        WHERE m.${column} = ? AND m.seq > ? ORDER BY m.seq ASC LIMIT ?`,
    ),
    one: db.prepare<[string, string], MessageRow>(
      `SELECT ${COLUMNS} FROM messages m JOIN users u ON u.id = m.author_id WHERE m.id = ? AND m.${column} = ?`,
    ),
  });
  const queries = { channel: byContainer('channel_id'), conversation: byContainer('conversation_id') };

  // RETURNING: the new message's record is built from the rows as committed, without reading them back.
  const insertMessage = db.prepare<[string, string | null, string | null, string, string, string | null, string], Omit<MessageRow, 'username'>>(
    `INSERT INTO messages (id, channel_id, conversation_id, author_id, content, reply_to, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     RETURNING seq, id, channel_id, conversation_id, author_id, content, reply_to, created_at, edited_at`,
  );
  const insertAttachment = db.prepare<[string, number, string, string, number, string, number, string], Omit<Attachment, 'url'>>(
    `INSERT INTO attachments (id, message_seq, name, content_type, size, preview_kind, position, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     RETURNING id, name, content_type, size, preview_kind`,
  );
  const insertNew = (container: Container, author: User, content: string, replyTo: string | null, files: ReceivedFile[], now: string) => {
    const reply = replyTo ? rowIn(container, replyTo, 'reply_to') : undefined;
    const inserted = insertMessage.get(
      timeOrderedUuid(app.clock.now()),
      container.kind === 'channel' ? container.id : null,
      container.kind === 'conversation' ? container.id : null,
      author.id,
      content,
      replyTo,
      now,
    )!;
    const attachments = files.map((f, position) =>
      toAttachment(insertAttachment.get(f.id, inserted.seq, f.name, f.contentType, f.size, f.previewKind, position, now)!),
    );
    return { row: { ...inserted, username: author.username }, reply, attachments };
  };
  // A message with attachments is several rows: one transaction (built once, like the
  // statements). Without, it is one INSERT, which SQLite makes atomic by itself; BEGIN and
  // COMMIT around it cost a sixth of a message post (bench/post-message.ts).
  const insertNewWithFiles = db.transaction(insertNew);
  const updateContent = db.prepare('UPDATE messages SET content = ?, edited_at = ? WHERE seq = ?');
  const deleteMessage = db.prepare('DELETE FROM messages WHERE seq = ?');
  const attachmentIdsOf = db.prepare<[number], { id: string }>('SELECT id FROM attachments WHERE message_seq = ?');
  const insertReaction = db.prepare(
    'INSERT OR IGNORE INTO reactions (message_seq, emoji, user_id, created_at) VALUES (?, ?, ?, ?)',
  );
  const deleteReaction = db.prepare('DELETE FROM reactions WHERE message_seq = ? AND emoji = ? AND user_id = ?');
  const reactorRows = db.prepare<[string], { emoji: string; user_id: string }>(
    `SELECT r.emoji, r.user_id FROM reactions r JOIN messages m ON m.seq = r.message_seq WHERE m.id = ?`,
  );
  const locateRow = db.prepare<[string], { channel_id: string | null; conversation_id: string | null; server_id: string | null }>(
    `SELECT m.channel_id, m.conversation_id, c.server_id
       FROM messages m LEFT JOIN channels c ON c.id = m.channel_id WHERE m.id = ?`,
  );

  // A page is hydrated with three queries whatever its size (no N+1): reactions, attachments, replies.
  const reactionsOfPage = db.prepare<[string, string], { message_seq: number; emoji: string; count: number; mine: number }>(
    `SELECT message_seq, emoji, COUNT(*) AS count, MAX(user_id = ?) AS mine
       FROM reactions WHERE message_seq IN (SELECT value FROM json_each(?))
      GROUP BY message_seq, emoji ORDER BY message_seq, MIN(created_at), emoji`,
  );
  const attachmentsOfPage = db.prepare<[string], { message_seq: number } & Omit<Attachment, 'url'>>(
    `SELECT message_seq, id, name, content_type, size, preview_kind
       FROM attachments WHERE message_seq IN (SELECT value FROM json_each(?)) ORDER BY message_seq, position`,
  );
  const repliesOfPage = db.prepare<[string], { id: string; author_id: string; username: string; content: string }>(
    `SELECT m.id, m.author_id, u.username, m.content
       FROM messages m JOIN users u ON u.id = m.author_id WHERE m.id IN (SELECT value FROM json_each(?))`,
  );

  function hydrate(rows: MessageRow[], viewerId: string, container: Container): MessageRecord[] {
    if (rows.length === 0) return [];
    const seqs = JSON.stringify(rows.map((r) => r.seq));
    const reactions = new Map<number, Reaction[]>();
    for (const r of reactionsOfPage.all(viewerId, seqs)) {
      const list = reactions.get(r.message_seq) ?? [];
      list.push({ emoji: r.emoji, count: r.count, reacted: r.mine === 1 });
      reactions.set(r.message_seq, list);
    }
    const attachments = new Map<number, Attachment[]>();
    for (const { message_seq, ...a } of attachmentsOfPage.all(seqs)) {
      const list = attachments.get(message_seq) ?? [];
      list.push(toAttachment(a));
      attachments.set(message_seq, list);
    }
    const replyIds = rows.map((r) => r.reply_to).filter((id): id is string => id !== null);
    const replies = new Map(replyIds.length ? repliesOfPage.all(JSON.stringify(replyIds)).map((r) => [r.id, r]) : []);
    return rows.map((row) =>
      toRecord(row, container, attachments.get(row.seq) ?? [], reactions.get(row.seq) ?? [], row.reply_to ? replies.get(row.reply_to) : undefined),
    );
  }

  function findRow(container: Container, messageId: string): MessageRow {
    const row = queries[container.kind].one.get(messageId, container.id);
    if (!row) throw notFound('message not found');
    return row;
  }

  function rowIn(container: Container, messageId: string, what: string): MessageRow {
    const row = queries[container.kind].one.get(messageId, container.id);
    if (!row) throw badRequest(`${what} must name a message in this ${container.kind}`);
    return row;
  }
  const seqIn = (container: Container, messageId: string, what: string): number => rowIn(container, messageId, what).seq;

  const publish = (container: Container, payload: Record<string, unknown>, reactors?: Map<string, Set<string>>) =>
    app.hub.publish(container, { payload, reactors });

  const store: MessageStore = {
    list(container, viewerId, { before, after, limit }) {
      if (before && after) throw badRequest('use before or after, not both');
      const q = queries[container.kind];
      if (before) return hydrate(q.before.all(container.id, seqIn(container, before, 'before'), limit), viewerId, container);
      if (after) return hydrate(q.after.all(container.id, seqIn(container, after, 'after'), limit), viewerId, container);
      return hydrate(q.newest.all(container.id, limit), viewerId, container);
    },

    get(container, messageId, viewerId) {
      return hydrate([findRow(container, messageId)], viewerId, container)[0];
    },

    create(container, author, { content, replyTo, files }) {
      if (content.trim() === '' && files.length === 0) {
        throw badRequest('content must not be empty unless the message has attachments');
      }
      const write = files.length > 0 ? insertNewWithFiles : insertNew;
      const { row, reply, attachments } = write(container, author, content, replyTo, files, iso(app.clock.now()));
      // A new message has no reactions yet; everything else came back from the inserts.
      const record = toRecord(row, container, attachments, [], reply);
      publish(container, record as unknown as Record<string, unknown>);
      return record;
    },

    edit(container, messageId, editor, content) {
      const row = findRow(container, messageId);
      if (row.author_id !== editor.id) throw forbidden('only the author can edit a message');
      const current = store.get(container, messageId, editor.id);
      if (content.trim() === '' && current.attachments.length === 0) {
        throw badRequest('content must not be empty unless the message has attachments');
      }
      updateContent.run(content, iso(app.clock.now()), row.seq);
      const record = store.get(container, messageId, editor.id);
      publish(container, { event: 'edited', ...record }, store.reactors(messageId));
      return record;
    },

    remove(container, messageId, remover, canModerate) {
      const row = findRow(container, messageId);
      if (row.author_id !== remover.id && !canModerate) {
        throw forbidden(
          container.kind === 'channel'
            ? 'only the author or a full server administrator can delete a message'
            : 'only the author can delete a message',
        );
      }
      const fileIds = db.transaction(() => {
        const ids = attachmentIdsOf.all(row.seq).map((a) => a.id);
        deleteMessage.run(row.seq);
        return ids;
      })();
      // Files go after the commit: a failed delete never leaves a message pointing at nothing.
      app.uploads.deleteFiles(fileIds);
      publish(
        container,
        container.kind === 'channel'
          ? { event: 'deleted', id: messageId, server_id: container.serverId, channel_id: container.id }
          : { event: 'deleted', id: messageId, conversation_id: container.id },
      );
    },

    react(container, messageId, user, emoji, add) {
      const row = findRow(container, messageId);
      if (add) insertReaction.run(row.seq, emoji, user.id, iso(app.clock.now()));
      else deleteReaction.run(row.seq, emoji, user.id);
      const record = store.get(container, messageId, user.id);
      publish(container, { event: 'reaction', ...record }, store.reactors(messageId));
      return record;
    },

    reactors(messageId) {
      const map = new Map<string, Set<string>>();
      for (const { emoji, user_id } of reactorRows.all(messageId)) {
        const set = map.get(emoji) ?? new Set<string>();
        set.add(user_id);
        map.set(emoji, set);
      }
      return map;
    },

    locate(messageId) {
      const row = locateRow.get(messageId);
      if (!row) return null;
      return row.channel_id
        ? { kind: 'channel', id: row.channel_id, serverId: row.server_id as string }
        : { kind: 'conversation', id: row.conversation_id as string };
    },
  };
  return store;
}

/**
 * A UUID version 7 (RFC 9562): 48 bits of milliseconds, then random bits. Message ids grow
 * with time, so inserting one appends to the id index instead of writing to a random page of
 * it, which keeps posting fast however long a history gets. Message ids are not secrets
 * (access is checked by membership), so telling their time is fine.
 */
export function timeOrderedUuid(nowMs: number): string {
  // randomUUID draws from a cached entropy pool; randomBytes(16) costs a system call each time.
  const random = crypto.randomUUID(); // xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx: keep its variant and tail
  const time = nowMs.toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15)}`;
}

const toAttachment = (a: Omit<Attachment, 'url'>): Attachment => ({
  id: a.id,
  name: a.name,
  url: `/uploads/${a.id}`,
  content_type: a.content_type,
  size: a.size,
  preview_kind: a.preview_kind,
});

/** The one place a message record is shaped, for pages, single reads and new messages alike. */
function toRecord(
  row: MessageRow,
  container: Container,
  attachments: Attachment[],
  reactions: Reaction[],
  reply: { id: string; author_id: string; username: string; content: string } | undefined,
): MessageRecord {
  const record: MessageRecord = {
    id: row.id,
    author_id: row.author_id,
    author: { user_id: row.author_id, username: row.username },
    content: row.content,
    reply_to: row.reply_to,
    reply_preview: reply
      ? {
          id: reply.id,
          author: { user_id: reply.author_id, username: reply.username },
          content: [...reply.content].slice(0, REPLY_PREVIEW_CHARS).join(''),
        }
      : null,
    attachments,
    reactions,
    created_at: row.created_at,
    edited_at: row.edited_at,
  };
  return withContainer(record, row, container);
}

function withContainer(record: MessageRecord, row: MessageRow, container: Container): MessageRecord {
  const ids =
    container.kind === 'channel'
      ? { id: row.id, server_id: container.serverId, channel_id: container.id }
      : { id: row.id, conversation_id: container.id };
  // Object.assign, not `{ ...ids, ...record }`: V8 builds a literal of two spreads on a slow
  // path, about 8 µs a message, half the time of a page of history (bench/history.ts).
  // Same keys in the same order: id comes first either way.
  return Object.assign(ids, record);
}

/**
 * How a family of message routes finds its container. Channel messages, the legacy server
 * messages and conversation messages are the same handlers over different scopes.
 */
export interface MessageScope {
  /** Path of the collection, e.g. /api/conversations/:conversation_id/messages */
  base: string;
  /** Resolves and authorizes the container (404 for outsiders); canModerate: may delete others' messages. */
  resolve(ctx: Ctx): { container: Container; canModerate: boolean };
  /** The standing restriction on sending here. */
  sendAction: RestrictedAction;
  /** Legacy server messages offer only list and create. */
  only?: ('list' | 'create')[];
}

/** Reads a message body: JSON {content, reply_to?} or multipart with files streamed to disk. */
async function readMessageInput(ctx: Ctx): Promise<MessageInput> {
  if (mediaType(ctx.req) === 'multipart/form-data') {
    const { fields, files } = await ctx.app.uploads.receive(ctx.req);
    try {
      return { ...messageFields(fields), files };
    } catch (err) {
      ctx.app.uploads.discard(files);
      throw err;
    }
  }
  return { ...messageFields(await readJson(ctx.req)), files: [] };
}

function messageFields(body: Body): Omit<MessageInput, 'files'> {
  if (body.content === undefined) body.content = '';
  const content = text(body, 'content', { min: 0, max: MAX_CONTENT_CHARS, trim: false, multiline: true });
  const replyTo = body.reply_to === undefined || body.reply_to === null || body.reply_to === '' ? null : uuid(body, 'reply_to');
  return { content, replyTo };
}

function readEmoji(body: Body): string {
  if (!isEmoji(body.emoji)) throw badRequest('emoji must be a single emoji');
  return body.emoji;
}

export function containerMessageRoutes(app: App, scope: MessageScope): Route[] {
  const ops = scope.only ?? ['list', 'create', 'edit', 'delete', 'react'];
  const item = `${scope.base}/:message_id`;
  const routes: Route[] = [];
  if (ops.includes('list')) {
    routes.push({
      // GET {base}?before=&after=&limit=
      // - Newest first, `limit` (default 50, max 100) at a time; `before=<id>` pages back,
      //   `after=<id>` catches up (oldest first). Ids from another container are 400.
      method: 'GET',
      path: scope.base,
      handler: (ctx) => {
        const { container } = scope.resolve(ctx);
        const paging = { before: uuidParam(ctx.query, 'before'), after: uuidParam(ctx.query, 'after'), limit: limitParam(ctx.query) };
        return json(app.messages.list(container, ctx.user.id, paging));
      },
    });
  }
  if (ops.includes('create')) {
    routes.push({
      // POST {base}
      // - JSON {content, reply_to?} or multipart (content, reply_to, attachments files): 201 message.
      // - Access, standing and rate limit are checked before a byte of an upload is read.
      method: 'POST',
      path: scope.base,
      body: 'message',
      handler: async (ctx) => {
        const { container } = scope.resolve(ctx);
        assertAllowed(ctx.user, scope.sendAction);
        app.limits.messagesPerUser.take(ctx.user.id, 'messages');
        const input = await readMessageInput(ctx);
        try {
          return created(app.messages.create(container, ctx.user, input));
        } catch (err) {
          app.uploads.discard(input.files);
          throw err;
        }
      },
    });
  }
  if (ops.includes('edit')) {
    routes.push({
      // PUT {base}/{message_id} {content}: author only; returns the updated message.
      // - A standing that may not send here may not edit either: an edit puts new words out.
      method: 'PUT',
      path: item,
      body: 'json',
      handler: (ctx) => {
        const { container } = scope.resolve(ctx);
        assertAllowed(ctx.user, scope.sendAction);
        const { content } = messageFields(ctx.body);
        return json(app.messages.edit(container, ctx.params.message_id, ctx.user, content));
      },
    });
  }
  if (ops.includes('delete')) {
    routes.push({
      // DELETE {base}/{message_id}: the author, or a moderator of the container; 204.
      method: 'DELETE',
      path: item,
      handler: (ctx) => {
        const { container, canModerate } = scope.resolve(ctx);
        app.messages.remove(container, ctx.params.message_id, ctx.user, canModerate);
        return noContent();
      },
    });
  }
  if (ops.includes('react')) {
    for (const method of ['PUT', 'DELETE'] as const) {
      routes.push({
        // PUT|DELETE {base}/{message_id}/reactions {emoji}
        // - Adds or removes the caller's reaction (idempotent); returns the updated message.
        method,
        path: `${item}/reactions`,
        body: 'json',
        handler: (ctx) => {
          const { container } = scope.resolve(ctx);
          const emoji = readEmoji(ctx.body);
          return json(app.messages.react(container, ctx.params.message_id, ctx.user, emoji, method === 'PUT'));
        },
      });
    }
  }
  return routes;
}

/** Channel messages and the legacy server messages (mapped onto the server's first channel). */
export function messageRoutes(app: App): Route[] {
  const firstChannel = app.db.prepare<[string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? ORDER BY position, created_at LIMIT 1',
  );
  return [
    ...containerMessageRoutes(app, {
      base: '/api/servers/:server_id/channels/:channel_id/messages',
      sendAction: 'send_message',
      resolve: (ctx) => {
        const { container, rank } = app.perms.requireChannel(ctx.user, ctx.params.server_id, ctx.params.channel_id);
        return { container, canModerate: rank !== 'member' };
      },
    }),
    ...containerMessageRoutes(app, {
      base: '/api/servers/:server_id/messages',
      sendAction: 'send_message',
      only: ['list', 'create'],
      resolve: (ctx) => {
        const rank = app.perms.requireMember(ctx.user, ctx.params.server_id);
        const channel = firstChannel.get(ctx.params.server_id);
        if (!channel) throw notFound('this server has no channels');
        return { container: { kind: 'channel', id: channel.id, serverId: ctx.params.server_id }, canModerate: rank !== 'member' };
      },
    }),
  ];
}
