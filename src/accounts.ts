import crypto from 'node:crypto';
import type { Route } from './app';
import { type User, CLEARED_SESSION_COOKIE, sessionCookie } from './auth';
import { iso } from './clock';
import type { DB } from './db';
import { HttpError, badRequest, conflict, notFound } from './http/errors';
import { created, json, noContent, redirect } from './http/respond';
import type { Body } from './http/body';
import { hashPassword, verifyPassword } from './passwords';
import { SUSPENDED } from './standing';

/** Account rules of spec section 2 and 8. */
export const USERNAME_RULE = /^[A-Za-z0-9_-]{3,32}$/;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;

export function readUsername(body: Body): string {
  const username = body.username;
  if (typeof username !== 'string') throw badRequest('username must be a string');
  if (!USERNAME_RULE.test(username)) {
    throw badRequest('username must be 3 to 32 characters of letters, digits, _ and -');
  }
  return username;
}

export function readPassword(body: Body, key = 'password'): string {
  const password = body[key];
  if (typeof password !== 'string') throw badRequest(`${key} must be a string`);
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw badRequest(`${key} must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  }
  return password;
}

interface UserRow {
  id: string;
  username: string;
  is_admin: number;
  standing: number;
}

const toUser = (row: UserRow): User => ({
  id: row.id,
  username: row.username,
  isAdmin: row.is_admin === 1,
  standing: row.standing,
});

export interface UserStore {
  byId(id: string): User | null;
  byUsername(username: string): User | null;
}

/** The user lookups every request makes (auth runs byId per request, so standing is always current). */
export function createUserStore(db: DB): UserStore {
  const byId = db.prepare<[string], UserRow>('SELECT id, username, is_admin, standing FROM users WHERE id = ?');
  const byUsername = db.prepare<[string], UserRow>(
    'SELECT id, username, is_admin, standing FROM users WHERE username = ? COLLATE NOCASE',
  );
  return {
    byId: (id) => {
      const row = byId.get(id);
      return row ? toUser(row) : null;
    },
    byUsername: (username) => {
      const row = byUsername.get(username);
      return row ? toUser(row) : null;
    },
  };
}

/** ADMIN_USERS are administrators: granted here at start-up and at registration. */
export function grantConfiguredAdmins(db: DB, usernames: string[]): void {
  const grant = db.prepare('UPDATE users SET is_admin = 1 WHERE username = ? COLLATE NOCASE');
  for (const name of usernames) grant.run(name);
}

export function accountRoutes(app: import('./app').App): Route[] {
  const { db } = app;
  const insertUser = db.prepare(
    'INSERT INTO users (id, username, password_hash, is_admin, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const credentialsByUsername = db.prepare<[string], { id: string; password_hash: string; standing: number }>(
    'SELECT id, password_hash, standing FROM users WHERE username = ? COLLATE NOCASE',
  );
  const updatePasswordHash = db.prepare('UPDATE users SET password_hash = ? WHERE id = ?');
  const accountById = db.prepare<[string], { email: string | null; email_verified: number }>(
    'SELECT email, email_verified FROM users WHERE id = ?',
  );
  const warningsForUser = db.prepare<[string], { id: string; issued_by: string; reason: string; created_at: string }>(
    `SELECT w.id, u.username AS issued_by, w.reason, w.created_at
       FROM warnings w JOIN users u ON u.id = w.issued_by
      WHERE w.user_id = ? ORDER BY w.created_at DESC, w.rowid DESC`,
  );
  const adminNames = new Set(app.config.adminUsers.map((name) => name.toLowerCase()));

  return [
    {
      // POST /api/register
      // - 201 {user_id}; 409 when the name is taken in any letter case.
      // - A browser form is redirected to /?registered=1.
      method: 'POST',
      path: '/api/register',
      auth: 'none',
      body: 'auth-form',
      handler: async (ctx) => {
        const username = readUsername(ctx.body);
        const password = readPassword(ctx.body);
        app.limits.registrationsPerClient.take(ctx.client, 'registrations from this address');
        if (credentialsByUsername.get(username)) throw conflict('username is already taken');
        const hash = await hashPassword(password);
        const id = crypto.randomUUID();
        // The unique index decides a race between two registrations that both passed the check
        // above while hashing. Thrown as our 409 so a browser form still gets its redirect.
        try {
          insertUser.run(id, username, hash, adminNames.has(username.toLowerCase()) ? 1 : 0, iso(app.clock.now()));
        } catch (err) {
          if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('username is already taken');
          throw err;
        }
        return ctx.form ? redirect('/?registered=1') : created({ user_id: id });
      },
    },
    {
      // POST /api/login
      // - 200 {user_id, suspended}; sets the app_session cookie (a fresh token every time).
      // - Unknown user and wrong password: the same 401, in about the same time.
      // - Failed attempts are limited per account and per client address (429 + Retry-After).
      method: 'POST',
      path: '/api/login',
      auth: 'none',
      body: 'auth-form',
      handler: async (ctx) => {
        const { username, password } = ctx.body;
        if (typeof username !== 'string' || typeof password !== 'string') {
          throw badRequest('username and password are required');
        }
        // A name that breaks the rules cannot be an account: only the address is charged, and
        // no attacker-sized string becomes a limiter key.
        const accountKey = USERNAME_RULE.test(username) ? username.toLowerCase() : null;
        const perAccount = app.limits.loginFailuresPerAccount;
        const perClient = app.limits.loginFailuresPerClient;
        if (accountKey) perAccount.check(accountKey, 'failed logins for this account');
        perClient.check(ctx.client, 'failed logins from this address');
        // Every attempt counts as a failure before the slow hash check, in the same tick as the
        // check above: otherwise parallel guesses would all pass the check before any failure
        // was recorded. A success gives the tokens back, so it never spends the budget.
        if (accountKey) perAccount.spend(accountKey);
        perClient.spend(ctx.client);
        const row = accountKey ? credentialsByUsername.get(username) : undefined;
        const { ok, rehash } = await verifyPassword(row?.password_hash, password);
        if (!ok || !row) throw new HttpError(401, 'invalid username or password');
        if (accountKey) perAccount.refund(accountKey);
        perClient.refund(ctx.client);
        if (rehash) updatePasswordHash.run(await hashPassword(password), row.id);
        const session = app.sessions.create(row.id);
        ctx.res.setHeader('Set-Cookie', sessionCookie(app, session.token));
        const suspended = row.standing >= SUSPENDED;
        if (ctx.form) return redirect(suspended ? '/account/warnings' : '/?logged_in=1');
        return json({ user_id: row.id, suspended });
      },
    },
    {
      // POST /api/logout
      // - 204 and the session ends (its sockets close); a browser form is redirected to /.
      method: 'POST',
      path: '/api/logout',
      auth: 'account',
      body: 'auth-form',
      handler: (ctx) => {
        app.sessions.end(ctx.session.token);
        ctx.res.setHeader('Set-Cookie', CLEARED_SESSION_COOKIE);
        return ctx.form ? redirect('/') : noContent();
      },
    },
    {
      // GET /api/users/me
      // - {user_id, username} of the session's user.
      method: 'GET',
      path: '/api/users/me',
      handler: (ctx) => json({ user_id: ctx.user.id, username: ctx.user.username }),
    },
    {
      // GET /api/users/{user_id}
      // - {user_id, username}; 404 for an unknown id.
      method: 'GET',
      path: '/api/users/:user_id',
      handler: (ctx) => {
        const user = app.users.byId(ctx.params.user_id);
        if (!user) throw notFound('user not found');
        return json({ user_id: user.id, username: user.username });
      },
    },
    {
      // GET /api/account
      // - The account status record; open to suspended accounts so they can see why.
      method: 'GET',
      path: '/api/account',
      auth: 'account',
      handler: (ctx) => {
        const account = accountById.get(ctx.user.id);
        return json({
          user_id: ctx.user.id,
          username: ctx.user.username,
          is_admin: ctx.user.isAdmin,
          account_standing: ctx.user.standing,
          warnings: warningsForUser.all(ctx.user.id),
          email: account?.email ?? null,
          email_verified: account?.email_verified === 1,
        });
      },
    },
  ];
}
