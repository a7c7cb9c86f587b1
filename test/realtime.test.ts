import crypto from 'node:crypto';
import t from 'tap';
import { CLOSE } from '../src/parts/delivery/hub';
import { WS_MAX_PAYLOAD_BYTES } from '../src/parts/live/sockets';
import { Client, signUp } from './helpers/client';
import { befriend, crowd, type Crowd as Community, must } from './helpers/community';
import { startServer, type TestServer } from './helpers/server';
import { type LiveSocket, openSocket, refusedUpgrade } from './helpers/ws';

const channelWs = (channelId: string) => `/api/channels/${channelId}/ws`;
const messagesOf = (c: Community, channelId: string) => `/api/servers/${c.serverId}/channels/${channelId}/messages`;

async function post(client: Client, path: string, content: string) {
  const res = await client.post(path, { content });
  if (res.status !== 201) throw new Error(`post failed: ${res.status} ${res.text}`);
  return res.body;
}

t.test('message events on channel sockets', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [alice, bob] = c.members;
  const sockets: LiveSocket[] = [];
  const open = async (client: Client, channelId = c.general) => {
    const socket = await openSocket(server.url, channelWs(channelId), { client });
    sockets.push(socket);
    return socket;
  };
  t.teardown(() => sockets.forEach((s) => s.close()));

  const ownerTab1 = await open(c.owner);
  const ownerTab2 = await open(c.owner);
  const aliceWs = await open(alice);
  const bobWs = await open(bob);
  const everyone = [ownerTab1, ownerTab2, aliceWs, bobWs];

  t.test('a new message reaches every member socket, identical to the REST response', async (t) => {
    const message = await post(alice, messagesOf(c, c.general), 'hello everyone');
    for (const socket of everyone) t.same(await socket.next(), message);
    t.notOk('event' in message, 'a new message carries no event field');
  });

  t.test('a message in one channel does not reach the sockets of another channel', async (t) => {
    const randomWs = await open(bob, c.random);
    await post(alice, messagesOf(c, c.general), 'for general only');
    const later = await post(alice, messagesOf(c, c.random), 'for random');
    // Sockets deliver in order: had the general message leaked, it would arrive first.
    t.same(await randomWs.next(), later);
    for (const socket of everyone) t.equal((await socket.next()).content, 'for general only');
  });

  t.test('an edit arrives as the updated record with event "edited"', async (t) => {
    const message = await post(bob, messagesOf(c, c.general), 'draft');
    for (const socket of everyone) await socket.next();
    const edited = await bob.put(`${messagesOf(c, c.general)}/${message.id}`, { content: 'final' });
    t.equal(edited.status, 200);
    for (const socket of everyone) t.same(await socket.next(), { event: 'edited', ...edited.body });
  });

  t.test('a delete arrives as {event: "deleted", id, server_id, channel_id}', async (t) => {
    const message = await post(bob, messagesOf(c, c.general), 'oops');
    for (const socket of everyone) await socket.next();
    t.equal((await bob.delete(`${messagesOf(c, c.general)}/${message.id}`)).status, 204);
    const expected = { event: 'deleted', id: message.id, server_id: c.serverId, channel_id: c.general };
    for (const socket of everyone) t.same(await socket.next(), expected);
  });

  t.test('a failed write sends no event', async (t) => {
    const message = await post(bob, messagesOf(c, c.general), 'mine');
    for (const socket of everyone) await socket.next();
    t.equal((await alice.put(`${messagesOf(c, c.general)}/${message.id}`, { content: 'not yours' })).status, 403);
    const next = await post(bob, messagesOf(c, c.general), 'after the refused edit');
    for (const socket of everyone) t.same(await socket.next(), next);
  });

  t.test('reaction events carry reacted as seen by each recipient', async (t) => {
    const message = await post(c.owner, messagesOf(c, c.general), 'react to me');
    for (const socket of everyone) await socket.next();
    const reactions = `${messagesOf(c, c.general)}/${message.id}/reactions`;

    const byAlice = await alice.put(reactions, { emoji: '👍' });
    t.same(await aliceWs.next(), { event: 'reaction', ...byAlice.body }, 'the reactor sees the REST answer');
    t.same(byAlice.body.reactions, [{ emoji: '👍', count: 1, reacted: true }]);
    for (const socket of [ownerTab1, ownerTab2, bobWs]) {
      const event = await socket.next();
      t.equal(event.event, 'reaction');
      t.same(event.reactions, [{ emoji: '👍', count: 1, reacted: false }]);
    }

    await bob.put(reactions, { emoji: '🎉' });
    const expected = (mine: string[]) => [
      { emoji: '👍', count: 1, reacted: mine.includes('👍') },
      { emoji: '🎉', count: 1, reacted: mine.includes('🎉') },
    ];
    t.same((await aliceWs.next()).reactions, expected(['👍']));
    t.same((await bobWs.next()).reactions, expected(['🎉']));
    for (const socket of [ownerTab1, ownerTab2]) t.same((await socket.next()).reactions, expected([]));

    const removed = await alice.delete(reactions, { emoji: '👍' });
    t.same(removed.body.reactions, [{ emoji: '🎉', count: 1, reacted: false }]);
    t.same((await bobWs.next()).reactions, [{ emoji: '🎉', count: 1, reacted: true }]);
    for (const socket of [ownerTab1, ownerTab2, aliceWs]) {
      t.same((await socket.next()).reactions, [{ emoji: '🎉', count: 1, reacted: false }]);
    }
  });

  t.test('a message posted through the legacy endpoint reaches the first channel', async (t) => {
    const res = await alice.post(`/api/servers/${c.serverId}/messages`, { content: 'legacy hello' });
    t.equal(res.status, 201);
    t.equal(res.body.channel_id, c.general);
    for (const socket of everyone) t.same(await socket.next(), res.body);
  });
});

