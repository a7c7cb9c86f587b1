import { CLEARED_SESSION_COOKIE } from '../parts/accounts/auth';
import { iso } from '../core/clock';
import { badRequest, conflict, forbidden, notFound } from '../core/http/errors';
import { json, noContent } from '../core/http/respond';
import { createLoginGuard } from '../rules/limits';
import { hashPassword, verifyPassword } from '../core/passwords';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { readPassword } from '../parts/accounts/users';

type Deps = Pick<Services, 'db' | 'clock' | 'sessions' | 'limits' | 'twoFactor' | 'accountChanges'>;

/** What keeps an account its owner's: the password, the sessions, two-factor sign-in. */
export function accountSecurityRoutes(deps: Deps): Route[] {
  const h = accountSecurityHandlers(deps);
  return [
    { method: 'PUT', path: '/api/account/password', auth: 'account', body: 'json', handler: h.changePassword },
    { method: 'GET', path: '/api/account/sessions', auth: 'account', body: 'none', handler: h.listSessions },
    { method: 'DELETE', path: '/api/account/sessions', auth: 'account', body: 'none', handler: h.endOtherSessions },
    { method: 'DELETE', path: '/api/account/sessions/:session_id', auth: 'account', body: 'none', handler: h.endSession },
    { method: 'POST', path: '/api/account/2fa/setup', auth: 'account', body: 'none', handler: h.setUpTwoFactor },
    { method: 'POST', path: '/api/account/2fa/enable', auth: 'account', body: 'json', handler: h.enableTwoFactor },
    { method: 'DELETE', path: '/api/account/2fa', auth: 'account', body: 'json', handler: h.disableTwoFactor },
  ];
}

function accountSecurityHandlers({ db, sessions, limits, twoFactor, accountChanges }: Deps) {
  const passwordHashOf = db.prepare<[string], { password_hash: string }>('SELECT password_hash FROM users WHERE id = ?');
  const loginGuard = createLoginGuard(limits);

  return { changePassword, listSessions, endOtherSessions, endSession, setUpTwoFactor, enableTwoFactor, disableTwoFactor };

  /**
   * {current_password, new_password}: 204; every other session of the user ends (their streams
   * close 4001), the caller's stays. A wrong current password is 403 and a failed login.
   */
  async function changePassword(ctx: Ctx) {
    const current = ctx.body.current_password;
    if (typeof current !== 'string') throw badRequest('current_password must be a string');
    const next = readPassword(ctx.body, 'new_password');
    const attempt = loginGuard.begin(ctx.user.username.toLowerCase(), ctx.client);
    const { ok } = await verifyPassword(passwordHashOf.get(ctx.user.id)?.password_hash, current);
    if (!ok) throw forbidden('current password is wrong');
    attempt.succeeded();
    accountChanges.setPassword(ctx.user.id, await hashPassword(next), { keep: ctx.session.token });
    return noContent();
  }

  /** The user's live sessions, most recently used first; `current` marks the caller's. */
  function listSessions(ctx: Ctx) {
    const list = sessions
      .listForUser(ctx.user.id)
      .sort((a, b) => b.lastSeenAt - a.lastSeenAt)
      .map((s) => ({
        id: s.id,
        created_at: iso(s.createdAt),
        last_seen_at: iso(s.lastSeenAt),
        user_agent: s.userAgent,
        address: s.address,
        current: s.token === ctx.session.token,
      }));
    return json(list);
  }

  /** 204: every session but the caller's ends. */
  function endOtherSessions(ctx: Ctx) {
    sessions.endAllForUser(ctx.user.id, ctx.session.token);
    return noContent();
  }

  /** 204: that session ends (the caller's own too: a sign-out); 404 for an id that is not one of theirs. */
  function endSession(ctx: Ctx) {
    const own = ctx.params.session_id === ctx.session.id;
    if (!sessions.endById(ctx.user.id, ctx.params.session_id)) throw notFound('session not found');
    if (own) ctx.res.setHeader('Set-Cookie', CLEARED_SESSION_COOKIE);
    return noContent();
  }

  /** 200 {secret, otpauth_url}: a new secret, pending until a code from it is confirmed; 409 when on. */
  function setUpTwoFactor(ctx: Ctx) {
    return json(twoFactor.setup(ctx.user.id, ctx.user.username));
  }

  /** {code} from the pending secret: 200 {recovery_codes} (shown once); 400 a wrong code; 409 nothing pending. */
  function enableTwoFactor(ctx: Ctx) {
    const code = ctx.body.code;
    if (typeof code !== 'string') throw badRequest('code must be a string');
    return json({ recovery_codes: twoFactor.enable(ctx.user.id, code) });
  }

  /** {code}: a current code or an unused recovery code turns it off (204); a wrong one is 403 and a failed login. */
  function disableTwoFactor(ctx: Ctx) {
    const code = ctx.body.code;
    if (typeof code !== 'string') throw badRequest('code must be a string');
    if (!twoFactor.isOn(ctx.user.id)) throw conflict('two-factor sign-in is off');
    const attempt = loginGuard.begin(ctx.user.username.toLowerCase(), ctx.client);
    if (!twoFactor.disable(ctx.user.id, code)) throw forbidden('invalid two-factor code');
    attempt.succeeded();
    return noContent();
  }
}
