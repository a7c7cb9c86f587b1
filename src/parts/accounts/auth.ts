import type { IncomingMessage } from 'node:http';
import { isBotRequest, readCookie } from '../../core/http/client';
import { HttpError } from '../../core/http/errors';
import { assertBotMayUse } from '../../rules/bots';
import { SUSPENDED, SUSPENDED_REASON } from '../../rules/standing';
import { SESSION_ABSOLUTE_MS, type SessionStore } from './sessions';
import type { AuthLevel, Session, User } from '../../core/types';
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
