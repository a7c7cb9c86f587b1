import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { PUSH_FAILURES_TO_REST } from '../src/parts/push/origin-queues';
import { befriend, community, crowd, must } from './helpers/community';
import { Client, signUp } from './helpers/client';
import { startPushService } from './helpers/push-service';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

/**
 * Web Push (issue 33): a local push service on 127.0.0.1 receives what the server sends, checks
 * the VAPID JWT and decrypts the payload with the subscription's keys (RFC 8291). Pushes go for
 * what the settings say notifies, to a user with no visible stream; a 410 ends the subscription,
 * and so does signing out.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('web push', async (t) => {
  const service = await startPushService({ tls: false });
  t.teardown(() => service.close());
  const server = await startServer({ env: { PUSH_INSECURE_HOSTS: '127.0.0.1' } });
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member: bob } = c.clients;
  const channels = (await must(owner.get(`${c.base}/channels`), 200)).body;
  const general: string = channels[0].id;
  const room = async (name: string) => (await must(owner.post(`${c.base}/channels`, { name }), 201)).body.id as string;
  const post = (channelId: string, content: string) => must(owner.post(`${c.base}/channels/${channelId}/messages`, { content }), 201);
  const key = (await must(bob.get('/api/push/key'), 200)).body.key as string;
  const subscription = service.subscribe('bob', key);
  const subscribed = await must(bob.post('/api/account/push-subscriptions', subscription), 201);
  const subscriptionId: string = subscribed.body.id;
  /** Nothing more arrives within `ms` (the server decides after the post, in the next turns). */
  const nothingNew = async (before: number, ms = 600) => {
    await sleep(ms);
    return service.received.length === before;
  };

  await t.test('the key, and subscriptions refused', async (t) => {
    t.match(key, /^[A-Za-z0-9_-]{87}$/, 'the VAPID public key: 65 bytes, base64url');
    t.match(subscribed.body, { endpoint: subscription.endpoint, show_text: false });
    t.same(
      (await must(bob.get('/api/account/push-subscriptions'), 200)).body.map((s: { id: string }) => s.id),
      [subscriptionId],
      'listed',
    );
    const bad = [
      { ...subscription, endpoint: 'http://push.example.com/x' },
      { ...subscription, endpoint: 'https://10.0.0.1/push/x' },
      { ...subscription, endpoint: 'https://169.254.169.254/latest' },
      { ...subscription, endpoint: 'https://[::1]/push/x' },
      { ...subscription, endpoint: 'https://[::127.0.0.1]/push/x' },
      { ...subscription, endpoint: 'https://0xa.1/push/x' },
      { ...subscription, endpoint: 'https://localhost/push/x' },
      { ...subscription, endpoint: 'ftp://push.example.com/x' },
      { ...subscription, endpoint: 'not a url' },
      { ...subscription, keys: { p256dh: 'short', auth: subscription.keys.auth } },
      { ...subscription, keys: { p256dh: subscription.keys.p256dh, auth: 'AAAA' } },
      { endpoint: subscription.endpoint },
    ];
    for (const body of bad) await must(bob.post('/api/account/push-subscriptions', body), 400);
    t.equal((await must(bob.get('/api/account/push-subscriptions'), 200)).body.length, 1, 'none of them kept');
    await must(c.clients.outsider.delete(`/api/account/push-subscriptions/${subscriptionId}`), 404);
  });

  await t.test('a mention, and a DM: pushed, signed and encrypted; room and sender only', async (t) => {
    const before = service.received.length;
    const posted = (await post(general, `@${bob.username} can you look?`)).body;
    // (The first push starts the delivery worker: on a busy machine that takes seconds.)
    const [push] = (await service.waitFor(before + 1, 15_000)).slice(before);
    t.notOk(push.error, `the push service accepted it (${push.error ?? 'VAPID and encryption checked'})`);
    t.equal(push.status, 201);
    t.match(push.vapid, { aud: new URL(service.url).origin, publicKey: key });
    t.match(push.payload, { room: /^#general/, sender: owner.username, count: 1, tag: general, url: `/channels/${c.serverId}/${general}/${posted.id}` });
    t.notOk('text' in (push.payload as object), 'no text unless the device chose it');
    t.ok(push.headers.topic, 'a Topic, so the push service replaces an undelivered one');
    await befriend(owner, bob);
    const dm = (await must(owner.post('/api/conversations/dm', { usernames: [bob.username] }), 201)).body.id;
    await must(owner.post(`/api/conversations/${dm}/messages`, { content: 'psst' }), 201);
    const [direct] = (await service.waitFor(before + 2)).slice(before + 1);
    t.match(direct.payload, { room: 'Direct message', sender: owner.username, tag: dm });
  });

  await t.test('a muted channel, @everyone suppressed, level nothing: no push', async (t) => {
    const quiet = await room('quiet');
    await must(bob.put(`/api/account/notifications/${quiet}`, { level: 'all', muted_until: '9999-12-31T23:59:59Z' }), 200);
    let before = service.received.length;
    await post(quiet, `@${bob.username} in a muted channel`);
    t.ok(await nothingNew(before), 'muted: nothing');
    await must(bob.put(`/api/account/notifications/${c.serverId}`, { level: 'mentions', suppress_everyone: true }), 200);
    const other = await room('announcements');
    before = service.received.length;
    await post(other, '@everyone hear ye');
    t.ok(await nothingNew(before), '@everyone suppressed and level mentions: nothing');
    await post(other, 'just chatting');
    t.ok(await nothingNew(before), 'not a mention at level mentions: nothing');
    await must(bob.put(`/api/account/notifications/${c.serverId}`, { level: 'nothing' }), 200);
    await post(other, `@${bob.username} still nothing`);
    t.ok(await nothingNew(before), 'level nothing: nothing');
    await must(bob.delete(`/api/account/notifications/${c.serverId}`), 204);
  });

  await t.test('a mention of a role bob holds is pushed at level mentions; suppressed role mentions are not (issue 47 #3)', async (t) => {
    const desk = await room('desk');
    await must(owner.post(`${c.base}/roles`, { name: 'helpers', mentionable: true }), 201);
    await must(owner.put(`${c.base}/members/${bob.userId}/role`, { role: 'helpers' }), 200);
    await must(bob.put(`/api/account/notifications/${c.serverId}`, { level: 'mentions' }), 200);
    let before = service.received.length;
    const posted = (await post(desk, '@helpers can someone look?')).body;
    const [push] = (await service.waitFor(before + 1)).slice(before);
    t.match(push.payload, { room: /^#desk/, url: `/channels/${c.serverId}/${desk}/${posted.id}` }, 'pushed, as a mention by name is');
    await must(bob.put(`/api/account/notifications/${c.serverId}`, { level: 'mentions', suppress_roles: true }), 200);
    before = service.received.length;
    await post(desk, '@helpers once more');
    t.ok(await nothingNew(before), 'role mentions suppressed: nothing');
    await must(bob.delete(`/api/account/notifications/${c.serverId}`), 204);
  });

  await t.test('a user with a visible stream gets none; hidden, they do', async (t) => {
    const lobby = await room('lobby');
    const stream = await openSocket(server.url, '/api/ws', { client: bob });
    await stream.event('ready');
    let before = service.received.length;
    await post(lobby, `@${bob.username} you are here`);
    t.ok(await nothingNew(before), 'a stream open (visible until it says otherwise): nothing');
    stream.ws.send(JSON.stringify({ op: 'visibility', visible: false }));
    await sleep(100);
    before = service.received.length;
    await post(lobby, `@${bob.username} the tab is hidden`);
    await service.waitFor(before + 1);
    t.pass('hidden: pushed');
    stream.close();
  });

  await t.test('a burst in one room is one push, then one more that counts the rest', async (t) => {
    const busy = await room('busy');
    const before = service.received.length;
    for (let i = 0; i < 5; i++) await post(busy, `@${bob.username} burst ${i}`);
    await service.waitFor(before + 2, 8_000);
    t.ok(await nothingNew(before + 2, 3_500), 'two pushes for five messages');
    const pushes = service.received.slice(before).map((p) => p.payload as { count: number });
    t.same(
      pushes.map((p) => p.count),
      [1, 4],
      'the second counts the four that came meanwhile',
    );
  });

  await t.test('the text only where the device chose it', async (t) => {
    await must(bob.request('PATCH', `/api/account/push-subscriptions/${subscriptionId}`, { show_text: true }), 200);
    const before = service.received.length;
    await post(await room('texts'), `@${bob.username} the secret is 42`);
    const [push] = (await service.waitFor(before + 1)).slice(before);
    t.match(push.payload, { text: `@${bob.username} the secret is 42` });
  });

  await t.test('a message of embeds only is named by its embed, never "0 attachment(s)"', async (t) => {
    const cards = await room('cards');
    const hook = (await must(owner.post(`${c.base}/channels/${cards}/webhooks`, { name: 'CI' }), 201)).body;
    const before = service.received.length;
    const res = await fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ embeds: [{ title: 'Build 42 passed', description: 'all green' }, { title: 'Deployed' }] }),
    });
    t.equal(res.status, 204);
    const [push] = (await service.waitFor(before + 1)).slice(before);
    t.match(push.payload, { text: 'Build 42 passed' }, 'its first card names it, as the in-page notification does');
  });

  await t.test('a 410 ends the subscription; signing out ends one too', async (t) => {
    service.answerWith(410);
    const before = service.received.length;
    await post(await room('gone'), `@${bob.username} are you there?`);
    await service.waitFor(before + 1);
    await sleep(200);
    t.same((await must(bob.get('/api/account/push-subscriptions'), 200)).body, [], 'gone: removed');
    service.answerWith(201);
    const carol = await signUp(server.url);
    await must(carol.post('/api/account/push-subscriptions', service.subscribe('carol', key)), 201);
    await must(carol.post('/api/logout'), 204);
    const countOf = (userId: string) =>
      (server.app.db.prepare('SELECT COUNT(*) AS n FROM push_subscriptions WHERE user_id = ?').get(userId) as { n: number }).n;
    t.equal(countOf(carol.userId), 0, 'signed out: removed');

    // A session ended from another one, and a password change, end the subscriptions made with them.
    const dave = await signUp(server.url);
    const daveElsewhere = new Client(server.url);
    await must(daveElsewhere.post('/api/login', { username: dave.username, password: 'correct horse' }), 200);
    await must(dave.post('/api/account/push-subscriptions', service.subscribe('dave', key)), 201);
    const sessions = (await must(dave.get('/api/account/sessions'), 200)).body as { id: string; current: boolean }[];
    await must(daveElsewhere.delete(`/api/account/sessions/${sessions.find((s) => s.current)!.id}`), 204);
    t.equal(countOf(dave.userId), 0, 'its session ended from another: removed');
    await must(daveElsewhere.post('/api/account/push-subscriptions', service.subscribe('dave-2', key)), 201);
    const daveThird = new Client(server.url);
    await must(daveThird.post('/api/login', { username: dave.username, password: 'correct horse' }), 200);
    await must(daveThird.put('/api/account/password', { current_password: 'correct horse', new_password: 'battery staple' }), 204);
    t.equal(countOf(dave.userId), 0, 'a password change elsewhere: removed');
  });
});

