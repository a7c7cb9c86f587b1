import crypto from 'node:crypto';
import * as client from 'openid-client';
import { type Clock, MINUTE, SECOND } from '../../core/clock';
import type { OidcProvider } from '../../core/config';
import { HttpError } from '../../core/http/errors';
import type { Log } from '../../core/types';

/**
 * The relying party of OpenID Connect (docs/sso.md, docs/security.md "Signing in with an OpenID
 * Provider"): the authorization code flow with PKCE (S256), `state` and `nonce`, every check of
 * the answer done by openid-client (the authorization response's `state` and RFC 9207 `iss`; the
 * ID token's signature against the provider's published keys, its issuer, audience, expiry and
 * nonce), never by hand. This module knows the protocol only; which account a person signs in to
 * is src/parts/accounts/sso.ts's business.
 *
 * A flow is kept in memory from its start to its callback (at most SIGN_IN_TTL_MS, once), under
 * its `state`, and bound to the browser that started it by a cookie of its own: a callback
 * carrying a code the browser did not ask for (login CSRF, a code sent to a victim) finds no flow.
 */
export const SIGN_IN_TTL_MS = 10 * MINUTE;
/** Sign-ins in progress at most, everyone together (each holds a few hundred bytes). */
export const MAX_PENDING_SIGN_INS = 10_000;
/** A provider's discovery, token and userinfo requests each give up after this long. */
export const PROVIDER_TIMEOUT_SECONDS = 10;
/** After a failed discovery, the next sign-in with that provider waits this long before trying again. */
export const DISCOVERY_RETRY_MS = 30 * SECOND;

/** The cookie that binds a sign-in to its browser: sent back by the provider's redirect (Lax), only to /api/auth/oidc. */
export const FLOW_COOKIE = 'app_oidc';
export const FLOW_PATH = '/api/auth/oidc';
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export function flowCookie(baseUrl: string, value: string): string {
  const secure = baseUrl.startsWith('https:') ? '; Secure' : '';
  return `${FLOW_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${FLOW_PATH}; Max-Age=${SIGN_IN_TTL_MS / 1000}${secure}`;
}
export const CLEARED_FLOW_COOKIE = `${FLOW_COOKIE}=; HttpOnly; SameSite=Lax; Path=${FLOW_PATH}; Max-Age=0`;

/** Why the flow was started: to sign in (or up), or to link an identity to the signed-in account. */
export type Intent = { kind: 'sign-in'; returnTo: string; remember: boolean } | { kind: 'link'; userId: string };

interface Flow {
  providerId: string;
  intent: Intent;
  /** The browser's cookie value it must come back with. */
  browser: string;
  codeVerifier: string;
  nonce: string;
  expires: number;
}

/** The claims of a successful sign-in: the ID token's, and the userinfo endpoint's where the token has none. */
export type Claims = Record<string, unknown> & { sub: string; iss: string };

export interface OidcClient {
  /**
   * A new flow: the provider's authorization URL, and the value of the browser's flow cookie
   * (its current one, when it holds a well-formed one: several tabs may sign in at once).
   */
  begin(provider: OidcProvider, intent: Intent, browserCookie: string | undefined): Promise<{ url: string; browser: string }>;
  /**
   * The callback: the flow of this `state` and browser (used up), the response checked, the code
   * exchanged, the ID token checked. 400 for an unknown, used, expired or foreign flow; 401 for
   * an answer that does not check out; 502 when the provider cannot be reached.
   */
  finish(provider: OidcProvider, query: URLSearchParams, browserCookie: string | undefined): Promise<{ intent: Intent; claims: Claims }>;
  /** The redirect URI to register at the provider. */
  redirectUri(provider: OidcProvider): string;
}

