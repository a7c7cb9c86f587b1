import crypto from 'node:crypto';
import { type Clock, DAY } from '../../core/clock';
import type { Session, SignInMethod } from '../../core/types';

/** Sessions live only in memory: they all end when the process stops (spec section 5.2). */
export const SESSION_IDLE_MS = 7 * DAY;
export const SESSION_ABSOLUTE_MS = 30 * DAY;
export const MAX_SESSIONS_PER_USER = 20;
/** A user agent longer than this is cut: it is shown, never parsed. */
export const MAX_USER_AGENT_CHARS = 256;

export class SessionStore {
  private readonly byToken = new Map<string, Session>();
  private readonly byUser = new Map<string, Set<string>>();
  /** `onEnd` is called for every session that ends, however it ends (the hub closes its sockets). */
  constructor(
    private readonly clock: Clock,
    private readonly onEnd: (session: Session) => void = () => {},
  ) {}

  /**
   * Always a fresh 256-bit token: a token offered by the client is never adopted. The id is a
   * separate random UUID, the handle a user sees in their session list.
   */
  create(userId: string, seen: { userAgent?: string; address?: string; deviceId?: string; method?: SignInMethod } = {}): Session {
    const now = this.clock.now();
    const session: Session = {
      token: crypto.randomBytes(32).toString('base64url'),
      id: crypto.randomUUID(),
      userId,
      createdAt: now,
      lastSeenAt: now,
      userAgent: (seen.userAgent ?? '').slice(0, MAX_USER_AGENT_CHARS),
      address: seen.address ?? '',
      ...(seen.deviceId ? { deviceId: seen.deviceId } : {}),
      ...(seen.method ? { method: seen.method } : {}),
    };
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

  /** Ends every session of a user but `keep` (the caller's own, when it asks to end the others). */
  endAllForUser(userId: string, keep?: string): void {
    for (const token of [...(this.byUser.get(userId) ?? [])]) if (token !== keep) this.end(token);
  }

  /** Ends the user's sessions that these remembered devices opened, but `keep`. */
  endForDevices(userId: string, deviceIds: string[], keep?: string): void {
    const ended = new Set(deviceIds);
    for (const session of this.listForUser(userId)) {
      if (session.deviceId && ended.has(session.deviceId) && session.token !== keep) this.end(session.token);
    }
  }

  /** A user's live sessions, oldest first. */
  listForUser(userId: string): Session[] {
    const now = this.clock.now();
    return [...(this.byUser.get(userId) ?? [])].map((token) => this.byToken.get(token)!).filter((s) => !this.expired(s, now));
  }

  /** Ends the user's session with this id; false when they have none by that id. */
  endById(userId: string, id: string): boolean {
    const session = this.listForUser(userId).find((s) => s.id === id);
    if (!session) return false;
    this.end(session.token);
    return true;
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
