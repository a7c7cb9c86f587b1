import crypto from 'node:crypto';
import { iso } from '../clock';
import { createFriendCheck, pairKey } from '../friendship';
import { badRequest, notFound } from '../http/errors';
import { created, json } from '../http/respond';
import type { Services } from '../services';
import { assertAllowed } from '../standing';
import type { Ctx, Route, User } from '../types';
import { USERNAME_RULE } from '../users';
import { stringArray, text } from '../validate';

/** Friends named at group creation (spec section 8), the creator not counted. */
export const MIN_GROUP_FRIENDS = 1;
export const MAX_GROUP_FRIENDS = 25;
export const MAX_GROUP_NAME_CHARS = 100;

type Deps = Pick<Services, 'db' | 'clock' | 'users' | 'perms'>;

/** Direct messages and group chats (spec section 4); their messages are in src/api/messages.ts. */
export function conversationRoutes(deps: Deps): Route[] {
  const h = conversationHandlers(deps);
  return [
    { method: 'GET', path: '/api/conversations', auth: 'user', body: 'none', handler: h.listConversations },
    { method: 'POST', path: '/api/conversations/dm', auth: 'user', body: 'json', handler: h.openDm },
    { method: 'POST', path: '/api/conversations/group', auth: 'user', body: 'json', handler: h.createGroup },
    { method: 'GET', path: '/api/conversations/:conversation_id', auth: 'user', body: 'none', handler: h.getConversation },
  ];
}

interface ConversationRow {
  id: string;
  kind: 'dm' | 'group';
  name: string | null;
  created_at: string;
  last_message_at: string | null;
}

interface MemberRow {
  conversation_id: string;
  user_id: string;
  username: string;
}

const conversationRecord = (row: ConversationRow, members: MemberRow[]) => ({
  id: row.id,
  kind: row.kind,
  name: row.name,
  members: members.map((m) => ({ user_id: m.user_id, username: m.username })),
  created_at: row.created_at,
  last_message_at: row.last_message_at,
});

function conversationHandlers({ db, clock, users, perms }: Deps) {
  const areFriends = createFriendCheck(db);
  const insertConversation = db.prepare(
    'INSERT INTO conversations (id, kind, name, dm_key, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertMember = db.prepare('INSERT OR IGNORE INTO conversation_members (conversation_id, user_id) VALUES (?, ?)');
  const dmByKey = db.prepare<[string], { id: string }>('SELECT id FROM conversations WHERE dm_key = ?');
  // The last message is found through messages_by_conversation (conversation_id, seq).
  const CONVERSATION_COLUMNS = `c.id, c.kind, c.name, c.created_at,
    (SELECT m.created_at FROM messages m WHERE m.conversation_id = c.id ORDER BY m.seq DESC LIMIT 1) AS last_message_at`;
  const conversationById = db.prepare<[string], ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?`,
  );
  const conversationsOfUser = db.prepare<[string], ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS}
       FROM conversation_members cm JOIN conversations c ON c.id = cm.conversation_id
      WHERE cm.user_id = ?
      ORDER BY COALESCE(last_message_at, c.created_at) DESC, c.rowid DESC`,
  );
  const membersOf = db.prepare<[string], MemberRow>(
    `SELECT cm.conversation_id, u.id AS user_id, u.username
       FROM conversation_members cm JOIN users u ON u.id = cm.user_id
      WHERE cm.conversation_id = ? ORDER BY u.username, u.id`,
  );
  // Every member of every conversation of one user in one query: the list has no N+1.
  const membersOfUsersConversations = db.prepare<[string], MemberRow>(
    `SELECT cm.conversation_id, u.id AS user_id, u.username
       FROM conversation_members cm JOIN users u ON u.id = cm.user_id
      WHERE cm.conversation_id IN (SELECT conversation_id FROM conversation_members WHERE user_id = ?)
      ORDER BY u.username, u.id`,
  );

  const recordById = (id: string) => conversationRecord(conversationById.get(id)!, membersOf.all(id));

  /** Resolves a listed username to a user: 400 malformed, 404 unknown, 400 oneself. */
  const otherUser = (caller: User, name: string): User => {
    if (!USERNAME_RULE.test(name)) throw badRequest('usernames must hold valid usernames');
    const user = users.byUsername(name);
    if (!user) throw notFound(`no user named ${name}`);
    if (user.id === caller.id) throw badRequest('list the other members only, not yourself');
    return user;
  };

  return { listConversations, openDm, createGroup, getConversation };

  /** The caller's DMs and groups, most recent activity first (last message, else creation). */
  function listConversations(ctx: Ctx) {
    const members = new Map<string, MemberRow[]>();
    for (const m of membersOfUsersConversations.all(ctx.user.id)) {
      const list = members.get(m.conversation_id) ?? [];
      list.push(m);
      members.set(m.conversation_id, list);
    }
    return json(conversationsOfUser.all(ctx.user.id).map((c) => conversationRecord(c, members.get(c.id) ?? [])));
  }

  /**
   * 201 when created, 200 with the same record when the two already have their DM (one per pair);
   * not exactly one name, oneself or not a friend 400, unknown 404; an existing DM survives unfriending.
   */
  function openDm(ctx: Ctx) {
    const [name] = stringArray(ctx.body, 'usernames', 1, 1);
    const other = otherUser(ctx.user, name);
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
    return isNew ? created(recordById(id)) : json(recordById(dmByKey.get(key)!.id));
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
      if (!areFriends(ctx.user.id, user.id)) throw badRequest(`${user.username} is not your friend`);
      members.set(user.id, user);
    }
    const id = crypto.randomUUID();
    db.transaction(() => {
      insertConversation.run(id, 'group', name, null, ctx.user.id, iso(clock.now()));
      insertMember.run(id, ctx.user.id);
      for (const userId of members.keys()) insertMember.run(id, userId);
    })();
    return created(recordById(id));
  }

  /** One conversation, members only (404 otherwise). */
  function getConversation(ctx: Ctx) {
    perms.conversationAccess(ctx.user, ctx.params.conversation_id);
    return json(recordById(ctx.params.conversation_id));
  }
}
