import { authenticate } from '../auth';
import { resolveEmoji } from '../emoji';
import { mediaType, readJson } from '../http/body';
import { badRequest, notFound } from '../http/errors';
import { created, json, noContent } from '../http/respond';
import { MAX_CONTENT_CHARS, placeOf } from '../message-record';
import type { MessageInput } from '../message-store';
import type { Services } from '../services';
import { type RestrictedAction, assertAllowed } from '../standing';
import type { Body, Container, Ctx, Route } from '../types';
import type { UploadStore } from '../upload-store';
import { limitParam, text, uuid, uuidParam } from '../validate';

type Deps = Pick<Services, 'db' | 'clock' | 'perms' | 'limits' | 'messages' | 'uploads' | 'sessions' | 'users' | 'hub' | 'readStates'>;

/** Typing calls closer together than this are cheap no-ops: one event per burst of keys. */
export const TYPING_REPEAT_MS = 3_000;

/**
 * Messages, one model for three scopes: server channels, the legacy server messages (mapped
 * onto the server's first channel) and conversations. The scope decides who may see and
 * moderate (src/permissions.ts) and which standing restriction applies to sending.
 */
export function messageRoutes(deps: Deps): Route[] {
  const typing = new Map<string, number>();
  const channel = messageHandlers(deps, channelScope(deps), typing);
  const legacy = messageHandlers(deps, legacyScope(deps), typing);
  const dm = messageHandlers(deps, conversationScope(deps), typing);
  const CH = '/api/servers/:server_id/channels/:channel_id';
  const C = `${CH}/messages`;
  const L = '/api/servers/:server_id/messages';
  const DC = '/api/conversations/:conversation_id';
  const D = `${DC}/messages`;
  return [
    { method: 'PUT', path: `${CH}/read`, auth: 'user', body: 'json', handler: channel.markRead },
    { method: 'POST', path: `${CH}/typing`, auth: 'user', body: 'none', handler: channel.startTyping },
    { method: 'PUT', path: `${DC}/read`, auth: 'user', body: 'json', handler: dm.markRead },
    { method: 'POST', path: `${DC}/typing`, auth: 'user', body: 'none', handler: dm.startTyping },
    { method: 'GET', path: C, auth: 'user', body: 'none', handler: channel.listMessages },
    { method: 'POST', path: C, auth: 'user', body: 'message', handler: channel.sendMessage },
    { method: 'PUT', path: `${C}/:message_id`, auth: 'user', body: 'json', handler: channel.editMessage },
    { method: 'DELETE', path: `${C}/:message_id`, auth: 'user', body: 'none', handler: channel.deleteMessage },
    { method: 'PUT', path: `${C}/:message_id/reactions`, auth: 'user', body: 'json', handler: channel.addReaction },
    { method: 'DELETE', path: `${C}/:message_id/reactions`, auth: 'user', body: 'json', handler: channel.removeReaction },
    { method: 'GET', path: L, auth: 'user', body: 'none', handler: legacy.listMessages },
    { method: 'POST', path: L, auth: 'user', body: 'message', handler: legacy.sendMessage },
    { method: 'GET', path: D, auth: 'user', body: 'none', handler: dm.listMessages },
    { method: 'POST', path: D, auth: 'user', body: 'message', handler: dm.sendMessage },
    { method: 'PUT', path: `${D}/:message_id`, auth: 'user', body: 'json', handler: dm.editMessage },
    { method: 'DELETE', path: `${D}/:message_id`, auth: 'user', body: 'none', handler: dm.deleteMessage },
    { method: 'PUT', path: `${D}/:message_id/reactions`, auth: 'user', body: 'json', handler: dm.addReaction },
    { method: 'DELETE', path: `${D}/:message_id/reactions`, auth: 'user', body: 'json', handler: dm.removeReaction },
  ];
}

/** How a family of message routes finds its container. */
interface MessageScope {
  /** Resolves and authorizes the container (404 for outsiders); canModerate: may delete others' messages. */
  resolve(ctx: Ctx): { container: Container; canModerate: boolean };
  /** The standing restriction on sending here. */
  sendAction: RestrictedAction;
}

function channelScope({ perms }: Deps): MessageScope {
  return {
    sendAction: 'send_message',
    resolve: (ctx) => {
      const { container, rank } = perms.channelAccess(ctx.user, ctx.params.channel_id, ctx.params.server_id);
      return { container, canModerate: rank !== 'member' };
    },
  };
}

function legacyScope({ db, perms }: Deps): MessageScope {
  const firstChannel = db.prepare<[string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? ORDER BY position, created_at LIMIT 1',
  );
  return {
    sendAction: 'send_message',
    resolve: (ctx) => {
      const rank = perms.serverAccess(ctx.user, ctx.params.server_id);
      const channel = firstChannel.get(ctx.params.server_id);
      if (!channel) throw notFound('this server has no channels');
      return { container: { kind: 'channel', id: channel.id, serverId: ctx.params.server_id }, canModerate: rank !== 'member' };
    },
  };
}

/** Only members reach a conversation (404 otherwise); only authors delete: there is no moderator. */
function conversationScope({ perms }: Deps): MessageScope {
  return {
    sendAction: 'send_private_message',
    resolve: (ctx) => ({ container: perms.conversationAccess(ctx.user, ctx.params.conversation_id), canModerate: false }),
  };
}

