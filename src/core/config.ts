import fs from 'node:fs';
import path from 'node:path';
import { type OidcProvider, OidcConfigError, readOidcProviders } from './oidc-config';

export type { OidcProvider } from './oidc-config';

/** Everything the environment can set. Only src/server.ts and src/cli.ts read process.env. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  baseUrl: string;
  /** BASE_URL was set. If not, links shown to a requester use the address their browser used. */
  baseUrlConfigured: boolean;
  smtpUrl: string | null;
  mailFrom: string;
  adminUsers: string[];
  trustProxy: boolean;
  rateLimit: boolean;
  /** Open connections one client address may hold; past it, new ones are refused with 503. */
  connectionsPerClient: number;
  /** Open connections in all; past it Node drops new ones. Leaves files for the database and uploads. */
  maxConnections: number;
  /** normal: SQLite synchronous=NORMAL; strict: FULL, and every upload fsynced before its row commits. */
  durability: 'normal' | 'strict';
  /** The largest Discord export an upload may hold, in bytes (IMPORT_MAX_MB, in MiB; 4096 by default). */
  importMaxBytes: number;
  /** GET /metrics (Prometheus) is served at all. */
  metrics: boolean;
  /** The local addresses (interfaces) a /metrics request must arrive on; `*` for any. */
  metricsHosts: string[];
  /** SECRET_KEY: 32 bytes as 64 hex digits, the key that encrypts TOTP secrets; null: DATA_DIR/secret.key. */
  secretKey: Buffer | null;
  /** FAILPOINTS: a testing aid that makes named callbacks fail (src/core/callbacks.ts); empty in production. */
  failpoints: string[];
  /**
   * ROLE (docs/scaling.md): `all`, one process as always; `core`, the database, the HTTP API and the
   * sessions, appending each committed event for the gateways to the bus; `gateway`, user streams
   * and room sockets only, fed by the bus.
   */
  role: Role;
  /** BUS_URL: the Redis that joins a core to its gateways (`redis://` or `rediss://`); null with ROLE=all. */
  busUrl: string | null;
  /** CORE_URL: the core's own address, which a gateway asks to authenticate each socket; null unless ROLE=gateway. */
  coreUrl: string | null;
  /** PUSH_INSECURE_HOSTS: a testing aid; push endpoints on these hosts may be plain http and private addresses. */
  pushInsecureHosts: string[];
  /** LINK_PREVIEWS: off, no link is ever fetched for a preview (docs/api.md "Link previews"). */
  linkPreviews: boolean;
  /** PREVIEW_INSECURE_HOSTS: a testing aid; previews and the media proxy may fetch these hosts whatever their address. Never for production. */
  previewInsecureHosts: string[];
  /** MEDIA_CACHE_MB (in MiB; 256 by default): the media proxy's cache on disk at most. */
  mediaCacheBytes: number;
  /** INSTANCE_NAME: what the installed app is called on a phone's home screen (its web app manifest). */
  instanceName: string;
  /** OIDC_PROVIDERS or OIDC_CONFIG: the OpenID Providers people may sign in with (docs/sso.md). */
  oidcProviders: OidcProvider[];
  /** PASSWORD_SIGNUP: off, POST /api/register is refused (new accounts come through a provider). */
  passwordSignup: boolean;
  /** Voice channels' media server (docs/voice.md); null without JANUS_URL: voice channels then say voice is not set up here. */
  voice: VoiceConfig | null;
}

/** JANUS_URL and the settings that go with it. */
export interface VoiceConfig {
  /** JANUS_URL: Janus's WebSocket API (ws://127.0.0.1:8188). */
  janusUrl: string;
  /** JANUS_ADMIN_URL: its Admin API (ws://127.0.0.1:7188), where our server adds its own token. */
  janusAdminUrl: string;
  /** JANUS_ADMIN_SECRET: Janus's admin_secret. */
  janusAdminSecret: string;
  /** JANUS_ROOM_KEY: the VideoRoom's admin_key (only its holder creates rooms). */
  janusRoomKey: string;
  /** TURN_URLS: the STUN and TURN servers handed to browsers with each join (stun:, turn:, turns:). */
  turnUrls: string[];
  /** TURN_SECRET: coturn's static-auth-secret, from which each join's TURN credential is made; null without a turn: URL. */
  turnSecret: string | null;
}

export const ROLES = ['all', 'core', 'gateway'] as const;
export type Role = (typeof ROLES)[number];

export const DEFAULT_CONNECTIONS_PER_CLIENT = 128;
/** The product's name: the installed app's name unless INSTANCE_NAME gives another. */
export const PRODUCT_NAME = 'chat';
/** An app name longer than this is cut on home screens and in task switchers anyway. */
export const MAX_INSTANCE_NAME_CHARS = 40;
/** Files kept back from connections for the database, its WAL, uploads in flight and logs. */
export const RESERVED_FILES = 256;