t.test("a restart ends the subscriptions of browsers that were not remembered; a remembered one's stays", async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-push-restart-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const service = await startPushService({ tls: false });
  t.teardown(() => service.close());
  const env = { PUSH_INSECURE_HOSTS: '127.0.0.1' };
  let server = await startServer({ dataDir, env });
  const plain = await signUp(server.url);
  const remembered = await signUp(server.url);
  await must(remembered.post('/api/login', { username: remembered.username, password: 'correct horse', remember: true }), 200);
  const key = (await must(plain.get('/api/push/key'), 200)).body.key as string;
  await must(plain.post('/api/account/push-subscriptions', service.subscribe('plain', key)), 201);
  await must(remembered.post('/api/account/push-subscriptions', service.subscribe('remembered', key)), 201);
  await server.close();
  server = await startServer({ dataDir, env });
  t.teardown(server.close);
  const owners = server.app.db.prepare('SELECT user_id FROM push_subscriptions').pluck().all();
  t.same(owners, [remembered.userId], "only the remembered browser's subscription is left");
  t.equal((await must(new Client(server.url).get('/api/push/key'), 200)).body.key, key, 'the same VAPID key after the restart');
});

t.test("a push service that never answers holds up no other service's pushes", async (t) => {
  const stuck = await startPushService({ tls: false });
  const prompt = await startPushService({ tls: false });
  t.teardown(() => Promise.all([stuck.close(), prompt.close()]));
  // Holds every push far past any deadline of the sender.
  stuck.answerWith({ status: 201, delayMs: 120_000 });
  const server = await startServer({ env: { PUSH_INSECURE_HOSTS: '127.0.0.1', RATE_LIMIT: 'off' } });
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 2);
  const [slow, fast] = members;
  const key = (await must(slow.get('/api/push/key'), 200)).body.key as string;
  // Ten devices on the stuck service: more pushes at once than the sender ever had slots for.
  for (let i = 0; i < 10; i++) await must(slow.post('/api/account/push-subscriptions', stuck.subscribe(`stuck${i}`, key)), 201);
  await must(fast.post('/api/account/push-subscriptions', prompt.subscribe('prompt', key)), 201);
  const post = (content: string) => must(owner.post(`/api/servers/${serverId}/channels/${general}/messages`, { content }), 201);

  await post(`@${slow.username} hello`);
  // (The first push starts the delivery worker: on a busy machine that takes seconds.)
  await stuck.waitFor(8, 15_000);
  await post(`@${fast.username} hello`);
  // The old sender shared 8 slots of 10 s: this push waited for the stuck ones' deadline.
  const [push] = await prompt.waitFor(1, 4_000);
  t.match(push, { name: 'prompt', status: 201 }, 'the other service got its push at once');
});