function messageHandlers(deps: Deps, scope: MessageScope, typing: Map<string, number>) {
  const { clock, limits, messages, uploads, sessions, users, hub, readStates } = deps;
  /** @everyone is for the owner and full server administrators, in server channels. */
  const rightsOf = (resolved: { container: Container; canModerate: boolean }) => ({
    mayMentionEveryone: resolved.container.kind === 'channel' && resolved.canModerate,
  });
  return { listMessages, sendMessage, editMessage, deleteMessage, addReaction, removeReaction, markRead, startTyping };

  /**
   * Newest first, `limit` (default 50, max 100) at a time; `before=<id>` pages back, `after=<id>`
   * catches up (oldest first); ids from another container are 400.
   */
  function listMessages(ctx: Ctx) {
    const { container } = scope.resolve(ctx);
    const paging = { before: uuidParam(ctx.query, 'before'), after: uuidParam(ctx.query, 'after'), limit: limitParam(ctx.query) };
    return json(messages.list(container, ctx.user.id, paging));
  }

  /**
   * 201 message from JSON or multipart; access, standing and rate limit are checked before a
   * byte of an upload is read, and again once it is in (its files are discarded if refused).
   */
  async function sendMessage(ctx: Ctx) {
    const resolved = scope.resolve(ctx);
    assertAllowed(ctx.user, scope.sendAction);
    limits.messagesPerUser.take(ctx.user.id, 'messages');
    const multipart = mediaType(ctx.req) === 'multipart/form-data';
    const input = await readMessageInput(ctx, uploads);
    try {
      if (!multipart) return created(messages.create(resolved.container, ctx.user, input, rightsOf(resolved)));
      // An upload may stream for minutes: a logout, suspension, restriction or removal that
      // landed meanwhile applies to it (401, 403, 404) as it would to a new request.
      const { user } = authenticate({ sessions, users }, ctx.req, 'user');
      const fresh = scope.resolve({ ...ctx, user: user! });
      assertAllowed(user!, scope.sendAction);
      return created(messages.create(fresh.container, user!, input, rightsOf(fresh)));
    } catch (err) {
      uploads.discard(input.files);
      throw err;
    }
  }

  /** Author only; returns the updated message; a standing that may not send here may not edit either. */
  function editMessage(ctx: Ctx) {
    const resolved = scope.resolve(ctx);
    assertAllowed(ctx.user, scope.sendAction);
    const { content } = messageFields(ctx.body);
    return json(messages.edit(resolved.container, ctx.params.message_id, ctx.user, content, rightsOf(resolved)));
  }

  /** The author, or a moderator of the container; 204. */
  function deleteMessage(ctx: Ctx) {
    const { container, canModerate } = scope.resolve(ctx);
    messages.remove(container, ctx.params.message_id, ctx.user, canModerate);
    return noContent();
  }

  /** Adds the caller's reaction (idempotent); returns the updated message. */
  function addReaction(ctx: Ctx) {
    return react(ctx, true);
  }

  /** Removes the caller's reaction (idempotent); returns the updated message. */
  function removeReaction(ctx: Ctx) {
    return react(ctx, false);
  }

  /**
   * The caller has read up to message_id: forward only (an older id changes nothing), 400 for a
   * message of another container; 200 the container's read state; their other streams get `read`.
   */
  function markRead(ctx: Ctx) {
    const { container } = scope.resolve(ctx);
    const messageId = uuid(ctx.body, 'message_id');
    const moved = readStates.markRead(ctx.user.id, container, messageId);
    const state = readStates.of(ctx.user.id, container);
    if (moved) hub.toUsers([ctx.user.id], { payload: { event: 'read', ...placeOf(container), ...state } });
    return json({ ...placeOf(container), ...state });
  }

  /**
   * 204; a `typing` event reaches the other members' user streams, at most once per
   * TYPING_REPEAT_MS per user and room; only those who may send here may type.
   */
  function startTyping(ctx: Ctx) {
    const { container } = scope.resolve(ctx);
    assertAllowed(ctx.user, scope.sendAction);
    const key = `${ctx.user.id}:${container.id}`;
    const now = clock.now();
    if (now - (typing.get(key) ?? -Infinity) < TYPING_REPEAT_MS) return noContent();
    typing.set(key, now);
    // Entries older than the window carry nothing: they are dropped as the map grows.
    if (typing.size > 10_000) for (const [k, at] of typing) if (now - at >= TYPING_REPEAT_MS) typing.delete(k);
    const event = { event: 'typing', user_id: ctx.user.id, username: ctx.user.username, ...placeOf(container) };
    hub.toContainer(container, { payload: event }, ctx.user.id);
    return noContent();
  }

  function react(ctx: Ctx, add: boolean) {
    const { container } = scope.resolve(ctx);
    const emoji = readEmoji(ctx.body);
    limits.reactionsPerUser.take(ctx.user.id, 'reactions');
    return json(messages.react(container, ctx.params.message_id, ctx.user, emoji, add));
  }
}

/** Reads a message body: JSON {content, reply_to?} or multipart with files streamed to disk. */
async function readMessageInput(ctx: Ctx, uploads: UploadStore): Promise<MessageInput> {
  if (mediaType(ctx.req) === 'multipart/form-data') {
    const { fields, files } = await uploads.receive(ctx.req);
    try {
      return { ...messageFields(fields), files };
    } catch (err) {
      uploads.discard(files);
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
  const emoji = resolveEmoji(body.emoji);
  if (emoji === null) throw badRequest('emoji must be a single emoji, or the :shortcode: of one');
  return emoji;
}
