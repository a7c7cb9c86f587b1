import crypto from 'node:crypto';
import { type Clock, DAY } from './clock';
import type { Session } from './types';

/** Sessions live only in memory: they all end when the process stops (spec section 5.2). */
export const SESSION_IDLE_MS = 7 * DAY;
export const SESSION_ABSOLUTE_MS = 30 * DAY;
export const MAX_SESSIONS_PER_USER = 20;

export class SessionStore {
  private readonly byToken = new Map<string, Session>();
  private readonly byUser = new Map<string, Set<string>>();
  /** Called for every session that ends, however it ends (realtime closes its sockets). */
  onEnd: (session: Session) => void = () => {};

  constructor(private readonly clock: Clock) {}

  /** Always a fresh 256-bit token: a token offered by the client is never adopted. */
  create(userId: string): Session {
    const now = this.clock.now();
    const session: Session = { token: crypto.randomBytes(32).toString('base64url'), userId, createdAt: now, lastSeenAt: now };
    this.byToken.set(session.token, session);
    const tokens = this.byUser.get(userId) ?? new Set<string>();
    this.byUser.set(userId, tokens);
    tokens.add(session.token);
    // Sets iterate in insertion order: the first token is the oldest session.
    while (tokens.size > MAX_SESSIONS_PER_USER) this.end(tokens.values().next().value as string);
    return session;
  }

  /** The live session for a token, touched; expired sessions end here. */
  get(token: string | undefined): Session | undefined {
    if (!token) return undefined;
    const session = this.byToken.get(token);
    if (!session) return undefined;
    const now = this.clock.now();
    if (this.expired(session, now)) {
      this.end(token);
      return undefined;
    }
    session.lastSeenAt = now;
    return session;
  }

  end(token: string): void {
    const session = this.byToken.get(token);
    if (!session) return;
    this.byToken.delete(token);
    const tokens = this.byUser.get(session.userId);
    tokens?.delete(token);
    if (tokens?.size === 0) this.byUser.delete(session.userId);
    this.onEnd(session);
  }

  endAllForUser(userId: string): void {
    for (const token of [...(this.byUser.get(userId) ?? [])]) this.end(token);
  }

  /** Drops expired sessions; run on a timer so idle sessions do not pile up. */
  sweep(): void {
    const now = this.clock.now();
    for (const session of this.byToken.values()) if (this.expired(session, now)) this.end(session.token);
  }

  get size(): number {
    return this.byToken.size;
  }

  private expired(session: Session, now: number): boolean {
    return now - session.lastSeenAt > SESSION_IDLE_MS || now - session.createdAt > SESSION_ABSOLUTE_MS;
  }
}
