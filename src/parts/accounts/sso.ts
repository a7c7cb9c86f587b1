import { type Clock, MINUTE } from '../../core/clock';
import type { Config, OidcProvider } from '../../core/config';
import type { DB } from '../../core/db';
import { HttpError, conflict, forbidden } from '../../core/http/errors';
import type { Limits } from '../../rules/limits';
import type { AccountChanges } from './account-changes';
import type { AccountRows } from './account-rows';
import { type Identities, MAX_IDENTITIES_PER_USER } from './identities';
import type { Claims } from './oidc';
import type { TwoFactor } from './two-factor';
import { USERNAME_RULE } from './users';

/**
 * Which account a person signs in to through an OpenID Provider, once openid-client checked
 * the answer (src/parts/accounts/oidc.ts): the decisions docs/sso.md states.
 *
 * - An identity (issuer and `sub`) linked to an account signs in to it.
 * - An unknown identity makes an account only when the provider allows sign-up, and only for a
 *   verified email of an allowed domain when the provider names domains. It is never linked to an
 *   existing account because an email matches (a provider that lets people claim any address
 *   would hand them the account): an account whose verified email is the identity's refuses it,
 *   and its owner links the provider from the account page after signing in with the password.
 * - A provider with `admin_group` decides at each sign-in whether the account administers the
 *   site (ADMIN_USERS still wins).
 * - Two-factor sign-in applies: an account with it on is asked for its code, unless the ID token
 *   says the provider used several factors (`amr`, RFC 8176).
 */
export interface Sso {
  /** The account this identity opens, made first when the provider allows sign-up. */
  signIn(provider: OidcProvider, claims: Claims, client: string): { userId: string; created: boolean };
  /** Links the identity to the signed-in account (the account page's "Link"). */
  link(provider: OidcProvider, claims: Claims, userId: string): void;
  /** Whether the account must still give its two-factor code after this sign-in. */
  needsCode(userId: string, claims: Claims): boolean;
  /** A sign-in waiting for its code, under the browser's flow cookie (PENDING_CODE_MS). */
  holdForCode(browser: string, pending: PendingCode): void;
  /** The sign-in this browser holds waiting for its code, if any. */
  pendingCode(browser: string | undefined): PendingCode | null;
  /** The code was right: the wait ends. */
  release(browser: string): void;
}

export interface PendingCode {
  userId: string;
  remember: boolean;
  returnTo: string;
}

/** How long a sign-in through a provider waits for its two-factor code. */
export const PENDING_CODE_MS = 5 * MINUTE;
/** Sign-ins waiting for a code at most, everyone together. */
const MAX_PENDING_CODES = 10_000;

/**
 * Whether an `amr` claim (RFC 8176) says more than one factor was used: `mfa`, or a method of
 * possession or of the body (a code, a key, a fingerprint) beside another one.
 */
const SECOND_FACTORS = new Set(['otp', 'hwk', 'swk', 'sms', 'tel', 'sc', 'fpt', 'face', 'iris', 'retina', 'vbm']);
export function usedSeveralFactors(amr: unknown): boolean {
  if (!Array.isArray(amr)) return false;
  const methods = new Set(amr.filter((m): m is string => typeof m === 'string'));
  return methods.has('mfa') || ([...methods].some((m) => SECOND_FACTORS.has(m)) && methods.size >= 2);
}

/** A claim's email, when the provider says it verified it (a boolean, or "true" as some send it). */
export function verifiedEmail(claims: Claims): string | null {
  const email = claims.email;
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  return verified && typeof email === 'string' && /^[^@\s]{1,64}@[^@\s]{1,253}$/.test(email) ? email.toLowerCase() : null;
}

/**
 * A username from a claim, as the rules allow (3 to 32 of letters, digits, _ and -): the part
 * of an email before the @, accents dropped, other characters turned into -; null when too little is left.
 */
export function usernameFrom(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const local = value.includes('@') ? value.slice(0, value.indexOf('@')) : value;
  const cleaned = local
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[-_]+/, '')
    .slice(0, 32)
    .replace(/-+$/, '');
  return USERNAME_RULE.test(cleaned) && !cleaned.toLowerCase().startsWith('deleted-') ? cleaned : null;
}

/** A display name from the `name` claim: 1 to 32 characters, none that reorder or hide text; else none. */
function displayNameFrom(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const name = value.trim();
  return name !== '' && [...name].length <= 32 && !/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name) ? name : null;
}

