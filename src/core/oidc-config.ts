import fs from 'node:fs';

/**
 * One OpenID Provider people may sign in with (docs/sso.md): OIDC_PROVIDERS (JSON) or the file
 * OIDC_CONFIG names, an array of `{id, name, issuer, client_id, client_secret, scopes?,
 * username_claim?, groups_claim?, allowed_domains?, admin_group?, allow_signup?}`.
 */
export interface OidcProvider {
  /** In the URLs (`/api/auth/oidc/<id>/callback`) and in the identities it links. */
  id: string;
  /** On the sign-in button: "Sign in with <name>". */
  name: string;
  /** The Issuer Identifier: discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Asked for at every sign-in; always holds `openid`. */
  scopes: string[];
  /** The claim a new account's username is made from. */
  usernameClaim: string;
  /** The claim that lists the person's groups (for adminGroup). */
  groupsClaim: string;
  /** Lower-case domains a verified email must be of for a sign-up; empty: any. */
  allowedDomains: string[];
  /** Members of this group are site administrators, others are not (ADMIN_USERS aside). */
  adminGroup: string | null;
  /** A first sign-in with an unknown identity makes an account. */
  allowSignup: boolean;
}

/** A bad setting of this module: config.ts turns it into its ConfigError. */
export class OidcConfigError extends Error {}

const ID = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** RFC 6749 3.3: a scope token is printable ASCII without space, `"` or `\`. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
const CLAIM = /^[A-Za-z0-9_.:/-]{1,64}$/;
const KEYS = new Set([
  'id',
  'name',
  'issuer',
  'client_id',
  'client_secret',
  'scopes',
  'username_claim',
  'groups_claim',
  'allowed_domains',
  'admin_group',
  'allow_signup',
]);
export const MAX_PROVIDER_NAME_CHARS = 40;
/** Loopback hosts, where a provider may speak plain http (one on the same machine, the tests). */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The providers of OIDC_PROVIDERS or OIDC_CONFIG (not both); none when neither is set. */
export function readOidcProviders(env: NodeJS.ProcessEnv): OidcProvider[] {
  const inline = env.OIDC_PROVIDERS ?? '';
  const file = env.OIDC_CONFIG ?? '';
  if (inline !== '' && file !== '') throw new OidcConfigError('set OIDC_PROVIDERS or OIDC_CONFIG, not both');
  let text = inline;
  let where = 'OIDC_PROVIDERS';
  if (file !== '') {
    where = `OIDC_CONFIG (${file})`;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new OidcConfigError(`${where} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  if (text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new OidcConfigError(`${where} is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new OidcConfigError(`${where} must be a JSON array of providers`);
  const providers = parsed.map((entry, i) => readProvider(entry, `${where}[${i}]`));
  const ids = new Set<string>();
  for (const p of providers) {
    if (ids.has(p.id)) throw new OidcConfigError(`${where}: two providers have the id "${p.id}"`);
    ids.add(p.id);
  }
  return providers;
}

function readProvider(entry: unknown, where: string): OidcProvider {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new OidcConfigError(`${where} must be an object`);
  const o = entry as Record<string, unknown>;
  const unknown = Object.keys(o).find((key) => !KEYS.has(key));
  if (unknown !== undefined) throw new OidcConfigError(`${where} has an unknown key "${unknown}" (known: ${[...KEYS].join(', ')})`);
  const string = (key: string, test: (s: string) => boolean, what: string, fallback?: string): string => {
    const value = o[key] ?? fallback;
    if (typeof value !== 'string' || !test(value)) throw new OidcConfigError(`${where}.${key} must be ${what}`);
    return value;
  };
  const list = (key: string, test: RegExp, what: string, fallback: string[]): string[] => {
    const value = o[key] ?? fallback;
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || !test.test(v)))
      throw new OidcConfigError(`${where}.${key} must be an array of ${what}`);
    return value as string[];
  };
  const id = string('id', (s) => ID.test(s), 'lower-case letters, digits, _ and - (at most 32, as in /api/auth/oidc/<id>/callback)');
  const name = string(
    'name',
    (s) => s.trim() !== '' && [...s].length <= MAX_PROVIDER_NAME_CHARS && !/[\p{Cc}\p{Cf}]/u.test(s),
    `the name on the sign-in button: 1 to ${MAX_PROVIDER_NAME_CHARS} printable characters`,
  ).trim();
  const issuer = string(
    'issuer',
    isIssuer,
    'an https URL (http only on localhost), as the provider names itself: its discovery is <issuer>/.well-known/openid-configuration',
  );
  const scopes = list('scopes', SCOPE, 'scope names', ['openid', 'profile', 'email']);
  const allowSignup = o.allow_signup ?? false;
  if (typeof allowSignup !== 'boolean') throw new OidcConfigError(`${where}.allow_signup must be true or false`);
  const adminGroup = o.admin_group ?? null;
  if (adminGroup !== null && (typeof adminGroup !== 'string' || adminGroup === '' || adminGroup.length > 256)) {
    throw new OidcConfigError(`${where}.admin_group must be a group name`);
  }
  return {
    id,
    name,
    issuer,
    clientId: string('client_id', (s) => s !== '' && s.length <= 256, 'the client id the provider gave'),
    clientSecret: string('client_secret', (s) => s !== '' && s.length <= 1024, 'the client secret the provider gave'),
    scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
    usernameClaim: string('username_claim', (s) => CLAIM.test(s), 'a claim name', 'preferred_username'),
    groupsClaim: string('groups_claim', (s) => CLAIM.test(s), 'a claim name', 'groups'),
    allowedDomains: list('allowed_domains', DOMAIN, 'lower-case domain names (example.org)', []),
    adminGroup,
    allowSignup,
  };
}

function isIssuer(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
}
