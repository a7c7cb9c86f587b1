import type { IncomingMessage } from 'node:http';
import { readCookie } from '../../core/http/client';
import { HttpError } from '../../core/http/errors';
import { SUSPENDED, SUSPENDED_REASON } from '../../rules/standing';
import { SESSION_ABSOLUTE_MS, type SessionStore } from './sessions';
import type { AuthLevel, Session, User } from '../../core/types';
import type { UserStore } from './users';

export const SESSION_COOKIE = 'app_session';

export function sessionCookie(baseUrl: string, token: string): string {
  const secure = baseUrl.startsWith('https:') ? '; Secure' : '';
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${SESSION_ABSOLUTE_MS / 1000}${secure}`;
}

export const CLEARED_SESSION_COOKIE = `${SESSION_COOKIE}=; HttpOnly; SameSite=Lax; Path=/; Max-Age=0`;

/** Resolves the request's session and user and enforces the route's level (401, then 403). */
export function authenticate(
  { sessions, users }: { sessions: SessionStore; users: UserStore },
  req: IncomingMessage,
  level: AuthLevel,
): { session: Session | undefined; user: User | null } {
  const session = sessions.get(readCookie(req, SESSION_COOKIE));
  const user = session ? users.byId(session.userId) : null;
  if (level === 'none') return { session, user };
  if (!session || !user) throw new HttpError(401, 'sign in required');
  if (level !== 'account' && user.standing >= SUSPENDED) throw new HttpError(403, SUSPENDED_REASON);
  if (level === 'admin' && !user.isAdmin) throw new HttpError(403, 'administrator access required');
  return { session, user };
}

