import t from 'tap';
import { MAX_SESSIONS_PER_USER, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, SessionStore } from '../../src/parts/accounts/sessions';
import type { Session } from '../../src/core/types';
import { DAY } from '../../src/core/clock';
import { FakeClock } from '../helpers/server';

const store = () => {
  const clock = new FakeClock();
  const ended: Session[] = [];
  const sessions = new SessionStore(clock, (session) => ended.push(session));
  return { clock, sessions, ended };
};

t.test('the documented lifetimes', async (t) => {
  t.equal(SESSION_IDLE_MS, 7 * DAY);
  t.equal(SESSION_ABSOLUTE_MS, 30 * DAY);
  t.equal(MAX_SESSIONS_PER_USER, 20);
});

t.test('a session is found by its fresh random token', async (t) => {
  const { sessions } = store();
  const a = sessions.create('u1');
  const b = sessions.create('u1');
  t.match(a.token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  t.not(a.token, b.token);
  t.equal(sessions.get(a.token), a);
  t.equal(sessions.get(undefined), undefined);
  t.equal(sessions.get(''), undefined);
  t.equal(sessions.get('unknown'), undefined);
});

t.test('a session idle for longer than 7 days ends, and onEnd hears of it', async (t) => {
  const { clock, sessions, ended } = store();
  const session = sessions.create('u1');
  clock.advance(SESSION_IDLE_MS);
  t.equal(sessions.get(session.token), session, 'exactly 7 days idle is still alive, and touched');
  clock.advance(SESSION_IDLE_MS + 1);
  t.equal(sessions.get(session.token), undefined);
  t.same(ended, [session]);
  t.equal(sessions.size, 0);
});

t.test('use keeps a session alive, but never past 30 days', async (t) => {
  const { clock, sessions, ended } = store();
  const session = sessions.create('u1');
  for (let day = 1; day <= 30; day++) {
    clock.advance(DAY);
    t.equal(sessions.get(session.token), session, `day ${day}`);
  }
  clock.advance(1);
  t.equal(sessions.get(session.token), undefined, 'day 30 plus a moment');
  t.equal(ended.length, 1);
});

t.test('a user keeps at most 20 sessions; the oldest ends first', async (t) => {
  const { sessions, ended } = store();
  const created = Array.from({ length: MAX_SESSIONS_PER_USER + 2 }, () => sessions.create('u1'));
  const other = sessions.create('u2');
  t.equal(sessions.size, MAX_SESSIONS_PER_USER + 1);
  t.same(ended, created.slice(0, 2));
  t.equal(sessions.get(created[0].token), undefined);
  t.equal(sessions.get(created[2].token), created[2]);
  t.equal(sessions.get(other.token), other, 'other users are untouched');
});

t.test('end and endAllForUser end sessions once each', async (t) => {
  const { sessions, ended } = store();
  const a = sessions.create('u1');
  const b = sessions.create('u1');
  const c = sessions.create('u2');
  sessions.end(a.token);
  sessions.end(a.token);
  t.same(ended, [a]);
  sessions.endAllForUser('u1');
  sessions.endAllForUser('nobody');
  t.same(ended, [a, b]);
  t.equal(sessions.get(c.token), c);
});

t.test('sweep ends every expired session without being asked for them', async (t) => {
  const { clock, sessions, ended } = store();
  const old = sessions.create('u1');
  clock.advance(6 * DAY);
  const recent = sessions.create('u2');
  clock.advance(DAY + 1);
  sessions.sweep();
  t.same(ended, [old]);
  t.equal(sessions.size, 1);
  t.equal(sessions.get(recent.token), recent);
});