t.test('a push service that keeps failing is given a rest: its pushes are dropped, not sent', async (t) => {
  const RESTED = /push service http:\/\/127\.0\.0\.1:\d+ failed \d+ times in a row/;
  /** Resolves once `done()` holds (checked every 50 ms); fails the test after 10 s. */
  const until = async (done: () => boolean) => {
    for (let waited = 0; !done(); waited += 50) {
      if (waited > 10_000) throw new Error('the push service was never given a rest');
      await sleep(50);
    }
  };
  const failing = await startPushService({ tls: false });
  t.teardown(() => failing.close());
  failing.answerWith(503);
  const server = await startServer({ env: { PUSH_INSECURE_HOSTS: '127.0.0.1', RATE_LIMIT: 'off' } });
  t.teardown(server.close);
  const { owner, members, serverId } = await crowd(server, 1);
  const [bob] = members;
  const key = (await must(bob.get('/api/push/key'), 200)).body.key as string;
  await must(bob.post('/api/account/push-subscriptions', failing.subscribe('bob', key)), 201);
  // One push per room: each a request of its own.
  for (let i = 0; i < 6; i++) {
    const room = (await must(owner.post(`/api/servers/${serverId}/channels`, { name: `room${i}` }), 201)).body.id;
    await must(owner.post(`/api/servers/${serverId}/channels/${room}/messages`, { content: `@${bob.username} ${i}` }), 201);
    // (The first push starts the delivery worker: on a busy machine that takes seconds.)
    if (i < PUSH_FAILURES_TO_REST) await failing.waitFor(i + 1, 15_000);
    if (i === PUSH_FAILURES_TO_REST - 1) await until(() => server.logs.some((line) => RESTED.test(line)));
  }
  await sleep(1_000);
  t.equal(failing.received.length, PUSH_FAILURES_TO_REST, `${PUSH_FAILURES_TO_REST} failures in a row, then nothing more is sent`);
  t.same((await must(bob.get('/api/account/push-subscriptions'), 200)).body.length, 1, 'the subscription stays');
});
