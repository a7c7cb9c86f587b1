import { type Clock, MINUTE } from '../../core/clock';
import type { DB } from '../../core/db';
import { badRequest, forbidden } from '../../core/http/errors';
import { verifyPassword } from '../../core/passwords';
import type { Ctx } from '../../core/types';
import { type Limits, createLoginGuard } from '../../rules/limits';
import { isPasswordHash } from './account-rows';
import type { TwoFactor } from './two-factor';

/**
 * An account without a password (made through an OpenID Provider) proves itself by a recent
 * sign-in instead: a session opened this long ago at most, by a passkey or a provider (never by
 * a remembered device, which proves nothing new). docs/security.md says what this trades.
 */
export const FRESH_SIGN_IN_MS = 10 * MINUTE;

/**
 * The account holder proving again that the account is theirs before a change that could lock
 * them out of it or hand it to someone else: a new password, an email address in place of
 * another, two-factor sign-in set up, turned on or off, new recovery codes, the account deleted.
 * A session cookie alone (a stolen one) is not enough for any of them. Each failure is a failed
 * login, counted against the account and the address (403 here: the caller is signed in).
 * An account that has no password proves it with a fresh sign-in (FRESH_SIGN_IN_MS): the
 * password field is then ignored.
 */
export interface IdentityCheck {
  /** The current password from `body[key]`: 400 when missing (not a string), 403 when wrong (an empty one too). */
  password(ctx: Ctx, key?: string): Promise<void>;
  /** The password, and with two-factor sign-in on a current code or an unused recovery code. */
  passwordAndCode(ctx: Ctx, passwordKey: string): Promise<void>;
}

export function createIdentityCheck({ db, clock, limits, twoFactor }: { db: DB; clock: Clock; limits: Limits; twoFactor: TwoFactor }): IdentityCheck {
  const passwordHashOf = db.prepare<[string], string>('SELECT password_hash FROM users WHERE id = ?').pluck();
  const loginGuard = createLoginGuard(limits);

  const readPassword = (ctx: Ctx, key: string): string => {
    const value = ctx.body[key];
    if (typeof value !== 'string') throw badRequest(`${key} is required: type your current password`);
    return value;
  };

  /** The attempt is left open: the caller settles it. */
  const checkPassword = async (ctx: Ctx, key: string) => {
    const hash = passwordHashOf.get(ctx.user.id);
    if (!isPasswordHash(hash)) {
      const { method, createdAt } = ctx.session;
      if (method === undefined || method === 'device' || clock.now() - createdAt > FRESH_SIGN_IN_MS) {
        throw forbidden(
          `this account has no password: sign in again (with a passkey or your provider) and make this change within ${FRESH_SIGN_IN_MS / MINUTE} minutes`,
          'sign_in_again',
        );
      }
      // A code that may follow is still a guess to count.
      return loginGuard.begin(ctx.user.username.toLowerCase(), ctx.client);
    }
    const password = readPassword(ctx, key);
    const attempt = loginGuard.begin(ctx.user.username.toLowerCase(), ctx.client);
    const { ok } = await verifyPassword(hash, password);
    if (!ok) throw forbidden(key === 'password' ? 'password is wrong' : 'current password is wrong');
    return attempt;
  };

  return {
    async password(ctx, key = 'current_password') {
      (await checkPassword(ctx, key)).succeeded();
    },

    async passwordAndCode(ctx, passwordKey) {
      const code = ctx.body.code;
      if (code !== undefined && typeof code !== 'string') throw badRequest('code must be a string');
      const attempt = await checkPassword(ctx, passwordKey);
      if (twoFactor.isOn(ctx.user.id)) {
        if (code === undefined || code === '') {
          attempt.succeeded();
          throw forbidden('two-factor code required', 'two_factor_required');
        }
        if (!twoFactor.check(ctx.user.id, code)) throw forbidden('invalid two-factor code');
      }
      attempt.succeeded();
    },
  };
}
