import crypto from 'node:crypto';
import { iso } from '../core/clock';
import { createFriendCheck, pairKey } from '../rules/friendship';
import { badRequest, conflict, forbidden, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { Services } from '../parts/services';
import { conversationEntry } from '../parts/live/ready';
import { assertAllowed } from '../rules/standing';
import type { Ctx, Route, User } from '../core/types';
import { USERNAME_RULE } from '../parts/accounts/users';
import { stringArray, text } from '../core/validate';

/** Friends named at group creation (spec section 8), the creator not counted. */
export const MIN_GROUP_FRIENDS = 1;
export const MAX_GROUP_FRIENDS = 25;
/** A group holds the creator and 25 more, however they came in. */
export const MAX_GROUP_MEMBERS = MAX_GROUP_FRIENDS + 1;
export const MAX_GROUP_NAME_CHARS = 100;

type Deps = Pick<Services, 'db' | 'clock' | 'users' | 'perms' | 'hub' | 'directory' | 'readStates' | 'presence'>;

/** Direct messages and group chats (spec section 4); their messages are in src/api/messages.ts. */
export function conversationRoutes(deps: Deps): Route[] {
  const h = conversationHandlers(deps);
  return [
    { method: 'GET', path: '/api/conversations', auth: 'user', body: 'none', handler: h.listConversations },
    { method: 'POST', path: '/api/conversations/dm', auth: 'user', body: 'json', handler: h.openDm },
    { method: 'POST', path: '/api/conversations/group', auth: 'user', body: 'json', handler: h.createGroup },
    { method: 'GET', path: '/api/conversations/:conversation_id', auth: 'user', body: 'none', handler: h.getConversation },
    { method: 'PATCH', path: '/api/conversations/:conversation_id', auth: 'user', body: 'json', handler: h.renameGroup },
    { method: 'PUT', path: '/api/conversations/:conversation_id/members/:user_id', auth: 'user', body: 'none', handler: h.addGroupMember },
    { method: 'DELETE', path: '/api/conversations/:conversation_id/members/:user_id', auth: 'user', body: 'none', handler: h.removeGroupMember },
  ];
}

function conversationHandlers(deps: Deps) {
  const { db, clock, users, perms, hub, directory, readStates } = deps;
  const areFriends = createFriendCheck(db);
  const insertConversation = db.prepare('INSERT INTO conversations (id, kind, name, dm_key, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  // A member starts with everything already there read.
  const insertMember = db.prepare(
    `INSERT OR IGNORE INTO conversation_members (conversation_id, user_id, joined_seq)
     VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) FROM messages))`,
  );
  const dmByKey = db.prepare<[string], { id: string }>('SELECT id FROM conversations WHERE dm_key = ?');
  const recordById = (id: string) => directory.conversation(id)!;
  /** Every member's streams learn of the new conversation, each with their own read state. */
  const announceCreated = (id: string) => {
    const record = recordById(id);
    for (const member of record.members) {
      hub.toUsers([member.user_id], { event: 'conversation_created', conversation: conversationEntry(deps, member.user_id, record) });
    }
    return record;
  };

  /** Resolves a listed username to a user: 400 malformed, 404 unknown, 400 oneself. */
  const otherUser = (caller: User, name: string): User => {
    if (!USERNAME_RULE.test(name)) throw badRequest('usernames must hold valid usernames');
    const user = users.byUsername(name);
    if (!user) throw notFound(`no user named ${name}`);
    if (user.id === caller.id) throw badRequest('list the other members only, not yourself');
    return user;
  };

  const renameRow = db.prepare('UPDATE conversations SET name = ? WHERE id = ?');
  const deleteMember = db.prepare('DELETE FROM conversation_members WHERE conversation_id = ? AND user_id = ?');
  const creatorOf = db.prepare<[string], { created_by: string; kind: string }>('SELECT created_by, kind FROM conversations WHERE id = ?');
  const memberCount = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM conversation_members WHERE conversation_id = ?');
  const memberIds = db.prepare<[string], string>('SELECT user_id FROM conversation_members WHERE conversation_id = ?').pluck();

  /** A group the caller is in: 404 for outsiders, 400 for a DM (two people, nothing to manage: issue 18's status, kept). */
  const groupOf = (ctx: Ctx) => {
    const conversationId = ctx.params.conversation_id;
    perms.conversationAccess(ctx.user, conversationId);
    const row = creatorOf.get(conversationId)!;
    if (row.kind !== 'group') throw badRequest('a DM cannot be changed: only group chats have a name and members to manage');
    return { conversationId, createdBy: row.created_by };
  };
  /** After a change: every member's streams get the new record. */
  const announceUpdated = (id: string) => {
    const record = recordById(id);
    hub.toUsers(
      record.members.map((m) => m.user_id),
      { event: 'conversation_updated', conversation_id: id, conversation: record },
    );
    return record;
  };

  return { listConversations, openDm, createGroup, getConversation, renameGroup, addGroupMember, removeGroupMember };

  /** The caller's DMs and groups, most recent activity first (last message, else creation), each with its read state. */
  function listConversations(ctx: Ctx) {
    const states = readStates.conversations(ctx.user.id);
    return json(
      directory.conversationsOf(ctx.user.id).map((conversation) => {
        const { conversation_id: _id, ...state } = states.get(conversation.id)!;
        return { ...conversation, ...state };
      }),
    );
  }

  /**
   * 201 when created, 200 with the same record when the two already have their DM (one per pair);
   * not exactly one name, oneself or not a friend 400, unknown 404; an existing DM survives unfriending.
   */
  function openDm(ctx: Ctx) {
    const [name] = stringArray(ctx.body, 'usernames', 1, 1);
    const other = otherUser(ctx.user, name);
    perms.requireNotBlocked(ctx.user.id, other.id, 'direct messages');
    const key = pairKey(ctx.user.id, other.id);
    const id = crypto.randomUUID();
    const isNew = db.transaction(() => {
      if (dmByKey.get(key)) return false;
      if (!areFriends(ctx.user.id, other.id)) throw badRequest(`${other.username} is not your friend`);
      insertConversation.run(id, 'dm', null, key, ctx.user.id, iso(clock.now()));
      insertMember.run(id, ctx.user.id);
      insertMember.run(id, other.id);
      return true;
    })();
    return isNew ? created(announceCreated(id)) : json(recordById(dmByKey.get(key)!.id));
  }

  /**
   * 201 group of the creator and 1 to 25 friends (repeats count once); standing 2 and above 403;
   * a name that is not a friend 400 (the first one), unknown 404, oneself 400.
   */
  function createGroup(ctx: Ctx) {
    assertAllowed(ctx.user, 'create_group');
    const name = text(ctx.body, 'name', { max: MAX_GROUP_NAME_CHARS });
    const names = stringArray(ctx.body, 'usernames', MIN_GROUP_FRIENDS, MAX_GROUP_FRIENDS);
    const members = new Map<string, User>();
    for (const listed of names) {
      const user = otherUser(ctx.user, listed);
      perms.requireNotBlocked(ctx.user.id, user.id, 'group chats');
      if (!areFriends(ctx.user.id, user.id)) throw badRequest(`${user.username} is not your friend`);
      members.set(user.id, user);
    }
    perms.requireNoBlockAmong([...members.keys()], [...members.keys()]);
    const id = crypto.randomUUID();
    db.transaction(() => {
      insertConversation.run(id, 'group', name, null, ctx.user.id, iso(clock.now()));
      insertMember.run(id, ctx.user.id);
      for (const userId of members.keys()) insertMember.run(id, userId);
    })();
    return created(announceCreated(id));
  }

  /** One conversation, members only (404 otherwise). */
  function getConversation(ctx: Ctx) {
    perms.conversationAccess(ctx.user, ctx.params.conversation_id);
    return json(recordById(ctx.params.conversation_id));
  }

  /** Any member of a group: {name}; 200 conversation; members get conversation_updated; a DM 400. */
  function renameGroup(ctx: Ctx) {
    const { conversationId } = groupOf(ctx);
    assertAllowed(ctx.user, 'send_private_message');
    renameRow.run(text(ctx.body, 'name', { max: MAX_GROUP_NAME_CHARS }), conversationId);
    return json(announceUpdated(conversationId));
  }

  /**
   * A member adds a friend of theirs: 200 conversation; at most 26 people (400); not someone
   * either side blocked (403); the added user gets conversation_created, the others conversation_updated.
   */
  function addGroupMember(ctx: Ctx) {
    const { conversationId } = groupOf(ctx);
    assertAllowed(ctx.user, 'create_group');
    const userId = ctx.params.user_id;
    const user = users.byId(userId);
    if (!user) throw notFound('user not found');
    if (perms.rankIn(userId, { kind: 'conversation', id: conversationId })) return json(recordById(conversationId));
    perms.requireNotBlocked(ctx.user.id, userId, 'group chats');
    if (!areFriends(ctx.user.id, userId)) throw forbidden(`${user.username} is not your friend`);
    perms.requireNoBlockAmong([userId], memberIds.all(conversationId));
    db.transaction(() => {
      if (memberCount.get(conversationId)!.n >= MAX_GROUP_MEMBERS) throw conflict(`a group chat holds at most ${MAX_GROUP_MEMBERS} people`);
      insertMember.run(conversationId, userId);
    })();
    const record = announceUpdated(conversationId);
    hub.toUsers([userId], { event: 'conversation_created', conversation: conversationEntry(deps, userId, record) });
    return json(record);
  }

  /**
   * Oneself (leaving) or, for the group's creator, anyone else; 204; the removed user's room
   * sockets close and they get conversation_left; the rest conversation_updated; a DM 400.
   */
  function removeGroupMember(ctx: Ctx) {
    const { conversationId, createdBy } = groupOf(ctx);
    const userId = ctx.params.user_id;
    if (userId !== ctx.user.id && createdBy !== ctx.user.id) throw forbidden('only the creator of a group can remove others from it');
    if (!perms.rankIn(userId, { kind: 'conversation', id: conversationId })) throw notFound('member not found');
    db.transaction(() => {
      deleteMember.run(conversationId, userId);
      readStates.forget([conversationId], userId);
    })();
    hub.dropUser(userId, { conversationId });
    hub.toUsers([userId], { event: 'conversation_left', conversation_id: conversationId });
    announceUpdated(conversationId);
    return noContent();
  }
}
