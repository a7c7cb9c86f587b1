import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import type { Clock } from '../../core/clock';
import type { DB } from '../../core/db';
import { HttpError, conflict, forbidden } from '../../core/http/errors';
import type { SecretBox } from '../../core/secret-box';
import type { Log } from '../../core/types';

/** RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30-second steps. */
export const TOTP_PERIOD_SECONDS = 30;
/** Steps either side of now a code may be from (clock drift, a code typed as it changed). */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODES = 10;
/** The name authenticator apps show above the account. */
export const ISSUER = 'chat';

export interface TwoFactor {
  isOn(userId: string): boolean;
  /** A new secret, pending until enable() confirms a code from it; 409 when already on. */
  setup(userId: string, username: string): { secret: string; otpauth_url: string };
  /** Turns it on with a code from the pending secret; the recovery codes, shown once. */
  enable(userId: string, code: string): string[];
  /** A new set of recovery codes in place of the old ones, shown once. */
  renewRecoveryCodes(userId: string): string[];
  /**
   * Accepts a current code once (a replay of an accepted one is refused) or an unused recovery
   * code, which is used up.
   */
  check(userId: string, code: string): boolean;
  /**
   * An unused recovery code only (used up): how an account without a password (its passkeys
   * lost) still signs in (docs/security.md "Passkeys"). A code from the app is not enough alone.
   */
  useRecoveryCode(userId: string, code: string): boolean;
  /** Off, without a code: the administrator's `cli.js 2fa reset`. */
  reset(userId: string): void;
}

const totpFor = (secret: string, label = '') =>
  new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: 6, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secret) });

/** Recovery codes are stored as SHA-256: 50 random bits each need no slow hash. */
const hashCode = (code: string) => crypto.createHash('sha256').update(normalizeRecovery(code)).digest('hex');
const normalizeRecovery = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');
const RECOVERY_ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/** `abcde-fghij`: ten characters from an alphabet without look-alikes (no 0/o, 1/l). */
function recoveryCode(): string {
  const bytes = crypto.randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

export function createTwoFactor({ db, clock, box, log }: { db: DB; clock: Clock; box: SecretBox; log: Log }): TwoFactor {
  const stateOf = db.prepare<[string], { totp_secret: string | null; totp_pending: string | null }>('SELECT totp_secret, totp_pending FROM users WHERE id = ?');
  const setPending = db.prepare('UPDATE users SET totp_pending = ? WHERE id = ?');
  const turnOn = db.prepare('UPDATE users SET totp_secret = totp_pending, totp_pending = NULL, totp_last_step = ? WHERE id = ?');
  // The step only moves forward: a code of a step at or before the last accepted one is a replay.
  const useStep = db.prepare('UPDATE users SET totp_last_step = ? WHERE id = ? AND totp_last_step < ?');
  const insertRecovery = db.prepare('INSERT INTO recovery_codes (user_id, code_hash) VALUES (?, ?)');
  const useRecovery = db.prepare('DELETE FROM recovery_codes WHERE user_id = ? AND code_hash = ?');
  const clearRecovery = db.prepare('DELETE FROM recovery_codes WHERE user_id = ?');

  const replaceRecovery = db.transaction((userId: string, codes: string[]) => {
    clearRecovery.run(userId);
    for (const code of codes) insertRecovery.run(userId, hashCode(code));
  });
  const enableWith = db.transaction((userId: string, step: number, codes: string[]) => {
    turnOn.run(step, userId);
    replaceRecovery(userId, codes);
  });
  const disableFor = (userId: string) => turnOffTwoFactor(db, userId);

  /** The time step a code belongs to, or null when it matches none within the window. */
  function stepOf(secret: string, code: string): number | null {
    const token = code.replace(/\s/g, '');
    if (!/^\d{6}$/.test(token)) return null;
    const now = clock.now();
    const delta = totpFor(secret).validate({ token, timestamp: now, window: TOTP_WINDOW });
    return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
  }

  function openSecret(userId: string, sealed: string): string | null {
    const secret = box.open(sealed, userId);
    if (secret === null) log(`two-factor secret of user ${userId} does not open with this key (SECRET_KEY or secret.key changed?)`);
    return secret;
  }

  const twoFactor: TwoFactor = {
    isOn: (userId) => stateOf.get(userId)?.totp_secret != null,

    setup(userId, username) {
      if (twoFactor.isOn(userId)) throw conflict('two-factor sign-in is already on; turn it off first');
      const secret = new Secret({ size: 20 }).base32;
      setPending.run(box.seal(secret, userId), userId);
      return { secret, otpauth_url: totpFor(secret, username).toString() };
    },

    enable(userId, code) {
      const state = stateOf.get(userId);
      if (state?.totp_secret) throw conflict('two-factor sign-in is already on');
      const secret = state?.totp_pending ? openSecret(userId, state.totp_pending) : null;
      if (!secret) throw conflict('no two-factor setup is pending: start with POST /api/account/2fa/setup');
      const step = stepOf(secret, code);
      if (step === null) throw forbidden('code does not match: check the time on your device and type the current code');
      const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
      enableWith(userId, step, codes);
      return codes;
    },

    renewRecoveryCodes(userId) {
      const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
      replaceRecovery(userId, codes);
      return codes;
    },

    check(userId, code) {
      if (typeof code !== 'string' || code.length > 64) return false;
      const sealed = stateOf.get(userId)?.totp_secret;
      if (!sealed) return false;
      const secret = openSecret(userId, sealed);
      const step = secret ? stepOf(secret, code) : null;
      if (step !== null) return useStep.run(step, userId, step).changes === 1;
      return useRecovery.run(userId, hashCode(code)).changes === 1;
    },

    useRecoveryCode(userId, code) {
      if (typeof code !== 'string' || code.length > 64 || !stateOf.get(userId)?.totp_secret) return false;
      return useRecovery.run(userId, hashCode(code)).changes === 1;
    },

    reset: (userId) => disableFor(userId),
  };
  return twoFactor;
}

/** Two-factor sign-in off for a user, secrets and recovery codes gone (also `cli.js 2fa reset`). */
export function turnOffTwoFactor(db: DB, userId: string): void {
  db.transaction(() => {
    db.prepare('UPDATE users SET totp_secret = NULL, totp_pending = NULL, totp_last_step = 0 WHERE id = ?').run(userId);
    db.prepare('DELETE FROM recovery_codes WHERE user_id = ?').run(userId);
  })();
}

/** The refusal of a sign-in (or an account deletion) that needs a code and got none. */
export const codeRequired = () => new HttpError(401, 'two-factor code required', {}, 'two_factor_required');
