import { authenticate } from '../parts/accounts/auth';
import { checkEmbeds } from '../core/embed';
import { resolveEmoji } from '../core/emoji';
import { isUuid } from '../core/http/router';
import { mediaType, readJson } from '../core/http/body';
import { HttpError, badRequest, forbidden, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import { MAX_CONTENT_CHARS, placeOf } from '../core/message-record';
import type { MemberInput } from '../parts/messages/posting';
import { type Access, readsEditHistory } from '../rules/permissions';
import { ALL } from '../rules/channel-permissions';
import { MAX_MESSAGE_STICKERS, POLL_ANSWERS, POLL_ANSWER_CHARS, POLL_HOURS, POLL_QUESTION_CHARS } from '../rules/sizes';
import type { Services } from '../parts/services';
import { type Body, type Container, type Ctx, type Reached, type Route, reachedWhole } from '../core/types';
import type { UploadStore } from '../parts/messages/upload-store';
import { auditReason, bool, integer, limitParam, text, uuid, uuidParam } from '../core/validate';
import type { PollInput } from '../parts/messages/message-store';
import { votersLimit } from '../parts/messages/polls';

type Deps = Pick<
  Services,
  | 'db'
  | 'clock'
  | 'perms'
  | 'limits'
  | 'messages'
  | 'posting'
  | 'uploads'
  | 'sessions'
  | 'users'
  | 'hub'
  | 'readStates'
  | 'audit'
  | 'emojis'
  | 'stickers'
  | 'polls'
>;

/** Typing calls closer together than this are cheap no-ops: one event per burst of keys. */
export const TYPING_REPEAT_MS = 3_000;

/**
 * Messages, one model for three scopes: server channels, the legacy server messages (mapped
 * onto the server's first channel) and conversations. The scope decides where a path leads and
 * who may see and moderate there (src/rules/permissions.ts); who may post is
 * src/parts/messages/posting.ts's.
 */
export function messageRoutes(deps: Deps): Route[] {
  // Shared by the three scopes: the legacy routes post into a channel too.
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
    { method: 'PATCH', path: `${C}/:message_id`, auth: 'user', body: 'json', handler: channel.suppressEmbeds },
    { method: 'DELETE', path: `${C}/:message_id`, auth: 'user', body: 'none', handler: channel.deleteMessage },
    { method: 'PUT', path: `${C}/:message_id/reactions`, auth: 'user', body: 'json', handler: channel.addReaction },
    { method: 'DELETE', path: `${C}/:message_id/reactions`, auth: 'user', body: 'json', handler: channel.removeReaction },
    { method: 'PUT', path: `${C}/:message_id/reactions/:emoji`, auth: 'user', body: 'none', handler: channel.addReaction },
    { method: 'DELETE', path: `${C}/:message_id/reactions/:emoji`, auth: 'user', body: 'none', handler: channel.removeReaction },
    { method: 'PUT', path: `${C}/:message_id/poll/answers/:answer_id/votes/@me`, auth: 'user', body: 'none', handler: channel.vote },
    { method: 'DELETE', path: `${C}/:message_id/poll/answers/:answer_id/votes/@me`, auth: 'user', body: 'none', handler: channel.unvote },
    { method: 'GET', path: `${C}/:message_id/poll/answers/:answer_id/voters`, auth: 'user', body: 'none', handler: channel.listVoters },
    { method: 'POST', path: `${C}/:message_id/poll/end`, auth: 'user', body: 'none', handler: channel.endPoll },
    { method: 'GET', path: L, auth: 'user', body: 'none', handler: legacy.listMessages },
    { method: 'POST', path: L, auth: 'user', body: 'message', handler: legacy.sendMessage },
    { method: 'GET', path: D, auth: 'user', body: 'none', handler: dm.listMessages },
    { method: 'POST', path: D, auth: 'user', body: 'message', handler: dm.sendMessage },
    { method: 'PUT', path: `${D}/:message_id`, auth: 'user', body: 'json', handler: dm.editMessage },
    { method: 'PATCH', path: `${D}/:message_id`, auth: 'user', body: 'json', handler: dm.suppressEmbeds },
    { method: 'DELETE', path: `${D}/:message_id`, auth: 'user', body: 'none', handler: dm.deleteMessage },
    { method: 'PUT', path: `${D}/:message_id/reactions`, auth: 'user', body: 'json', handler: dm.addReaction },
    { method: 'DELETE', path: `${D}/:message_id/reactions`, auth: 'user', body: 'json', handler: dm.removeReaction },
    { method: 'PUT', path: `${D}/:message_id/reactions/:emoji`, auth: 'user', body: 'none', handler: dm.addReaction },
    { method: 'DELETE', path: `${D}/:message_id/reactions/:emoji`, auth: 'user', body: 'none', handler: dm.removeReaction },
    { method: 'PUT', path: `${D}/:message_id/poll/answers/:answer_id/votes/@me`, auth: 'user', body: 'none', handler: dm.vote },
    { method: 'DELETE', path: `${D}/:message_id/poll/answers/:answer_id/votes/@me`, auth: 'user', body: 'none', handler: dm.unvote },
    { method: 'GET', path: `${D}/:message_id/poll/answers/:answer_id/voters`, auth: 'user', body: 'none', handler: dm.listVoters },
    { method: 'POST', path: `${D}/:message_id/poll/end`, auth: 'user', body: 'none', handler: dm.endPoll },
  ];
}

