import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../core/config';
import { isBotRequest, readCookie, remoteAddress } from '../../core/http/client';
import { HttpError, badRequest } from '../../core/http/errors';
import { assertBotMayUse } from '../../rules/bots';
import { SUSPENDED, SUSPENDED_REASON } from '../../rules/standing';
import { SESSION_ABSOLUTE_MS, type SessionStore } from './sessions';
import type { AuthLevel, Ctx, Session, SignInMethod, User } from '../../core/types';
import { DEVICE_IDLE_MS, type DeviceStore } from './devices';
import type { UserStore } from './users';

export const SESSION_COOKIE = 'app_session';

export function sessionCookie(baseUrl: string, token: string): string {
  const secure = baseUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${SESSION_ABSOLUTE_MS / 1000}${secure}`;
}

export const CLEARED_SESSION_COOKIE = `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`;

/**
 * A remembered device's secret (docs/security.md "Remembered devices"): never sent cross-site,
 * and only to the one path that redeems it.
 */
export const DEVICE_COOKIE = 'app_device';
export const DEVICE_PATH = '/api/session';

export function deviceCookie(baseUrl: string, secret: string): string {
  const secure = baseUrl.startsWith('https:') ? '; Secure' : '';
  return `${DEVICE_COOKIE}=${secret}; HttpOnly; SameSite=Strict; Path=${DEVICE_PATH}; Max-Age=${DEVICE_IDLE_MS / 1000}${secure}`;
}

export const CLEARED_DEVICE_COOKIE = `${DEVICE_COOKIE}=; HttpOnly; SameSite=Strict; Path=${DEVICE_PATH}; Max-Age=0`;

/**
 * Remembers the session's browser as a new device, tied to the session; the cookie to set. After
 * a change that ended every device, the browser that made it stays remembered.
 */
export function rememberDevice(session: Session, devices: Pick<DeviceStore, 'issue'>, baseUrl: string): string {
  const { device, secret } = devices.issue(session.userId, { userAgent: session.userAgent, address: session.address });
  session.deviceId = device.id;
  return deviceCookie(baseUrl, secret);
}

/** Adds cookies to those the answer already sets. */
export function addCookies(res: ServerResponse, cookies: string[]): void {
  const set = res.getHeader('Set-Cookie');
  res.setHeader('Set-Cookie', [...(Array.isArray(set) ? set : typeof set === 'string' ? [set] : []), ...cookies]);
}

/**
 * Signing in, whatever proved who it is (a password and code, a passkey, an OpenID Provider): a
 * new session and its cookie (spec section 5), and with "remember this device" a remembered
 * device. The one way a session is opened, so every way in gives the same.
 */
export function openSession(
  parts: { sessions: SessionStore; devices: Pick<DeviceStore, 'issue'>; config: Pick<Config, 'baseUrl' | 'trustProxy'> },
  ctx: Pick<Ctx<User | null>, 'req' | 'res'>,
  userId: string,
  how: { method: Exclude<SignInMethod, 'device'>; remember: boolean },
): Session {
  const { sessions, devices, config } = parts;
  const session = sessions.create(userId, { userAgent: ctx.req.headers['user-agent'], address: remoteAddress(ctx.req, config.trustProxy), method: how.method });
  const cookies = [sessionCookie(config.baseUrl, session.token)];
  if (how.remember) cookies.push(rememberDevice(session, devices, config.baseUrl));
  addCookies(ctx.res, cookies);
  return session;
}

/** "Remember this device": JSON true or false, a form checkbox ("on"); absent is false. */
export function readRemember(value: unknown): boolean {
  if (value === undefined || value === false || value === '' || value === 'off' || value === 'false' || value === '0') return false;
  if (value === true || value === 'on' || value === 'true' || value === '1') return true;
  throw badRequest('remember must be true or false');
}

/** The scheme of a bot's token: `Authorization: Bot <token>` (as Discord's). */
const BOT_SCHEME = /^Bot\s+(\S+)$/;

/**
 * A bot's requests have no session: this stands in for one, keyed by the bot, so what counts
 * per session (open sockets) counts per bot, and a reset token ends its sockets
 * (src/parts/accounts/bots.ts).
 */
export const botSessionToken = (botId: string): string => `bot:${botId}`;

function botSession(req: IncomingMessage, user: User): Session {
  return {
    token: botSessionToken(user.id),
    id: user.id,
    userId: user.id,
    createdAt: 0,
    lastSeenAt: Date.now(),
    userAgent: req.headers['user-agent'] ?? '',
    address: req.socket.remoteAddress ?? '',
  };
}

/**
 * Resolves the request's session and user and enforces the route's level (401, then 403). A bot
 * signs in with its token alone, and may not use a person's routes (`route`: src/rules/bots.ts).
 */
export function authenticate(
  { sessions, users }: { sessions: SessionStore; users: UserStore },
  req: IncomingMessage,
  level: AuthLevel,
  route?: { method: string; path: string },
): { session: Session | undefined; user: User | null } {
  if (isBotRequest(req)) {
    const token = BOT_SCHEME.exec(req.headers.authorization!)?.[1];
    const bot = token ? users.byBotToken(token) : null;
    if (!bot) throw new HttpError(401, 'the bot token is not valid');
    if (route) assertBotMayUse(route.method, route.path);
    if (level === 'admin') throw new HttpError(403, 'administrator access required');
    if (level !== 'account' && bot.standing >= SUSPENDED) throw new HttpError(403, SUSPENDED_REASON);
    return { session: botSession(req, bot), user: bot };
  }
  const session = sessions.get(readCookie(req, SESSION_COOKIE));
  const user = session ? users.byId(session.userId) : null;
  if (level === 'none') return { session, user };
  if (!session || !user) throw new HttpError(401, 'sign in required');
  if (level !== 'account' && user.standing >= SUSPENDED) throw new HttpError(403, SUSPENDED_REASON);
  if (level === 'admin' && !user.isAdmin) throw new HttpError(403, 'administrator access required');
  return { session, user };
}
