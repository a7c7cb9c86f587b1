import crypto from 'node:crypto';
import type { DB } from '../../core/db';
import { conflict, notFound } from '../../core/http/errors';
import type { Hub } from '../delivery/hub';
import type { AccountDeletion } from './account-deletion';
import type { AccountRows } from './account-rows';
import { botSessionToken } from './auth';
import { tokenHash } from './users';

/** Bots one person may own. */
export const MAX_BOTS_PER_OWNER = 10;

export interface BotRecord {
  id: string;
  username: string;
  display_name: string | null;
  avatar_url: string | null;
  bot: true;
  created_at: string;
}

export interface Bots {
  /** A new bot and its token (`<id>.<secret>`), shown this once. 409 when the name is taken. */
  create(ownerId: string, username: string): BotRecord & { token: string };
  list(ownerId: string): BotRecord[];
  /** A new token; the old one stops working at once, and the bot's sockets close. */
  resetToken(ownerId: string, botId: string): string;
  /** Deleted as an account is (its messages stay, as deleted-user); its sockets close. */
  remove(ownerId: string, botId: string): void;
  /** The caller's bot, or 404 (another's bot is not theirs to know of). */
  owned(ownerId: string, botId: string): BotRecord;
}

/**
 * Bot accounts (docs/api.md "Bots"): users with `bot = 1` and an owner, who sign in with a token
 * only (their password hash is '!', which no password matches). The token's secret is stored as
 * its SHA-256.
 */
export function createBots({
  db,
  accountRows,
  hub,
  deletion,
}: {
  db: DB;
  accountRows: Pick<AccountRows, 'createAccount'>;
  hub: Hub;
  deletion: AccountDeletion;
}): Bots {
  const ownedBy = db.prepare<[string], Omit<BotRecord, 'bot'>>(
    `SELECT p.id, p.username, p.display_name, p.avatar_url, u.created_at FROM users u JOIN profiles p ON p.id = u.id
      WHERE u.bot_owner_id = ? AND u.bot = 1 AND u.deleted_at IS NULL ORDER BY u.created_at, u.id`,
  );
  const nameTaken = db.prepare<[string], number>('SELECT 1 FROM users WHERE username = ? COLLATE NOCASE').pluck();
  const setToken = db.prepare('UPDATE users SET bot_token_hash = ? WHERE id = ?');
  /** A token is `<bot id>.<secret>`; the secret's hash is stored. */
  const newSecret = () => {
    const secret = crypto.randomBytes(32).toString('base64url');
    return { secret, hash: tokenHash(secret) };
  };
  const asRecord = (row: Omit<BotRecord, 'bot'>): BotRecord => ({ ...row, bot: true });

  const bots: Bots = {
    create(ownerId, username) {
      const { secret, hash } = newSecret();
      const id = db.transaction(() => {
        if (ownedBy.all(ownerId).length >= MAX_BOTS_PER_OWNER) throw conflict(`you may own at most ${MAX_BOTS_PER_OWNER} bots`);
        if (nameTaken.get(username) || username.toLowerCase() === 'deleted-user') throw conflict('username is already taken', 'username_taken');
        return accountRows.createAccount({ kind: 'bot', username, ownerId, tokenHash: hash });
      })();
      return { ...bots.owned(ownerId, id), token: `${id}.${secret}` };
    },
    list: (ownerId) => ownedBy.all(ownerId).map(asRecord),
    owned(ownerId, botId) {
      const row = ownedBy.all(ownerId).find((b) => b.id === botId);
      if (!row) throw notFound('bot not found');
      return asRecord(row);
    },
    resetToken(ownerId, botId) {
      bots.owned(ownerId, botId);
      const { secret, hash } = newSecret();
      setToken.run(hash, botId);
      hub.endSession(botSessionToken(botId));
      return `${botId}.${secret}`;
    },
    remove(ownerId, botId) {
      bots.owned(ownerId, botId);
      deletion.deleteAccount(botId);
    },
  };
  return bots;
}
