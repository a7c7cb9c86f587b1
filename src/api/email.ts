import crypto from 'node:crypto';
import { HOUR, iso } from '../core/clock';
import { badRequest, conflict, HttpError } from '../core/http/errors';
import { json, noContent, redirect } from '../core/http/respond';
import { hashPassword } from '../core/passwords';
import type { Services } from '../parts/services';
import type { Body, Ctx, PublicCtx, Route } from '../core/types';
import { readPassword } from '../parts/accounts/users';

type Deps = Pick<Services, 'db' | 'clock' | 'config' | 'users' | 'limits' | 'mailer' | 'accountChanges' | 'identity'>;

/** Email verification and password reset: the account routes that send mail (spec section 4). */
export function emailRoutes(deps: Deps): Route[] {
  const h = emailHandlers(deps);
  return [
    { method: 'PUT', path: '/api/account/email', auth: 'user', body: 'json', handler: h.setEmail },
    { method: 'GET', path: '/api/verify-email', auth: 'none', body: 'none', handler: h.verifyEmail },
    { method: 'POST', path: '/api/password-reset/request', auth: 'none', body: 'json', handler: h.requestPasswordReset },
    { method: 'POST', path: '/api/password-reset', auth: 'none', body: 'json', handler: h.resetPassword },
  ];
}

export const VERIFY_TOKEN_LIFETIME_MS = 24 * HOUR;
export const RESET_TOKEN_LIFETIME_MS = HOUR;

/** RFC 5321 caps a forward path at 256 octets, so an address at 254 characters. */
export const MAX_EMAIL_LENGTH = 254;

// RFC 5322 dot-atom: the characters a local part may hold without quoting. Quoted local parts,
// comments and lists are refused so an address is always exactly one recipient.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Letters (any script: nodemailer sends IDNs as punycode), digits and inner hyphens. No other
// symbol, so no invisible or bidi-control character can make one domain look like another.
const DOMAIN_LABEL = /^[\p{L}\p{N}]([\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?$/u;

/**
 * One email address as sent (no surrounding spaces: docs/openapi.json says `format: email`), with
 * its domain lower-cased (domains are case-insensitive; the local part is kept as typed).
 * Addresses are compared case-insensitively everywhere else.
 */
export function readEmail(body: Body, key = 'email'): string {
  const value = body[key];
  if (typeof value !== 'string') throw badRequest(`${key} must be a string`);
  if (value.length > MAX_EMAIL_LENGTH) throw badRequest(`${key} must be at most ${MAX_EMAIL_LENGTH} characters`);
  const at = value.lastIndexOf('@');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  const labels = domain.split('.');
  if (at < 1 || local.length > 64 || !LOCAL_PART.test(local) || labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label))) {
    throw badRequest(`${key} must be one email address like name@example.com`);
  }
  return `${local}@${domain}`;
}

/** The code /email-verified?error= words for a refused verification link. */
function verifyErrorCode(err: HttpError): 'missing' | 'expired' | 'conflict' | 'used' {
  if (err.status === 409) return 'conflict';
  if (err.message.includes('expired')) return 'expired';
  if (err.message.includes('required')) return 'missing';
  return 'used';
}

/** Tokens are 256 random bits; only their SHA-256 is stored, so a database leak opens no link. */
const newToken = () => crypto.randomBytes(32).toString('base64url');
const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

type Purpose = 'verify' | 'reset';

interface TokenRow {
  user_id: string;
  email: string;
  expires_at: string;
}

