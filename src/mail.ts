import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import nodemailer from 'nodemailer';
import SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { App, Route } from './app';
import { readPassword } from './accounts';
import { HOUR, MINUTE, SECOND, iso } from './clock';
import { badRequest, conflict } from './http/errors';
import type { Body } from './http/body';
import { json, noContent, redirect } from './http/respond';
import { hashPassword } from './passwords';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Sending is fire-and-forget: it never blocks or fails the HTTP request that caused it. */
export interface Mailer {
  send(mail: Mail): void;
  /** Stops pending retries so shutdown is prompt; later sends are dropped (and logged). */
  close?(): void;
  /** Resolves once nothing is being delivered or waiting for a retry (tests, tools). */
  idle?(): Promise<void>;
}

/** nodemailer waits minutes by default; a mail server that slow is treated as down and retried. */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 10 * SECOND,
  greetingTimeout: 10 * SECOND,
  socketTimeout: 30 * SECOND,
  dnsTimeout: 10 * SECOND,
} as const;

/** Waits before each retry: four attempts in all, spread over about six minutes. */
export const RETRY_DELAYS_MS: readonly number[] = [10 * SECOND, MINUTE, 5 * MINUTE];

export const VERIFY_TOKEN_LIFETIME_MS = 24 * HOUR;
export const RESET_TOKEN_LIFETIME_MS = HOUR;

/** RFC 5321 caps a forward path at 256 octets, so an address at 254 characters. */
export const MAX_EMAIL_LENGTH = 254;

export interface MailerOptions {
  retryDelaysMs?: readonly number[];
}

/** Where a message goes: SMTP, or an .eml file. Resolves with a phrase for the log line. */
interface Delivery {
  deliver(message: nodemailer.SendMailOptions): Promise<string>;
  close(): void;
}

/**
 * SMTP through nodemailer when SMTP_URL is set, else the outbox: each message written as an
 * .eml file under DATA_DIR/outbox/, so a self-hoster without a mail server can still open links.
 */
export function createMailer(app: App, options: MailerOptions = {}): Mailer {
  const delivery = app.config.smtpUrl
    ? smtpDelivery(app.config.smtpUrl)
    : outboxDelivery(path.join(app.config.dataDir, 'outbox'), app);
  return retryingMailer(app, delivery, options.retryDelaysMs ?? RETRY_DELAYS_MS);
}

function smtpDelivery(url: string): Delivery {
  // Query parameters of SMTP_URL (?requireTLS=true, ?tls.rejectUnauthorized=false, ...) are
  // nodemailer options and override these timeouts. The transport is built directly because
  // createTransport({url, ...}) keeps only what the URL says and drops the other options.
  const transport = nodemailer.createTransport(new SMTPTransport({ url, ...SMTP_TIMEOUTS }));
  return {
    deliver: async (message) => {
      await transport.sendMail(message);
      return 'sent by SMTP';
    },
    close: () => transport.close(),
  };
}

function outboxDelivery(dir: string, app: App): Delivery {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    deliver: async (message) => {
      const info = await transport.sendMail(message);
      await fs.promises.mkdir(dir, { recursive: true });
      // Names sort by time; the suffix keeps two messages in the same millisecond apart.
      const name = `${iso(app.clock.now()).replace(/[:.]/g, '-')}-${crypto.randomBytes(4).toString('hex')}.eml`;
      const file = path.join(dir, name);
      // The message holds a live token: readable by the service's user only.
      await fs.promises.writeFile(file, info.message as Buffer, { mode: 0o600 });
      return `written to ${file} (SMTP_URL is not set)`;
    },
    close: () => {},
  };
}

/**
 * Log lines name the recipient and subject only: bodies carry tokens, and tokens never go
 * to logs (anyone reading the log could take over the account).
 */