/** How a family of message routes finds its container. */
interface MessageScope {
  /** Resolves and authorizes the container (404 for outsiders): what the caller may do there. */
  resolve(ctx: Ctx): Access;
  /** Who may pin here (in a channel: manage_messages there). */
  mayPin(ctx: Ctx, access: Access): boolean;
}

function channelScope({ perms }: Deps): MessageScope {
  return {
    resolve: (ctx) => perms.channelAccess(ctx.user, ctx.params.channel_id, ctx.params.server_id),
    mayPin: (ctx, access) => perms.holds(ctx.user, access, 'manage_messages'),
  };
}

function legacyScope({ db, perms }: Deps): MessageScope {
  const firstChannel = db.prepare<[string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? AND parent_id IS NULL ORDER BY position, created_at LIMIT 1',
  );
  return {
    resolve: (ctx) => {
      perms.serverAccess(ctx.user, ctx.params.server_id);
      const channel = firstChannel.get(ctx.params.server_id);
      if (!channel) throw notFound('this server has no channels');
      // The server's first channel, with its rules: one hidden from the caller is 403 here (they know the server).
      try {
        return perms.channelAccess(ctx.user, channel.id, ctx.params.server_id);
      } catch (err) {
        if (err instanceof HttpError && err.status === 404) throw forbidden("you cannot see this server's first channel, where its messages are kept");
        throw err;
      }
    },
    mayPin: (ctx, access) => perms.holds(ctx.user, access, 'manage_messages'),
  };
}

/** Only members reach a conversation (404 otherwise), and may do everything in it; only authors delete: there is no moderator; any member pins. */
function conversationScope({ perms }: Deps): MessageScope {
  return {
    resolve: (ctx) => ({ container: perms.conversationAccess(ctx.user, ctx.params.conversation_id), rank: 'member', flags: ALL, historyFloor: 0 }),
    mayPin: () => true,
  };
}

