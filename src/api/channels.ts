import crypto from 'node:crypto';
import { resolveEmoji } from '../core/emoji';
import { badRequest, conflict, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { ForumSettings } from '../parts/community/channels';
import type { Services } from '../parts/services';
import type { Body, Ctx, Route } from '../core/types';
import { auditReason, bool, integer, oneOf, text, uuid } from '../core/validate';
import { type ChannelRecord, FORUM_SORTS, type ForumTag, LISTED_CHANNEL_TYPES } from '../core/records';
import { MAX_NAME_CHARS, diff, placed } from './servers';
import { THREAD_FIELDS, threadHandlers } from './threads';
import { MAX_FORUM_TAGS, MAX_TAG_NAME_CHARS } from '../rules/sizes';

import { MAX_CHANNELS_PER_SERVER } from '../rules/sizes';
export { MAX_CHANNELS_PER_SERVER };
import { MAX_TOPIC_CHARS } from '../rules/sizes';
export { MAX_TOPIC_CHARS };
import { DEFAULT_VOICE_BITRATE, MAX_SLOWMODE_SECONDS, MAX_VOICE_BITRATE, MAX_VOICE_USER_LIMIT, MIN_VOICE_BITRATE } from '../rules/sizes';

/**
 * A voice channel's user_limit and bitrate from a body, each falling back to `was` (a new
 * channel's defaults, or the channel's own); 400 when a channel of another type is given either.
 */
function voiceSettings(body: Record<string, unknown>, type: string, was: { userLimit: number; bitrate: number }) {
  if (type !== 'voice') {
    for (const field of ['user_limit', 'bitrate']) if (body[field] !== undefined) throw badRequest(`${field} is for voice channels only`);
    return undefined;
  }
  return {
    userLimit: body.user_limit === undefined ? was.userLimit : integer(body, 'user_limit', 0, MAX_VOICE_USER_LIMIT),
    bitrate: body.bitrate === undefined ? was.bitrate : integer(body, 'bitrate', MIN_VOICE_BITRATE, MAX_VOICE_BITRATE),
  };
}

type Deps = Pick<
  Services,
  | 'db'
  | 'perms'
  | 'hub'
  | 'limits'
  | 'directory'
  | 'readStates'
  | 'audit'
  | 'uploads'
  | 'channels'
  | 'overwrites'
  | 'accessChanges'
  | 'messages'
  | 'posting'
  | 'threads'
  | 'threadNews'
>;

/**
 * The channels of a server (who may change them: the owner and full server administrators). A
 * thread is a channel too: `PATCH` and `DELETE` of one are its own rules (src/api/threads.ts).
 */
export function channelRoutes(deps: Deps): Route[] {
  const h = channelHandlers(deps);
  const C = '/api/servers/:server_id/channels';
  return [
    { method: 'GET', path: C, auth: 'user', body: 'none', handler: h.listChannels },
    { method: 'POST', path: C, auth: 'user', body: 'json', handler: h.createChannel },
    { method: 'PATCH', path: `${C}/:channel_id`, auth: 'user', body: 'json', handler: h.updateChannel },
    { method: 'DELETE', path: `${C}/:channel_id`, auth: 'user', body: 'none', handler: h.deleteChannel },
  ];
}

function channelHandlers(deps: Deps) {
  const { db, perms, hub, limits, directory, readStates, audit, uploads, channels, overwrites, accessChanges, threads, threadNews } = deps;
  const threadRules = threadHandlers(deps);
  // Names and the cap are the listed channels' (threads are in no list and bound by neither).
  const channelByName = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM channels WHERE server_id = ? AND name = ? COLLATE NOCASE AND parent_id IS NULL',
  );
  const channelCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM channels WHERE server_id = ? AND parent_id IS NULL');
  const categoryOf = db.prepare<[string], { server_id: string }>('SELECT server_id FROM categories WHERE id = ?');
  // A channel's messages' files, and its threads' (they go with it).
  const attachmentsOf = db.prepare<[string, string], { id: string }>(
    `SELECT a.id FROM attachments a JOIN messages m ON m.seq = a.message_seq
      WHERE m.channel_id = ? OR m.channel_id IN (SELECT id FROM channels WHERE parent_id = ?)`,
  );
  const threadsOf = db.prepare<[string], string>('SELECT id FROM channels WHERE parent_id = ?').pluck();

  /** A channel of this server (404 otherwise). */
  const channelIn = (serverId: string, channelId: string) => {
    const channel = directory.channel(channelId);
    if (!channel || channel.server_id !== serverId) throw notFound('channel not found');
    return channel;
  };
  /** A thread the path names: its own rules decide, not a channel's. */
  const isThread = (ctx: Ctx) => directory.channel(ctx.params.channel_id)?.type === 'thread';
  /** Puts `channelId` at `position` (null: only closes the gaps): positions stay 0..n-1. */
  const reorder = (serverId: string, channelId: string | null, position: number) =>
    channels.setOrder(
      placed(
        directory.channelsOf(serverId).map((c) => c.id),
        channelId,
        position,
      ),
    );

  return { listChannels, createChannel, updateChannel, deleteChannel };

  /** The channels the caller sees, members only, in position order, each with the caller's read state and permissions. */
  function listChannels(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    return json([...readStates.channels(ctx.user.id, serverId).values()]);
  }

  /**
   * manage_channels (as the member's roles give it, server-wide): {name, type?, and for a voice channel user_limit? (0-99,
   * 0: no limit) and bitrate? (8000-96000)}; 201 channel; 409 for a name already used (any case);
   * 400 past 500; audited.
   */
  function createChannel(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.requireServerFlag(ctx.user, serverId, 'manage_channels');
    const name = text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const type = ctx.body.type === undefined ? 'text' : oneOf(ctx.body, 'type', LISTED_CHANNEL_TYPES);
    const forum = readForumSettings(ctx.body, type === 'forum' ? { availableTags: [], defaultReaction: null, defaultSort: 'latest_activity' } : null);
    const voice = voiceSettings(ctx.body, type, { userLimit: 0, bitrate: DEFAULT_VOICE_BITRATE });
    const topic = ctx.body.topic === undefined ? '' : text(ctx.body, 'topic', { min: 0, max: MAX_TOPIC_CHARS, multiline: true });
    const reason = auditReason(ctx);
    if (channelByName.get(serverId, name)) throw conflict(`a channel named "${name}" already exists in this server`);
    if (channelCount.get(serverId)!.n >= MAX_CHANNELS_PER_SERVER) {
      throw badRequest(`a server may have at most ${MAX_CHANNELS_PER_SERVER} channels`);
    }
    limits.creationsPerUser.take(ctx.user.id, 'channels, roles and invites created');
    // Who sees it hears of it (channel_created), at its place among the channels they see.
    const id = accessChanges.around(serverId, () =>
      db.transaction(() => {
        const id = channels.add(serverId, { name, type, topic, forum, ...voice });
        const changes = { name, type, ...(voice ? { user_limit: voice.userLimit, bitrate: voice.bitrate } : {}) };
        audit.write({ serverId, action: 'channel_create', actorId: ctx.user.id, targetId: id, targetKind: 'channel', reason, changes });
        return id;
      })(),
    );
    return created(directory.channel(id)!);
  }

  /**
   * manage_channels in that channel (its overwrites count): {name?, topic?, position?, slowmode_seconds?,
   * category_id?, permissions_synced?, and for a voice channel user_limit? and bitrate? (which
   * apply to the next people who join)}; 200 channel; positions stay 0..n-1; 409 for a name in use;
   * 404 for a category of another server; audited; who sees it gets channel_updated, and every
   * channel whose place among those they see moved too (never for a channel hidden from them). A synced
   * channel that leaves its category keeps its overwrites as its own (src/parts/community/overwrites.ts);
   * `permissions_synced: true` drops its own and follows its category (400 without one). Changing
   * `category_id` or `permissions_synced` also needs manage_roles there: it changes who sees it.
   */
  function updateChannel(ctx: Ctx) {
    if (isThread(ctx)) return threadRules.updateThread(ctx);
    const serverId = ctx.params.server_id;
    perms.requireChannelFlag(ctx.user, ctx.params.channel_id, serverId, 'manage_channels');
    const before = channelIn(serverId, ctx.params.channel_id);
    const own = THREAD_FIELDS.find((key) => ctx.body[key] !== undefined);
    if (own) throw badRequest(`${own}: archived, locked, auto_archive_minutes and applied_tags are a thread's`);
    const forum = readForumSettings(ctx.body, forumOf(before));
    const name = ctx.body.name === undefined ? before.name : text(ctx.body, 'name', { max: MAX_NAME_CHARS });
    const topic = ctx.body.topic === undefined ? before.topic : text(ctx.body, 'topic', { min: 0, max: MAX_TOPIC_CHARS, multiline: true });
    const slowmode = ctx.body.slowmode_seconds === undefined ? before.slowmode_seconds : integer(ctx.body, 'slowmode_seconds', 0, MAX_SLOWMODE_SECONDS);
    const position = ctx.body.position === undefined ? null : integer(ctx.body, 'position', 0, MAX_CHANNELS_PER_SERVER);
    const categoryId = ctx.body.category_id === undefined ? before.category_id : ctx.body.category_id === null ? null : uuid(ctx.body, 'category_id');
    const sync = ctx.body.permissions_synced === undefined ? null : bool(ctx.body, 'permissions_synced');
    const voice = voiceSettings(ctx.body, before.type, { userLimit: before.user_limit ?? 0, bitrate: before.bitrate ?? DEFAULT_VOICE_BITRATE });
    const reason = auditReason(ctx);
    if (categoryId !== null && categoryOf.get(categoryId)?.server_id !== serverId) throw notFound('category not found');
    if (sync === true && categoryId === null) throw badRequest('permissions_synced: the channel has no category to follow');
    // What overwrites the channel follows is who sees it: syncing it, or moving it to another category, also needs manage_roles there (as on Discord).
    if (sync !== null || categoryId !== before.category_id) perms.requireChannelFlag(ctx.user, before.id, serverId, 'manage_roles');
    const clash = channelByName.get(serverId, name);
    if (clash && clash.id !== before.id) throw conflict(`a channel named "${name}" already exists in this server`);
    let untagged: string[] = [];
    const write = () =>
      db.transaction(() => {
        if (sync === false || (before.category_id !== null && categoryId !== before.category_id)) overwrites.detach(before.id);
        channels.update(before.id, { name, topic, slowmodeSeconds: slowmode, categoryId, forum, ...voice });
        // A tag taken off the forum comes off its posts.
        if (forum)
          untagged = threads.keepTags(
            before.id,
            forum.availableTags.map((t) => t.id),
          );
        if (sync === true) overwrites.sync(before.id);
        if (position !== null) reorder(serverId, before.id, position);
        const after = directory.channel(before.id)!;
        const changes = diff(before, {
          name,
          topic,
          slowmode_seconds: slowmode,
          position: after.position,
          category_id: categoryId,
          permissions_synced: after.permissions_synced,
          ...(voice ? { user_limit: voice.userLimit, bitrate: voice.bitrate } : {}),
          ...(forum ? { available_tags: forum.availableTags, default_reaction: forum.defaultReaction, default_sort: forum.defaultSort } : {}),
        });
        audit.write({ serverId, action: 'channel_update', actorId: ctx.user.id, targetId: before.id, targetKind: 'channel', reason, changes });
      })();
    // Who sees what (a category, syncing) and where (a move) is told to each as they see it.
    accessChanges.around(serverId, write, undefined, [before.id]);
    for (const id of untagged) {
      const post = threads.get(id);
      if (post) threadNews.updated(post);
    }
    return json(directory.channel(before.id)!);
  }

  /**
   * manage_channels in that channel: the channel and its messages go; files after the commit;
   * the rest renumbered; audited; its room sockets close; members get channel_deleted. 204.
   */
  function deleteChannel(ctx: Ctx) {
    if (isThread(ctx)) return threadRules.deleteThread(ctx);
    const serverId = ctx.params.server_id;
    perms.requireChannelFlag(ctx.user, ctx.params.channel_id, serverId, 'manage_channels');
    const channel = channelIn(serverId, ctx.params.channel_id);
    const reason = auditReason(ctx);
    const threadIds = threadsOf.all(channel.id);
    // Who saw it hears it go (channel_deleted), and of the channels after it that moved up for them.
    const fileIds = accessChanges.around(serverId, () =>
      db.transaction(() => {
        const ids = attachmentsOf.all(channel.id, channel.id).map((a) => a.id);
        channels.remove(channel.id);
        readStates.forget([channel.id, ...threadIds]);
        reorder(serverId, null, 0);
        audit.write({
          serverId,
          action: 'channel_delete',
          actorId: ctx.user.id,
          targetId: channel.id,
          targetKind: 'channel',
          reason,
          changes: { name: channel.name },
        });
        return ids;
      })(),
    );
    uploads.deleteFiles(fileIds);
    for (const id of [channel.id, ...threadIds]) hub.closeRoom({ kind: 'channel', id, serverId });
    return noContent();
  }
}

