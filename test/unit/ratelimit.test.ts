import t from 'tap';
import { RateLimiter } from '../../src/core/ratelimit';
import { HttpError } from '../../src/core/http/errors';
import { FakeClock } from '../helpers/server';

const policy = { burst: 3, refillMs: 10_000 };

const retryAfter = (fn: () => void): string | undefined => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError && err.status === 429) return err.headers['Retry-After'];
    throw err;
  }
  return undefined;
};

t.test('a key gets its burst, then 429 with Retry-After in whole seconds', async (t) => {
  const limiter = new RateLimiter('test', policy, new FakeClock());
  for (let i = 0; i < 3; i++)
    t.equal(
      retryAfter(() => limiter.take('k', 'tries')),
      undefined,
      `take ${i + 1}`,
    );
  t.throws(() => limiter.take('k', 'tries'), { status: 429, message: /too many tries; try again in 10 s/ });
  t.equal(
    retryAfter(() => limiter.take('k', 'tries')),
    '10',
  );
  t.equal(
    retryAfter(() => limiter.take('other', 'tries')),
    undefined,
    'keys are independent',
  );
});

t.test('tokens refill at the steady rate, never past the burst', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  for (let i = 0; i < 3; i++) limiter.take('k', 'tries');
  clock.advance(4_000);
  t.equal(limiter.waitMs('k'), 6_000);
  t.equal(
    retryAfter(() => limiter.take('k', 'tries')),
    '6',
    'Retry-After rounds up',
  );
  clock.advance(6_000);
  t.equal(limiter.waitMs('k'), 0);
  limiter.take('k', 'tries');
  t.throws(() => limiter.take('k', 'tries'), { status: 429, message: /too many/ }, 'one token earned, one spent');

  clock.advance(1_000_000);
  for (let i = 0; i < 3; i++) limiter.take('k', 'tries');
  t.throws(() => limiter.take('k', 'tries'), { status: 429, message: /too many/ }, 'a long pause still only refills the burst');
});

t.test('Retry-After is at least 1 s', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('fast', { burst: 1, refillMs: 200 }, clock);
  limiter.take('k', 'tries');
  t.equal(
    retryAfter(() => limiter.take('k', 'tries')),
    '1',
  );
});

t.test('check refuses without spending; spend records without refusing; refund gives back', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('failures', policy, clock);
  for (let i = 0; i < 10; i++) limiter.check('k', 'failures');
  t.equal(limiter.waitMs('k'), 0, 'checking spends nothing');
  for (let i = 0; i < 10; i++) limiter.spend('k');
  t.throws(() => limiter.check('k', 'failures'), { status: 429, message: /too many/ });
  // Spending past empty is capped at one burst of debt: 3 below zero, so 4 tokens to earn.
  t.equal(limiter.waitMs('k'), 40_000);
  limiter.refund('k');
  t.equal(limiter.waitMs('k'), 30_000);
  clock.advance(30_000);
  t.doesNotThrow(() => limiter.check('k', 'failures'));
});

t.test('refunding up to the burst forgets the key', async (t) => {
  const limiter = new RateLimiter('failures', policy, new FakeClock());
  limiter.spend('k');
  t.equal(limiter.size, 1);
  limiter.refund('k');
  t.equal(limiter.size, 0);
  limiter.refund('never-seen');
  t.equal(limiter.size, 0, 'refunding an unknown key creates nothing');
});

t.test('a disabled limiter never refuses and tracks nothing', async (t) => {
  const limiter = new RateLimiter('off', policy, new FakeClock(), false);
  for (let i = 0; i < 100; i++) {
    limiter.take('k', 'tries');
    limiter.spend('k');
    limiter.check('k', 'tries');
  }
  t.equal(limiter.size, 0);
});

t.test('keys whose buckets refilled are forgotten', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  limiter.take('a', 'tries');
  limiter.take('b', 'tries');
  t.equal(limiter.size, 2);
  clock.advance(10_000);
  t.equal(limiter.waitMs('a'), 0);
  t.equal(limiter.size, 1, 'a refilled bucket is dropped when next looked at');
});

t.test('the number of keys stays bounded under a flood of distinct keys', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock, true, 100);
  for (let i = 0; i < 200; i++) {
    limiter.take(`key-${i}`, 'tries');
    t.ok(limiter.size <= 100, `after ${i + 1} keys: ${limiter.size}`);
  }
  // The newest keys are the ones kept.
  limiter.take('key-199', 'tries');
  limiter.take('key-199', 'tries');
  t.throws(() => limiter.take('key-199', 'tries'), { status: 429, message: /too many/ });
});

t.test('eviction drops refilled buckets before live ones', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock, true, 10);
  for (let i = 0; i < 5; i++) limiter.take(`old-${i}`, 'tries');
  clock.advance(10_000);
  for (let i = 0; i < 5; i++) limiter.spend(`live-${i}`);
  limiter.spend('live-5');
  t.equal(limiter.size, 6, 'the refilled old keys went first');
});