export function createOidcClient({ baseUrl, clock, log }: { baseUrl: () => string; clock: Clock; log: Log }): OidcClient {
  const flows = new Map<string, Flow>();
  const discovered = new Map<string, { config: Promise<client.Configuration>; failedAt?: number }>();

  const redirectUri = (provider: OidcProvider) => `${baseUrl()}/api/auth/oidc/${provider.id}/callback`;

  /** The provider's metadata and keys' address, discovered once (again after a failure, not at once). */
  function configurationOf(provider: OidcProvider): Promise<client.Configuration> {
    const known = discovered.get(provider.id);
    if (known && (known.failedAt === undefined || clock.now() - known.failedAt < DISCOVERY_RETRY_MS)) return known.config;
    const entry: { config: Promise<client.Configuration>; failedAt?: number } = {
      config: client.discovery(new URL(provider.issuer), provider.clientId, provider.clientSecret, client.ClientSecretBasic(provider.clientSecret), {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        execute: [
          // openid-client checks an ID token's signature only when asked: OIDC Core 3.1.3.7 lets
          // a client trust TLS for a token from the token endpoint, and we do not (a token
          // signed by another key is refused, test/sso.test.ts).
          client.enableNonRepudiationChecks,
          // Plain http only for a provider on this machine (src/core/oidc-config.ts refuses it elsewhere).
          ...(new URL(provider.issuer).protocol === 'http:' ? [client.allowInsecureRequests] : []),
        ],
      }),
    };
    entry.config.catch(() => {
      entry.failedAt = clock.now();
    });
    discovered.set(provider.id, entry);
    return entry.config;
  }

  /** Forgets flows past their time: they are in order of expiry, the oldest first. */
  function sweep(now: number) {
    for (const [state, flow] of flows) {
      if (flow.expires > now) break;
      flows.delete(state);
    }
  }

  return {
    redirectUri,

    async begin(provider, intent, browserCookie) {
      const config = await reach(provider, configurationOf(provider));
      const now = clock.now();
      sweep(now);
      if (flows.size >= MAX_PENDING_SIGN_INS) throw new HttpError(503, 'too many sign-ins in progress: try again in a minute', { 'Retry-After': '60' });
      const browser = browserCookie && COOKIE_VALUE.test(browserCookie) ? browserCookie : crypto.randomBytes(32).toString('base64url');
      const state = client.randomState();
      const flow: Flow = {
        providerId: provider.id,
        intent,
        browser,
        codeVerifier: client.randomPKCECodeVerifier(),
        nonce: client.randomNonce(),
        expires: now + SIGN_IN_TTL_MS,
      };
      flows.set(state, flow);
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri(provider),
        scope: provider.scopes.join(' '),
        state,
        nonce: flow.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(flow.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, browser };
    },

    async finish(provider, query, browserCookie) {
      const state = query.get('state') ?? '';
      const flow = flows.get(state);
      // Used up at its first callback, whatever comes of it: a code or a state is good once.
      if (flow) flows.delete(state);
      if (!flow || flow.expires <= clock.now() || flow.providerId !== provider.id || !browserCookie || !sameSecret(flow.browser, browserCookie)) {
        throw new HttpError(
          400,
          'this sign-in is unknown, used, expired or was started in another browser: start again from the sign-in page',
          {},
          'sso_unknown',
        );
      }
      const config = await reach(provider, configurationOf(provider));
      try {
        // The redirect_uri of the code exchange is this URL without its query: the one registered.
        const callback = new URL(`${redirectUri(provider)}?${query.toString()}`);
        const tokens = await client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: flow.codeVerifier,
          expectedState: state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        });
        const idClaims = tokens.claims();
        if (!idClaims) throw new client.ClientError('the provider sent no ID token');
        let claims: Claims = { ...idClaims } as Claims;
        if (config.serverMetadata().userinfo_endpoint) {
          // Many providers (Authelia, Keycloak's defaults, oidc-provider) put the profile in
          // userinfo only; its `sub` must be the ID token's (checked by openid-client).
          const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
          claims = { ...info, ...idClaims } as Claims;
        }
        return { intent: flow.intent, claims };
      } catch (err) {
        throw refusal(provider, err, log);
      }
    },
  };
}

const sameSecret = (a: string, b: string) => a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A step that needs the provider's metadata: 502 when it cannot be had. */
async function reach<T>(provider: OidcProvider, step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (err) {
    throw new HttpError(502, `${provider.name} cannot be reached for sign-in (${describe(err)}): try again later`);
  }
}

/** What a failed exchange or check becomes: 401 for an answer that does not hold, 502 for a provider that does not answer. */
function refusal(provider: OidcProvider, err: unknown, log: Log): HttpError {
  const reason = describe(err);
  log(`sso ${provider.id}: sign-in refused: ${reason}`);
  if (err instanceof client.AuthorizationResponseError) {
    return new HttpError(401, `${provider.name} did not sign you in (${reason})`, {}, 'sso_refused');
  }
  if (unreachable(err)) return new HttpError(502, `${provider.name} did not answer the sign-in (${reason}): try again later`);
  return new HttpError(401, `the answer of ${provider.name} does not check out (${reason}): nobody was signed in`, {}, 'sso_refused');
}

function unreachable(err: unknown): boolean {
  if (err instanceof TypeError) return true;
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return true;
  const code = (err as { code?: unknown }).code;
  return code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || code === 'OAUTH_RESPONSE_IS_NOT_JSON';
}

/** One line, without tokens: the error, its provider's error code, the check that failed. */
function describe(err: unknown): string {
  if (err instanceof client.AuthorizationResponseError || err instanceof client.ResponseBodyError) {
    return [err.error, err.error_description].filter(Boolean).join(': ').slice(0, 300);
  }
  const cause = (err as { cause?: unknown }).cause;
  const detail = cause instanceof Error && cause.message !== (err as Error).message ? `: ${cause.message}` : '';
  return `${err instanceof Error ? err.message : String(err)}${detail}`.replace(/\s+/g, ' ').slice(0, 300);
}