function retryingMailer(app: App, delivery: Delivery, delays: readonly number[]): Mailer {
  /** Pending retries, with the label of the message each one would send. */
  const timers = new Map<NodeJS.Timeout, string>();
  let closed = false;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  const finish = () => {
    if (--inFlight > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const attempt = (mail: Mail, message: nodemailer.SendMailOptions, n: number) => {
    const label = `mail to ${mail.to} "${mail.subject}"`;
    delivery.deliver(message).then(
      (where) => {
        app.log(`${label} ${where}`);
        finish();
      },
      (err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        if (closed || n >= delays.length) {
          app.log(`${label} failed, giving up after ${n + 1} attempt(s): ${reason}`);
          finish();
          return;
        }
        const delay = delays[n];
        app.log(`${label} failed (attempt ${n + 1} of ${delays.length + 1}), retrying in ${Math.ceil(delay / SECOND)} s: ${reason}`);
        const timer = setTimeout(() => {
          timers.delete(timer);
          attempt(mail, message, n + 1);
        }, delay);
        timer.unref();
        timers.set(timer, label);
      },
    );
  };

  return {
    send(mail) {
      if (closed) {
        app.log(`mail to ${mail.to} "${mail.subject}" not sent: shutting down`);
        return;
      }
      inFlight++;
      // An address object, not a string: nodemailer never parses it as a list of recipients.
      attempt(mail, { from: app.config.mailFrom, to: { name: '', address: mail.to }, subject: mail.subject, text: mail.text }, 0);
    },
    close() {
      closed = true;
      for (const [timer, label] of timers) {
        clearTimeout(timer);
        app.log(`${label} retry dropped: shutting down`);
        finish();
      }
      timers.clear();
      delivery.close();
    },
    idle: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
  };
}

// RFC 5322 dot-atom: the characters a local part may hold without quoting. Quoted local parts,
// comments and lists are refused so an address is always exactly one recipient.
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// Letters (any script: nodemailer sends IDNs as punycode), digits and inner hyphens. No other
// symbol, so no invisible or bidi-control character can make one domain look like another.
const DOMAIN_LABEL = /^[\p{L}\p{N}]([\p{L}\p{M}\p{N}-]{0,61}[\p{L}\p{M}\p{N}])?$/u;

/**
 * One email address, trimmed, with its domain lower-cased (domains are case-insensitive; the
 * local part is kept as typed). Addresses are compared case-insensitively everywhere else.
 */
export function readEmail(body: Body, key = 'email'): string {
  const raw = body[key];
  if (typeof raw !== 'string') throw badRequest(`${key} must be a string`);
  const value = raw.trim();
  if (value.length > MAX_EMAIL_LENGTH) throw badRequest(`${key} must be at most ${MAX_EMAIL_LENGTH} characters`);
  const at = value.lastIndexOf('@');
  const local = value.slice(0, at);
  const domain = value.slice(at + 1).toLowerCase();
  const labels = domain.split('.');
  if (
    at < 1 ||
    local.length > 64 ||
    !LOCAL_PART.test(local) ||
    labels.length < 2 ||
    !labels.every((label) => DOMAIN_LABEL.test(label))
  ) {
    throw badRequest(`${key} must be one email address like name@example.com`);
  }
  return `${local}@${domain}`;
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

export function mailRoutes(app: App): Route[] {
  const { db } = app;
  const accountEmail = db.prepare<[string], { email: string | null; email_verified: number }>(
    'SELECT email, email_verified FROM users WHERE id = ?',
  );
  const verifiedElsewhere = db.prepare<[string, string], { id: string }>(
    'SELECT id FROM users WHERE email = ? COLLATE NOCASE AND email_verified = 1 AND id <> ?',
  );
  const verifiedOwner = db.prepare<[string], { id: string; username: string; email: string }>(
    'SELECT id, username, email FROM users WHERE email = ? COLLATE NOCASE AND email_verified = 1',
  );
  const setEmail = db.prepare('UPDATE users SET email = ?, email_verified = 0 WHERE id = ?');
  const markVerified = db.prepare('UPDATE users SET email_verified = 1 WHERE id = ? AND email = ?');
  const setPasswordHash = db.prepare('UPDATE users SET password_hash = ? WHERE id = ?');
  const insertToken = db.prepare(
    'INSERT INTO email_tokens (token_hash, user_id, purpose, email, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const deleteExpiredTokens = db.prepare('DELETE FROM email_tokens WHERE expires_at <= ?');
  const deleteUserTokens = db.prepare('DELETE FROM email_tokens WHERE user_id = ?');
  const deleteUserTokensFor = db.prepare('DELETE FROM email_tokens WHERE user_id = ? AND purpose = ?');
  const findToken = db.prepare<[string, Purpose], TokenRow>(
    'SELECT user_id, email, expires_at FROM email_tokens WHERE token_hash = ? AND purpose = ?',
  );
  // Single use: the row is gone the moment it is used, so a second use finds nothing.
  const consumeToken = db.prepare<[string, Purpose], TokenRow>(
    'DELETE FROM email_tokens WHERE token_hash = ? AND purpose = ? RETURNING user_id, email, expires_at',
  );

  /** Stores a fresh token's hash (clearing out expired ones) and returns the token for the link. */
  const issueToken = (userId: string, purpose: Purpose, email: string): string => {
    const token = newToken();
    const now = app.clock.now();
    const lifetime = purpose === 'verify' ? VERIFY_TOKEN_LIFETIME_MS : RESET_TOKEN_LIFETIME_MS;
    deleteExpiredTokens.run(iso(now));
    insertToken.run(hashToken(token), userId, purpose, email, iso(now + lifetime), iso(now));
    return token;
  };

  const expired = (row: TokenRow) => Date.parse(row.expires_at) <= app.clock.now();

  const readToken = (value: unknown, key: string): string => {
    if (typeof value !== 'string' || value === '') throw badRequest(`${key} is required`);
    return value;
  };

  const wantsHtml = (accept: string | undefined) => (accept ?? '').includes('text/html');

  return [
    {
      // PUT /api/account/email
      // - 200 {email, email_verified: false}; the address is stored unverified and a
      //   verification link (valid 24 h) is mailed to it. Earlier links of the account stop working.
      // - The same address again: re-sent if unverified; if already verified, nothing changes.
      // - 400 for an invalid address; 409 when the address is verified on another account.
      // - Limited per client (before the 409, so probing for addresses costs the same) and per address.
      method: 'PUT',
      path: '/api/account/email',
      body: 'json',
      handler: (ctx) => {
        const email = readEmail(ctx.body);
        const current = accountEmail.get(ctx.user.id);
        if (current?.email === email && current.email_verified === 1) return json({ email, email_verified: true });
        app.limits.emailsPerClient.take(ctx.client, 'email requests from this client');
        if (verifiedElsewhere.get(email, ctx.user.id)) throw conflict('that email address is verified on another account');
        app.limits.emailsPerAddress.take(email.toLowerCase(), 'emails to this address');
        const token = db.transaction(() => {
          setEmail.run(email, ctx.user.id);
          deleteUserTokens.run(ctx.user.id);
          return issueToken(ctx.user.id, 'verify', email);
        })();
        app.mailer.send({
          to: email,
          subject: 'Confirm your email address',
          text: verifyText(ctx.user.username, app.config.baseUrl, `${app.config.baseUrl}/api/verify-email?token=${token}`),
        });
        return json({ email, email_verified: false });
      },
    },
    {
      // GET /api/verify-email?token=...
      // - Verifies the address the token was issued for; no session needed (any browser).
      // - A browser (Accept: text/html) is redirected (303) to /email-verified; other
      //   clients get 200 {email, email_verified: true}.
      // - 400 for a missing, unknown, used or expired token; 409 when the address was verified
      //   on another account meanwhile (the link keeps working should that change).
      method: 'GET',
      path: '/api/verify-email',
      auth: 'none',
      handler: (ctx) => {
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
      },
    },
    {
      // POST /api/password-reset/request
      // - Always 202 {ok: true}: the answer never tells whether an account has the address.
      // - A reset link (valid 1 h) is mailed only when an account has this address verified.
      // - Limited per client and per address (429 + Retry-After), known address or not.
      method: 'POST',
      path: '/api/password-reset/request',
      auth: 'none',
      body: 'json',
      handler: (ctx) => {
        const email = readEmail(ctx.body);
        app.limits.emailsPerClient.take(ctx.client, 'email requests from this client');
        app.limits.emailsPerAddress.take(email.toLowerCase(), 'emails to this address');
        const owner = verifiedOwner.get(email);
        if (owner) {
          const token = issueToken(owner.id, 'reset', owner.email);
          app.mailer.send({
            to: owner.email,
            subject: 'Reset your password',
            text: resetText(owner.username, app.config.baseUrl, `${app.config.baseUrl}/reset-password?token=${token}`),
          });
        }
        return json({ ok: true }, 202);
      },
    },
    {
      // POST /api/password-reset
      // - 204: the password is set, every reset link of the account is used up and every
      //   session of the account ends (their sockets close); the user signs in again, at
      //   once: the account's failed-login lock is lifted.
      // - 400 for a password outside the account rules (the token stays usable), and for a
      //   missing, unknown, used or expired token.
      method: 'POST',
      path: '/api/password-reset',
      auth: 'none',
      body: 'json',
      handler: async (ctx) => {
        const hash = hashToken(readToken(ctx.body.token, 'token'));
        const password = readPassword(ctx.body);
        const invalid = () => badRequest('this reset link is invalid or has already been used');
        const row = findToken.get(hash, 'reset');
        if (!row) throw invalid();
        if (expired(row)) throw badRequest('this reset link has expired; request a new one');
        const passwordHash = await hashPassword(password);
        // Checked again after the hash: a parallel request may have used the token meanwhile.
        const userId = db.transaction(() => {
          const consumed = consumeToken.get(hash, 'reset');
          if (!consumed || expired(consumed)) throw invalid();
          setPasswordHash.run(passwordHash, consumed.user_id);
          deleteUserTokensFor.run(consumed.user_id, 'reset');
          return consumed.user_id;
        })();
        app.sessions.endAllForUser(userId);
        // Whoever guessed at the old password locked the account; its owner just proved who they are.
        const user = app.users.byId(userId);
        if (user) app.limits.loginFailuresPerAccount.forget(user.username.toLowerCase());
        return noContent();
      },
    },
  ];
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