export function createSso(parts: {
  db: DB;
  clock: Clock;
  config: Pick<Config, 'adminUsers'>;
  limits: Pick<Limits, 'registrationsPerClient'>;
  identities: Identities;
  accountRows: Pick<AccountRows, 'createAccount'>;
  accountChanges: Pick<AccountChanges, 'setAdmin'>;
  twoFactor: Pick<TwoFactor, 'isOn'>;
}): Sso {
  const { db, clock, config, limits, identities, accountRows, accountChanges, twoFactor } = parts;
  const nameTaken = db.prepare<[string], number>('SELECT 1 FROM users WHERE username = ? COLLATE NOCASE').pluck();
  const usernameOf = db.prepare<[string], string>('SELECT username FROM users WHERE id = ? AND deleted_at IS NULL').pluck();
  const accountWithEmail = db
    .prepare<[string], string>('SELECT id FROM users WHERE email = ? COLLATE NOCASE AND email_verified = 1 AND deleted_at IS NULL LIMIT 1')
    .pluck();
  const identitiesOf = db.prepare<[string], number>('SELECT COUNT(*) FROM identities WHERE user_id = ?').pluck();
  const waiting = new Map<string, PendingCode & { expires: number }>();
  const adminNames = () => new Set(config.adminUsers.map((n) => n.toLowerCase()));

  /** The first free name from the claims: the provider's chosen claim, then the usual ones; -2, -3... when taken. */
  function uniqueUsername(provider: OidcProvider, claims: Claims): string {
    const base = [claims[provider.usernameClaim], claims.preferred_username, claims.email, claims.name].map(usernameFrom).find((n) => n !== null) ?? 'user';
    for (let n = 1; n < 1000; n++) {
      const suffix = n === 1 ? '' : `-${n}`;
      const candidate = `${base.slice(0, 32 - suffix.length)}${suffix}`;
      if (!nameTaken.get(candidate)) return candidate;
    }
    throw conflict('no free username could be made from your name at the provider: ask an administrator', 'username_taken');
  }

  /** With admin_group: the account administers the site exactly while the provider lists the group. */
  function applyAdminGroup(provider: OidcProvider, claims: Claims, userId: string) {
    if (!provider.adminGroup) return;
    const username = usernameOf.get(userId);
    if (!username) return;
    const groups = claims[provider.groupsClaim];
    const listed = Array.isArray(groups) ? groups.includes(provider.adminGroup) : groups === provider.adminGroup;
    accountChanges.setAdmin(username, listed || adminNames().has(username.toLowerCase()));
  }

  const signUp = db.transaction((provider: OidcProvider, claims: Claims, email: string | null) => {
    const username = uniqueUsername(provider, claims);
    const userId = accountRows.createAccount({
      kind: 'sso',
      username,
      displayName: displayNameFrom(claims.name),
      isAdmin: adminNames().has(username.toLowerCase()),
    });
    identities.link(userId, provider.id, claims.iss, claims.sub, email);
    return userId;
  });

  return {
    signIn(provider, claims, client) {
      const email = verifiedEmail(claims);
      const known = identities.find(claims.iss, claims.sub);
      if (known) {
        identities.used(known.id, email);
        applyAdminGroup(provider, claims, known.userId);
        return { userId: known.userId, created: false };
      }
      if (email && accountWithEmail.get(email)) {
        throw conflict(
          `an account here already has the address ${email}: sign in with its password, then link ${provider.name} from your account page`,
          'sso_email_taken',
        );
      }
      if (!provider.allowSignup) {
        throw forbidden(
          `no account here is linked to this ${provider.name} identity: sign in another way, then link it from your account page`,
          'sso_no_account',
        );
      }
      if (provider.allowedDomains.length > 0 && !(email && provider.allowedDomains.includes(email.slice(email.indexOf('@') + 1)))) {
        throw forbidden(`sign-up through ${provider.name} is open to verified addresses of ${provider.allowedDomains.join(', ')} only`, 'sso_domain');
      }
      limits.registrationsPerClient.take(client, 'registrations from this address');
      let userId: string;
      try {
        userId = signUp(provider, claims, email);
      } catch (err) {
        // Two sign-ups of one person (or of one name) at once: the other one won.
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('this sign-up crossed another one: sign in again', 'sso_raced');
        throw err;
      }
      applyAdminGroup(provider, claims, userId);
      return { userId, created: true };
    },

    link(provider, claims, userId) {
      const known = identities.find(claims.iss, claims.sub);
      if (known && known.userId !== userId) {
        throw conflict(`this ${provider.name} identity is linked to another account here: unlink it there first`, 'sso_identity_taken');
      }
      if (known) return identities.used(known.id, verifiedEmail(claims));
      if (identitiesOf.get(userId)! >= MAX_IDENTITIES_PER_USER) throw conflict(`an account may link ${MAX_IDENTITIES_PER_USER} identities at most`);
      try {
        identities.link(userId, provider.id, claims.iss, claims.sub, verifiedEmail(claims));
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
          throw conflict(`this ${provider.name} identity was just linked`, 'sso_identity_taken');
        throw err;
      }
    },

    needsCode: (userId, claims) => twoFactor.isOn(userId) && !usedSeveralFactors(claims.amr),

    holdForCode(browser, pending) {
      const now = clock.now();
      for (const [key, entry] of waiting) {
        if (entry.expires > now) break;
        waiting.delete(key);
      }
      if (waiting.size >= MAX_PENDING_CODES) throw new HttpError(503, 'too many sign-ins in progress: try again in a minute', { 'Retry-After': '60' });
      waiting.delete(browser);
      waiting.set(browser, { ...pending, expires: now + PENDING_CODE_MS });
    },

    pendingCode(browser) {
      const entry = browser === undefined ? undefined : waiting.get(browser);
      if (!entry || entry.expires <= clock.now()) return null;
      return { userId: entry.userId, remember: entry.remember, returnTo: entry.returnTo };
    },

    release(browser) {
      waiting.delete(browser);
    },
  };
}
