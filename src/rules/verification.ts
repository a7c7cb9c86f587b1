import { MINUTE, iso } from '../core/clock';
import { forbidden } from '../core/http/errors';
import type { PostingGate, VerificationLevel } from '../core/records';

/** Level 2: an account this old may post (Discord's "Medium"). */
export const ACCOUNT_AGE_MS = 5 * MINUTE;
/** Level 3: a member of the server this long may post (Discord's "High"). */
export const MEMBERSHIP_AGE_MS = 10 * MINUTE;

/** What the gate looks at: the server's level, the account, the membership, and who is exempt. */
export interface GateFacts {
  level: VerificationLevel;
  now: number;
  /** An email address confirmed by its link (docs/api.md "Email"). */
  emailVerified: boolean;
  /** ISO 8601, as the users and members rows keep them. */
  accountCreatedAt: string;
  joinedAt: string;
  /**
   * The owner, full server administrators, holders of any moderator flag (they keep the server,
   * a raid is what they stop) and bots (added by someone who manages the server).
   */
  exempt: boolean;
}

/**
 * A server's verification level (issue 53, as Discord's, cumulative like Discord's): below it a
 * member reads but neither posts nor reacts. The steps, each including those before it:
 *   1. a verified email address;
 *   2. an account older than 5 minutes;
 *   3. a member of this server for more than 10 minutes.
 * Null when the member may write; otherwise why not, and when that lifts by itself (the later of
 * the times still to come; null while an email is unverified, which only the member can lift).
 */
export function postingGate(facts: GateFacts): PostingGate | null {
  if (facts.exempt || facts.level === 0) return null;
  const reasons: string[] = [];
  let until = -Infinity;
  const noEmail = !facts.emailVerified;
  if (noEmail) reasons.push('you verify your email address');
  if (facts.level >= 2) {
    const old = Date.parse(facts.accountCreatedAt) + ACCOUNT_AGE_MS;
    if (old > facts.now) {
      reasons.push('your account be older than 5 minutes');
      until = Math.max(until, old);
    }
  }
  if (facts.level >= 3) {
    const settled = Date.parse(facts.joinedAt) + MEMBERSHIP_AGE_MS;
    if (settled > facts.now) {
      reasons.push('you be a member of this server for 10 minutes');
      until = Math.max(until, settled);
    }
  }
  if (reasons.length === 0) return null;
  return { reason: `this server's verification level asks that ${reasons.join(', and ')}`, until: noEmail || until === -Infinity ? null : iso(until) };
}

/** 403 with the gate's reason and, where a time applies, when (an ISO 8601 time at the end of the text). */
export function requirePassed(gate: PostingGate | null): void {
  if (!gate) return;
  if (gate.until === null) throw forbidden(`${gate.reason} before you post or react here`);
  throw forbidden(`${gate.reason}: you can post and react here from ${gate.until}`);
}