/** A bad setting: start-up stops with this one-line reason. */
export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv): Config {
  // Digits only: Number() would also take ' ' (0), '0x50' and '1e3'.
  const port = env.PORT === undefined || env.PORT === '' ? 8080 : /^\d{1,5}$/.test(env.PORT) ? Number(env.PORT) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`);
  }
  const host = env.HOST || '0.0.0.0';
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const baseUrl = (env.BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  let parsedBase: URL;
  try {
    parsedBase = new URL(baseUrl);
  } catch {
    throw new ConfigError(`BASE_URL must be an absolute http(s) URL, got "${baseUrl}"`);
  }
  if (parsedBase.protocol !== 'http:' && parsedBase.protocol !== 'https:') {
    throw new ConfigError(`BASE_URL must start with http:// or https://, got "${baseUrl}"`);
  }
  const smtpUrl = env.SMTP_URL || null;
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL must start with smtp:// or smtps://');
  }
  const onOff = (name: string, fallback: boolean): boolean => {
    const value = (env[name] ?? '').toLowerCase();
    if (value === '') return fallback;
    if (['1', 'true', 'on', 'yes'].includes(value)) return true;
    if (['0', 'false', 'off', 'no'].includes(value)) return false;
    throw new ConfigError(`${name} must be on or off, got "${env[name]}"`);
  };
  return {
    port,
    host,
    dataDir,
    baseUrl,
    baseUrlConfigured: Boolean(env.BASE_URL),
    smtpUrl,
    mailFrom: env.MAIL_FROM || `chat <no-reply@${parsedBase.hostname}>`,
    adminUsers: (env.ADMIN_USERS ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean),
    trustProxy: onOff('TRUST_PROXY', false),
    rateLimit: onOff('RATE_LIMIT', true),
    connectionsPerClient: count('CONNECTIONS_PER_CLIENT', DEFAULT_CONNECTIONS_PER_CLIENT),
    maxConnections: count('MAX_CONNECTIONS', Math.max(64, openFilesLimit() - RESERVED_FILES)),
    durability: oneOf('DURABILITY', ['normal', 'strict'] as const, 'normal'),
    importMaxBytes: count('IMPORT_MAX_MB', 4096) * 1024 * 1024,
    metrics: onOff('METRICS', false),
    metricsHosts: (env.METRICS_HOST || '127.0.0.1,::1')
      .split(',')
      .map((h) => h.trim())
      .filter(Boolean),
    secretKey: secretKey(),
    failpoints: failpoints(),
    ...cluster(),
    pushInsecureHosts: (env.PUSH_INSECURE_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    linkPreviews: onOff('LINK_PREVIEWS', true),
    mediaCacheBytes: count('MEDIA_CACHE_MB', 256) * 1024 * 1024,
    previewInsecureHosts: (env.PREVIEW_INSECURE_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    instanceName: instanceName(),
    voice: voice(),
    ...signIn(),
  };

  /** The OpenID Providers, and whether a password may still make an account. */
  function signIn(): Pick<Config, 'oidcProviders' | 'passwordSignup'> {
    let oidcProviders: OidcProvider[];
    try {
      oidcProviders = readOidcProviders(env);
    } catch (err) {
      if (err instanceof OidcConfigError) throw new ConfigError(err.message);
      throw err;
    }
    const passwordSignup = onOff('PASSWORD_SIGNUP', true);
    if (!passwordSignup && !oidcProviders.some((p) => p.allowSignup)) {
      throw new ConfigError('PASSWORD_SIGNUP=off needs an OpenID Provider with allow_signup (OIDC_PROVIDERS or OIDC_CONFIG): nobody could make an account');
    }
    return { oidcProviders, passwordSignup };
  }

  /** JANUS_URL and its companions, which make sense only together; the TURN servers. */
  function voice(): VoiceConfig | null {
    const url = (name: string) => {
      const value = env[name] ?? '';
      if (value !== '' && !/^wss?:\/\/[^/\s]/.test(value)) throw new ConfigError(`${name} must be a ws:// or wss:// URL, got "${value}"`);
      return value;
    };
    const janusUrl = url('JANUS_URL');
    const janusAdminUrl = url('JANUS_ADMIN_URL');
    const janusAdminSecret = env.JANUS_ADMIN_SECRET ?? '';
    const janusRoomKey = env.JANUS_ROOM_KEY ?? '';
    const turnUrls = (env.TURN_URLS ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    const turnSecret = env.TURN_SECRET ?? '';
    if (janusUrl === '') {
      const stray = ['JANUS_ADMIN_URL', 'JANUS_ADMIN_SECRET', 'JANUS_ROOM_KEY', 'TURN_URLS', 'TURN_SECRET'].find((name) => (env[name] ?? '') !== '');
      if (stray) throw new ConfigError(`${stray} needs JANUS_URL (voice is on only with Janus: docs/voice.md)`);
      return null;
    }
    if (janusAdminUrl === '') throw new ConfigError('JANUS_URL needs JANUS_ADMIN_URL, the Admin API of the same Janus (ws://127.0.0.1:7188)');
    if (janusAdminSecret === '') throw new ConfigError("JANUS_URL needs JANUS_ADMIN_SECRET, Janus's admin_secret");
    if (janusRoomKey === '') throw new ConfigError("JANUS_URL needs JANUS_ROOM_KEY, the VideoRoom plugin's admin_key");
    const bad = turnUrls.find((u) => !/^(stun|turns?):[^\s]+$/.test(u));
    if (bad !== undefined) throw new ConfigError(`TURN_URLS must be stun:, turn: or turns: URLs separated by commas, got "${bad}"`);
    const relays = turnUrls.some((u) => u.startsWith('turn'));
    if (relays && turnSecret === '') throw new ConfigError("TURN_URLS names a TURN server: it needs TURN_SECRET, coturn's static-auth-secret");
    if (!relays && turnSecret !== '') throw new ConfigError('TURN_SECRET needs a turn: or turns: URL in TURN_URLS');
    return { janusUrl, janusAdminUrl, janusAdminSecret, janusRoomKey, turnUrls, turnSecret: relays ? turnSecret : null };
  }

  function instanceName(): string {
    const name = (env.INSTANCE_NAME ?? '').trim();
    if (name === '') return PRODUCT_NAME;
    // Counted as people see characters (code points), as the message limits are.
    if ([...name].length > MAX_INSTANCE_NAME_CHARS)
      throw new ConfigError(`INSTANCE_NAME must be at most ${MAX_INSTANCE_NAME_CHARS} characters, got ${[...name].length}`);
    if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name)) throw new ConfigError('INSTANCE_NAME must be printable text (no control or format characters)');
    return name;
  }

  /** ROLE, BUS_URL and CORE_URL, which only make sense together. */
  function cluster(): Pick<Config, 'role' | 'busUrl' | 'coreUrl'> {
    const role = oneOf('ROLE', ROLES, 'all');
    const busUrl = env.BUS_URL || null;
    const coreUrl = (env.CORE_URL || '').replace(/\/+$/, '') || null;
    if (busUrl !== null && !/^rediss?:\/\/[^/\s]/.test(busUrl)) throw new ConfigError('BUS_URL must be a redis:// or rediss:// URL');
    if (role === 'all' && busUrl !== null) throw new ConfigError('BUS_URL needs ROLE=core (or gateway): ROLE=all is one process with no bus');
    if (role !== 'all' && busUrl === null) throw new ConfigError(`ROLE=${role} needs BUS_URL, the Redis that joins the core and its gateways`);
    if (role !== 'gateway' && coreUrl !== null) throw new ConfigError('CORE_URL is for ROLE=gateway: the core it asks to authenticate sockets');
    if (role === 'gateway') {
      if (coreUrl === null) throw new ConfigError("ROLE=gateway needs CORE_URL, the core's address (http://core:8080)");
      if (!/^https?:\/\/[^/\s]/.test(coreUrl)) throw new ConfigError('CORE_URL must be an absolute http(s) URL');
    }
    return { role, busUrl, coreUrl };
  }

  function failpoints(): string[] {
    const names = (env.FAILPOINTS ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const bad = names.find((name) => !/^[a-z][a-z.-]*(:(throw|escape))?$/.test(name));
    if (bad !== undefined) throw new ConfigError(`FAILPOINTS must be names like socket.message or socket.message:escape, got "${bad}"`);
    return names;
  }

  function secretKey(): Buffer | null {
    const raw = env.SECRET_KEY ?? '';
    if (raw === '') return null;
    if (!/^[0-9a-fA-F]{64}$/.test(raw)) throw new ConfigError('SECRET_KEY must be 64 hex digits (32 bytes), e.g. from: openssl rand -hex 32');
    return Buffer.from(raw, 'hex');
  }

  function count(name: string, fallback: number): number {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d{1,7}$/.test(raw) || Number(raw) < 1) throw new ConfigError(`${name} must be a whole number of at least 1, got "${raw}"`);
    return Number(raw);
  }
  function oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const raw = (env[name] ?? '').toLowerCase();
    if (raw === '') return fallback;
    if (!allowed.includes(raw as T)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${env[name]}"`);
    return raw as T;
  }
}

/** The process's soft limit on open files (Linux /proc); 4096 where it cannot be read. */
export function openFilesLimit(): number {
  try {
    const line = fs
      .readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : 4096;
  } catch {
    return 4096;
  }
}

/** Creates DATA_DIR if needed and proves it is writable, so a bad one fails at start, not at first upload. */
export function prepareDataDir(dataDir: string): void {
  try {
    fs.mkdirSync(path.join(dataDir, 'uploads'), { recursive: true });
    const probe = path.join(dataDir, `.write-test-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.unlinkSync(probe);
  } catch (err) {
    throw new ConfigError(`DATA_DIR ${dataDir} is not writable (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}
