import { conflict, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { Ctx, PublicCtx, Route } from '../core/types';
import { text } from '../core/validate';
import { NO_PASSWORD } from '../parts/accounts/account-rows';
import { openSession, readRemember } from '../parts/accounts/auth';
import { MAX_PASSKEY_NAME_CHARS, type Passkey } from '../parts/accounts/passkeys';
import type { Services } from '../parts/services';
import { createLoginGuard } from '../rules/limits';
import { SUSPENDED } from '../rules/standing';

type Deps = Pick<Services, 'config' | 'users' | 'sessions' | 'devices' | 'limits' | 'identity' | 'passkeys' | 'signInMethods' | 'accountChanges'>;

/** Passkeys (WebAuthn): registered from the account page, used to sign in without a username. */
export function passkeyRoutes(deps: Deps): Route[] {
  const h = passkeyHandlers(deps);
  return [
    { method: 'POST', path: '/api/account/passkeys/options', auth: 'account', body: 'json', handler: h.registrationOptions },
    { method: 'POST', path: '/api/account/passkeys', auth: 'account', body: 'json', handler: h.register },
    { method: 'GET', path: '/api/account/passkeys', auth: 'account', body: 'none', handler: h.list },
    { method: 'PATCH', path: '/api/account/passkeys/:passkey_id', auth: 'account', body: 'json', handler: h.rename },
    { method: 'DELETE', path: '/api/account/passkeys/:passkey_id', auth: 'account', body: 'none', handler: h.remove },
    { method: 'DELETE', path: '/api/account/password', auth: 'account', body: 'json', handler: h.removePassword },
    { method: 'POST', path: '/api/login/passkey/options', auth: 'none', body: 'none', handler: h.signInOptions },
    { method: 'POST', path: '/api/login/passkey', auth: 'none', body: 'json', handler: h.signIn },
  ];
}

const record = (p: Passkey) => ({ id: p.id, name: p.name, created_at: p.createdAt, last_used_at: p.lastUsedAt, backed_up: p.backedUp });

function passkeyHandlers({ config, users, sessions, devices, limits, identity, passkeys, signInMethods, accountChanges }: Deps) {
  const loginGuard = createLoginGuard(limits);
  const readName = (ctx: Ctx, fallback?: string) =>
    ctx.body.name === undefined && fallback !== undefined ? fallback : text(ctx.body, 'name', { max: MAX_PASSKEY_NAME_CHARS });

  return { registrationOptions, register, list, rename, remove, removePassword, signInOptions, signIn };

  /**
   * {current_password}: 200, the options for navigator.credentials.create() (a discoverable
   * credential, user verification required, the account's passkeys excluded); its challenge waits
   * 5 minutes for POST /api/account/passkeys. Adding a way in asks for the password, as other
   * security changes do; 409 past 20 passkeys.
   */
  async function registrationOptions(ctx: Ctx) {
    await identity.password(ctx);
    return json(await passkeys.registrationOptions({ id: ctx.user.id, username: ctx.user.username, displayName: ctx.user.displayName }));
  }

  /** {response, name?}: 201 the passkey, from the browser's answer to the options; 400 when it does not check out. */
  async function register(ctx: Ctx) {
    const name = readName(ctx, 'Passkey');
    return created(record(await passkeys.register(ctx.user.id, ctx.body.response, name)));
  }

  /** The account's passkeys, oldest first: name, when made, when last used. */
  function list(ctx: Ctx) {
    return json(passkeys.list(ctx.user.id).map(record));
  }

  /** {name}: 200 the passkey renamed; 404 when it is not the caller's. */
  function rename(ctx: Ctx) {
    const renamed = passkeys.rename(ctx.user.id, ctx.params.passkey_id, readName(ctx));
    if (!renamed) throw notFound('passkey not found');
    return json(record(renamed));
  }

  /** 204; 404 when it is not the caller's; 409 when it is the last way in. */
  function remove(ctx: Ctx) {
    if (!passkeys.list(ctx.user.id).some((p) => p.id === ctx.params.passkey_id)) throw notFound('passkey not found');
    signInMethods.requireAnother(ctx.user.id);
    passkeys.remove(ctx.user.id, ctx.params.passkey_id);
    return noContent();
  }

  /**
   * {current_password, code?}: 204, the account has no password any more (a passkey or a provider
   * replaced it): the password and, with two-factor sign-in on, a code are asked; 409 when it is
   * the last way in. Every other session and remembered device ends, as after a new password.
   * The recovery codes stay: they sign in an account without a password (POST /api/login).
   */
  async function removePassword(ctx: Ctx) {
    if (!signInMethods.hasPassword(ctx.user.id)) throw conflict('this account has no password', 'no_password');
    await identity.passwordAndCode(ctx, 'current_password');
    signInMethods.requireAnother(ctx.user.id);
    accountChanges.setPassword(ctx.user.id, NO_PASSWORD, { keep: ctx.session.token });
    return noContent();
  }

  /** 200, the options for navigator.credentials.get() (no account named: any passkey of this site; the conditional UI). */
  async function signInOptions(ctx: PublicCtx) {
    limits.passkeyChallengesPerClient.take(ctx.client, 'passkey sign-ins from this address');
    return json(await passkeys.signInOptions());
  }

  /**
   * {response, remember?}: 200 {user_id, suspended} and a session, as a login with the password
   * and the code gives it (a passkey with user verification is two factors); 401 for an answer
   * that does not check out, counted as a failed login of its account and the address.
   */
  async function signIn(ctx: PublicCtx) {
    const remember = readRemember(ctx.body.remember);
    const owner = passkeys.ownerOf(ctx.body.response);
    const user = owner ? users.byId(owner) : null;
    const attempt = loginGuard.begin(user ? user.username.toLowerCase() : null, ctx.client);
    const userId = await passkeys.signIn(ctx.body.response);
    attempt.succeeded();
    openSession({ sessions, devices, config }, ctx, userId, { method: 'passkey', remember });
    return json({ user_id: userId, suspended: users.byId(userId)!.standing >= SUSPENDED });
  }
}
