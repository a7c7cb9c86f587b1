import type { DB } from './db';

/**
 * Group commit for the hottest write, a new message. Every write asked for in one event-loop
 * turn runs in one SQLite transaction, each in its own savepoint: one write that throws rolls
 * back alone and rejects alone; the others commit together. A commit is where the cost is (the
 * WAL frames of every page touched, the search index's new segment, the fsync under
 * DURABILITY=strict), so under load many messages share one, and alone a message waits one
 * turn of the event loop. Nothing is acknowledged or announced before its batch committed.
 */
export interface GroupCommit {
  run<T>(write: () => T): Promise<T>;
}

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

export function createGroupCommit(db: DB): GroupCommit {
  let pending: Pending[] = [];
  // Built once: db.transaction() makes four wrapper functions each time it is called, which
  // per message cost about as much as a statement (bench/post-profile.ts).
  // A transaction inside a transaction is a savepoint (better-sqlite3).
  const inSavepoint = db.transaction((write: () => unknown) => write());
  const commitBatch = db.transaction((batch: Pending[], outcomes: Outcome[]) => {
    for (const job of batch) {
      try {
        outcomes.push({ ok: true, value: inSavepoint(job.write) });
      } catch (err) {
        outcomes.push({ ok: false, err });
      }
    }
  });

  function flush(): void {
    const batch = pending;
    pending = [];
    const outcomes: Outcome[] = [];
    try {
      commitBatch(batch, outcomes);
    } catch (err) {
      // The commit itself failed (disk full, I/O): nothing of the batch was written.
      for (const job of batch) job.reject(err);
      return;
    }
    batch.forEach((job, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.err);
    });
  }

  return {
    run<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
        if (pending.length === 1) setImmediate(flush);
      });
    },
  };
}
