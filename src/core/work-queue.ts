/**
 * Work that takes a core and a lot of memory (a password hash, an image decode): at most
 * `concurrency` run at once, the rest wait their turn in order. With `maxWaiting`, a caller that
 * would wait behind that many gets the error `whenFull` makes instead (a 503), so a flood cannot
 * queue without end.
 */
export interface WorkQueue {
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Whether a new caller would be turned away now. */
  readonly full: boolean;
  /** Throws what `whenFull` makes when a new caller would be turned away now (to refuse an upload before receiving it). */
  requireRoom(): void;
}

export function createWorkQueue(concurrency: number, maxWaiting = Infinity, whenFull: () => Error = () => new Error('queue full')): WorkQueue {
  let running = 0;
  const waiting: (() => void)[] = [];
  return {
    get full() {
      return running >= concurrency && waiting.length >= maxWaiting;
    },
    requireRoom() {
      if (this.full) throw whenFull();
    },
    async run(work) {
      if (running >= concurrency) {
        if (waiting.length >= maxWaiting) throw whenFull();
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      running++;
      try {
        return await work();
      } finally {
        running--;
        waiting.shift()?.();
      }
    },
  };
}