t.test('conversation sockets', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anna = await signUp(server.url);
  const ben = await signUp(server.url);
  const carl = await signUp(server.url);
  await befriend(anna, ben);
  await befriend(anna, carl);
  const dm = (await anna.post('/api/conversations/dm', { usernames: [ben.username] })).body;
  const other = (await anna.post('/api/conversations/dm', { usernames: [carl.username] })).body;
  const annaWs = await openSocket(server.url, `/api/conversations/${dm.id}/ws`, { client: anna });
  const benWs = await openSocket(server.url, `/api/conversations/${dm.id}/ws`, { client: ben });
  const carlWs = await openSocket(server.url, `/api/conversations/${other.id}/ws`, { client: carl });
  t.teardown(() => [annaWs, benWs, carlWs].forEach((s) => s.close()));
  const base = `/api/conversations/${dm.id}/messages`;

  t.test('a new message reaches both members as the REST response, and no other conversation', async (t) => {
    const message = await post(ben, base, 'hi anna');
    t.equal(message.conversation_id, dm.id);
    t.same(await annaWs.next(), message);
    t.same(await benWs.next(), message);
    const later = await post(carl, `/api/conversations/${other.id}/messages`, 'hi from carl');
    t.same(await carlWs.next(), later, 'the other conversation sees only its own message');
  });

  t.test('a reaction update is the conversation record with per-recipient reacted', async (t) => {
    const message = await post(anna, base, 'react here');
    await annaWs.next();
    await benWs.next();
    const res = await ben.put(`${base}/${message.id}/reactions`, { emoji: '❤️' });
    t.equal(res.status, 200);
    t.same(await benWs.next(), { event: 'reaction', ...res.body });
    const seenByAnna = await annaWs.next();
    t.equal(seenByAnna.conversation_id, dm.id);
    t.same(seenByAnna.reactions, [{ emoji: '❤️', count: 1, reacted: false }]);
  });

  t.test('edits and deletes reach conversation sockets too', async (t) => {
    const message = await post(anna, base, 'typo');
    await annaWs.next();
    await benWs.next();
    const edited = await anna.put(`${base}/${message.id}`, { content: 'fixed' });
    for (const socket of [annaWs, benWs]) t.same(await socket.next(), { event: 'edited', ...edited.body });
    t.equal((await anna.delete(`${base}/${message.id}`)).status, 204);
    for (const socket of [annaWs, benWs]) {
      t.same(await socket.next(), { event: 'deleted', id: message.id, conversation_id: dm.id });
    }
  });

  t.test('an outsider cannot open the socket of a conversation (404)', async (t) => {
    const refused = await refusedUpgrade(server.url, `/api/conversations/${dm.id}/ws`, { client: carl });
    t.equal(refused.status, 404);
  });
});

