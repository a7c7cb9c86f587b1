import crypto from 'node:crypto';
import { type DB, generationWatch } from '../../core/db';
import { isUuid } from '../../core/http/router';
import { badRequest } from '../../core/http/errors';
import type { Body, User } from '../../core/types';
import { botStanding } from '../../rules/standing';

/** Account rules of spec section 2 and 8. */
export const USERNAME_RULE = /^[A-Za-z0-9_-]{3,32}$/;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;

export function readUsername(body: Body): string {
  const username = body.username;
  if (typeof username !== 'string') throw badRequest('username must be a string', 'username_rule');
  if (!USERNAME_RULE.test(username)) {
    throw badRequest('username must be 3 to 32 characters of letters, digits, _ and -', 'username_rule');
  }
  return username;
}

export function readPassword(body: Body, key = 'password'): string {
  const password = body[key];
  if (typeof password !== 'string') throw badRequest(`${key} must be a string`, 'password_rule');
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw badRequest(`${key} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`, 'password_rule');
  }
  return password;
}

interface UserRow {
  id: string;
  username: string;
  is_admin: number;
  standing: number;
  /** A bot's owner's standing (null for a person). */
  owner_standing: number | null;
  display_name: string | null;
  avatar_url: string | null;
  bot: number;
}

const toUser = (row: UserRow): User => ({
  id: row.id,
  username: row.username,
  isAdmin: row.is_admin === 1,
  standing: botStanding(row.standing, row.owner_standing),
  displayName: row.display_name,
  avatarUrl: row.avatar_url,
  bot: row.bot !== 0,
});

export interface UserStore {
  byId(id: string): User | null;
  /** A live account by name in any letter case (deleted accounts have no name). */
  byUsername(username: string): User | null;
  /** The bot whose token this is (`<bot id>.<secret>`), or null. */
  byBotToken(token: string): User | null;
}

/** SHA-256 of a token's secret, as stored (tokens are random: no slow hash needed). */
export const tokenHash = (secret: string): string => crypto.createHash('sha256').update(secret).digest('base64url');

/** Whether a secret is the one a stored hash was made from, in constant time. */
export function matchesHash(stored: string | null | undefined, secret: string): boolean {
  const given = Buffer.from(tokenHash(secret));
  return typeof stored === 'string' && stored.length === given.length && crypto.timingSafeEqual(Buffer.from(stored), given);
}

/** Users kept in memory at most (all are dropped past it). */
const KEPT_USERS = 10_000;

/** The user lookups every request makes (auth runs byId per request, so standing is always current). */
export function createUserStore(db: DB): UserStore {
  // The profiles view's expressions on the users row itself: one lookup, every request.
  const COLUMNS = `id, is_admin, standing, bot,
    (SELECT owner.standing FROM users owner WHERE owner.id = users.bot_owner_id) AS owner_standing,
    CASE WHEN deleted_at IS NULL THEN username ELSE 'deleted-user' END AS username,
    CASE WHEN deleted_at IS NULL THEN display_name ELSE 'Deleted user' END AS display_name,
    CASE WHEN deleted_at IS NULL AND avatar_version > 0 THEN '/avatars/' || id || '?v=' || avatar_version END AS avatar_url
    FROM users`;
  const byId = db.prepare<[string], UserRow>(`SELECT ${COLUMNS} WHERE id = ?`);
  const byUsername = db.prepare<[string], UserRow>(`SELECT ${COLUMNS} WHERE username = ? COLLATE NOCASE AND deleted_at IS NULL`);
  const botTokenHash = db.prepare<[string], string>('SELECT bot_token_hash FROM users WHERE id = ? AND bot = 1 AND deleted_at IS NULL').pluck();
  // Kept while the users generation stays (schema.sql): a change to a standing (a bot's owner's
  // too), a name or an admin flag, by this process or the CLI, empties it before the next lookup.
  const usersChanged = generationWatch(db, 'users');
  const kept = new Map<string, User>();
  return {
    byId: (id) => {
      if (usersChanged() || kept.size >= KEPT_USERS) kept.clear();
      let user = kept.get(id);
      if (!user) {
        const row = byId.get(id);
        if (!row) return null;
        user = toUser(row);
        kept.set(id, user);
      }
      return user;
    },
    byUsername: (username) => {
      const row = byUsername.get(username);
      return row ? toUser(row) : null;
    },
    byBotToken(token) {
      const dot = token.indexOf('.');
      const id = token.slice(0, dot);
      if (dot < 0 || !isUuid(id)) return null;
      return matchesHash(botTokenHash.get(id), token.slice(dot + 1)) ? this.byId(id) : null;
    },
  };
}
