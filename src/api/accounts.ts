import crypto from 'node:crypto';
import { CLEARED_SESSION_COOKIE, sessionCookie } from '../auth';
import { iso } from '../clock';
import { HttpError, badRequest, conflict, notFound } from '../http/errors';
import { created, json, noContent, redirect } from '../http/respond';
import { hashPassword, verifyPassword } from '../passwords';
import type { Services } from '../services';
import { STATUSES } from '../presence';
import { SUSPENDED } from '../standing';
import type { Ctx, PublicCtx, Route } from '../types';
import { USERNAME_RULE, readPassword, readUsername } from '../users';
import { oneOf } from '../validate';

type Deps = Pick<Services, 'db' | 'clock' | 'config' | 'users' | 'sessions' | 'limits' | 'presence'>;

/** Register, log in and out, look users up, read one's own account (spec section 4). */
export function accountRoutes(deps: Deps): Route[] {
  const h = accountHandlers(deps);
  return [
    { method: 'POST', path: '/api/register', auth: 'none', body: 'auth-form', handler: h.register },
    { method: 'POST', path: '/api/login', auth: 'none', body: 'auth-form', handler: h.login },
    { method: 'POST', path: '/api/logout', auth: 'account', body: 'auth-form', handler: h.logout },
    { method: 'GET', path: '/api/users/me', auth: 'user', body: 'none', handler: h.getMe },
    { method: 'GET', path: '/api/users/:user_id', auth: 'user', body: 'none', handler: h.getUser },
    { method: 'GET', path: '/api/account', auth: 'account', body: 'none', handler: h.getAccount },
    { method: 'PUT', path: '/api/account/presence', auth: 'user', body: 'json', handler: h.setPresence },
  ];
}

function accountHandlers({ db, clock, config, users, sessions, limits, presence }: Deps) {
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
  const adminNames = new Set(config.adminUsers.map((name) => name.toLowerCase()));

  return { register, login, logout, getMe, getUser, getAccount, setPresence };

  /** 201 {user_id}; 409 when the name is taken in any letter case; a form is redirected to /?registered=1. */
  async function register(ctx: PublicCtx) {
    const username = readUsername(ctx.body);
    const password = readPassword(ctx.body);
    limits.registrationsPerClient.take(ctx.client, 'registrations from this address');
    if (credentialsByUsername.get(username)) throw conflict('username is already taken', 'username_taken');
    const hash = await hashPassword(password);
    const id = crypto.randomUUID();
    // The unique index decides a race between two registrations that both passed the check
    // above while hashing. Thrown as our 409 so a browser form still gets its redirect.
    try {
      insertUser.run(id, username, hash, adminNames.has(username.toLowerCase()) ? 1 : 0, iso(clock.now()));
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('username is already taken', 'username_taken');
      throw err;
    }
    return ctx.form ? redirect('/?registered=1') : created({ user_id: id });
  }

  /**
   * 200 {user_id, suspended} and a fresh session cookie; unknown user and wrong password get the
   * same 401 in about the same time; failures are limited per account and per address (429).
   */
  async function login(ctx: PublicCtx) {
    const { username, password } = ctx.body;
    if (typeof username !== 'string' || typeof password !== 'string') {
      throw badRequest('username and password are required', 'missing_fields');
    }
    // A name that breaks the rules cannot be an account: only the address is charged, and
    // no attacker-sized string becomes a limiter key.
    const accountKey = USERNAME_RULE.test(username) ? username.toLowerCase() : null;
    const perAccount = limits.loginFailuresPerAccount;
    const perClient = limits.loginFailuresPerClient;
    if (accountKey) perAccount.check(accountKey, 'failed logins for this account');
    perClient.check(ctx.client, 'failed logins from this address');
    // Every attempt counts as a failure before the slow hash check, in the same tick as the
    // check above: otherwise parallel guesses would all pass the check before any failure
    // was recorded. A success gives the tokens back, so it never spends the budget.
    if (accountKey) perAccount.spend(accountKey);
    perClient.spend(ctx.client);
    const row = accountKey ? credentialsByUsername.get(username) : undefined;
    const { ok, rehash } = await verifyPassword(row?.password_hash, password);
    if (!ok || !row) throw new HttpError(401, 'invalid username or password', {}, 'login_failed');
    if (accountKey) perAccount.refund(accountKey);
    perClient.refund(ctx.client);
    if (rehash) updatePasswordHash.run(await hashPassword(password), row.id);
    const session = sessions.create(row.id);
    ctx.res.setHeader('Set-Cookie', sessionCookie(config.baseUrl, session.token));
    const suspended = row.standing >= SUSPENDED;
    if (ctx.form) return redirect(suspended ? '/account/warnings' : '/?logged_in=1');
    return json({ user_id: row.id, suspended });
  }

  /** 204 and the session ends (its sockets close); a browser form is redirected to /. */
  function logout(ctx: Ctx) {
    sessions.end(ctx.session.token);
    ctx.res.setHeader('Set-Cookie', CLEARED_SESSION_COOKIE);
    return ctx.form ? redirect('/') : noContent();
  }

  /** {user_id, username} of the session's user. */
  function getMe(ctx: Ctx) {
    return json({ user_id: ctx.user.id, username: ctx.user.username });
  }

  /** {user_id, username}; 404 for an unknown id. */
  function getUser(ctx: Ctx) {
    const user = users.byId(ctx.params.user_id);
    if (!user) throw notFound('user not found');
    return json({ user_id: user.id, username: user.username });
  }

  /**
   * 200 {status, presence}: what the caller chose (online, idle, dnd, invisible) and what others
   * now see (invisible shows as offline); friends and members of shared servers get `presence`.
   */
  function setPresence(ctx: Ctx) {
    const status = oneOf(ctx.body, 'status', STATUSES);
    presence.set(ctx.user.id, status);
    return json({ status, presence: presence.of(ctx.user.id) });
  }

  /** The account status record; open to suspended accounts so they can see why. */
  function getAccount(ctx: Ctx) {
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
  }
}