t.test('refused upgrades answer plain HTTP and open no socket', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const outsider = await signUp(server.url);
  const suspended = await signUp(server.url);
  const suspendedInvite = await c.owner.post(`/api/servers/${c.serverId}/invites`);
  await suspended.post(`/api/invites/${suspendedInvite.body.token}/accept`);
  server.app.db.prepare('UPDATE users SET standing = 4 WHERE id = ?').run(suspended.userId);
  const member = c.members[0];

  const cases: { name: string; path: string; client?: Client; origin?: string; status: number; reason: RegExp }[] = [
    { name: 'no session', path: channelWs(c.general), status: 401, reason: /sign in/ },
    { name: 'a non-member', path: channelWs(c.general), client: outsider, status: 404, reason: /channel not found/ },
    { name: 'an unknown channel', path: channelWs(crypto.randomUUID()), client: member, status: 404, reason: /channel not found/ },
    { name: 'an unknown conversation', path: `/api/conversations/${crypto.randomUUID()}/ws`, client: member, status: 404, reason: /conversation not found/ },
    { name: 'a foreign Origin', path: channelWs(c.general), client: member, origin: 'https://evil.example', status: 403, reason: /cross-site/ },
    { name: 'a suspended account', path: channelWs(c.general), client: suspended, status: 403, reason: /suspended/ },
    { name: 'an unknown path', path: '/api/servers/ws', client: member, status: 404, reason: /not found/ },
    { name: 'a channel id that is not a UUID', path: channelWs('general'), client: member, status: 400, reason: /channel_id must be a UUID/ },
  ];
  for (const { name, path, client, origin, status, reason } of cases) {
    t.test(`refuses ${name} with ${status}`, async (t) => {
      const refused = await refusedUpgrade(server.url, path, { client, origin });
      t.equal(refused.status, status);
      t.match(refused.contentType, /^text\/plain/);
      t.match(refused.body, reason);
    });
  }

  t.test('accepts the same member from this server’s own origin', async (t) => {
    const socket = await openSocket(server.url, channelWs(c.general), { client: member, origin: server.url });
    t.equal(server.app.hub.size, 1);
    socket.close();
    await socket.closed();
  });
});

t.test('sockets close when access ends', async (t) => {
  const server = await startServer({ env: { ADMIN_USERS: 'rtadmin' } });
  t.teardown(server.close);
  const admin = await signUp(server.url, 'rtadmin');
  const c = await crowd(server, 3);
  const [leaver, kicked, suspended] = c.members;

  t.test('logout closes the sockets of that session only, with 4001', async (t) => {
    const secondLogin = await signUp(server.url);
    const invite = await c.owner.post(`/api/servers/${c.serverId}/invites`);
    await secondLogin.post(`/api/invites/${invite.body.token}/accept`);
    const otherSession = new Client(server.url);
    t.equal((await otherSession.post('/api/login', { username: secondLogin.username, password: 'correct horse' })).status, 200);

    const ending = await openSocket(server.url, channelWs(c.general), { client: secondLogin });
    const staying = await openSocket(server.url, channelWs(c.general), { client: otherSession });
    t.teardown(() => staying.close());
    t.equal((await secondLogin.post('/api/logout')).status, 204);
    t.same(await ending.closed(), { code: CLOSE.sessionEnded.code, reason: 'session ended' });
    const message = await post(c.owner, messagesOf(c, c.general), 'still here?');
    t.same(await staying.next(), message, 'the other session still receives');
  });

  t.test('a member who leaves or is kicked has their sockets of that server closed with 4003', async (t) => {
    const leaving = await openSocket(server.url, channelWs(c.random), { client: leaver });
    const kickedWs = await openSocket(server.url, channelWs(c.general), { client: kicked });
    const elsewhere = await crowd(server, 0);
    const invite = await elsewhere.owner.post(`/api/servers/${elsewhere.serverId}/invites`);
    await kicked.post(`/api/invites/${invite.body.token}/accept`);
    const otherServerWs = await openSocket(server.url, channelWs(elsewhere.general), { client: kicked });
    t.teardown(() => otherServerWs.close());

    t.equal((await leaver.delete(`/api/servers/${c.serverId}/members/${leaver.userId}`)).status, 204);
    t.equal((await leaving.closed()).code, CLOSE.accessRemoved.code);
    t.equal((await c.owner.delete(`/api/servers/${c.serverId}/members/${kicked.userId}`)).status, 204);
    t.same(await kickedWs.closed(), { code: CLOSE.accessRemoved.code, reason: 'access removed' });

    const message = await post(elsewhere.owner, messagesOf(elsewhere, elsewhere.general), 'you are still welcome here');
    t.same(await otherServerWs.next(), message, 'sockets of other servers stay open');
    t.equal((await refusedUpgrade(server.url, channelWs(c.general), { client: kicked })).status, 404, 'and cannot reopen');
  });

  t.test('a suspended user has every socket closed with 4003', async (t) => {
    const first = await openSocket(server.url, channelWs(c.general), { client: suspended });
    const second = await openSocket(server.url, channelWs(c.random), { client: suspended });
    const res = await admin.put(`/api/admin/users/${suspended.userId}/standing`, { standing: 4 });
    t.equal(res.status, 200);
    t.equal((await first.closed()).code, CLOSE.accessRemoved.code);
    t.equal((await second.closed()).code, CLOSE.accessRemoved.code);
  });
});

