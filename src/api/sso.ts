import { readCookie } from '../core/http/client';
import type { OidcProvider } from '../core/config';
import { HttpError, badRequest, conflict, notFound } from '../core/http/errors';
import { json, noContent, redirect } from '../core/http/respond';
import type { Ctx, PublicCtx, Route } from '../core/types';
import { refOf } from '../core/types';
import { addCookies, openSession, readRemember } from '../parts/accounts/auth';
import { CLEARED_FLOW_COOKIE, FLOW_COOKIE, flowCookie } from '../parts/accounts/oidc';
import { readUsername } from '../parts/accounts/users';
import type { Services } from '../parts/services';
import { createLoginGuard } from '../rules/limits';
import { SUSPENDED } from '../rules/standing';

type Deps = Pick<
  Services,
  | 'config'
  | 'users'
  | 'sessions'
  | 'devices'
  | 'limits'
  | 'twoFactor'
  | 'identity'
  | 'identities'
  | 'oidc'
  | 'sso'
  | 'signInMethods'
  | 'accountRows'
  | 'hub'
  | 'directory'
>;

/** Signing in with an OpenID Provider (docs/sso.md), and the identities linked to an account. */
export function ssoRoutes(deps: Deps): Route[] {
  const h = ssoHandlers(deps);
  return [
    { method: 'GET', path: '/api/auth/providers', auth: 'none', body: 'none', handler: h.listProviders },
    { method: 'GET', path: '/api/auth/oidc/:provider/start', auth: 'none', body: 'none', handler: h.start },
    { method: 'GET', path: '/api/auth/oidc/:provider/callback', auth: 'none', body: 'none', handler: h.callback },
    { method: 'POST', path: '/api/auth/oidc/two-factor', auth: 'none', body: 'json', handler: h.giveCode },
    { method: 'GET', path: '/api/account/identities', auth: 'account', body: 'none', handler: h.listIdentities },
    { method: 'POST', path: '/api/account/identities', auth: 'account', body: 'json', handler: h.linkIdentity },
    { method: 'DELETE', path: '/api/account/identities/:identity_id', auth: 'account', body: 'none', handler: h.unlinkIdentity },
    { method: 'PUT', path: '/api/account/username', auth: 'user', body: 'json', handler: h.changeUsername },
  ];
}

/** The longest return path a sign-in keeps. */
const MAX_RETURN_PATH = 1024;

/**
 * A path on this site to come back to, as a browser's location gives it (printable ASCII,
 * percent-encoded): "/invites/x", never "//elsewhere", "/\\elsewhere" or "https://…" (400).
 */
const RETURN_PATH = /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/;
export function readReturnTo(value: string | null): string {
  if (value === null || value === '') return '/';
  if (value.length > MAX_RETURN_PATH || !RETURN_PATH.test(value)) {
    throw badRequest('return_to must be a path on this site, such as /invites/abc', 'bad_return');
  }
  return value;
}

