import t from 'tap';
import { createWorkQueue } from '../../src/core/work-queue';

/** A piece of work that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, work: () => opened };
}

t.test('at most `concurrency` run at once; the rest wait in order; past maxWaiting the caller is turned away', async (t) => {
  const queue = createWorkQueue(2, 1, () => new Error('busy'));
  const started: number[] = [];
  const gates = [gate(), gate(), gate()];
  const runs = gates.map((g, i) => queue.run(async () => (started.push(i), g.work())));
  await Promise.resolve();
  t.same(started, [0, 1], 'two run');
  t.equal(queue.full, true, 'two running and one waiting: full');
  await t.rejects(
    queue.run(async () => 'never'),
    /busy/,
    'a fourth is turned away at once',
  );
  gates[1].open();
  await runs[1];
  await new Promise((resolve) => setImmediate(resolve));
  t.same(started, [0, 1, 2], 'the waiting one runs when a place frees');
  t.equal(queue.full, false);
  gates[0].open();
  gates[2].open();
  await Promise.all(runs);
});

t.test('a failure frees its place; without maxWaiting nothing is turned away', async (t) => {
  const queue = createWorkQueue(1);
  await t.rejects(
    queue.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  const results = await Promise.all([1, 2, 3].map((n) => queue.run(async () => n * 2)));
  t.same(results, [2, 4, 6]);
  t.equal(queue.full, false);
});