t.test('keeping the server healthy', async (t) => {
  const server: TestServer = await startServer({ settings: { heartbeatMs: 200 } });
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const member = c.members[0];
  const healthy = await openSocket(server.url, channelWs(c.general), { client: c.owner });
  t.teardown(() => healthy.close());

  t.test('the heartbeat drops a client that stops answering pings, and only that one', async (t) => {
    const dead = await openSocket(server.url, channelWs(c.general), { client: member, autoPong: false });
    // Terminated without a closing handshake: the client sees an abnormal closure.
    t.equal((await dead.closed()).code, 1006);
    const message = await post(c.owner, messagesOf(c, c.general), 'after the heartbeat');
    t.same(await healthy.next(), message, 'a client that answers pings stays connected');
  });

  t.test('a client flooding frames is closed with 1008', async (t) => {
    const flooder = await openSocket(server.url, channelWs(c.general), { client: member });
    for (let i = 0; i < 60; i++) flooder.ws.send('garbage');
    t.same(await flooder.closed(), { code: CLOSE.policy.code, reason: 'too many frames' });
  });

  t.test('an oversize frame is closed with 1009', async (t) => {
    const big = await openSocket(server.url, channelWs(c.general), { client: member });
    big.ws.send('x'.repeat(WS_MAX_PAYLOAD_BYTES + 1));
    t.equal((await big.closed()).code, 1009);
  });

  t.test('shutting down closes every socket with 1001', async (t) => {
    const socket = await openSocket(server.url, channelWs(c.random), { client: member });
    await server.close();
    t.same(await socket.closed(), { code: CLOSE.goingAway.code, reason: 'server shutting down' });
    t.same(await healthy.closed(), { code: CLOSE.goingAway.code, reason: 'server shutting down' });
  });
});

t.test('a slow reader is closed with 4008 while other sockets keep receiving', async (t) => {
  // The default heartbeat here: a reader this slow also misses pings, and a short heartbeat would cut it first.
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const reader = await openSocket(server.url, channelWs(c.general), { client: c.owner });
  const slow = await openSocket(server.url, channelWs(c.general), { client: c.members[0] });
  t.teardown(() => reader.close());
  // Stop reading: what the server sends piles up in kernel buffers, then in its own.
  const raw = (slow.ws as unknown as { _socket: import('node:net').Socket })._socket;
  raw.pause();
  const container = { kind: 'channel' as const, id: c.general, serverId: c.serverId };
  const posted = (await must(c.owner.post(`/api/servers/${c.serverId}/channels/${c.general}/messages`, { content: 'hi' }), 201)).body;
  await reader.next();
  // 20 MiB in all, as messages of 256 KiB (larger than a client may post: the hub does not care):
  // more than loopback's kernel buffers plus the 1 MiB threshold.
  const content = 'x'.repeat(256 * 1024);
  for (let i = 0; i < 80; i++) {
    server.app.hub.message(container, {
      kind: 'created',
      seq: 1e9 + i,
      replySeq: null,
      message: { ...posted, id: crypto.randomUUID(), content: `${i}${content}` },
    });
    t.equal(parseInt((await reader.next()).content, 10), i);
  }
  raw.resume();
  t.same(await slow.closed(), { code: CLOSE.tooSlow.code, reason: 'too slow' });
});

t.test('a plain request to a socket path is 426 naming the upgrade, another method 405', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 0);
  for (const path of ['/api/ws', channelWs(c.general)]) {
    const plain = await c.owner.get(path);
    t.equal(plain.status, 426, `GET ${path} without an upgrade`);
    t.equal(plain.headers.get('upgrade'), 'websocket', 'Upgrade names the protocol (RFC 9110)');
    const other = await c.owner.post(path);
    t.equal(other.status, 405, `POST ${path}`);
    t.equal(other.headers.get('allow'), 'GET');
  }
});