function ssoHandlers({
  config,
  users,
  sessions,
  devices,
  limits,
  twoFactor,
  identity,
  identities,
  oidc,
  sso,
  signInMethods,
  accountRows,
  hub,
  directory,
}: Deps) {
  const loginGuard = createLoginGuard(limits);
  const providerOf = (id: string): OidcProvider => {
    const provider = config.oidcProviders.find((p) => p.id === id);
    if (!provider) throw notFound('no sign-in provider by that id');
    return provider;
  };
  const providerOfIssuer = (issuer: string) => config.oidcProviders.find((p) => p.issuer === issuer);

  return { listProviders, start, callback, giveCode, listIdentities, linkIdentity, unlinkIdentity, changeUsername };

  /** {providers: [{id, name}], password_signup}: what the sign-in page offers. */
  function listProviders() {
    return json({ providers: config.oidcProviders.map((p) => ({ id: p.id, name: p.name })), password_signup: config.passwordSignup });
  }

  /**
   * 303 to the provider's sign-in page, with PKCE, state and nonce; `return_to` (a path on this
   * site: 400 otherwise) is where the callback lands; `remember` remembers the browser. Sets the
   * app_oidc cookie that binds the sign-in to this browser. 502 when the provider is unreachable.
   */
  async function start(ctx: PublicCtx) {
    const provider = providerOf(ctx.params.provider);
    const returnTo = readReturnTo(ctx.query.get('return_to'));
    const remember = readRemember(ctx.query.get('remember') ?? undefined);
    limits.ssoStartsPerClient.take(ctx.client, 'sign-ins started from this address');
    const { url, browser } = await oidc.begin(provider, { kind: 'sign-in', returnTo, remember }, readCookie(ctx.req, FLOW_COOKIE));
    addCookies(ctx.res, [flowCookie(config.baseUrl, browser)]);
    return redirect(url);
  }

  /**
   * The provider's answer. A sign-in: 303 to its return path with a new session (as a password
   * login gives it), to /account/warnings when suspended, or to /?sso=code when the account's
   * two-factor code is still needed. A link: 303 to /account#sign-in-methods. Every refusal is a
   * 4xx with its reason (502: the provider did not answer) and opens no session; each counts as
   * a failed sign-in of the address.
   */
  async function callback(ctx: PublicCtx) {
    const provider = providerOf(ctx.params.provider);
    const attempt = loginGuard.begin(null, ctx.client);
    const browser = readCookie(ctx.req, FLOW_COOKIE);
    const { intent, claims } = await oidc.finish(provider, ctx.query, browser);
    if (intent.kind === 'link') {
      if (ctx.user?.id !== intent.userId) throw badRequest('the account that asked for this link is no longer signed in here', 'sso_unknown');
      sso.link(provider, claims, intent.userId);
      attempt.succeeded();
      return redirect('/account?linked=1#sign-in-methods');
    }
    const { userId } = sso.signIn(provider, claims, ctx.client);
    attempt.succeeded();
    if (sso.needsCode(userId, claims)) {
      sso.holdForCode(browser!, { userId, remember: intent.remember, returnTo: intent.returnTo });
      return redirect('/?sso=code');
    }
    openSession({ sessions, devices, config }, ctx, userId, { method: 'oidc', remember: intent.remember });
    return redirect(users.byId(userId)!.standing >= SUSPENDED ? '/account/warnings' : intent.returnTo);
  }

  /**
   * {code}: the two-factor code of a sign-in through a provider that is waiting for it (this
   * browser's): 200 {user_id, suspended, return_to} and the session; 401 for a wrong code (a
   * failed login of the account); 400 when none waits.
   */
  function giveCode(ctx: PublicCtx) {
    const code = ctx.body.code;
    if (typeof code !== 'string') throw badRequest('code must be a string');
    const browser = readCookie(ctx.req, FLOW_COOKIE);
    const pending = sso.pendingCode(browser);
    const user = pending ? users.byId(pending.userId) : null;
    if (!pending || !user) throw badRequest('no sign-in is waiting for a code here: start again from the sign-in page', 'sso_unknown');
    const attempt = loginGuard.begin(user.username.toLowerCase(), ctx.client);
    if (!twoFactor.check(user.id, code)) throw new HttpError(401, 'invalid two-factor code', {}, 'two_factor_failed');
    attempt.succeeded();
    sso.release(browser!);
    openSession({ sessions, devices, config }, ctx, user.id, { method: 'oidc', remember: pending.remember });
    addCookies(ctx.res, [CLEARED_FLOW_COOKIE]);
    return json({ user_id: user.id, suspended: user.standing >= SUSPENDED, return_to: pending.returnTo });
  }

  /** The account's identities at providers, oldest first, each with its provider's name (null when no longer configured). */
  function listIdentities(ctx: Ctx) {
    return json(
      identities.list(ctx.user.id).map((i) => ({
        id: i.id,
        provider_id: i.providerId,
        provider_name: providerOfIssuer(i.issuer)?.name ?? null,
        email: i.email,
        created_at: i.createdAt,
        last_used_at: i.lastUsedAt,
      })),
    );
  }

  /**
   * {provider_id, current_password}: 200 {authorization_url}, where the browser goes to sign in
   * at the provider; its callback links the identity to this account (409 when it is another
   * account's). Adding a way in asks for the password as other security changes do.
   */
  async function linkIdentity(ctx: Ctx) {
    if (typeof ctx.body.provider_id !== 'string') throw badRequest('provider_id must be a string');
    const provider = providerOf(ctx.body.provider_id);
    await identity.password(ctx);
    limits.ssoStartsPerClient.take(ctx.client, 'sign-ins started from this address');
    const { url, browser } = await oidc.begin(provider, { kind: 'link', userId: ctx.user.id }, readCookie(ctx.req, FLOW_COOKIE));
    addCookies(ctx.res, [flowCookie(config.baseUrl, browser)]);
    return json({ authorization_url: url });
  }

  /** 204: the identity no longer opens the account; 404 when it is not the caller's; 409 when it is the last way in. */
  function unlinkIdentity(ctx: Ctx) {
    const found = identities.list(ctx.user.id).find((i) => i.id === ctx.params.identity_id);
    if (!found) throw notFound('identity not found');
    // One at a provider this server no longer names opens nothing: it may always go.
    if (providerOfIssuer(found.issuer)) signInMethods.requireAnother(ctx.user.id);
    identities.unlink(ctx.user.id, found.id);
    return noContent();
  }

  /**
   * {username}: the one change of a username made from a provider's claim: 200 {user_id,
   * username, …}; 409 when taken (any letter case) or when the account chose its name already.
   */
  function changeUsername(ctx: Ctx) {
    const username = readUsername(ctx.body);
    // deleted-user is how deleted accounts are shown (as at registration).
    if (username.toLowerCase() === 'deleted-user') throw conflict('username is already taken', 'username_taken');
    let changed: boolean;
    try {
      changed = accountRows.renameOnce(ctx.user.id, username);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw conflict('username is already taken', 'username_taken');
      throw err;
    }
    if (!changed) throw conflict('this username cannot be changed: it was chosen, or changed once already', 'username_fixed');
    const user = users.byId(ctx.user.id)!;
    hub.toUsers(directory.peopleWhoSee(user.id), { event: 'user_updated', user: refOf(user) });
    return json(refOf(user));
  }
}