function emailHandlers({ db, clock, config, users, limits, mailer, accountChanges, identity }: Deps) {
  const accountEmail = db.prepare<[string], { email: string | null; email_verified: number }>('SELECT email, email_verified FROM users WHERE id = ?');
  const verifiedElsewhere = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM users WHERE email = ? COLLATE NOCASE AND email_verified = 1 AND id <> ?',
  );
  const verifiedOwner = db.prepare<[string], { id: string; username: string; email: string }>(
    'SELECT id, username, email FROM users WHERE email = ? COLLATE NOCASE AND email_verified = 1',
  );
  const setEmailRow = db.prepare('UPDATE users SET email = ?, email_verified = 0 WHERE id = ?');
  const markVerified = db.prepare('UPDATE users SET email_verified = 1 WHERE id = ? AND email = ?');
  const insertToken = db.prepare('INSERT INTO email_tokens (token_hash, user_id, purpose, email, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const deleteExpiredTokens = db.prepare('DELETE FROM email_tokens WHERE expires_at <= ?');
  const deleteUserTokens = db.prepare('DELETE FROM email_tokens WHERE user_id = ?');
  const deleteUserTokensFor = db.prepare('DELETE FROM email_tokens WHERE user_id = ? AND purpose = ?');
  const findToken = db.prepare<[string, Purpose], TokenRow>('SELECT user_id, email, expires_at FROM email_tokens WHERE token_hash = ? AND purpose = ?');
  // Single use: the row is gone the moment it is used, so a second use finds nothing.
  const consumeToken = db.prepare<[string, Purpose], TokenRow>(
    'DELETE FROM email_tokens WHERE token_hash = ? AND purpose = ? RETURNING user_id, email, expires_at',
  );

  /** Stores a fresh token's hash (clearing out expired ones) and returns the token for the link. */
  const issueToken = (userId: string, purpose: Purpose, email: string): string => {
    const token = newToken();
    const now = clock.now();
    const lifetime = purpose === 'verify' ? VERIFY_TOKEN_LIFETIME_MS : RESET_TOKEN_LIFETIME_MS;
    deleteExpiredTokens.run(iso(now));
    insertToken.run(hashToken(token), userId, purpose, email, iso(now + lifetime), iso(now));
    return token;
  };

  const expired = (row: TokenRow) => Date.parse(row.expires_at) <= clock.now();

  const readToken = (value: unknown, key: string): string => {
    if (typeof value !== 'string' || value === '') throw badRequest(`${key} is required`);
    return value;
  };

  const wantsHtml = (accept: string | undefined) => (accept ?? '').includes('text/html');

  return { setEmail, verifyEmail, requestPasswordReset, resetPassword };

  /**
   * 200 {email, email_verified: false}: stored unverified, a link (24 h) mailed, earlier links
   * dead; an address verified here already changes nothing; 409 if verified on another account.
   * An address in place of a different one needs `current_password` too (a stolen cookie must not move
   * the account's password resets elsewhere); the first address of an account does not (the
   * spec's call: JSON {email}).
   */
  async function setEmail(ctx: Ctx) {
    const email = readEmail(ctx.body);
    if (ctx.body.current_password !== undefined && typeof ctx.body.current_password !== 'string') {
      throw badRequest('current_password must be a string');
    }
    const current = accountEmail.get(ctx.user.id);
    if (current?.email === email && current.email_verified === 1) return json({ email, email_verified: true });
    if (current?.email && current.email.toLowerCase() !== email.toLowerCase()) await identity.password(ctx);
    // Limited per client before the 409, so probing for addresses costs the same; then per address.
    limits.emailsPerClient.take(ctx.client, 'email requests from this client');
    if (verifiedElsewhere.get(email, ctx.user.id)) throw conflict('that email address is verified on another account');
    limits.emailsPerAddress.take(email.toLowerCase(), 'emails to this address');
    const token = db.transaction(() => {
      setEmailRow.run(email, ctx.user.id);
      deleteUserTokens.run(ctx.user.id);
      return issueToken(ctx.user.id, 'verify', email);
    })();
    mailer.send({
      to: email,
      subject: 'Confirm your email address',
      text: verifyText(ctx.user.username, config.baseUrl, `${config.baseUrl}/api/verify-email?token=${token}`),
    });
    return json({ email, email_verified: false });
  }

  /**
   * Verifies the address the token was issued for, with or without a session: a browser is
   * redirected to /email-verified, others get 200; 400 for a bad, used or expired token.
   */
  function verifyEmail(ctx: PublicCtx) {
    if (!wantsHtml(ctx.req.headers.accept)) return verify(ctx);
    // A browser gets a page with a way on, never a bare plain-text error: the page words the
    // code itself (nothing from the URL is shown).
    try {
      return verify(ctx);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status >= 500) throw err;
      return redirect(`/email-verified?error=${verifyErrorCode(err)}`);
    }
  }

  function verify(ctx: PublicCtx) {
    const hash = hashToken(readToken(ctx.query.get('token'), 'token'));
    // Throwing inside the transaction rolls the consumption back; an expired or
    // unknown token stays dead either way.
    const email = db.transaction(() => {
      const row = consumeToken.get(hash, 'verify');
      if (!row) throw badRequest('this verification link is invalid or has already been used');
      if (expired(row)) throw badRequest('this verification link has expired; set your email address again to get a new one');
      if (verifiedElsewhere.get(row.email, row.user_id)) {
        throw conflict('this email address has been verified on another account');
      }
      if (markVerified.run(row.user_id, row.email).changes === 0) {
        throw badRequest('this verification link is for an address no longer on the account');
      }
      return row.email;
    })();
    return wantsHtml(ctx.req.headers.accept) ? redirect('/email-verified') : json({ email, email_verified: true });
  }

  /**
   * Always 202 {ok: true}, so the answer never tells whether an account has the address; a link
   * (1 h) goes only to a verified address; limited per client and per address either way.
   */
  function requestPasswordReset(ctx: PublicCtx) {
    const email = readEmail(ctx.body);
    limits.emailsPerClient.take(ctx.client, 'email requests from this client');
    limits.emailsPerAddress.take(email.toLowerCase(), 'emails to this address');
    const owner = verifiedOwner.get(email);
    if (owner) {
      const token = issueToken(owner.id, 'reset', owner.email);
      mailer.send({
        to: owner.email,
        subject: 'Reset your password',
        text: resetText(owner.username, config.baseUrl, `${config.baseUrl}/reset-password?token=${token}`),
      });
    }
    return json({ ok: true }, 202);
  }

  /**
   * 204: the password is set, every reset link is used up, every session ends (sockets close)
   * and the failed-login lock is lifted; 400 for a bad password (the token stays) or token.
   */
  async function resetPassword(ctx: PublicCtx) {
    const hash = hashToken(readToken(ctx.body.token, 'token'));
    const password = readPassword(ctx.body);
    const invalid = () => badRequest('this reset link is invalid or has already been used');
    const row = findToken.get(hash, 'reset');
    if (!row) throw invalid();
    if (expired(row)) throw badRequest('this reset link has expired; request a new one');
    const passwordHash = await hashPassword(password);
    const userId = row.user_id;
    // Checked again after the hash, in the write: a parallel request may have used the token meanwhile.
    accountChanges.setPassword(userId, passwordHash, 'all', () => {
      const consumed = consumeToken.get(hash, 'reset');
      if (!consumed || consumed.user_id !== userId || expired(consumed)) throw invalid();
      deleteUserTokensFor.run(userId, 'reset');
    });
    // Whoever guessed at the old password locked the account; its owner just proved who they are.
    const user = users.byId(userId);
    if (user) limits.loginFailuresPerAccount.forget(user.username.toLowerCase());
    return noContent();
  }
}

// Messages name the site by host, not by URL: the only URL in a message is the link itself.
function verifyText(username: string, baseUrl: string, link: string): string {
  return [
    `Hello ${username},`,
    '',
    `This address was added to the chat account "${username}" at ${new URL(baseUrl).host}.`,
    'To confirm it, open this link within 24 hours:',
    '',
    link,
    '',
    'If you did not do this, ignore this email: the address stays unverified.',
    '',
  ].join('\n');
}

function resetText(username: string, baseUrl: string, link: string): string {
  return [
    `Hello ${username},`,
    '',
    `Someone asked to reset the password of the chat account "${username}" at ${new URL(baseUrl).host}.`,
    'To choose a new password, open this link within 1 hour:',
    '',
    link,
    '',
    'If you did not ask for this, ignore this email: your password stays the same.',
    '',
  ].join('\n');
}
