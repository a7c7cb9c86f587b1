import { CLEARED_DEVICE_COOKIE, CLEARED_SESSION_COOKIE, rememberDevice } from '../parts/accounts/auth';
import { iso } from '../core/clock';
import { badRequest, conflict, notFound } from '../core/http/errors';
import { json, noContent } from '../core/http/respond';
import { hashPassword } from '../core/passwords';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { readPassword } from '../parts/accounts/users';

type Deps = Pick<Services, 'config' | 'sessions' | 'devices' | 'twoFactor' | 'accountChanges' | 'identity'>;

/** What keeps an account its owner's: the password, the sessions, two-factor sign-in. */
export function accountSecurityRoutes(deps: Deps): Route[] {
  const h = accountSecurityHandlers(deps);
  return [
    { method: 'PUT', path: '/api/account/password', auth: 'account', body: 'json', handler: h.changePassword },
    { method: 'GET', path: '/api/account/sessions', auth: 'account', body: 'none', handler: h.listSessions },
    { method: 'DELETE', path: '/api/account/sessions', auth: 'account', body: 'none', handler: h.endOtherSessions },
    { method: 'DELETE', path: '/api/account/sessions/:session_id', auth: 'account', body: 'none', handler: h.endSession },
    { method: 'POST', path: '/api/account/2fa/setup', auth: 'account', body: 'json', handler: h.setUpTwoFactor },
    { method: 'POST', path: '/api/account/2fa/enable', auth: 'account', body: 'json', handler: h.enableTwoFactor },
    { method: 'DELETE', path: '/api/account/2fa', auth: 'account', body: 'json', handler: h.disableTwoFactor },
    { method: 'POST', path: '/api/account/2fa/recovery-codes', auth: 'account', body: 'json', handler: h.renewRecoveryCodes },
  ];
}

function accountSecurityHandlers({ config, sessions, devices, twoFactor, accountChanges, identity }: Deps) {
  /** After a change that ended every remembered device: the caller's browser, if remembered, stays so. */
  const keepRemembered = (ctx: Ctx) => {
    if (ctx.session.deviceId) ctx.res.setHeader('Set-Cookie', rememberDevice(ctx.session, devices, config.baseUrl));
  };

  return { changePassword, listSessions, endOtherSessions, endSession, setUpTwoFactor, enableTwoFactor, disableTwoFactor, renewRecoveryCodes };

  /**
   * {current_password, new_password}: 204; every other session of the user ends (their streams
   * close 4001), the caller's stays. A wrong current password is 403 and a failed login.
   */
  async function changePassword(ctx: Ctx) {
    const next = readPassword(ctx.body, 'new_password');
    await identity.password(ctx);
    accountChanges.setPassword(ctx.user.id, await hashPassword(next), { keep: ctx.session.token });
    keepRemembered(ctx);
    return noContent();
  }

  /**
   * The user's sign-ins, most recently used first: each remembered device (`device: true`, with
   * the session it opened, if any) and each session of a browser not remembered. `current`
   * marks the caller's.
   */
  function listSessions(ctx: Ctx) {
    const live = sessions.listForUser(ctx.user.id);
    const remembered = devices.list(ctx.user.id).map((d) => {
      const opened = live.filter((s) => s.deviceId === d.id);
      const lastSeen = Math.max(Date.parse(d.lastUsedAt), ...opened.map((s) => s.lastSeenAt));
      return {
        id: d.id,
        device: true,
        created_at: d.createdAt,
        last_seen_at: iso(lastSeen),
        user_agent: d.userAgent,
        address: opened.at(-1)?.address ?? d.address,
        current: ctx.session.deviceId === d.id,
      };
    });
    const known = new Set(remembered.map((d) => d.id));
    const plain = live
      .filter((s) => !s.deviceId || !known.has(s.deviceId))
      .map((s) => ({
        id: s.id,
        device: false,
        created_at: iso(s.createdAt),
        last_seen_at: iso(s.lastSeenAt),
        user_agent: s.userAgent,
        address: s.address,
        current: s.token === ctx.session.token,
      }));
    return json([...remembered, ...plain].sort((a, b) => b.last_seen_at.localeCompare(a.last_seen_at)));
  }

  /** 204: every session and remembered device but the caller's ends. */
  function endOtherSessions(ctx: Ctx) {
    accountChanges.endDevices(ctx.user.id, { keep: ctx.session.token });
    keepRemembered(ctx);
    sessions.endAllForUser(ctx.user.id, ctx.session.token);
    return noContent();
  }

  /**
   * 204: that session, or that remembered device and the session it opened, ends (the caller's
   * own too: a sign-out); 404 for an id that is not one of theirs.
   */
  function endSession(ctx: Ctx) {
    const id = ctx.params.session_id;
    const own = id === ctx.session.id || id === ctx.session.deviceId;
    if (!accountChanges.endDevices(ctx.user.id, { only: id }) && !sessions.endById(ctx.user.id, id)) throw notFound('session not found');
    if (own) {
      sessions.end(ctx.session.token);
      ctx.res.setHeader('Set-Cookie', [CLEARED_SESSION_COOKIE, CLEARED_DEVICE_COOKIE]);
    }
    return noContent();
  }

  /**
   * {current_password}: 200 {secret, otpauth_url}, a new secret pending until a code from it is
   * confirmed; 409 when on.
   */
  async function setUpTwoFactor(ctx: Ctx) {
    if (twoFactor.isOn(ctx.user.id)) throw conflict('two-factor sign-in is already on; turn it off first');
    await identity.password(ctx);
    return json(twoFactor.setup(ctx.user.id, ctx.user.username));
  }

  /**
   * {current_password, code} from the pending secret: 200 {recovery_codes} (shown once), and every
   * other session of the account ends; 403 a wrong code; 409 nothing pending.
   */
  async function enableTwoFactor(ctx: Ctx) {
    const code = readCode(ctx);
    await identity.password(ctx);
    const codes = twoFactor.enable(ctx.user.id, code);
    accountChanges.twoFactorChanged(ctx.user.id, true, ctx.session.token);
    keepRemembered(ctx);
    return json({ recovery_codes: codes });
  }

  /**
   * {current_password, code}: a current code or an unused recovery code turns it off (204); a
   * wrong one is 403 and a failed login.
   */
  async function disableTwoFactor(ctx: Ctx) {
    if (!twoFactor.isOn(ctx.user.id)) throw conflict('two-factor sign-in is off');
    readCode(ctx);
    await identity.passwordAndCode(ctx, 'current_password');
    twoFactor.reset(ctx.user.id);
    accountChanges.twoFactorChanged(ctx.user.id, false, ctx.session.token);
    keepRemembered(ctx);
    return noContent();
  }

  /**
   * {current_password, code}: 200 {recovery_codes}, a new set (shown once); the old ones stop
   * working. 409 when two-factor sign-in is off.
   */
  async function renewRecoveryCodes(ctx: Ctx) {
    if (!twoFactor.isOn(ctx.user.id)) throw conflict('two-factor sign-in is off');
    readCode(ctx);
    await identity.passwordAndCode(ctx, 'current_password');
    return json({ recovery_codes: twoFactor.renewRecoveryCodes(ctx.user.id) });
  }
}

function readCode(ctx: Ctx): string {
  const code = ctx.body.code;
  if (typeof code !== 'string') throw badRequest('code must be a string');
  return code;
}
