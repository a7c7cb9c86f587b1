import crypto from 'node:crypto';
import t from 'tap';
import { FakeClock, startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';
import { befriend, ref } from './helpers/community';

t.test('friend lifecycle', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const [alice, bob, carol] = await Promise.all([signUp(server.url), signUp(server.url), signUp(server.url)]);

  t.test('a request is created pending, with both sides named', async (t) => {
    const res = await alice.post('/api/friends/requests', { username: bob.username });
    t.equal(res.status, 201);
    t.match(res.body, {
      id: /^[0-9a-f-]{36}$/,
      from: { user_id: alice.userId, username: alice.username },
      to: { user_id: bob.userId, username: bob.username },
      status: 'pending',
      created_at: '2026-01-01T00:00:00.000Z',
    });
  });

  t.test('the addressee sees it as incoming and the sender as outgoing', async (t) => {
    const incoming = await bob.get('/api/friends/requests');
    t.equal(incoming.status, 200);
    t.equal(incoming.body.length, 1);
    t.match(incoming.body[0], { from: { user_id: alice.userId, username: alice.username }, status: 'pending' });
    t.same((await alice.get('/api/friends/requests')).body, [], 'the sender has nothing incoming');
    const outgoing = await alice.get('/api/friends/requests?direction=outgoing');
    t.same(outgoing.body, incoming.body, 'the same record from the other side');
    t.same((await bob.get('/api/friends/requests?direction=outgoing')).body, []);
    t.equal((await bob.get('/api/friends/requests?direction=sideways')).status, 400);
  });

  t.test('a second request between the two is 409 in either direction', async (t) => {
    const again = await alice.post('/api/friends/requests', { username: bob.username });
    t.equal(again.status, 409);
    t.match(again.text, /already sent/);
    const reverse = await bob.post('/api/friends/requests', { username: alice.username.toUpperCase() });
    t.equal(reverse.status, 409);
    t.match(reverse.text, /accept theirs instead/, 'tells the other side to accept the pending one');
    t.equal((await bob.get('/api/friends/requests')).body.length, 1, 'still one request');
  });

  t.test('only the addressee can accept or reject; others get 404', async (t) => {
    const [request] = (await bob.get('/api/friends/requests')).body;
    for (const [who, client] of [
      ['the sender', alice],
      ['a third user', carol],
    ] as const) {
      for (const action of ['accept', 'reject']) {
        const res = await client.post(`/api/friends/requests/${request.id}/${action}`);
        t.equal(res.status, 404, `${action} by ${who}`);
      }
    }
    t.equal((await bob.get('/api/friends/requests')).body.length, 1, 'the request is untouched');
  });

  t.test('accepting makes them friends on both sides', async (t) => {
    clock.advance(60_000);
    const [request] = (await bob.get('/api/friends/requests')).body;
    const res = await bob.post(`/api/friends/requests/${request.id}/accept`);
    t.equal(res.status, 200);
    t.same(res.body, { ...ref(alice), since: '2026-01-01T00:01:00.000Z' });
    t.same((await alice.get('/api/friends')).body, [{ ...ref(bob), since: '2026-01-01T00:01:00.000Z', presence: 'offline' }]);
    t.same((await bob.get('/api/friends')).body, [{ ...res.body, presence: 'offline' }], 'with their presence (no socket open: offline)');
    t.same((await bob.get('/api/friends/requests')).body, [], 'no longer pending');
    t.same((await alice.get('/api/friends/requests?direction=outgoing')).body, []);
    t.equal((await bob.post(`/api/friends/requests/${request.id}/accept`)).status, 404, 'accepting twice');
    t.equal((await bob.post(`/api/friends/requests/${request.id}/reject`)).status, 404, 'rejecting an accepted one');
  });

  t.test('friends cannot send each other a request', async (t) => {
    for (const [from, to] of [
      [alice, bob],
      [bob, alice],
    ]) {
      const res = await from.post('/api/friends/requests', { username: to.username });
      t.equal(res.status, 409);
      t.match(res.text, /already friends/);
    }
  });

  t.test('a rejected request disappears and can be sent again', async (t) => {
    const first = await carol.post('/api/friends/requests', { username: alice.username });
    t.equal(first.status, 201);
    const rejected = await alice.post(`/api/friends/requests/${first.body.id}/reject`);
    t.equal(rejected.status, 204);
    t.equal(rejected.text, '');
    t.same((await alice.get('/api/friends/requests')).body, []);
    t.same((await carol.get('/api/friends/requests?direction=outgoing')).body, []);
    t.same((await carol.get('/api/friends')).body, []);
    const again = await carol.post('/api/friends/requests', { username: alice.username });
    t.equal(again.status, 201, 'the sender may ask again');
    t.not(again.body.id, first.body.id);
    const reverse = await alice.post(`/api/friends/requests/${again.body.id}/reject`);
    t.equal(reverse.status, 204);
    t.equal((await alice.post('/api/friends/requests', { username: carol.username })).status, 201, 'so may the other side');
  });

  t.test('removing a friend ends it for both, and they may start over', async (t) => {
    t.equal((await alice.delete(`/api/friends/${bob.userId}`)).status, 204);
    t.same((await alice.get('/api/friends')).body, []);
    t.same((await bob.get('/api/friends')).body, []);
    t.equal((await bob.delete(`/api/friends/${alice.userId}`)).status, 404, 'already removed');
    const again = await bob.post('/api/friends/requests', { username: alice.username });
    t.equal(again.status, 201);
  });

  t.test('removing someone who is not a friend is 404, a pending request included', async (t) => {
    t.equal((await carol.delete(`/api/friends/${alice.userId}`)).status, 404, 'only a pending request between them');
    t.equal((await carol.delete(`/api/friends/${crypto.randomUUID()}`)).status, 404, 'unknown user');
    t.equal((await carol.delete('/api/friends/not-a-uuid')).status, 400);
  });
});

