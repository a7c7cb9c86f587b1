import { authenticate } from '../parts/accounts/auth';
import { resolveEmoji } from '../core/emoji';
import { mediaType, readJson } from '../core/http/body';
import { HttpError, badRequest, forbidden, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import { MAX_CONTENT_CHARS, placeOf } from '../core/message-record';
import type { MessageInput } from '../parts/messages/message-store';
import { MAX_SLOWMODE_SECONDS } from './channels';
import { moderates, readsEditHistory } from '../rules/permissions';
import { ALL, type Flags, has } from '../rules/channel-permissions';
import type { Services } from '../parts/services';
import { type RestrictedAction, assertAllowed } from '../rules/standing';
import type { Body, Container, Ctx, Route } from '../core/types';
import type { UploadStore } from '../parts/messages/upload-store';
import { auditReason, limitParam, text, uuid, uuidParam } from '../core/validate';

type Deps = Pick<
  Services,
  'db' | 'clock' | 'perms' | 'limits' | 'messages' | 'uploads' | 'sessions' | 'users' | 'hub' | 'readStates' | 'directory' | 'audit'
>;

/** Typing calls closer together than this are cheap no-ops: one event per burst of keys. */
export const TYPING_REPEAT_MS = 3_000;

/**
 * Messages, one model for three scopes: server channels, the legacy server messages (mapped
 * onto the server's first channel) and conversations. The scope decides who may see and
 * moderate (src/rules/permissions.ts) and which standing restriction applies to sending.
 */
export function messageRoutes(deps: Deps): Route[] {
  // Shared by the three scopes: the legacy routes post into a channel too.
  const pace: Pace = { typing: new Map(), lastSent: new Map() };
  const channel = messageHandlers(deps, channelScope(deps), pace);
  const legacy = messageHandlers(deps, legacyScope(deps), pace);
  const dm = messageHandlers(deps, conversationScope(deps), pace);
  const CH = '/api/servers/:server_id/channels/:channel_id';
  const C = `${CH}/messages`;
  const L = '/api/servers/:server_id/messages';
  const DC = '/api/conversations/:conversation_id';
  const D = `${DC}/messages`;
  return [
    { method: 'PUT', path: `${CH}/read`, auth: 'user', body: 'json', handler: channel.markRead },
    { method: 'POST', path: `${CH}/typing`, auth: 'user', body: 'none', handler: channel.startTyping },
    { method: 'GET', path: `${CH}/pins`, auth: 'user', body: 'none', handler: channel.listPins },
    { method: 'PUT', path: `${CH}/pins/:message_id`, auth: 'user', body: 'none', handler: channel.pinMessage },
    { method: 'DELETE', path: `${CH}/pins/:message_id`, auth: 'user', body: 'none', handler: channel.unpinMessage },
    { method: 'GET', path: `${C}/:message_id/history`, auth: 'user', body: 'none', handler: channel.messageHistory },
    { method: 'PUT', path: `${DC}/read`, auth: 'user', body: 'json', handler: dm.markRead },
    { method: 'POST', path: `${DC}/typing`, auth: 'user', body: 'none', handler: dm.startTyping },
    { method: 'GET', path: `${DC}/pins`, auth: 'user', body: 'none', handler: dm.listPins },
    { method: 'PUT', path: `${DC}/pins/:message_id`, auth: 'user', body: 'none', handler: dm.pinMessage },
    { method: 'DELETE', path: `${DC}/pins/:message_id`, auth: 'user', body: 'none', handler: dm.unpinMessage },
    { method: 'GET', path: `${D}/:message_id/history`, auth: 'user', body: 'none', handler: dm.messageHistory },
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
  /**
   * Resolves and authorizes the container (404 for outsiders). canModerate: may delete others'
   * messages and pin (owners and full server administrators in a channel).
   */
  resolve(ctx: Ctx): Resolved;
  /** The standing restriction on sending here. */
  sendAction: RestrictedAction;
  /** Checks before anything is written here: a timeout in a server, a block in a DM (403). */
  guardWrite(ctx: Ctx, container: Container): void;
  /** Who may pin here. */
  mayPin(resolved: Resolved): boolean;
}

/** In-memory pacing: when each user last typed and last sent (user:container -> ms). */
interface Pace {
  typing: Map<string, number>;
  lastSent: Map<string, number>;
}

interface Resolved {
  container: Container;
  canModerate: boolean;
  /** What the caller may do here (src/rules/channel-permissions.ts; everything in a conversation). */
  flags: Flags;
}

/** In a server, a timed-out member may read but not write. */
const serverGuard =
  ({ perms }: Deps) =>
  (ctx: Ctx, container: Container) => {
    if (container.kind === 'channel') perms.requireNotTimedOut(ctx.user, container.serverId);
  };

function channelScope(deps: Deps): MessageScope {
  return {
    sendAction: 'send_message',
    resolve: (ctx) => {
      const { container, rank, flags } = deps.perms.channelAccess(ctx.user, ctx.params.channel_id, ctx.params.server_id);
      return { container, canModerate: moderates(rank), flags };
    },
    guardWrite: serverGuard(deps),
    mayPin: (resolved) => resolved.canModerate,
  };
}

function legacyScope(deps: Deps): MessageScope {
  const { db, perms } = deps;
  const firstChannel = db.prepare<[string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? ORDER BY position, created_at LIMIT 1',
  );
  return {
    sendAction: 'send_message',
    resolve: (ctx) => {
      perms.serverAccess(ctx.user, ctx.params.server_id);
      const channel = firstChannel.get(ctx.params.server_id);
      if (!channel) throw notFound('this server has no channels');
      // The server's first channel, with its rules: one hidden from the caller is 403 here (they know the server).
      try {
        const { container, rank, flags } = perms.channelAccess(ctx.user, channel.id, ctx.params.server_id);
        return { container, canModerate: moderates(rank), flags };
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) throw forbidden("you cannot see this server's first channel, where its messages are kept");
        throw err;
      }
    },
    guardWrite: serverGuard(deps),
    mayPin: (resolved) => resolved.canModerate,
  };
}

/**
 * Only members reach a conversation (404 otherwise); only authors delete: there is no
 * moderator; any member pins. A DM between two people where one blocked the other takes no
 * new words (403); its history stays readable.
 */
function conversationScope({ db, perms }: Deps): MessageScope {
  const dmPartner = db.prepare<[string, string], { user_id: string; deleted: number }>(
    `SELECT cm.user_id, u.deleted_at IS NOT NULL AS deleted
       FROM conversations c JOIN conversation_members cm ON cm.conversation_id = c.id JOIN users u ON u.id = cm.user_id
      WHERE c.id = ? AND c.kind = 'dm' AND cm.user_id <> ?`,
  );
  return {
    sendAction: 'send_private_message',
    resolve: (ctx) => ({ container: perms.conversationAccess(ctx.user, ctx.params.conversation_id), canModerate: false, flags: ALL }),
    guardWrite(ctx, container) {
      const partner = dmPartner.get(container.id, ctx.user.id);
      if (partner?.deleted) throw forbidden('this account was deleted: the conversation can be read, not written to');
      if (partner) perms.requireNotBlocked(ctx.user.id, partner.user_id, 'messages');
    },
    mayPin: () => true,
  };
}

function messageHandlers(deps: Deps, scope: MessageScope, { typing, lastSent }: Pace) {
  const { clock, perms, limits, messages, uploads, sessions, users, hub, readStates, audit, directory } = deps;
  /** @everyone and @role, in server channels, for who has mention_everyone there (the owner and full server administrators always). */
  const rightsOf = (resolved: Resolved) => ({
    mayMentionEveryone: resolved.container.kind === 'channel' && has(resolved.flags, 'mention_everyone'),
  });
  /**
   * Who may write here: send_messages for words (sending, editing, typing), attach_files for
   * files, each 403 naming what is missing.
   */
  const requireSend = (resolved: Resolved, files: number) => {
    perms.requireFlag(resolved, 'send_messages');
    if (files > 0) perms.requireFlag(resolved, 'attach_files');
  };
  /**
   * Slow mode: a member (not the owner or an administrator) sends one message per
   * slowmode_seconds in the channel; sooner is 429 with Retry-After. The slot is taken at once,
   * so a second message racing this one (an upload still streaming, a batch still committing)
   * waits too; the returned function gives it back if this message is not sent after all.
   */
  const slowMode = (ctx: Ctx, resolved: Resolved): (() => void) => {
    const { container } = resolved;
    if (container.kind !== 'channel' || resolved.canModerate) return () => {};
    const seconds = directory.channel(container.id)?.slowmode_seconds ?? 0;
    if (seconds === 0) return () => {};
    const key = `${ctx.user.id}:${container.id}`;
    const previous = lastSent.get(key);
    const now = clock.now();
    const wait = (previous ?? -Infinity) + seconds * 1000 - now;
    if (wait > 0) {
      const retry = Math.ceil(wait / 1000);
      throw new HttpError(429, `slow mode: one message every ${seconds} s here; try again in ${retry} s`, { 'Retry-After': String(retry) });
    }
    lastSent.set(key, now);
    if (lastSent.size > 100_000) for (const [k, at] of lastSent) if (now - at > MAX_SLOWMODE_SECONDS * 1000) lastSent.delete(k);
    return () => {
      if (previous === undefined) lastSent.delete(key);
      else lastSent.set(key, previous);
    };
  };
  /** The audit entry of a moderator deleting or pinning someone's message in a channel. */
  const auditFor = (ctx: Ctx, container: Container, action: 'message_delete' | 'message_pin' | 'message_unpin', messageId: string) =>
    container.kind === 'channel'
      ? () => audit.write({ serverId: container.serverId, action, actorId: ctx.user.id, targetId: messageId, targetKind: 'message', reason: auditReason(ctx) })
      : undefined;

  return {
    listMessages,
    sendMessage,
    editMessage,
    deleteMessage,
    addReaction,
    removeReaction,
    markRead,
    startTyping,
    listPins,
    pinMessage,
    unpinMessage,
    messageHistory,
  };

  /**
   * Newest first, `limit` (default 50, max 100) at a time; `before=<id>` pages back, `after=<id>`
   * catches up (oldest first); ids from another container are 400.
   */
  function listMessages(ctx: Ctx) {
    const { container } = scope.resolve(ctx);
    const paging = {
      before: uuidParam(ctx.query, 'before'),
      after: uuidParam(ctx.query, 'after'),
      around: uuidParam(ctx.query, 'around'),
      limit: limitParam(ctx.query),
    };
    return json(messages.list(container, ctx.user.id, paging));
  }

  /**
   * 201 message from JSON or multipart; access, standing and rate limit are checked before a
   * byte of an upload is read, and again once it is in (its files are discarded if refused).
   */
  async function sendMessage(ctx: Ctx) {
    const resolved = scope.resolve(ctx);
    assertAllowed(ctx.user, scope.sendAction);
    scope.guardWrite(ctx, resolved.container);
    requireSend(resolved, 0);
    limits.messagesPerUser.take(ctx.user.id, 'messages');
    const giveBack = slowMode(ctx, resolved);
    const multipart = mediaType(ctx.req) === 'multipart/form-data';
    let input: MessageInput | undefined;
    try {
      input = await readMessageInput(ctx, uploads);
      if (!multipart) return created(await messages.create(resolved.container, ctx.user, input, rightsOf(resolved)));
      requireSend(resolved, input.files.length);
      // An upload may stream for minutes: a logout, suspension, restriction or removal that
      // landed meanwhile applies to it (401, 403, 404) as it would to a new request.
      const { user } = authenticate({ sessions, users }, ctx.req, 'user');
      const fresh = scope.resolve({ ...ctx, user: user! });
      assertAllowed(user!, scope.sendAction);
      scope.guardWrite({ ...ctx, user: user! }, fresh.container);
      requireSend(fresh, input.files.length);
      return created(await messages.create(fresh.container, user!, input, rightsOf(fresh)));
    } catch (err) {
      giveBack();
      if (input) uploads.discard(input.files);
      throw err;
    }
  }

  /**
   * Author only; returns the updated message; a standing that may not send here, or a member
   * without send_messages here, may not edit either.
   */
  function editMessage(ctx: Ctx) {
    const resolved = scope.resolve(ctx);
    assertAllowed(ctx.user, scope.sendAction);
    scope.guardWrite(ctx, resolved.container);
    requireSend(resolved, 0);
    if (typeof ctx.body.content !== 'string') throw badRequest('content must be a string: the whole new text');
    const { content } = messageFields(ctx.body);
    return json(messages.edit(resolved.container, ctx.params.message_id, ctx.user, content, rightsOf(resolved)));
  }

  /** The author, or a moderator of the container; 204; audited (message_delete) when not the author's own. */
  function deleteMessage(ctx: Ctx) {
    const { container, canModerate } = scope.resolve(ctx);
    const messageId = ctx.params.message_id;
    const byOther = messages.authorOf(container, messageId) !== ctx.user.id;
    messages.remove(container, messageId, ctx.user, canModerate, byOther ? auditFor(ctx, container, 'message_delete', messageId) : undefined);
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
    if (moved) hub.toUsers([ctx.user.id], { event: 'read', ...placeOf(container), ...state });
    return json({ ...placeOf(container), ...state });
  }

  /**
   * 204; a `typing` event reaches the other members' user streams, at most once per
   * TYPING_REPEAT_MS per user and room; only those who may send here may type.
   */
  function startTyping(ctx: Ctx) {
    const resolved = scope.resolve(ctx);
    const { container } = resolved;
    assertAllowed(ctx.user, scope.sendAction);
    scope.guardWrite(ctx, container);
    requireSend(resolved, 0);
    const key = `${ctx.user.id}:${container.id}`;
    const now = clock.now();
    if (now - (typing.get(key) ?? -Infinity) < TYPING_REPEAT_MS) return noContent();
    typing.set(key, now);
    // Entries older than the window carry nothing: they are dropped as the map grows.
    if (typing.size > 10_000) for (const [k, at] of typing) if (now - at >= TYPING_REPEAT_MS) typing.delete(k);
    hub.toContainer(container, { event: 'typing', user_id: ctx.user.id, username: ctx.user.username, display_name: ctx.user.displayName, ...placeOf(container) }, ctx.user.id);
    return noContent();
  }

  /** The pinned messages, members only, most recently pinned first. */
  function listPins(ctx: Ctx) {
    const { container } = scope.resolve(ctx);
    return json(messages.pins(container, ctx.user.id));
  }

  /** Owners and full server admins in a channel, any member in a conversation; 200 message; 400 past 50; audited in servers. */
  function pinMessage(ctx: Ctx) {
    return pin(ctx, true);
  }

  /** The same people; 200 message (idempotent). */
  function unpinMessage(ctx: Ctx) {
    return pin(ctx, false);
  }

  function pin(ctx: Ctx, pinned: boolean) {
    const resolved = scope.resolve(ctx);
    if (!scope.mayPin(resolved)) throw forbidden('only the owner or a full server administrator can pin messages here');
    const messageId = ctx.params.message_id;
    const write = auditFor(ctx, resolved.container, pinned ? 'message_pin' : 'message_unpin', messageId);
    return json(messages.pin(resolved.container, messageId, ctx.user, pinned, write));
  }

  /**
   * Every version of a message, oldest first, the current one last; for its author, the
   * server's owner and full administrators, and site administrators (403 for other members).
   */
  function messageHistory(ctx: Ctx) {
    const { container, canModerate } = siteAdminView(ctx) ?? scope.resolve(ctx);
    const { author_id, versions } = messages.history(container, ctx.params.message_id);
    if (!readsEditHistory(ctx.user, canModerate ? 'admin' : 'member', author_id)) {
      throw forbidden('only the author, the owner, a full server administrator or a site administrator can read the edit history');
    }
    return json({ message_id: ctx.params.message_id, versions });
  }

  /**
   * A site administrator reads what reports point at in any room, member or not: the message's
   * own place, when it is the one the path names. Null for everyone else (the room's rules apply).
   */
  function siteAdminView(ctx: Ctx): Resolved | null {
    if (!ctx.user.isAdmin) return null;
    const place = perms.locateMessage(ctx.params.message_id);
    const named =
      place?.kind === 'channel'
        ? place.id === ctx.params.channel_id && place.serverId === ctx.params.server_id
        : place?.kind === 'conversation' && place.id === ctx.params.conversation_id;
    return place && named ? { container: place, canModerate: true, flags: ALL } : null;
  }

  /** Adding needs add_reactions; taking one's own away does not. */
  function react(ctx: Ctx, add: boolean) {
    const resolved = scope.resolve(ctx);
    const { container } = resolved;
    scope.guardWrite(ctx, container);
    if (add) perms.requireFlag(resolved, 'add_reactions');
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
