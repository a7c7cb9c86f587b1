import t from 'tap';
import { OriginQueues } from '../../src/parts/push/origin-queues';

/** The push sender's bookkeeping (src/parts/push/origin-queues.ts), on a clock the test moves. */
const LIMITS = { perOrigin: 2, total: 3, queuedPerOrigin: 4, failuresToRest: 3, restMs: 60_000 };

function queues() {
  let now = 0;
  const q = new OriginQueues<string>(LIMITS, () => now);
  /** Everything that may start now, as `origin:job`. */
  const drain = () => {
    const started: string[] = [];
    for (let item = q.next(); item; item = q.next()) started.push(`${item.origin}:${item.job}`);
    return started;
  };
  return { q, drain, advance: (ms: number) => (now += ms) };
}

t.test('each origin has its own slots; origins take turns; the total is capped', async (t) => {
  const { q, drain } = queues();
  for (const job of ['a1', 'a2', 'a3', 'a4']) q.add('https://a', job);
  q.add('https://b', 'b1');
  t.same(drain(), ['https://a:a1', 'https://b:b1', 'https://a:a2'], 'a stuck origin holds its own two slots, b still gets one');
  t.equal(q.queued, 2);
  q.done('https://b', 'answered');
  t.same(drain(), [], 'a has its two in flight: nothing more for it');
  q.done('https://a', 'answered');
  t.same(drain(), ['https://a:a3']);
});

t.test("one origin's queue is bounded", async (t) => {
  const { q } = queues();
  const taken = ['1', '2', '3', '4', '5'].map((job) => q.add('https://a', job));
  t.same(taken, [true, true, true, true, false], `at most ${LIMITS.queuedPerOrigin} wait`);
  t.ok(q.add('https://b', 'b1'), 'another origin still queues');
});

t.test('failures in a row give an origin a rest; one trial after it; an answer ends it', async (t) => {
  const { q, drain, advance } = queues();
  for (const job of ['1', '2', '3', '4']) q.add('https://down', job);
  t.same(drain(), ['https://down:1', 'https://down:2']);
  t.same(q.done('https://down', 'failed'), { rested: false, dropped: [] });
  t.same(q.done('https://down', 'answered'), { rested: false, dropped: [] }, 'an answer between failures starts the count again');
  drain();
  drain();
  q.done('https://down', 'failed');
  q.done('https://down', 'failed');
  t.same(drain(), []);
  q.add('https://down', '5');
  q.add('https://down', '6');
  q.add('https://down', '7');
  t.same(drain(), ['https://down:5', 'https://down:6']);
  t.same(q.done('https://down', 'failed'), { rested: true, dropped: ['7'] }, 'the third failure in a row: a rest, and what waited is dropped');
  t.equal(q.queued, 0);
  t.notOk(q.add('https://down', '8'), 'while it rests, new pushes are refused');
  t.same(q.done('https://down', 'failed'), { rested: false, dropped: [] }, 'one in flight failing during the rest changes nothing');
  advance(LIMITS.restMs);
  t.ok(q.add('https://down', '9'), 'the rest is over');
  q.add('https://down', '10');
  t.same(drain(), ['https://down:9'], 'one trial at a time');
  t.same(q.done('https://down', 'failed'), { rested: true, dropped: ['10'] }, 'a failed trial: another rest');
  advance(LIMITS.restMs);
  q.add('https://down', '11');
  q.add('https://down', '12');
  t.same(drain(), ['https://down:11']);
  q.done('https://down', 'answered');
  t.same(drain(), ['https://down:12'], 'an answered trial: back to normal');
  q.add('https://down', '13');
  t.same(drain(), ['https://down:13'], 'two in flight again');
});

t.test('a push that failed for reasons of its own (the worker stopped) counts neither way', async (t) => {
  const { q, drain } = queues();
  for (const job of ['1', '2', '3', '4']) q.add('https://a', job);
  drain();
  for (let i = 0; i < 4; i++) {
    t.same(q.done('https://a', 'unknown'), { rested: false, dropped: [] });
    drain();
  }
  t.equal(q.queued, 0, 'all went');
});
