import type { Log } from './types';

/**
 * Code that runs outside any request's promise chain: stream and parser events, socket frames,
 * timers, background jobs. Whatever such a callback throws has no request to answer and, left
 * alone, reaches the process as an uncaught exception: with sessions in memory, that signs
 * everyone out. So each one is given an owner for its errors: the request it belongs to (a
 * 4xx with a reason, or one logged 500), the one connection it serves (closed), or the log.
 */

/** `fn`, with whatever it throws handed to `onError` instead of the caller of the callback. */
export function owned<A extends unknown[]>(fn: (...args: A) => void, onError: (err: unknown) => void): (...args: A) => void {
  return (...args) => {
    try {
      fn(...args);
    } catch (err) {
      onError(err);
    }
  };
}

/** One line for an unexpected error: its stack when it has one. */
export const describeError = (err: unknown): string => (err instanceof Error ? (err.stack ?? err.message) : String(err));

/** A log line for an error no one else owns, naming where it happened. */
export const logFailure = (log: Log, where: string) => (err: unknown) => log(`${where} failed: ${describeError(err)}`);

/** setInterval whose errors are logged (the timer keeps running), unref'd: it never holds the process open. */
export function every(ms: number, name: string, fn: () => void, log: Log): NodeJS.Timeout {
  const timer = setInterval(
    owned(() => (failpoint(`timer.${name}`), fn()), logFailure(log, name)),
    ms,
  );
  timer.unref();
  return timer;
}

/** setTimeout whose errors are logged, unref'd. */
export function after(ms: number, name: string, fn: () => void, log: Log): NodeJS.Timeout {
  const timer = setTimeout(
    owned(() => (failpoint(`timer.${name}`), fn()), logFailure(log, name)),
    ms,
  );
  timer.unref();
  return timer;
}

/**
 * Failpoints: named places in the callbacks above where a test makes the code fail, to prove
 * that each error reaches its owner and the server goes on. Armed only by FAILPOINTS (a
 * testing aid, docs/security.md "When code fails"): `name` throws there; `name:escape` throws
 * on the next turn instead, outside every owner, to exercise the process-level policy.
 * Unarmed, a failpoint is one check of an empty set.
 */
const armed = new Map<string, 'throw' | 'escape'>();

export function armFailpoints(spec: readonly string[]): void {
  armed.clear();
  for (const entry of spec) {
    const [name, mode = 'throw'] = entry.split(':');
    armed.set(name, mode === 'escape' ? 'escape' : 'throw');
  }
}

export function failpoint(name: string): void {
  if (armed.size === 0) return;
  const mode = armed.get(name);
  if (mode === undefined) return;
  const err = new Error(`failpoint ${name}`);
  if (mode === 'throw') throw err;
  setImmediate(() => {
    throw err;
  });
}