function messageHandlers(deps: Deps, scope: MessageScope, typing: Map<string, number>) {
  const { clock, perms, limits, messages, posting, uploads, sessions, users, hub, readStates, audit, emojis, polls } = deps;
  /** The audit entry of a moderator deleting or pinning someone's message in a channel. */
  const auditFor = (ctx: Ctx, container: Container, action: 'message_delete' | 'message_pin' | 'message_unpin', messageId: string) =>
    container.kind === 'channel'
      ? () => audit.write({ serverId: container.serverId, action, actorId: ctx.user.id, targetId: messageId, targetKind: 'message', reason: auditReason(ctx) })
      : undefined;

  return {
    listMessages,
    sendMessage,
    editMessage,
    suppressEmbeds,
    deleteMessage,
    addReaction,
    vote,
    unvote,
    listVoters,
    endPoll,
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
    const access = scope.resolve(ctx);
    const paging = {
      before: uuidParam(ctx.query, 'before'),
      after: uuidParam(ctx.query, 'after'),
      around: uuidParam(ctx.query, 'around'),
      limit: limitParam(ctx.query),
    };
    return json(messages.list(access, ctx.user.id, paging));
  }

  /**
   * 201 message from JSON or multipart; whether the caller may post is checked before a byte of
   * an upload is read, and again once it is in (its files are discarded if refused).
   */
  async function sendMessage(ctx: Ctx) {
    const admitted = posting.admit(ctx.user, scope.resolve(ctx));
    const multipart = mediaType(ctx.req) === 'multipart/form-data';
    let input: MemberInput | undefined;
    try {
      input = await readMessageInput(ctx, uploads);
      requireStickers(ctx, input.stickerIds);
      // An upload may stream for minutes: a logout, suspension, restriction or removal that
      // landed meanwhile applies to it (401, 403, 404) as it would to a new request.
      return created(await admitted.post(input, multipart ? () => freshCaller(ctx) : undefined));
    } catch (err) {
      admitted.cancel();
      if (input) uploads.discard(input.files);
      throw err;
    }
  }

  /** Who is calling and what they may do here now: the session and the rules as they stand. */
  function freshCaller(ctx: Ctx) {
    const user = authenticate({ sessions, users }, ctx.req, 'user').user!;
    return { user, where: scope.resolve({ ...ctx, user }) };
  }

  /**
   * Author only; returns the updated message; a standing that may not send here, or a member
   * without send_messages here, may not edit either.
   */
  function editMessage(ctx: Ctx) {
    const admitted = posting.admitEdit(ctx.user, scope.resolve(ctx));
    if (typeof ctx.body.content !== 'string') throw badRequest('content must be a string: the whole new text');
    const { content } = messageFields(ctx.body);
    return json(admitted.edit(ctx.params.message_id, content));
  }

  /**
   * `{"suppress_embeds": true}`: removes the message's link previews for good (an edit fetches
   * none again); its author, or a moderator of the channel; the updated message.
   */
  function suppressEmbeds(ctx: Ctx) {
    const access = scope.resolve(ctx);
    if (ctx.body.suppress_embeds !== true) throw badRequest('suppress_embeds must be true: the one change this accepts, removing the link previews');
    return json(messages.suppressEmbeds(access, ctx.params.message_id, ctx.user, perms.holds(ctx.user, access, 'manage_messages')));
  }

  /** The author, or a moderator of the container; 204; audited (message_delete) when not the author's own. */
  function deleteMessage(ctx: Ctx) {
    const access = scope.resolve(ctx);
    const messageId = ctx.params.message_id;
    const byOther = messages.authorOf(access, messageId) !== ctx.user.id;
    messages.remove(
      access,
      messageId,
      ctx.user,
      perms.holds(ctx.user, access, 'manage_messages'),
      byOther ? auditFor(ctx, access.container, 'message_delete', messageId) : undefined,
    );
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
    const access = scope.resolve(ctx);
    const { container } = access;
    const messageId = uuid(ctx.body, 'message_id');
    const moved = readStates.markRead(ctx.user.id, access, messageId);
    const state = readStates.of(ctx.user.id, container);
    if (moved) hub.toUsers([ctx.user.id], { event: 'read', ...placeOf(container), ...state });
    return json({ ...placeOf(container), ...state });
  }

  /**
   * 204; a `typing` event reaches the other members' user streams, at most once per
   * TYPING_REPEAT_MS per user and room; only those who may send here may type.
   */
  function startTyping(ctx: Ctx) {
    const access = scope.resolve(ctx);
    const { container } = access;
    posting.requireMaySend(ctx.user, access);
    const key = `${ctx.user.id}:${container.id}`;
    const now = clock.now();
    if (now - (typing.get(key) ?? -Infinity) < TYPING_REPEAT_MS) return noContent();
    typing.set(key, now);
    // Entries older than the window carry nothing: they are dropped as the map grows.
    if (typing.size > 10_000) for (const [k, at] of typing) if (now - at >= TYPING_REPEAT_MS) typing.delete(k);
    hub.toContainer(
      container,
      { event: 'typing', user_id: ctx.user.id, username: ctx.user.username, display_name: ctx.user.displayName, ...placeOf(container) },
      ctx.user.id,
    );
    return noContent();
  }

  /** The pinned messages, members only, most recently pinned first. */
  function listPins(ctx: Ctx) {
    return json(messages.pins(scope.resolve(ctx), ctx.user.id));
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
    const access = scope.resolve(ctx);
    if (!scope.mayPin(ctx, access)) throw forbidden("you do not have permission to delete or pin others' messages in this channel");
    const messageId = ctx.params.message_id;
    const write = auditFor(ctx, access.container, pinned ? 'message_pin' : 'message_unpin', messageId);
    return json(messages.pin(access, messageId, ctx.user, pinned, write));
  }

  /**
   * Every version of a message, oldest first, the current one last; for its author, holders of
   * manage_messages in its channel (the server's owner and full administrators hold it), and site
   * administrators (403 for other members).
   */
  function messageHistory(ctx: Ctx) {
    const { at, moderator } = siteAdminView(ctx) ?? asMember(ctx, scope.resolve(ctx));
    const { author_id, versions } = messages.history(at, ctx.params.message_id);
    if (!readsEditHistory(ctx.user, moderator ? 'admin' : 'member', author_id)) {
      throw forbidden('only the author, a member with manage_messages or a site administrator can read the edit history');
    }
    return json({ message_id: ctx.params.message_id, versions });
  }

  /**
   * A site administrator reads what reports point at in any room, member or not: the message's
   * own place, when it is the one the path names, whole. Null for everyone else (the room's rules apply).
   */
  function siteAdminView(ctx: Ctx): { at: Reached; moderator: boolean } | null {
    if (!ctx.user.isAdmin) return null;
    const place = perms.locateMessage(ctx.params.message_id);
    const named =
      place?.kind === 'channel'
        ? place.id === ctx.params.channel_id && place.serverId === ctx.params.server_id
        : place?.kind === 'conversation' && place.id === ctx.params.conversation_id;
    return place && named ? { at: reachedWhole(place), moderator: true } : null;
  }

  function asMember(ctx: Ctx, access: Access) {
    return { at: access, moderator: perms.holds(ctx.user, access, 'manage_messages') };
  }

  /**
   * The emoji a reaction is stored under: `{"emoji"}` in the body (a Unicode emoji, the spec's
   * routes), or the path's `…/reactions/{emoji}`: a Unicode emoji (percent-encoded) or a custom
   * one as `name:id` (its id decides: a renamed emoji still answers to its old name), stored under
   * its id. Adding a custom one: it must exist, and the caller be a member of its server (usable
   * everywhere by its server's members, as Discord's Nitro); removing: whatever became of it.
   */
  function reactionEmoji(ctx: Ctx, add: boolean): string {
    const inPath = ctx.params.emoji;
    if (inPath === undefined) return readEmoji(ctx.body);
    const custom = CUSTOM_REACTION.exec(inPath);
    if (!custom) return readEmoji({ emoji: inPath });
    const id = custom[2].toLowerCase();
    if (!add) return id;
    const emoji = emojis.byId(id);
    if (!emoji) throw badRequest('no such custom emoji: it was deleted, or never was');
    if (perms.rank(ctx.user.id, emoji.serverId) === null) throw forbidden('you may react with the custom emoji of servers you are in');
    return id;
  }

  /** Stickers a member sends: live ones of servers they are in (usable everywhere by their server's members, as emoji). */
  function requireStickers(ctx: Ctx, ids: string[] | undefined) {
    for (const id of ids ?? []) {
      const sticker = deps.stickers.byId(id);
      if (!sticker) throw badRequest('sticker_ids names a sticker that does not exist (or was deleted)');
      if (perms.rank(ctx.user.id, sticker.server_id) === null) throw forbidden('you may send the stickers of servers you are in');
    }
  }

  /** Votes for one answer (one only unless multiselect: a vote for another moves it); 200 the message; 409 once ended. */
  function vote(ctx: Ctx) {
    return pollVote(ctx, true);
  }

  /** Takes the caller's vote back; 200 the message; 409 once ended. */
  function unvote(ctx: Ctx) {
    return pollVote(ctx, false);
  }

  /** Voting is open to whoever may read the message and write here (their standing), as reacting. */
  function pollVote(ctx: Ctx, add: boolean) {
    const access = scope.resolve(ctx);
    posting.requireMayWrite(ctx.user, access.container);
    limits.reactionsPerUser.take(ctx.user.id, 'votes');
    const { message_id: messageId, answer_id: answerId } = ctx.params;
    messages.get(access, messageId, ctx.user.id);
    if (add) polls.vote(access, messageId, ctx.user, answerId);
    else polls.unvote(access, messageId, ctx.user, answerId);
    return json(messages.get(access, messageId, ctx.user.id));
  }

  /** 200 who voted for the answer, by user id: `?after=` a user id, `?limit=` 1 to 100 (25). */
  function listVoters(ctx: Ctx) {
    const access = scope.resolve(ctx);
    messages.get(access, ctx.params.message_id, ctx.user.id);
    const afterId = uuidParam(ctx.query, 'after');
    return json(polls.voters(access, ctx.params.message_id, ctx.params.answer_id, afterId, votersLimit(ctx.query.get('limit'))));
  }

  /** Its author only: the results are frozen and announced; 200 the message. */
  async function endPoll(ctx: Ctx) {
    const access = scope.resolve(ctx);
    messages.get(access, ctx.params.message_id, ctx.user.id);
    await polls.end(access, ctx.params.message_id, ctx.user);
    return json(messages.get(access, ctx.params.message_id, ctx.user.id));
  }

  /** Adding needs add_reactions; taking one's own away does not. */
  function react(ctx: Ctx, add: boolean) {
    const access = scope.resolve(ctx);
    posting.requireMayWrite(ctx.user, access.container);
    if (add) perms.requireFlag(access, 'add_reactions');
    const emoji = reactionEmoji(ctx, add);
    limits.reactionsPerUser.take(ctx.user.id, 'reactions');
    return json(messages.react(access, ctx.params.message_id, ctx.user, emoji, add));
  }
}