t.test('friend request validation', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const alice = await signUp(server.url);
  const cases: [string, unknown, number, RegExp][] = [
    ['an unknown username', { username: uniqueName('ghost') }, 404, /no user named/],
    ['oneself', { username: alice.username }, 400, /yourself/],
    ['oneself in another letter case', { username: alice.username.toUpperCase() }, 400, /yourself/],
    ['a missing username', {}, 400, /username/],
    ['a malformed username', { username: 'a b' }, 400, /username/],
    ['a username that is not a string', { username: 42 }, 400, /username/],
  ];
  for (const [what, body, status, reason] of cases) {
    const res = await alice.post('/api/friends/requests', body);
    t.equal(res.status, status, what);
    t.match(res.text, reason, what);
  }
  t.equal((await alice.post('/api/friends/requests', 'username=x', { 'content-type': 'application/x-www-form-urlencoded' })).status, 415);
  t.same((await alice.get('/api/friends/requests?direction=outgoing')).body, [], 'nothing was created');
});

t.test('accept and reject answer 404 for an unknown request and 400 for a malformed id', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const alice = await signUp(server.url);
  for (const action of ['accept', 'reject']) {
    t.equal((await alice.post(`/api/friends/requests/${crypto.randomUUID()}/${action}`)).status, 404, `${action} unknown`);
    const bad = await alice.post(`/api/friends/requests/12345/${action}`);
    t.equal(bad.status, 400, `${action} non-UUID`);
    t.match(bad.text, /request_id must be a UUID/);
  }
});

t.test('friends are listed by username', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const tag = uniqueName('x');
  const [me, zed, amy, Bea] = await Promise.all([uniqueName('me'), `zed_${tag}`, `amy_${tag}`, `Bea_${tag}`].map((name) => signUp(server.url, name)));
  await befriend(me, zed);
  await befriend(amy, me);
  await befriend(me, Bea);
  const res = await me.get('/api/friends');
  t.same(
    res.body.map((f: { username: string }) => f.username),
    [amy.username, Bea.username, zed.username],
    'case-insensitive order, whoever asked',
  );
});

t.test('friend endpoints need a session', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const client = new Client(server.url);
  const id = crypto.randomUUID();
  for (const [method, path] of [
    ['GET', '/api/friends'],
    ['GET', '/api/friends/requests'],
    ['POST', '/api/friends/requests'],
    ['POST', `/api/friends/requests/${id}/accept`],
    ['POST', `/api/friends/requests/${id}/reject`],
    ['DELETE', `/api/friends/${id}`],
  ]) {
    t.equal((await client.request(method, path)).status, 401, `${method} ${path}`);
  }
});

t.test('friend requests are rate limited per sender, failed attempts included', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const alice = await signUp(server.url);
  for (let i = 0; i < 20; i++) {
    const res = await alice.post('/api/friends/requests', { username: uniqueName('ghost') });
    t.equal(res.status, 404, `attempt ${i + 1} is answered`);
  }
  const res = await alice.post('/api/friends/requests', { username: uniqueName('ghost') });
  t.equal(res.status, 429);
  t.ok(Number(res.headers.get('retry-after')) > 0, 'says when to retry');
});
