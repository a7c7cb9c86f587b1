import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenID Provider on loopback for the tests: oidc-provider from npm (the certified
 * implementation), with one confidential client whose redirect URI is the chat server's callback,
 * PKCE required, and its own sign-in pages (devInteractions: any login name signs in as that
 * subject, any password). The tests may tamper with what it answers, as a hostile or broken
 * provider would: `onIdToken` rewrites the ID token of the next token responses (re-signed with
 * the provider's own key, or with another one).
 */
export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Claims per subject (the login name typed on its page); unknown subjects get a default set. */
  claims: Map<string, Record<string, unknown>>;
  /** Rewrites each ID token the token endpoint answers with; null: as issued. */
  onIdToken: ((token: string) => string) | null;
  /** Signs a token (header and payload) with the provider's key, or with `key` (another one). */
  sign(header: Record<string, unknown>, payload: Record<string, unknown>, key?: crypto.KeyObject): string;
  /** An ID token's header and payload. */
  decode(token: string): { header: Record<string, unknown>; payload: Record<string, unknown> };
  /** The provider config entry of OIDC_PROVIDERS for it, with `extra` fields. */
  entry(extra?: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

export interface ListeningProvider {
  issuer: string;
  /** The provider config entry of OIDC_PROVIDERS for it, with `extra` fields. */
  entry(extra?: Record<string, unknown>): Record<string, unknown>;
  /** Serves from now on, with the chat server's callback as the client's redirect URI. */
  configure(redirectUri: string): Promise<TestProvider>;
  close(): Promise<void>;
}

/**
 * Listens first (so the chat server can be given the issuer and the client's secret), and serves
 * once `configure` gave it the redirect URI.
 */
export async function listenProvider(): Promise<ListeningProvider> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'chat';
  const clientSecret = crypto.randomBytes(24).toString('base64url');
  const entry = (extra: Record<string, unknown> = {}) => ({ id: 'test', name: 'Test Org', issuer, client_id: clientId, client_secret: clientSecret, ...extra });
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    issuer,
    entry,
    close,
    async configure(redirectUri: string) {
      // oidc-provider ships no types (and @types/oidc-provider trails its releases): the little used here is typed below.
      const name = 'oidc-provider';
      const { default: Provider } = (await import(name)) as { default: new (issuer: string, config: object) => OidcProviderApp };
      const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
      const claims = new Map<string, Record<string, unknown>>();
      const provider = new Provider(issuer, {
        clients: [
          { client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] },
        ],
        pkce: { required: () => true },
        jwks: { keys: [jwk] },
        cookies: { keys: [crypto.randomBytes(16).toString('hex')] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'], groups: ['groups'] },
        scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
        findAccount: (_ctx: unknown, sub: string) => ({
          accountId: sub,
          claims: () => ({ sub, preferred_username: sub, email: `${sub}@example.org`, email_verified: true, ...claims.get(sub) }),
        }),
        features: { devInteractions: { enabled: true } },
        ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
        renderError: (ctx: { type: string; body: string }, out: Record<string, string>) => {
          ctx.type = 'text/plain';
          ctx.body = `${out.error}: ${out.error_description ?? ''}`;
        },
      });
      const test: TestProvider = {
        issuer,
        clientId,
        clientSecret,
        claims,
        onIdToken: null,
        sign(header, payload, key = privateKey) {
          const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
          const input = `${part(header)}.${part(payload)}`;
          return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
        },
        decode(token) {
          const [header, payload] = token
            .split('.')
            .slice(0, 2)
            .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
          return { header, payload };
        },
        entry,
        close,
      };
      // A koa middleware around every route: the token endpoint's ID token, as the test wants it.
      provider.use(async (ctx: { path: string; body: unknown }, next: () => Promise<void>) => {
        await next();
        const body = ctx.body as { id_token?: string } | undefined;
        if (ctx.path === '/token' && test.onIdToken && body && typeof body.id_token === 'string')
          ctx.body = { ...body, id_token: test.onIdToken(body.id_token) };
      });
      server.on('request', provider.callback());
      return test;
    },
  };
}

interface OidcProviderApp {
  use(middleware: (ctx: { path: string; body: unknown }, next: () => Promise<void>) => Promise<void>): void;
  callback(): http.RequestListener;
}

/**
 * A person's browser at the provider, without a page: follows the authorization URL through the
 * provider's own sign-in and consent forms (devInteractions) with a cookie jar of its own, and
 * gives the URL the provider sends the browser back to (the chat server's callback), unfollowed.
 */
export class ProviderAgent {
  private jar = new Map<string, string>();
  constructor(private readonly callbackPrefix: string) {}

  private async go(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = { ...(init.headers as Record<string, string>), cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') };
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      this.jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  }

  /** Signs in at the provider as `login` (consenting when asked); the callback URL it redirects to. */
  async authorize(authorizationUrl: string, login: string): Promise<string> {
    let res = await this.go(authorizationUrl);
    for (let step = 0; step < 12; step++) {
      if (res.status >= 300 && res.status < 400) {
        const location = new URL(res.headers.get('location')!, authorizationUrl).href;
        if (location.startsWith(this.callbackPrefix)) return location;
        res = await this.go(location);
        continue;
      }
      const html = await res.text();
      const action = /action="([^"]+)"/.exec(html)?.[1];
      const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
      if (!action || !prompt) throw new Error(`the provider answered ${res.status} without a form: ${html.slice(0, 300)}`);
      const form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt });
      res = await this.go(new URL(action, authorizationUrl).href, {
        method: 'POST',
        body: form.toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    }
    throw new Error('the provider never sent the browser back');
  }
}
