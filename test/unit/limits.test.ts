import t from 'tap';
import { HttpError } from '../../src/core/http/errors';
import { LIMIT_POLICIES, createLimits } from '../../src/rules/limits';
import { MAX_KEYS_PER_LIMITER, RateLimiter } from '../../src/core/ratelimit';
import { FakeClock } from '../helpers/server';

const policy = { burst: 3, refillMs: 1000 };

function refusal(fn: () => void): HttpError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error('expected a 429');
}

t.test('a key gets its burst, then 429 with Retry-After in whole seconds and a plain reason', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  for (let i = 0; i < policy.burst; i++) limiter.take('k', 'tries');
  const err = refusal(() => limiter.take('k', 'tries'));
  t.equal(err.status, 429);
  t.equal(err.headers?.['Retry-After'], '1');
  t.match(err.message, /^too many tries; try again in 1 s$/);
  t.equal(limiter.take('other', 'tries'), undefined, 'another key has its own bucket');
});

t.test('waitMs is the time until one whole token is back', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  t.equal(limiter.waitMs('k'), 0, 'an unknown key can go now');
  for (let i = 0; i < policy.burst; i++) limiter.take('k', 'tries');
  t.equal(limiter.waitMs('k'), 1000, 'an empty bucket waits one refill period');
  clock.advance(250);
  t.equal(limiter.waitMs('k'), 750, 'a quarter of a token earned');
  clock.advance(749);
  // Fractions of a token are floats: 1 ms left may round up to 2, never down to 0.
  t.ok(limiter.waitMs('k') >= 1 && limiter.waitMs('k') <= 2, '1 ms left still waits');
  clock.advance(1);
  t.equal(limiter.waitMs('k'), 0);
  limiter.take('k', 'tries');
  t.equal(limiter.waitMs('k'), 1000, 'spending the earned token empties it again');
});

t.test('Retry-After rounds up and is never 0', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', { burst: 1, refillMs: 2500 }, clock);
  limiter.take('k', 'tries');
  t.equal(refusal(() => limiter.take('k', 'tries')).headers?.['Retry-After'], '3');
  clock.advance(2499);
  t.equal(refusal(() => limiter.take('k', 'tries')).headers?.['Retry-After'], '1', '1 ms left still says 1 s');
});

t.test('spend records failures without refusing, down to minus the burst; check refuses without spending', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  for (let i = 0; i < 100; i++) limiter.spend('k');
  t.equal(limiter.waitMs('k'), (policy.burst + 1) * policy.refillMs, 'a flood of failures waits at most burst + 1 periods');
  t.equal(refusal(() => limiter.check('k', 'failures')).status, 429);
  clock.advance(limiter.waitMs('k'));
  limiter.check('k', 'failures');
  t.pass('after the wait the key is allowed again');
});

t.test('refund gives back a spent token and forgets a key that is full again', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  limiter.spend('k');
  t.equal(limiter.size, 1);
  limiter.refund('k');
  t.equal(limiter.size, 0, 'a refunded key carries no information');
  limiter.refund('never-seen');
  t.equal(limiter.size, 0, 'refunding an unknown key creates nothing');
});

t.test('a key whose bucket has refilled is dropped', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('test', policy, clock);
  limiter.take('a', 'tries');
  limiter.take('b', 'tries');
  for (let i = 0; i < policy.burst; i++) limiter.take('c', 'tries');
  t.equal(limiter.size, 3);
  clock.advance(policy.refillMs);
  for (const key of ['a', 'b', 'c']) limiter.waitMs(key);
  t.equal(limiter.size, 1, 'a and b were one token short: full after one period, so forgotten');
  clock.advance(policy.refillMs * (policy.burst - 1));
  limiter.waitMs('c');
  t.equal(limiter.size, 0, 'c is full again and forgotten too');
});

t.test('inserting past the cap first forgets every key that has refilled', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('small', policy, clock, true, 2);
  limiter.take('x', 'tries');
  limiter.take('y', 'tries');
  clock.advance(policy.refillMs);
  limiter.take('z', 'tries');
  t.equal(limiter.size, 1, 'x and y were never touched again, yet they are gone');
});

t.test('a flood of distinct keys cannot grow a limiter past MAX_KEYS_PER_LIMITER', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('flood', LIMIT_POLICIES.loginFailuresPerClient, clock);
  let largest = 0;
  for (let i = 0; i < 200_000; i++) {
    limiter.spend(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    largest = Math.max(largest, limiter.size);
  }
  t.ok(largest <= MAX_KEYS_PER_LIMITER, `at most ${MAX_KEYS_PER_LIMITER} keys held (largest seen ${largest})`);
  t.ok(limiter.size > 0, 'recent keys are still tracked');
  const i = 199_999;
  const last = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  t.ok(limiter.waitMs(last) === 0, 'one failure leaves the newest key with tokens to spare');
  limiter.spend(last);
  t.ok(limiter.size <= MAX_KEYS_PER_LIMITER);
});

t.test('a disabled limiter never refuses and holds nothing', async (t) => {
  const clock = new FakeClock();
  const limiter = new RateLimiter('off', policy, clock, false);
  for (let i = 0; i < 50; i++) {
    limiter.take('k', 'tries');
    limiter.spend('k');
    limiter.check('k', 'tries');
  }
  t.equal(limiter.waitMs('k'), 0);
  t.equal(limiter.size, 0);
});

t.test('createLimits builds one limiter per policy, all enabled or all disabled', async (t) => {
  const clock = new FakeClock();
  for (const enabled of [true, false]) {
    const limits = createLimits(clock, enabled);
    t.same(Object.keys(limits).sort(), Object.keys(LIMIT_POLICIES).sort());
    for (const [name, limiter] of Object.entries(limits)) {
      const { burst } = LIMIT_POLICIES[name as keyof typeof LIMIT_POLICIES];
      for (let i = 0; i < burst; i++) limiter.take('k', name);
      if (enabled) t.equal(refusal(() => limiter.take('k', name)).status, 429, `${name} refuses after ${burst}`);
      else t.doesNotThrow(() => limiter.take('k', name), `${name} is off`);
    }
  }
});

t.test('every default policy has a positive burst and refill period', async (t) => {
  for (const [name, p] of Object.entries(LIMIT_POLICIES)) {
    t.ok(Number.isInteger(p.burst) && p.burst >= 1, `${name} burst ${p.burst}`);
    t.ok(p.refillMs > 0, `${name} refill ${p.refillMs} ms`);
  }
  t.equal(LIMIT_POLICIES.loginFailuresPerAccount.burst, 5, 'failed logins per account: 5 then 429 (issue 9)');
});
