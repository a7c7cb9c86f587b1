import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';

/**
 * An account to make, by kind: what each kind is given; the rest of its row follows from the
 * kind (the table in `createAccount`).
 */
export type NewAccount =
  /** Someone who registered: signs in with a password. */
  | { kind: 'person'; username: string; passwordHash: string; isAdmin: boolean }
  /**
   * Someone whose first sign-in through an OpenID Provider made the account (docs/sso.md): no
   * password; the username was made from a claim, and its owner may change it once.
   */
  | { kind: 'sso'; username: string; displayName: string | null; isAdmin: boolean }
  /** A bot (users.bot = 1): signs in with its token only; its owner manages it. */
  | { kind: 'bot'; username: string; ownerId: string; tokenHash: string }
  /** The author of a webhook's messages (users.bot = 2): never signs in, shown by the webhook's name. */
  | { kind: 'webhook'; username: string; displayName: string }
  /** The placeholder of a person an import named (users.imported = 1): never signs in; a person may claim it. */
  | { kind: 'placeholder'; username: string; displayName: string };

export type AccountKind = NewAccount['kind'];

/**
 * The one writer of `users` rows (schema.sql): every account is made here, whoever makes it (the
 * registration route, bots, webhooks, the importer on its worker's connection), and the columns
 * that several places write change here: the name, display name and avatar version of a profile,
 * and everything a deleted account loses. A new column goes here: its value for each kind of
 * account, and what deletion leaves of it. The single-purpose columns (password and standing:
 * account-changes.ts; two-factor, e-mail, presence, a bot's token) keep their one writer.
 *
 * Built on any connection (`createAccountRows({ db, clock })`): the server's, or the import
 * worker's own. Each write runs in the caller's transaction when there is one.
 */
export interface AccountRows {
  /** A new account of this kind; its id. A name taken in any letter case is SQLITE_CONSTRAINT_UNIQUE. */
  createAccount(account: NewAccount): string;
  /** The name shown instead of the username (null: the username shows). */
  setDisplayName(userId: string, displayName: string | null): void;
  /** A new avatar file is in place: its version moves (a new URL); the new version. */
  avatarStored(userId: string): number;
  /** The avatar is gone: false when there was none. */
  avatarRemoved(userId: string): boolean;
  /**
   * The one change of a username that came from a provider's claim (kind 'sso'): false when the
   * account chose its name already. A name taken in any letter case is SQLITE_CONSTRAINT_UNIQUE.
   */
  renameOnce(userId: string, username: string): boolean;
  /** A placeholder made nameless (a claimer hid their history): a new name, a display name, no avatar. */
  anonymize(userId: string, username: string, displayName: string): void;
  /**
   * A deleted account: the row stays (its messages keep their author) but everything that
   * identifies or reaches the person goes (src/parts/accounts/account-deletion.ts).
   */
  erase(userId: string): void;
}

/** No password hash: nothing verifies against it, so an account made with it cannot sign in with a password. */
export const NO_PASSWORD = '!';

/** Whether a stored password hash is one a password can match (not none, not an erased account's). */
export const isPasswordHash = (hash: string | null | undefined): boolean => typeof hash === 'string' && hash !== NO_PASSWORD && hash !== '';

export function createAccountRows({ db, clock }: { db: DB; clock: Clock }): AccountRows {
  const insert = db.prepare(
    `INSERT INTO users (id, username, password_hash, is_admin, created_at, display_name, presence, imported, bot, bot_owner_id, bot_token_hash, username_chosen)
     VALUES (@id, @username, @password_hash, @is_admin, @created_at, @display_name, @presence, @imported, @bot, @bot_owner_id, @bot_token_hash, @username_chosen)`,
  );
  const renameOnce = db.prepare('UPDATE users SET username = ?, username_chosen = 1 WHERE id = ? AND username_chosen = 0 AND deleted_at IS NULL');
  const setDisplayName = db.prepare('UPDATE users SET display_name = ? WHERE id = ?');
  const bumpAvatar = db.prepare<[string], { avatar_version: number }>(
    'UPDATE users SET avatar_version = avatar_version + 1 WHERE id = ? RETURNING avatar_version',
  );
  const clearAvatar = db.prepare('UPDATE users SET avatar_version = 0 WHERE id = ? AND avatar_version > 0');
  const anonymize = db.prepare('UPDATE users SET username = ?, display_name = ?, avatar_version = 0 WHERE id = ?');
  const erase = db.prepare(
    `UPDATE users SET username = 'deleted-' || id, password_hash = '', email = NULL, email_verified = 0,
            display_name = NULL, avatar_version = 0, totp_secret = NULL, totp_pending = NULL,
            presence = 'invisible', deleted_at = :now, bot_token_hash = NULL
      WHERE id = :id`,
  );

  /** Each kind's row, past its id, name and time of creation. */
  const columnsOf = (account: NewAccount) => {
    const none = {
      password_hash: NO_PASSWORD,
      is_admin: 0,
      display_name: null,
      presence: 'online',
      imported: 0,
      bot: 0,
      bot_owner_id: null,
      bot_token_hash: null,
      username_chosen: 1,
    };
    switch (account.kind) {
      case 'person':
        return { ...none, password_hash: account.passwordHash, is_admin: account.isAdmin ? 1 : 0 };
      case 'sso':
        return { ...none, is_admin: account.isAdmin ? 1 : 0, display_name: account.displayName, username_chosen: 0 };
      case 'bot':
        return { ...none, bot: 1, bot_owner_id: account.ownerId, bot_token_hash: account.tokenHash };
      case 'webhook':
        // Never online: nobody is behind it.
        return { ...none, bot: 2, display_name: account.displayName, presence: 'invisible' };
      case 'placeholder':
        return { ...none, imported: 1, display_name: account.displayName };
    }
  };

  return {
    createAccount(account) {
      const id = crypto.randomUUID();
      insert.run({ id, username: account.username, created_at: iso(clock.now()), ...columnsOf(account) });
      return id;
    },
    setDisplayName(userId, displayName) {
      setDisplayName.run(displayName, userId);
    },
    renameOnce: (userId, username) => renameOnce.run(username, userId).changes === 1,
    avatarStored: (userId) => bumpAvatar.get(userId)!.avatar_version,
    avatarRemoved: (userId) => clearAvatar.run(userId).changes === 1,
    anonymize(userId, username, displayName) {
      anonymize.run(username, displayName, userId);
    },
    erase(userId) {
      erase.run({ id: userId, now: iso(clock.now()) });
    },
  };
}
