import { readCookie, remoteAddress } from '../core/http/client';
import { CLEARED_DEVICE_COOKIE, CLEARED_SESSION_COOKIE, DEVICE_COOKIE, deviceCookie, openSession, readRemember, sessionCookie } from '../parts/accounts/auth';
import { HttpError, badRequest, conflict, forbidden, notFound } from '../core/http/errors';
import { createLoginGuard } from '../rules/limits';
import { created, json, noContent, redirect } from '../core/http/respond';
import { hashPassword, verifyPassword } from '../core/passwords';
import type { Services } from '../parts/services';
import { STATUSES } from '../parts/live/presence';
import { SUSPENDED } from '../rules/standing';
import { type Ctx, type PublicCtx, type Route, refOf } from '../core/types';
import { USERNAME_RULE, readPassword, readUsername } from '../parts/accounts/users';
import { codeRequired } from '../parts/accounts/two-factor';
import { isPasswordHash } from '../parts/accounts/account-rows';
import { oneOf, text } from '../core/validate';

/** A display name: any script, at most this many characters. */
import { MAX_DISPLAY_NAME_CHARS } from '../rules/sizes';
export { MAX_DISPLAY_NAME_CHARS };
/** The name every deleted account shows (schema.sql, the profiles view). */
export const DELETED_USERNAME = 'deleted-user';
/** Characters that reorder or hide text: a name with them could pass for someone else's. */
const DIRECTION_CONTROLS = /[\u0080-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;

type Deps = Pick<
  Services,
  | 'db'
  | 'config'
  | 'users'
  | 'sessions'
  | 'devices'
  | 'limits'
  | 'presence'
  | 'twoFactor'
  | 'identity'
  | 'hub'
  | 'directory'
  | 'deletion'
  | 'accountChanges'
  | 'accountRows'
>;

/** Register, log in and out, look users up, read one's own account (spec section 4). */
export function accountRoutes(deps: Deps): Route[] {
  const h = accountHandlers(deps);
  return [
    { method: 'POST', path: '/api/register', auth: 'none', body: 'auth-form', handler: h.register },
    { method: 'POST', path: '/api/login', auth: 'none', body: 'auth-form', handler: h.login },
    { method: 'POST', path: '/api/logout', auth: 'account', body: 'auth-form', handler: h.logout },
    { method: 'POST', path: '/api/session/resume', auth: 'none', body: 'none', handler: h.resumeSession },
    { method: 'GET', path: '/api/users/me', auth: 'user', body: 'none', handler: h.getMe },
    { method: 'GET', path: '/api/users/:user_id', auth: 'user', body: 'none', handler: h.getUser },
    { method: 'GET', path: '/api/account', auth: 'account', body: 'none', handler: h.getAccount },
    { method: 'PATCH', path: '/api/account', auth: 'user', body: 'json', handler: h.updateProfile },
    { method: 'DELETE', path: '/api/account', auth: 'account', body: 'json', handler: h.deleteAccount },
    { method: 'PUT', path: '/api/account/presence', auth: 'user', body: 'json', handler: h.setPresence },
  ];
}

function accountHandlers({
  db,
  config,
  users,
  sessions,
  devices,
  limits,
  presence,
  twoFactor,
  identity,
  hub,
  directory,
  deletion,
  accountChanges,
  accountRows,
}: Deps) {
  const credentialsByUsername = db.prepare<[string], { id: string; password_hash: string; standing: number }>(
    'SELECT id, password_hash, standing FROM users WHERE username = ? COLLATE NOCASE',
  );
  const accountById = db.prepare<[string], { email: string | null; email_verified: number; password_hash: string; username_chosen: number }>(
    'SELECT email, email_verified, password_hash, username_chosen FROM users WHERE id = ?',
  );
  const warningsForUser = db.prepare<[string], { id: string; issued_by: string; reason: string; created_at: string }>(
    `SELECT w.id, u.username AS issued_by, w.reason, w.created_at
       FROM warnings w JOIN users u ON u.id = w.issued_by
      WHERE w.user_id = ? ORDER BY w.created_at DESC, w.rowid DESC`,
  );
  const adminNames = new Set(config.adminUsers.map((name) => name.toLowerCase()));

  const loginGuard = createLoginGuard(limits);

  return { register, login, logout, resumeSession, getMe, getUser, getAccount, setPresence, updateProfile, deleteAccount };

  /**
   * 201 {user_id}; 409 when the name is taken in any letter case; a form is redirected to
   * /?registered=1. 403 while PASSWORD_SIGNUP is off (accounts come through a provider).
   */
  async function register(ctx: PublicCtx) {
    if (!config.passwordSignup) throw forbidden('password sign-up is off on this server: sign in with your organisation', 'signup_closed');
    const username = readUsername(ctx.body);
    const password = readPassword(ctx.body);
    limits.registrationsPerClient.take(ctx.client, 'registrations from this address');
    // deleted-user is how deleted accounts are shown: nobody may take the name.
    if (credentialsByUsername.get(username) || username.toLowerCase() === DELETED_USERNAME) {
      throw conflict('username is already taken', 'username_taken');
    }
    const hash = await hashPassword(password);
    let id: string;
    // The unique index decides a race between two registrations that both passed the check
    // above while hashing. Thrown as our 409 so a browser form still gets its redirect.
    try {
      id = accountRows.createAccount({ kind: 'person', username, passwordHash: hash, isAdmin: adminNames.has(username.toLowerCase()) });
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('username is already taken', 'username_taken');
      throw err;
    }
    return ctx.form ? redirect('/?registered=1') : created({ user_id: id });
  }

  /**
   * 200 {user_id, suspended} and a fresh session cookie; unknown user and wrong password get the
   * same 401 in about the same time; failures are limited per account and per address (429).
   * An account without a password gives an empty password and a recovery code as `code`.
   */
  async function login(ctx: PublicCtx) {
    const { username, password, code } = ctx.body;
    if (typeof username !== 'string' || typeof password !== 'string') {
      throw badRequest('username and password are required', 'missing_fields');
    }
    if (code !== undefined && typeof code !== 'string') throw badRequest('code must be a string');
    const remember = readRemember(ctx.body.remember);
    // A name that breaks the rules cannot be an account: only the address is charged, and
    // no attacker-sized string becomes a limiter key.
    const attempt = loginGuard.begin(USERNAME_RULE.test(username) ? username.toLowerCase() : null, ctx.client);
    const row = attempt.accountKey ? credentialsByUsername.get(username) : undefined;
    // An account without a password (a passkey replaced it, or it came through a provider) signs
    // in with a recovery code alone when its passkeys are lost: 50 random bits, used up, and a
    // wrong one counted as a failed login (docs/security.md "Passkeys"). A code from the app is not enough.
    if (row && !isPasswordHash(row.password_hash) && password === '' && typeof code === 'string' && code !== '') {
      if (!twoFactor.useRecoveryCode(row.id, code)) throw new HttpError(401, 'invalid recovery code', {}, 'two_factor_failed');
      attempt.succeeded();
      return signedIn(ctx, row, 'recovery', remember);
    }
    const { ok, rehash } = await verifyPassword(row?.password_hash, password);
    if (!ok || !row) throw new HttpError(401, 'invalid username or password', {}, 'login_failed');
    if (twoFactor.isOn(row.id)) {
      if (code === undefined || code === '') {
        // The password was right: not a failed guess. The client asks for the code and sends both again.
        attempt.succeeded();
        throw codeRequired();
      }
      // A wrong code stays counted as a failed login.
      if (typeof code !== 'string' || !twoFactor.check(row.id, code)) {
        throw new HttpError(401, 'invalid two-factor code', {}, 'two_factor_failed');
      }
    }
    attempt.succeeded();
    if (rehash) accountChanges.setPassword(row.id, await hashPassword(password), 'none');
    return signedIn(ctx, row, 'password', remember);
  }

  function signedIn(ctx: PublicCtx, row: { id: string; standing: number }, method: 'password' | 'recovery', remember: boolean) {
    openSession({ sessions, devices, config }, ctx, row.id, { method, remember });
    const suspended = row.standing >= SUSPENDED;
    if (ctx.form) return redirect(suspended ? '/account/warnings' : '/?logged_in=1');
    return json({ user_id: row.id, suspended });
  }

  /**
   * A remembered browser signs in again without its password or a code (after a restart): 200
   * {user_id, suspended}, a new session cookie and the device's next secret. 401 and the device
   * cookie cleared when it holds none that works; a secret used before (a copy) ends every
   * remembered device of the account and the sessions they opened (docs/security.md).
   */
  function resumeSession(ctx: PublicCtx) {
    limits.deviceResumesPerClient.take(ctx.client, 'remembered sign-ins from this address');
    const secret = readCookie(ctx.req, DEVICE_COOKIE);
    const redeemed = secret ? devices.redeem(secret) : ({ outcome: 'unknown' } as const);
    if (redeemed.outcome === 'replayed') accountChanges.endDevices(redeemed.userId);
    if (redeemed.outcome === 'raced') throw new HttpError(401, 'this device was just signed in by another request: try again', {}, 'device_raced');
    const user = redeemed.outcome === 'opened' ? users.byId(redeemed.device.userId) : null;
    if (redeemed.outcome !== 'opened' || !user) {
      throw new HttpError(401, 'this device is not remembered: sign in', { 'Set-Cookie': CLEARED_DEVICE_COOKIE }, 'device_unknown');
    }
    const session = sessions.create(user.id, {
      userAgent: ctx.req.headers['user-agent'],
      address: remoteAddress(ctx.req, config.trustProxy),
      deviceId: redeemed.device.id,
      method: 'device',
    });
    ctx.res.setHeader('Set-Cookie', [sessionCookie(config.baseUrl, session.token), deviceCookie(config.baseUrl, redeemed.secret)]);
    return json({ user_id: user.id, suspended: user.standing >= SUSPENDED });
  }

  /**
   * 204 and the session ends (its sockets close), and the browser's remembered device with it;
   * a browser form is redirected to /.
   */
  function logout(ctx: Ctx) {
    if (ctx.session.deviceId) accountChanges.endDevices(ctx.user.id, { only: ctx.session.deviceId });
    sessions.end(ctx.session.token);
    ctx.res.setHeader('Set-Cookie', [CLEARED_SESSION_COOKIE, CLEARED_DEVICE_COOKIE]);
    return ctx.form ? redirect('/') : noContent();
  }

  /** {user_id, username} of the session's user. */
  function getMe(ctx: Ctx) {
    return json(refOf(ctx.user));
  }

  /** {user_id, username}; 404 for an unknown id. */
  function getUser(ctx: Ctx) {
    const user = users.byId(ctx.params.user_id);
    if (!user) throw notFound('user not found');
    return json(refOf(user));
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
      display_name: ctx.user.displayName,
      avatar_url: ctx.user.avatarUrl,
      two_factor: twoFactor.isOn(ctx.user.id),
      has_password: isPasswordHash(account?.password_hash),
      username_changeable: account?.username_chosen === 0,
    });
  }

  /**
   * PATCH {display_name}: 1 to 32 characters of any script, or null for none (the username
   * shows); 200 the account record; everyone who sees the user gets user_updated.
   */
  function updateProfile(ctx: Ctx) {
    if (!('display_name' in ctx.body)) throw badRequest('nothing to change: send display_name');
    const value = ctx.body.display_name;
    const name = value === null ? null : text(ctx.body, 'display_name', { max: MAX_DISPLAY_NAME_CHARS });
    if (name && DIRECTION_CONTROLS.test(value as string)) throw badRequest('display_name contains invisible or direction-changing characters');
    accountRows.setDisplayName(ctx.user.id, name);
    announceProfile(ctx.user.id);
    return getAccount({ ...ctx, user: users.byId(ctx.user.id)! });
  }

  /**
   * DELETE {password, code?}: the account goes (src/parts/accounts/account-deletion.ts); 409 naming the servers
   * the user still owns; a wrong password or code is 403 and counts as a failed login.
   */
  async function deleteAccount(ctx: Ctx) {
    if (typeof ctx.body.password !== 'string') throw badRequest('password is required to delete the account');
    deletion.requireNoOwnedServers(ctx.user.id);
    await identity.passwordAndCode(ctx, 'password');
    deletion.deleteAccount(ctx.user.id);
    ctx.res.setHeader('Set-Cookie', [CLEARED_SESSION_COOKIE, CLEARED_DEVICE_COOKIE]);
    return noContent();
  }

  /** The new name and avatar, to everyone who shows them. */
  function announceProfile(userId: string) {
    const user = users.byId(userId)!;
    hub.toUsers(directory.peopleWhoSee(userId), { event: 'user_updated', user: refOf(user) });
  }
}
