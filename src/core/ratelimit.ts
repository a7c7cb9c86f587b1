import type { Clock } from './clock';
import { HttpError } from './http/errors';

export interface BucketPolicy {
  /** Tokens a fresh key holds: the burst. */
  burst: number;
  /** Milliseconds to earn back one token: the steady rate. */
  refillMs: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Distinct keys tracked per limiter; past this, full buckets are dropped, then the oldest. */
export const MAX_KEYS_PER_LIMITER = 100_000;

/**
 * Token buckets in memory, one per key. A key whose bucket has refilled carries no
 * information, so it is forgotten: memory stays bounded under a flood of distinct keys.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly name: string,
    private readonly policy: BucketPolicy,
    private readonly clock: Clock,
    private readonly enabled = true,
    private readonly maxKeys = MAX_KEYS_PER_LIMITER,
  ) {}

  /** Milliseconds until one token is available for the key; 0 when one is available now. */
  waitMs(key: string): number {
    if (!this.enabled) return 0;
    const bucket = this.refill(key);
    if (!bucket || bucket.tokens >= 1) return 0;
    return Math.ceil((1 - bucket.tokens) * this.policy.refillMs);
  }

  /**
   * The key's bucket as rate-limit headers tell it (Discord's X-RateLimit-*): the burst, the
   * whole tokens left, and the milliseconds until the bucket is full again.
   */
  state(key: string): { limit: number; remaining: number; fullInMs: number } {
    const bucket = this.enabled ? this.refill(key) : undefined;
    const tokens = bucket?.tokens ?? this.policy.burst;
    return { limit: this.policy.burst, remaining: Math.max(0, Math.floor(tokens)), fullInMs: Math.ceil((this.policy.burst - tokens) * this.policy.refillMs) };
  }

  /** Spends one token; throws 429 with Retry-After if none is left. */
  take(key: string, what: string): void {
    if (!this.enabled) return;
    const wait = this.waitMs(key);
    if (wait > 0) throw tooMany(what, wait);
    const bucket = this.buckets.get(key) ?? this.insert(key);
    bucket.tokens -= 1;
  }

  /** Throws 429 if the key has no token left, without spending one (failed-login style limits). */
  check(key: string, what: string): void {
    const wait = this.waitMs(key);
    if (wait > 0) throw tooMany(what, wait);
  }

  /** Spends a token without ever refusing: records a failure after it happened. */
  spend(key: string): void {
    if (!this.enabled) return;
    this.refill(key);
    const bucket = this.buckets.get(key) ?? this.insert(key);
    bucket.tokens = Math.max(bucket.tokens - 1, -this.policy.burst);
  }

  /** Gives back a token spent by `spend` (an attempt counted up front that turned out fine). */
  refund(key: string): void {
    if (!this.enabled) return;
    const bucket = this.refill(key);
    if (!bucket) return;
    bucket.tokens += 1;
    if (bucket.tokens >= this.policy.burst) this.buckets.delete(key);
  }

  /** Forgets a key entirely (a password reset proves the owner: their lock-out ends). */
  forget(key: string): void {
    this.buckets.delete(key);
  }

  get size(): number {
    return this.buckets.size;
  }

  private refill(key: string): Bucket | undefined {
    const bucket = this.buckets.get(key);
    if (!bucket) return undefined;
    const now = this.clock.now();
    bucket.tokens = Math.min(this.policy.burst, bucket.tokens + (now - bucket.updatedAt) / this.policy.refillMs);
    bucket.updatedAt = now;
    if (bucket.tokens >= this.policy.burst) {
      this.buckets.delete(key);
      return undefined;
    }
    return bucket;
  }

  private insert(key: string): Bucket {
    if (this.buckets.size >= this.maxKeys) this.evict();
    const bucket = { tokens: this.policy.burst, updatedAt: this.clock.now() };
    this.buckets.set(key, bucket);
    return bucket;
  }

  private evict(): void {
    for (const key of [...this.buckets.keys()]) this.refill(key);
    // Still full of live buckets: drop the oldest quarter rather than grow.
    const excess = this.buckets.size - Math.floor(this.maxKeys * 0.75);
    if (excess <= 0) return;
    let dropped = 0;
    for (const key of this.buckets.keys()) {
      if (dropped++ >= excess) break;
      this.buckets.delete(key);
    }
  }
}

function tooMany(what: string, waitMs: number): HttpError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new HttpError(429, `too many ${what}; try again in ${seconds} s`, { 'Retry-After': String(seconds) });
}