/** A forum's settings as its record has them; null for any other channel. */
function forumOf(channel: ChannelRecord): ForumSettings | null {
  if (channel.type !== 'forum') return null;
  return {
    availableTags: channel.available_tags ?? [],
    defaultReaction: channel.default_reaction ?? null,
    defaultSort: channel.default_sort ?? 'latest_activity',
  };
}

/**
 * A forum's settings from a body: `available_tags` (at most 20, each `{"id"?, "name", "emoji"?,
 * "moderated"?}`: an id keeps a tag of this forum, none makes a new one; names unique in any case),
 * `default_reaction` (an emoji, or null), `default_sort`. Undefined when the body names none;
 * 400 for a channel that is not a forum (`current` null).
 */
export function readForumSettings(body: Body, current: ForumSettings | null): ForumSettings | undefined {
  const named = ['available_tags', 'default_reaction', 'default_sort'].filter((key) => body[key] !== undefined);
  if (named.length === 0) return undefined;
  if (!current) throw badRequest(`${named[0]}: only a forum has it`);
  const defaultSort = body.default_sort === undefined ? current.defaultSort : oneOf(body, 'default_sort', FORUM_SORTS);
  let defaultReaction = current.defaultReaction;
  if (body.default_reaction !== undefined) {
    defaultReaction = body.default_reaction === null ? null : resolveEmoji(body.default_reaction);
    if (body.default_reaction !== null && defaultReaction === null) throw badRequest('default_reaction must be null or a single emoji');
  }
  let availableTags = current.availableTags;
  if (body.available_tags !== undefined) {
    const list = body.available_tags;
    if (!Array.isArray(list)) throw badRequest('available_tags must be an array of tags');
    if (list.length > MAX_FORUM_TAGS) throw badRequest(`available_tags: a forum has at most ${MAX_FORUM_TAGS} tags`);
    const known = new Map(current.availableTags.map((t) => [t.id, t]));
    availableTags = list.map((item, i): ForumTag => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) throw badRequest(`available_tags[${i}] must be a tag object`);
      const tag = item as Body;
      const id = tag.id === undefined || tag.id === null ? crypto.randomUUID() : uuid(tag, 'id');
      if (tag.id !== undefined && tag.id !== null && !known.has(id))
        throw badRequest(`available_tags[${i}].id: this forum has no such tag (leave id out for a new one)`);
      const emoji = tag.emoji === undefined || tag.emoji === null ? null : resolveEmoji(tag.emoji);
      if (tag.emoji !== undefined && tag.emoji !== null && emoji === null) throw badRequest(`available_tags[${i}].emoji must be null or a single emoji`);
      return {
        id,
        name: text(tag, 'name', { max: MAX_TAG_NAME_CHARS }),
        emoji,
        moderated: tag.moderated === undefined ? false : bool(tag, 'moderated'),
      };
    });
    const names = new Set<string>();
    const ids = new Set<string>();
    for (const tag of availableTags) {
      if (names.has(tag.name.toLowerCase())) throw badRequest(`available_tags: two tags named "${tag.name}"`);
      if (ids.has(tag.id)) throw badRequest('available_tags: a tag is listed twice');
      names.add(tag.name.toLowerCase());
      ids.add(tag.id);
    }
  }
  return { availableTags, defaultReaction, defaultSort };
}
