/**
 * Which push goes next, so that one push service cannot hold up another's (docs/security.md
 * "Push isolation"). Push services are chosen by users (any https origin passes the address
 * check), and one that never answers would otherwise hold the sender's shared slots until each
 * deadline. So:
 *
 * - each origin has a queue of its own and at most PER_ORIGIN pushes in flight; origins take
 *   turns (round robin), so a stuck one holds its own slots and no one else's;
 * - its queue holds at most QUEUED_PER_ORIGIN: one origin cannot fill the sender's whole queue;
 * - a circuit breaker: after PUSH_FAILURES_TO_REST failures in a row (no answer in time, no
 *   connection, 5xx or 429), an origin rests for REST_MS: what waits for it is dropped, and so is
 *   what comes meanwhile. Then one push goes as a trial: an answer ends the rest, another failure
 *   starts a new one.
 *
 * Pure bookkeeping with an injected clock; the sender (sender.ts) starts what `next` gives.
 */
export const PUSH_FAILURES_TO_REST = 3;

export interface OriginLimits {
  /** Pushes in flight to one origin at most. */
  perOrigin: number;
  /** Pushes in flight in all at most. */
  total: number;
  /** Pushes waiting for one origin at most. */
  queuedPerOrigin: number;
  /** Failures in a row that give an origin a rest. */
  failuresToRest: number;
  /** How long a rest lasts, in milliseconds. */
  restMs: number;
}

/** How a push went, as far as its service's health goes. */
export type ServiceResult = 'answered' | 'failed' | 'unknown';

/** Origins remembered at most (busy ones, and idle ones that failed): past it, idle ones are forgotten, oldest first. */
const MAX_ORIGINS = 10_000;

interface Origin<J> {
  queue: J[];
  running: number;
  /** Failures in a row. */
  failures: number;
  /** Resting until then (ms); 0 when not resting. */
  restUntil: number;
}

export class OriginQueues<J> {
  private readonly origins = new Map<string, Origin<J>>();
  private running = 0;
  private waiting = 0;

  constructor(
    private readonly limits: OriginLimits,
    private readonly now: () => number,
  ) {}

  /** Queues a push; false (it is dropped) while its origin rests or when its origin's queue is full. */
  add(origin: string, job: J): boolean {
    const state = this.stateOf(origin);
    if (state.restUntil > this.now() || state.queue.length >= this.limits.queuedPerOrigin) return false;
    state.queue.push(job);
    this.waiting++;
    return true;
  }

  /** The next push that may start now, counted as running until `done`; null when none may. */
  next(): { origin: string; job: J } | null {
    if (this.running >= this.limits.total) return null;
    for (const [origin, state] of this.origins) {
      if (state.queue.length === 0 || state.running >= this.limits.perOrigin) continue;
      // After a rest: one trial at a time until it is answered.
      if (state.failures >= this.limits.failuresToRest && state.running > 0) continue;
      const job = state.queue.shift()!;
      this.waiting--;
      state.running++;
      this.running++;
      // Its turn is taken: to the back of the line.
      this.origins.delete(origin);
      this.origins.set(origin, state);
      return { origin, job };
    }
    return null;
  }

  /**
   * A push `next` gave has ended. A failure of its service may start a rest: then `dropped`
   * holds what was waiting for it, and `rested` is true.
   */
  done(origin: string, result: ServiceResult): { rested: boolean; dropped: J[] } {
    const state = this.stateOf(origin);
    state.running--;
    this.running--;
    if (result === 'answered') {
      state.failures = 0;
      state.restUntil = 0;
      // A healthy origin with nothing to do is forgotten: the map holds busy and failing ones.
      if (state.queue.length === 0 && state.running === 0) this.origins.delete(origin);
    } else if (result === 'failed') {
      state.failures++;
      if (state.failures >= this.limits.failuresToRest && state.restUntil <= this.now()) {
        state.restUntil = this.now() + this.limits.restMs;
        const dropped = state.queue.splice(0);
        this.waiting -= dropped.length;
        return { rested: true, dropped };
      }
    }
    return { rested: false, dropped: [] };
  }

  /** Pushes waiting in all. */
  get queued(): number {
    return this.waiting;
  }

  /** Forgets everything waiting; returns it. */
  clear(): J[] {
    const all = [...this.origins.values()].flatMap((state) => state.queue.splice(0));
    this.waiting = 0;
    return all;
  }

  private stateOf(origin: string): Origin<J> {
    let state = this.origins.get(origin);
    if (!state) {
      if (this.origins.size >= MAX_ORIGINS) this.forgetIdle();
      state = { queue: [], running: 0, failures: 0, restUntil: 0 };
      this.origins.set(origin, state);
    }
    return state;
  }

  /** Keeps the map bounded: idle origins are forgotten, oldest first (a resting one forgotten rests no more). */
  private forgetIdle(): void {
    for (const [origin, state] of this.origins) {
      if (this.origins.size < MAX_ORIGINS) return;
      if (state.queue.length === 0 && state.running === 0) this.origins.delete(origin);
    }
  }
}
