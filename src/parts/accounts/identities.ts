import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';

/**
 * Identities at OpenID Providers linked to accounts (the `identities` table, docs/sso.md): a
 * provider's issuer and its subject (`sub`) name one person there, and open one account here.
 * An identity is linked by signing up through its provider, or by its account's owner from the
 * account page; never because an email address matches (docs/security.md).
 */
export interface Identity {
  id: string;
  userId: string;
  providerId: string;
  issuer: string;
  subject: string;
  email: string | null;
  createdAt: string;
  lastUsedAt: string;
}

/** Identities one account may link at most. */
export const MAX_IDENTITIES_PER_USER = 20;

export interface Identities {
  /** The identity of this issuer and subject, or null. */
  find(issuer: string, subject: string): Identity | null;
  /** The account's identities, oldest first. */
  list(userId: string): Identity[];
  /** A new link; SQLITE_CONSTRAINT_UNIQUE when the identity is another account's already. Runs in the caller's transaction when there is one. */
  link(userId: string, providerId: string, issuer: string, subject: string, email: string | null): Identity;
  /** A sign-in through it: when, and the email the provider gave this time. */
  used(id: string, email: string | null): void;
  /** Unlinks one identity of the user; false when they have none by that id. */
  unlink(userId: string, id: string): boolean;
}

interface Row {
  id: string;
  user_id: string;
  provider_id: string;
  issuer: string;
  subject: string;
  email: string | null;
  created_at: string;
  last_used_at: string;
}
const COLUMNS = 'id, user_id, provider_id, issuer, subject, email, created_at, last_used_at';
const toIdentity = (r: Row): Identity => ({
  id: r.id,
  userId: r.user_id,
  providerId: r.provider_id,
  issuer: r.issuer,
  subject: r.subject,
  email: r.email,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
});

export function createIdentities(db: DB, clock: Clock): Identities {
  const byKey = db.prepare<[string, string], Row>(`SELECT ${COLUMNS} FROM identities WHERE issuer = ? AND subject = ?`);
  const byUser = db.prepare<[string], Row>(`SELECT ${COLUMNS} FROM identities WHERE user_id = ? ORDER BY created_at, id`);
  const insert = db.prepare(
    'INSERT INTO identities (id, user_id, provider_id, issuer, subject, email, created_at, last_used_at) VALUES (@id, @user_id, @provider_id, @issuer, @subject, @email, @created_at, @last_used_at)',
  );
  const touch = db.prepare('UPDATE identities SET last_used_at = ?, email = ? WHERE id = ?');
  const remove = db.prepare('DELETE FROM identities WHERE user_id = ? AND id = ?');
  return {
    find(issuer, subject) {
      const row = byKey.get(issuer, subject);
      return row ? toIdentity(row) : null;
    },
    list: (userId) => byUser.all(userId).map(toIdentity),
    link(userId, providerId, issuer, subject, email) {
      const now = iso(clock.now());
      const row: Row = { id: crypto.randomUUID(), user_id: userId, provider_id: providerId, issuer, subject, email, created_at: now, last_used_at: now };
      insert.run(row);
      return toIdentity(row);
    },
    used(id, email) {
      touch.run(iso(clock.now()), email, id);
    },
    unlink: (userId, id) => remove.run(userId, id).changes > 0,
  };
}
