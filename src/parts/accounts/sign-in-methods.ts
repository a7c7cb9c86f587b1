import type { Config } from '../../core/config';
import type { DB } from '../../core/db';
import { conflict } from '../../core/http/errors';
import { isPasswordHash } from './account-rows';

/**
 * The ways into an account (docs/sso.md "The last way in"): its password, its passkeys, and its
 * identities at the OpenID Providers this server still names. None of them may be taken away
 * when it is the last: the account would be closed to its owner.
 */
export interface SignInMethods {
  /** The account has a password it can sign in with (an account made through a provider has none until it sets one). */
  hasPassword(userId: string): boolean;
  count(userId: string): number;
  /** 409 when the account has no other way in than the one about to go. */
  requireAnother(userId: string): void;
}

export function createSignInMethods({ db, config }: { db: DB; config: Pick<Config, 'oidcProviders'> }): SignInMethods {
  const passwordHashOf = db.prepare<[string], string>('SELECT password_hash FROM users WHERE id = ?').pluck();
  const passkeysOf = db.prepare<[string], number>('SELECT COUNT(*) FROM passkeys WHERE user_id = ?').pluck();
  const issuersOf = db.prepare<[string], string>('SELECT issuer FROM identities WHERE user_id = ?').pluck();
  const methods: SignInMethods = {
    hasPassword: (userId) => isPasswordHash(passwordHashOf.get(userId)),
    count(userId) {
      const issuers = new Set(config.oidcProviders.map((p) => p.issuer));
      const identities = issuersOf.all(userId).filter((issuer) => issuers.has(issuer)).length;
      return (methods.hasPassword(userId) ? 1 : 0) + passkeysOf.get(userId)! + identities;
    },
    requireAnother(userId) {
      if (methods.count(userId) <= 1) {
        throw conflict('this is the last way into the account: add a password, a passkey or another provider first', 'last_way_in');
      }
    },
  };
  return methods;
}
