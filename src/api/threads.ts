import { mediaType, readJson } from '../core/http/body';
import { badRequest, conflict, forbidden, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import { MAX_CONTENT_CHARS } from '../core/message-record';
import { AUTO_ARCHIVE_MINUTES, type AutoArchiveMinutes, type ChannelRecord, type ForumTag, type ListedThread, type ThreadRecord } from '../core/records';
import type { Body, Ctx, Route } from '../core/types';
import { auditReason, bool, limitParam, text, uuid, uuidParam } from '../core/validate';
import { threadContainer } from '../parts/community/thread-news';
import type { ListedRow, ThreadChange } from '../parts/community/threads';
import type { Services } from '../parts/services';
import { MAX_FIELD_BYTES, type ReceivedFile } from '../parts/messages/upload-store';
import { VIEW, has } from '../rules/channel-permissions';
import type { Access } from '../rules/permissions';
import { MAX_APPLIED_TAGS, MAX_NAME_CHARS } from '../rules/sizes';

type Deps = Pick<
  Services,
  'db' | 'perms' | 'hub' | 'limits' | 'directory' | 'readStates' | 'audit' | 'uploads' | 'messages' | 'posting' | 'threads' | 'threadNews'
>;

/**
 * Threads and forum posts (issue 49; docs/api.md "Threads and forums"). A thread is a channel with
 * a parent: its messages, pins, reactions, read state and room socket are the channel routes', under
 * its id. Here: starting one (from a message, alone, or a forum's post with its first message),
 * listing a channel's, following them; and a thread's own settings, which `PATCH` and `DELETE`
 * `…/channels/{thread_id}` reach through the channel routes (src/api/channels.ts).
 */
export function threadRoutes(deps: Deps): Route[] {
  const h = threadHandlers(deps);
  const CH = '/api/servers/:server_id/channels/:channel_id';
  return [
    { method: 'POST', path: `${CH}/threads`, auth: 'user', body: 'message', handler: h.createThread },
    { method: 'GET', path: `${CH}/threads`, auth: 'user', body: 'none', handler: h.listThreads },
    { method: 'GET', path: `${CH}/members`, auth: 'user', body: 'none', handler: h.listThreadMembers },
    { method: 'PUT', path: `${CH}/members/@me`, auth: 'user', body: 'none', handler: h.joinThread },
    { method: 'DELETE', path: `${CH}/members/@me`, auth: 'user', body: 'none', handler: h.leaveThread },
    { method: 'PUT', path: `${CH}/members/:user_id`, auth: 'user', body: 'none', handler: h.addThreadMember },
    { method: 'DELETE', path: `${CH}/members/:user_id`, auth: 'user', body: 'none', handler: h.removeThreadMember },
  ];
}

/** What `PATCH …/channels/{id}` takes of a thread only, and of a listed channel only (each refuses the other's: 400). */
export const THREAD_FIELDS = ['archived', 'locked', 'auto_archive_minutes', 'applied_tags'];
const CHANNEL_FIELDS = [
  'topic',
  'position',
  'slowmode_seconds',
  'category_id',
  'permissions_synced',
  'available_tags',
  'default_reaction',
  'default_sort',
  'user_limit',
  'bitrate',
];

/** The multipart fields of a forum post (its files are `attachments`, as a message's). */
const POST_FIELDS = {
  names: new Set(['name', 'content', 'applied_tags', 'auto_archive_minutes']),
  maxBytes: MAX_FIELD_BYTES,
  files: 'attachments',
  maxFields: 4,
};

export function threadHandlers(deps: Deps) {
  const { db, perms, limits, directory, readStates, audit, uploads, messages, posting, threads, threadNews, hub } = deps;
  const attachmentsOf = db.prepare<[string], string>('SELECT a.id FROM attachments a JOIN messages m ON m.seq = a.message_seq WHERE m.channel_id = ?').pluck();

  /** A thread of this server the caller sees (404 otherwise, as for a channel), and what they may do in it. */
  function threadIn(ctx: Ctx, threadId = ctx.params.channel_id): { thread: ThreadRecord; access: Access } {
    const access = perms.channelAccess(ctx.user, threadId, ctx.params.server_id);
    const thread = threads.get(threadId);
    if (!thread) throw notFound('thread not found');
    return { thread, access };
  }

  /** A channel that may have threads: a text channel or a forum the caller sees. */
  function parentIn(ctx: Ctx): { parent: ChannelRecord; access: Access } {
    const access = perms.channelAccess(ctx.user, ctx.params.channel_id, ctx.params.server_id);
    const parent = directory.channel(access.container.id)!;
    if (parent.type === 'thread') throw badRequest('a thread has no threads of its own');
    if (parent.type === 'voice') throw badRequest('a voice channel has no threads');
    return { parent, access };
  }

  const manages = (access: Pick<Access, 'flags'>) => has(access.flags, 'manage_threads');

  return {
    createThread,
    listThreads,
    listThreadMembers,
    joinThread,
    leaveThread,
    addThreadMember,
    removeThreadMember,
    updateThread,
    deleteThread,
  };

  /**
   * In a text channel `{"name", "message_id"?, "private"?, "auto_archive_minutes"?}`: a thread
   * from one of its messages (create_public_threads; a message starts one thread at most, 409),
   * or alone (private: create_private_threads; a private one starts from no message). In a forum
   * `{"name", "content", "applied_tags"?, "auto_archive_minutes"?}`, JSON or multipart with files
   * as a message: a post, its thread and first message in one transaction (send_messages there).
   * 201 the thread (a post: with its `message`); the starter follows it.
   */
  async function createThread(ctx: Ctx) {
    const { parent, access } = parentIn(ctx);
    if (parent.type === 'forum') return forumPost(ctx, parent, access);
    const body = await readFields(ctx);
    // Every field the documents name is read or refused, never passed over.
    if (body.content !== undefined || body.applied_tags !== undefined)
      throw badRequest('content and applied_tags are a forum post’s: a thread of a text channel starts empty');
    const name = text(body, 'name', { max: MAX_NAME_CHARS });
    const isPrivate = body.private === undefined ? false : bool(body, 'private');
    const messageId = body.message_id === undefined || body.message_id === null ? null : uuid(body, 'message_id');
    const minutes = autoArchive(body);
    if (isPrivate && messageId) throw badRequest('a private thread starts from no message: leave out message_id');
    posting.requireMayStartThread(ctx.user, access, isPrivate);
    // The message, as the caller may read it (404 otherwise), and one thread a message at most.
    if (messageId) messages.get(access, messageId, ctx.user.id);
    limits.threadsPerUser.take(ctx.user.id, 'threads started');
    const serverId = parent.server_id;
    const id = db.transaction(() => {
      threads.requireRoom(serverId);
      if (messageId && threads.ofStarter(messageId)) throw conflict('this message already has a thread');
      const id = threads.add(serverId, parent.id, {
        name,
        ownerId: ctx.user.id,
        private: isPrivate,
        autoArchiveMinutes: minutes,
        starterMessageId: messageId,
      });
      threads.join(id, serverId, [ctx.user.id]);
      return id;
    })();
    const thread = threads.get(id)!;
    threadNews.created(thread);
    threadNews.members(thread, [ctx.user.id], []);
    return created(thread);
  }

  /** A forum's post: admitted before its body is read (an upload never waits to be refused). */
  async function forumPost(ctx: Ctx, forum: ChannelRecord, access: Access) {
    const admitted = posting.admitPost(ctx.user, access);
    let files: ReceivedFile[] = [];
    try {
      limits.threadsPerUser.take(ctx.user.id, 'threads started');
      const multipart = mediaType(ctx.req) === 'multipart/form-data';
      let body: Body;
      if (multipart) {
        const received = await uploads.receive(ctx.req, POST_FIELDS);
        files = received.files;
        body = received.fields;
      } else body = await readJson(ctx.req);
      if (body.message_id !== undefined && body.message_id !== null) throw badRequest('a forum post starts from no message: leave out message_id');
      if (body.private !== undefined && body.private !== false) throw badRequest('a forum post is not private: leave out private');
      const name = text(body, 'name', { max: MAX_NAME_CHARS });
      if (body.content === undefined) body.content = '';
      const content = text(body, 'content', { min: 0, max: MAX_CONTENT_CHARS, trim: false, multiline: true });
      const minutes = autoArchive(body, multipart);
      const tags = appliedTags(body, forum, access, [], multipart);
      const { threadId, message } = admitted.post(
        { content, replyTo: null, files },
        () => {
          threads.requireRoom(forum.server_id);
          return threads.add(forum.server_id, forum.id, { name, ownerId: ctx.user.id, autoArchiveMinutes: minutes, appliedTags: tags });
        },
        multipart ? () => ({ user: ctx.user, where: perms.channelAccess(ctx.user, forum.id, forum.server_id) }) : undefined,
      );
      return created({ ...threads.get(threadId)!, message });
    } catch (err) {
      admitted.cancel();
      uploads.discard(files);
      throw err;
    }
  }

  /**
   * The channel's active threads, the latest activity first; `?archived=true` its archived ones,
   * the latest archived first, `limit` (default 50, max 100) at a time after `before` (a thread of
   * the page before). Only the threads the caller sees (a private one: its members, manage_threads).
   * A forum post carries its first message (first lines, first image) when the caller may read it:
   * without read_history, only one sent after they joined (as the messages route and its download).
   */
  function listThreads(ctx: Ctx) {
    const { parent, access } = parentIn(ctx);
    const archived = ctx.query.get('archived');
    if (archived !== null && archived !== 'true' && archived !== 'false') throw badRequest('archived must be true or false');
    const rules = perms.channelRules(parent.server_id);
    const sees = (t: ThreadRecord) => rules !== null && (rules.flags(ctx.user.id, t.id) & VIEW) !== 0;
    const listed = ({ thread, first }: ListedRow): ListedThread => ({
      ...thread,
      first_message: first && first.seq > rules!.historyFloor(ctx.user.id, thread.id) ? { content: first.content, image: first.image } : null,
    });
    // limit is read (and a bad one refused) on both lists, though only the archived one pages.
    const limit = limitParam(ctx.query);
    if (archived !== 'true') {
      if (ctx.query.get('before') !== null) throw badRequest('before pages archived threads: add archived=true');
      return json(
        threads
          .active(parent.id)
          .filter((row) => sees(row.thread))
          .map(listed),
      );
    }
    const beforeId = uuidParam(ctx.query, 'before');
    let cursor = null;
    if (beforeId) {
      const from = threads.get(beforeId);
      if (!from || from.parent_id !== parent.id || !from.archived || !sees(from)) throw notFound('before: no such archived thread of this channel');
      cursor = { archivedAt: from.archived_at!, id: from.id };
    }
    const reader = { userId: ctx.user.id, managesThreads: manages(access) };
    return json(threads.archived(parent.id, reader, cursor, limit).map(listed));
  }

  /** Who follows the thread, first joined first. */
  function listThreadMembers(ctx: Ctx) {
    const { thread } = threadIn(ctx);
    return json(threads.members(thread.id));
  }

  /** The caller follows the thread (204, whether or not they did). */
  function joinThread(ctx: Ctx) {
    const { thread } = threadIn(ctx);
    const added = db.transaction(() => threads.join(thread.id, thread.server_id, [ctx.user.id]))();
    threadNews.members(threads.get(thread.id)!, added, []);
    return noContent();
  }

  /** The caller no longer follows it (204 either way); a private thread is then gone for them, unless they manage threads. */
  function leaveThread(ctx: Ctx) {
    const { thread } = threadIn(ctx);
    if (db.transaction(() => threads.leave(thread.id, ctx.user.id))()) threadNews.members(threads.get(thread.id)!, [], [ctx.user.id]);
    return noContent();
  }

  /**
   * Adds a member of the server who sees the thread's parent (404 otherwise): whoever may write in
   * the thread (as mentioning them would). 204.
   */
  function addThreadMember(ctx: Ctx) {
    const { thread, access } = threadIn(ctx);
    posting.requireMaySend(ctx.user, access);
    const userId = ctx.params.user_id;
    const rules = perms.channelRules(thread.server_id);
    if (!rules || !(rules.flags(userId, thread.parent_id) & VIEW)) throw notFound('member not found: not a member of this server who sees this channel');
    const added = db.transaction(() => threads.join(thread.id, thread.server_id, [userId]))();
    threadNews.members(threads.get(thread.id)!, added, []);
    return noContent();
  }

  /** Removes a member: manage_threads, or the owner of a private thread; 404 when they do not follow it. 204. */
  function removeThreadMember(ctx: Ctx) {
    const { thread, access } = threadIn(ctx);
    const userId = ctx.params.user_id;
    if (userId !== ctx.user.id && !manages(access) && !(thread.private && thread.owner_id === ctx.user.id)) {
      throw forbidden('only those who manage threads, or the owner of a private thread, remove its members');
    }
    if (!db.transaction(() => threads.leave(thread.id, userId))()) throw notFound('member not found in this thread');
    threadNews.members(threads.get(thread.id)!, [], [userId]);
    return noContent();
  }

  /**
   * `PATCH …/channels/{thread_id}` `{"name"?, "archived"?, "locked"?, "auto_archive_minutes"?,
   * "applied_tags"?}`: its owner renames it, archives and unarchives it, sets its auto-archive
   * time and (a forum post's) tags, while it is not locked; manage_threads does everything, and
   * alone locks and unlocks, and applies moderated tags. 200 the thread; audited; thread_updated.
   */
  function updateThread(ctx: Ctx) {
    const { thread, access } = threadIn(ctx);
    posting.requireMayWrite(ctx.user, access.container);
    const body = ctx.body;
    const other = CHANNEL_FIELDS.find((key) => body[key] !== undefined);
    if (other) throw badRequest(`${other}: a thread takes name, archived, locked, auto_archive_minutes and applied_tags`);
    const manager = manages(access);
    const owner = thread.owner_id === ctx.user.id;
    const change: ThreadChange = {};
    if (body.name !== undefined) change.name = text(body, 'name', { max: MAX_NAME_CHARS });
    if (body.archived !== undefined) change.archived = bool(body, 'archived');
    if (body.locked !== undefined) change.locked = bool(body, 'locked');
    if (body.auto_archive_minutes !== undefined) change.autoArchiveMinutes = autoArchive(body);
    if (body.applied_tags !== undefined) {
      const forum = directory.channel(thread.parent_id);
      if (forum?.type !== 'forum') throw badRequest('applied_tags: only a forum post carries tags');
      change.appliedTags = appliedTags(body, forum, access, thread.applied_tags);
    }
    if (change.locked !== undefined && change.locked !== thread.locked && !manager) throw forbidden('only those who manage threads lock and unlock them');
    if (!manager) {
      if (!owner) throw forbidden("only the thread's owner or those who manage threads change it");
      if (thread.locked) throw forbidden('this thread is locked: only those who manage threads change it');
    }
    const changes = threadDiff(thread, change);
    const reason = auditReason(ctx);
    db.transaction(() => {
      if (change.archived === false && thread.archived) threads.requireRoom(thread.server_id);
      threads.update(thread.id, change);
      if (Object.keys(changes).length > 0) {
        audit.write({ serverId: thread.server_id, action: 'thread_update', actorId: ctx.user.id, targetId: thread.id, targetKind: 'channel', reason, changes });
      }
    })();
    const after = threads.get(thread.id)!;
    if (Object.keys(changes).length > 0) threadNews.updated(after);
    return json(after);
  }

  /** `DELETE …/channels/{thread_id}`: manage_threads; its messages and files go; audited; thread_deleted to who saw it; 204. */
  function deleteThread(ctx: Ctx) {
    const { thread, access } = threadIn(ctx);
    perms.requireFlag(access, 'manage_threads');
    const reason = auditReason(ctx);
    const audience = threadNews.viewers(thread);
    const fileIds = db.transaction(() => {
      const ids = attachmentsOf.all(thread.id);
      threads.remove(thread.id);
      readStates.forget([thread.id]);
      audit.write({
        serverId: thread.server_id,
        action: 'thread_delete',
        actorId: ctx.user.id,
        targetId: thread.id,
        targetKind: 'channel',
        reason,
        changes: { name: thread.name },
      });
      return ids;
    })();
    uploads.deleteFiles(fileIds);
    hub.closeRoom(threadContainer(thread));
    threadNews.deleted(thread, audience);
    return noContent();
  }

  /** A JSON body, or a multipart one without files (a thread of a text channel carries none). */
  async function readFields(ctx: Ctx): Promise<Body> {
    if (mediaType(ctx.req) !== 'multipart/form-data') return readJson(ctx.req);
    const { fields, files } = await uploads.receive(ctx.req, { ...POST_FIELDS, names: new Set(['name', 'message_id', 'private', 'auto_archive_minutes']) });
    uploads.discard(files);
    if (files.length > 0) throw badRequest('files come with a forum post (or a message), not with a thread of a text channel');
    if (typeof fields.private === 'string') fields.private = fields.private === 'true' ? true : fields.private === 'false' ? false : fields.private;
    numberField(fields, 'auto_archive_minutes');
    return fields;
  }
}

/** A multipart field that is a number as text becomes the number (JSON sends it as one). */
function numberField(body: Body, key: string): void {
  if (typeof body[key] === 'string' && /^\d{1,6}$/.test(body[key] as string)) body[key] = Number(body[key]);
}

/** `auto_archive_minutes`: one of Discord's four (60, 1440, 4320, 10080); absent: a day. */
function autoArchive(body: Body, multipart = false): AutoArchiveMinutes | undefined {
  if (multipart) numberField(body, 'auto_archive_minutes');
  const value = body.auto_archive_minutes;
  if (value === undefined) return undefined;
  if (!AUTO_ARCHIVE_MINUTES.includes(value as AutoArchiveMinutes)) throw badRequest(`auto_archive_minutes must be one of ${AUTO_ARCHIVE_MINUTES.join(', ')}`);
  return value as AutoArchiveMinutes;
}

/**
 * A post's tags: ids of its forum's available_tags, each once, at most MAX_APPLIED_TAGS; a
 * moderated tag is applied (or taken off) only with manage_threads. Multipart sends them as one
 * field of ids separated by commas.
 */
function appliedTags(body: Body, forum: ChannelRecord, access: Pick<Access, 'flags'>, before: readonly string[], multipart = false): string[] {
  let value = body.applied_tags;
  if (value === undefined) return [...before];
  if (multipart && typeof value === 'string') value = value.trim() === '' ? [] : value.split(',').map((id) => id.trim().toLowerCase());
  if (!Array.isArray(value) || value.some((id) => typeof id !== 'string')) throw badRequest('applied_tags must be an array of tag ids');
  // Counted as sent (the documents say at most 5 items), each then once.
  if (value.length > MAX_APPLIED_TAGS) throw badRequest(`applied_tags: a post carries at most ${MAX_APPLIED_TAGS} tags`);
  const ids = [...new Set((value as string[]).map((id) => id.toLowerCase()))];
  const available = new Map<string, ForumTag>((forum.available_tags ?? []).map((tag) => [tag.id, tag]));
  for (const id of ids) if (!available.has(id)) throw badRequest(`applied_tags: this forum has no tag ${JSON.stringify(id.slice(0, 40))}`);
  const moved = [...ids.filter((id) => !before.includes(id)), ...before.filter((id) => !ids.includes(id))];
  if (moved.some((id) => available.get(id)?.moderated) && !has(access.flags, 'manage_threads')) {
    throw forbidden('a moderated tag is applied or taken off only by those who manage threads');
  }
  return ids;
}

/** What a change changes, as the audit log keeps it: each field from and to. */
function threadDiff(thread: ThreadRecord, change: ThreadChange): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  const note = (key: string, from: unknown, to: unknown) => {
    if (to !== undefined && JSON.stringify(from) !== JSON.stringify(to)) changes[key] = { from, to };
  };
  note('name', thread.name, change.name);
  note('archived', thread.archived, change.archived);
  note('locked', thread.locked, change.locked);
  note('auto_archive_minutes', thread.auto_archive_minutes, change.autoArchiveMinutes);
  note('applied_tags', thread.applied_tags, change.appliedTags);
  return changes;
}