/** Reads a message body: JSON {content, reply_to?, embeds?} or multipart with files streamed to disk. */
async function readMessageInput(ctx: Ctx, uploads: UploadStore): Promise<MemberInput> {
  if (mediaType(ctx.req) === 'multipart/form-data') {
    const { fields, files } = await uploads.receive(ctx.req);
    try {
      return { ...messageFields(fields), files };
    } catch (err) {
      uploads.discard(files);
      throw err;
    }
  }
  const body = await readJson(ctx.req);
  // Cards, as a webhook sends them (src/core/embed.ts); whether this author may is posting's to say. null reads as absent.
  const embeds = body.embeds === undefined || body.embeds === null ? undefined : checkEmbeds(body.embeds);
  const poll = body.poll === undefined || body.poll === null ? undefined : readPoll(body.poll);
  const stickerIds = body.sticker_ids === undefined || body.sticker_ids === null ? undefined : stickerIdsOf(body.sticker_ids);
  return { ...messageFields(body), files: [], ...(embeds ? { embeds } : {}), ...(poll ? { poll } : {}), ...(stickerIds?.length ? { stickerIds } : {}) };
}

function messageFields(body: Body): { content: string; replyTo: string | null } {
  if (body.content === undefined) body.content = '';
  const content = text(body, 'content', { min: 0, max: MAX_CONTENT_CHARS, trim: false, multiline: true });
  const replyTo = body.reply_to === undefined || body.reply_to === null || body.reply_to === '' ? null : uuid(body, 'reply_to');
  return { content, replyTo };
}

function stickerIdsOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_MESSAGE_STICKERS || !value.every((id) => isUuid(id))) {
    throw badRequest(`sticker_ids must be a list of at most ${MAX_MESSAGE_STICKERS} sticker ids`);
  }
  const ids = value.map((id: string) => id.toLowerCase());
  if (new Set(ids).size !== ids.length) throw badRequest('sticker_ids names a sticker twice');
  return ids;
}

/** `{"question", "answers": [{"text", "emoji"?}] (2 to 10), "duration_hours" (1 to 768), "allow_multiselect"?}`: 400 otherwise. */
function readPoll(value: unknown): PollInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('poll must be an object');
  // Other keys are ignored, as in every request body (docs/api.md: "Other unknown keys are ignored").
  const body = value as Body;
  const question = text(body, 'question', { max: POLL_QUESTION_CHARS });
  const answers = body.answers;
  if (!Array.isArray(answers) || answers.length < POLL_ANSWERS.min || answers.length > POLL_ANSWERS.max) {
    throw badRequest(`answers must be a list of ${POLL_ANSWERS.min} to ${POLL_ANSWERS.max} answers`);
  }
  return {
    question,
    answers: answers.map((answer: unknown) => {
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw badRequest('each answer must be an object {text, emoji?}');
      const a = answer as Body;
      const emoji = a.emoji === undefined || a.emoji === null ? null : resolveEmoji(a.emoji);
      if (emoji === null && a.emoji !== undefined && a.emoji !== null) throw badRequest('an answer’s emoji must be a single emoji, or the :shortcode: of one');
      return { text: text(a, 'text', { max: POLL_ANSWER_CHARS }), emoji };
    }),
    durationHours: integer(body, 'duration_hours', POLL_HOURS.min, POLL_HOURS.max),
    allowMultiselect: body.allow_multiselect === undefined ? false : bool(body, 'allow_multiselect'),
  };
}

/** A custom emoji in a reaction's path: `name:id`, as Discord addresses one. */
const CUSTOM_REACTION = /^([A-Za-z0-9_]{2,32}):([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/;

function readEmoji(body: Body): string {
  const emoji = resolveEmoji(body.emoji);
  if (emoji === null) throw badRequest('emoji must be a single emoji, or the :shortcode: of one');
  return emoji;
}
