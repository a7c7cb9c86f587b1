import type { DB } from '../../core/db';
import type { Directory } from '../community/directory';
import { conflict } from '../../core/http/errors';
import type { Members } from '../community/members';
import type { Hub } from '../delivery/hub';
import type { AccountRows } from './account-rows';
import { botSessionToken } from './auth';
import type { SessionStore } from './sessions';

/** What account deletion touches outside the database, once it committed. */
export interface DeletionParts {
  db: DB;
  /** The users row: erased here. */
  accountRows: Pick<AccountRows, 'erase'>;
  directory: Directory;
  members: Pick<Members, 'remove'>;
  hub: Hub;
  sessions: SessionStore;
  /** The user's files that go with the account: avatar and export. */
  removeFiles(userId: string): void;
}

/**
 * Deletes an account (DELETE /api/account) in one transaction. The row stays, so the user's
 * messages keep their author id (replies, threads) and show as `deleted-user` / `Deleted user`
 * (the `profiles` view); everything that identifies or reaches the person goes: name (renamed
 * `deleted-<id>`, so the username is free), email, password, profile, two-factor secrets,
 * memberships, friendships and requests, blocks, group chats (DMs stay, read-only, for the
 * other side), read markers, tokens, identities at providers and passkeys. Uploads stay with their messages.
 */
export function createAccountDeletion({ db, accountRows, directory, members, hub, sessions, removeFiles }: DeletionParts) {
  const ownedServers = db.prepare<[string], { name: string }>('SELECT name FROM servers WHERE owner_id = ? ORDER BY name');
  const serversOf = db.prepare<[string], { server_id: string }>('SELECT server_id FROM members WHERE user_id = ?');
  const groupsOf = db.prepare<[string], { id: string }>(
    `SELECT c.id FROM conversation_members cm JOIN conversations c ON c.id = cm.conversation_id
      WHERE cm.user_id = ? AND c.kind = 'group'`,
  );
  const friendsOf = db.prepare<[string, string], { other: string }>(
    `SELECT to_user AS other FROM friend_requests WHERE from_user = ? AND status = 'accepted'
     UNION SELECT from_user FROM friend_requests WHERE to_user = ? AND status = 'accepted'`,
  );
  const statements = [
    'DELETE FROM friend_requests WHERE from_user = :id OR to_user = :id',
    'DELETE FROM blocks WHERE blocker_id = :id OR blocked_id = :id',
    `DELETE FROM conversation_members WHERE user_id = :id
       AND conversation_id IN (SELECT id FROM conversations WHERE kind = 'group')`,
    'DELETE FROM read_states WHERE user_id = :id',
    'DELETE FROM message_mentions WHERE user_id = :id',
    'DELETE FROM recovery_codes WHERE user_id = :id',
    'DELETE FROM devices WHERE user_id = :id',
    'DELETE FROM device_retired_secrets WHERE user_id = :id',
    'DELETE FROM email_tokens WHERE user_id = :id',
    'DELETE FROM identities WHERE user_id = :id',
    'DELETE FROM passkeys WHERE user_id = :id',
  ].map((sql) => db.prepare(sql));

  /** 409 naming the servers the user owns: each must be transferred or deleted first. */
  function requireNoOwnedServers(userId: string): void {
    const owned = ownedServers.all(userId).map((s) => s.name);
    if (owned.length > 0) {
      throw conflict(`transfer or delete the servers you own first: ${owned.join(', ')}`, 'owns_servers');
    }
  }

  const botsOf = db.prepare<[string], string>('SELECT id FROM users WHERE bot_owner_id = ? AND bot = 1 AND deleted_at IS NULL').pluck();

  const deletion = {
    requireNoOwnedServers,
    /** Deletes the account, and first the bots it owns (docs/api.md "Bots"). */
    deleteAccount(userId: string): void {
      requireNoOwnedServers(userId);
      for (const botId of botsOf.all(userId)) deletion.deleteAccount(botId);
      const servers = serversOf.all(userId).map((r) => r.server_id);
      const groups = groupsOf.all(userId).map((r) => r.id);
      const friends = friendsOf.all(userId, userId).map((r) => r.other);
      db.transaction(() => {
        for (const serverId of servers) members.remove(serverId, userId);
        for (const statement of statements) statement.run({ id: userId });
        accountRows.erase(userId);
      })();
      // Committed: now the sockets and the people who could see the user hear of it.
      sessions.endAllForUser(userId);
      hub.endSession(botSessionToken(userId));
      removeFiles(userId);
      for (const serverId of servers) {
        hub.dropUser(userId, { serverId });
        hub.toServer(serverId, { event: 'member_left', server_id: serverId, user_id: userId });
      }
      for (const friend of friends) hub.toUsers([friend], { event: 'friend_removed', user_id: userId });
      for (const id of groups) {
        hub.dropUser(userId, { conversationId: id });
        const record = directory.conversation(id);
        if (record) {
          hub.toUsers(
            record.members.map((m) => m.user_id),
            { event: 'conversation_updated', conversation_id: id, conversation: record },
          );
        }
      }
    },
  };
  return deletion;
}

export type AccountDeletion = ReturnType<typeof createAccountDeletion>;
