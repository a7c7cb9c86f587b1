import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '@redis/client';
import t from 'tap';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { type ServerProcess, killed, startServerProcess } from './helpers/process';
import { startServer } from './helpers/server';
import { type LiveSocket, openSocket, refusedUpgrade } from './helpers/ws';

/**
 * A core, two gateways and Redis on 127.0.0.1, each a real process (docs/scaling.md), and the
 * failures a cluster meets: a gateway killed, Redis restarted, the core stopped and restarted,
 * a user signed out or suspended. Redis is Debian's redis-server, started here (CI installs it).
 */
const REDIS = '/usr/bin/redis-server';
const SKIP =
  fs.existsSync(REDIS) || process.env.REQUIRE_REDIS === '1' ? false : `${REDIS} is not installed (apt-get install redis-server); the cluster test needs it`;
const PASSWORD = 'correct horse';
/** How long a gateway's read of the bus waits for an entry (src/parts/cluster/bus.ts). */
const BUS_BLOCK_MS = 5_000;

/** A free port on 127.0.0.1 (for the processes that must come back on the same one). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Redis with nothing on disk: a restart loses whatever it held. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const deadline = Date.now() + 10_000;
  while (!/Ready to accept connections/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`redis-server did not start:\n${out}`);
    await sleep(20);
  }
  return child;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, up to `ms`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(25);
  }
}

async function member(core: string, owner: Client, serverId: string, name = uniqueName('m'), remember = false): Promise<Client> {
  const client = await signUp(core, name);
  if (remember) {
    await must(client.post('/api/logout'), 204);
    await must(client.post('/api/login', { username: name, password: PASSWORD, remember: true }), 200);
  }
  const invite = await must(owner.post(`/api/servers/${serverId}/invites`, {}), 201);
  await must(client.post(`/api/invites/${invite.body.token}/accept`), 200);
  return client;
}

t.test('a core, two gateways and Redis', { skip: SKIP, timeout: 180_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-cluster-'));
  const processes = new Set<ChildProcess>();
  t.teardown(async () => {
    for (const child of processes) if (child.exitCode === null && child.signalCode === null) await killed(child);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const redisPort = await freePort();
  let redis = await startRedis(redisPort);
  processes.add(redis);
  const BUS_URL = `redis://127.0.0.1:${redisPort}`;
  const corePort = await freePort();
  const startCore = async () => {
    const started = await startServerProcess(path.join(dir, 'core'), { ROLE: 'core', BUS_URL, PORT: String(corePort), ADMIN_USERS: 'admin' });
    processes.add(started.child);
    return started;
  };
  let core: ServerProcess = await startCore();
  const startGateway = async () => {
    const started = await startServerProcess(path.join(dir, 'gateway'), { ROLE: 'gateway', BUS_URL, CORE_URL: core.url });
    processes.add(started.child);
    return started;
  };
  let g1 = await startGateway();
  const g2 = await startGateway();

  const base = core.url;
  const owner = await signUp(base, uniqueName('owner'));
  const server = await must(owner.post('/api/servers', { name: 'Cluster' }), 201);
  const serverId: string = server.body.id;
  const channels = await must(owner.get(`/api/servers/${serverId}/channels`), 200);
  const channelId: string = channels.body[0].id;
  const messagesPath = `/api/servers/${serverId}/channels/${channelId}/messages`;
  const post = async (content: string) => (await must(owner.post(messagesPath, { content }), 201)).body.id as string;
  /** Message ids a user stream delivers, in order, from now on. */
  const collect = (socket: LiveSocket) => {
    const ids: string[] = [];
    socket.ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString());
      if (frame.event === 'message') ids.push(frame.message.id);
    });
    return ids;
  };

  await t.test('a message reaches the streams and room sockets on both gateways; typing goes through the bus', async (t) => {
    const alice = await member(base, owner, serverId);
    const bob = await member(base, owner, serverId);
    const aliceStream = await openSocket(g1.url, '/api/ws', { client: alice });
    const bobStream = await openSocket(g2.url, '/api/ws', { client: bob });
    const bobRoom = await openSocket(g2.url, `/api/channels/${channelId}/ws`, { client: bob });
    const ready = await aliceStream.event('ready');
    t.equal(ready.user.user_id, alice.userId, 'the gateway passes on the ready the core built');
    t.ok(
      ready.servers.some((s: { id: string }) => s.id === serverId),
      'with the server',
    );
    await bobStream.event('ready');
    const id = await post('hello both gateways');
    t.equal((await aliceStream.event('message')).message.id, id, 'a stream on gateway 1 gets it');
    t.equal((await bobStream.event('message')).message.id, id, 'a stream on gateway 2 gets it');
    t.equal((await bobRoom.next()).id, id, 'a room socket on gateway 2 gets the record');
    await must(bob.post(`/api/servers/${serverId}/channels/${channelId}/typing`), 204);
    const typing = await aliceStream.event('typing');
    t.equal(typing.user_id, bob.userId, 'typing reaches the other gateway');
    t.equal((await refusedUpgrade(g1.url, '/api/ws')).status, 401, 'a gateway refuses a socket without a session as the core would (401)');
    t.equal((await refusedUpgrade(g1.url, '/api/ws', { client: alice, origin: 'https://evil.example' })).status, 403, 'and a cross-site one (403)');
    t.equal((await refusedUpgrade(g1.url, `/api/channels/${crypto.randomUUID()}/ws`, { client: alice })).status, 404, 'and a room that is not there (404)');
    for (const socket of [aliceStream, bobStream, bobRoom]) socket.close();
  });

  await t.test("the core's cluster routes: the gateway key or 403; bad input 400, nothing registered", async (t) => {
    const bus = createClient({ url: BUS_URL });
    await bus.connect();
    const key = (await bus.get('chat:gateway-key')) ?? '';
    await bus.close();
    const call = (path: string, body: unknown, headers: Record<string, string> = { 'x-gateway-key': key }) =>
      fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const gateway = crypto.randomUUID();
    for (const headers of [{}, { 'x-gateway-key': 'guess' }, { 'x-gateway-key': `${key}x` }] as Record<string, string>[]) {
      const res = await call('/api/cluster/alive', { gateway, sockets: [], up_to: 0 }, headers);
      t.equal(res.status, 403, 'no key or a wrong one: 403');
      t.equal(res.headers.get('x-core-epoch'), null, 'and no epoch');
      t.match(await res.text(), /gateway key refused/);
    }
    const reported = await call('/api/cluster/alive', { gateway, sockets: [], up_to: 0 });
    t.equal(reported.status, 200, 'the key from Redis: 200');
    t.match(await reported.json(), { unknown: [] });
    for (const body of [
      { gateway: 'x', sockets: [], up_to: 0 },
      { gateway, sockets: [0], up_to: 0 },
      { gateway, sockets: 'all', up_to: 0 },
      { gateway, sockets: [1.5], up_to: 0 },
      { gateway, sockets: [] },
      { gateway, sockets: [], up_to: -1 },
    ]) {
      const res = await call('/api/cluster/alive', body);
      t.equal(res.status, 400, `a bad report: 400 (${JSON.stringify(body)})`);
    }
    for (const body of [
      { gateway, socket: 1, url: '/api/ws', headers: [] },
      { gateway, socket: -1, url: '/api/ws', headers: {} },
      { gateway, socket: 1, url: '', headers: {} },
      { gateway, socket: 1, url: '/api/ws', headers: { cookie: 7 } },
    ]) {
      const res = await call('/api/cluster/sockets', body);
      t.equal(res.status, 400, `a bad opening: 400 (${JSON.stringify(body)})`);
    }
    const refused = await call('/api/cluster/sockets', { gateway, socket: 1, url: '/api/ws', headers: {} });
    t.equal(refused.status, 401, "no session: the upgrade's own refusal");
    t.ok(refused.headers.get('x-core-epoch'), 'with the epoch, so the gateway tells it from a key refusal');
    const after = await call('/api/cluster/alive', { gateway, sockets: [1], up_to: 1 });
    t.same(((await after.json()) as { unknown: number[] }).unknown, [1], 'nothing was registered');

    // A socket opened after a report was made may reach the core first: the report does not forget it.
    const someone = await signUp(base, uniqueName('racer'));
    const opened = await call('/api/cluster/sockets', { gateway, socket: 5, url: '/api/ws', headers: { cookie: someone.cookie! } });
    t.equal(opened.status, 200, 'opened: the ready frame');
    t.equal(JSON.parse(await opened.text()).event, 'ready');
    const unknownAfter = async (sockets: number[], upTo: number) =>
      ((await (await call('/api/cluster/alive', { gateway, sockets, up_to: upTo })).json()) as { unknown: number[] }).unknown;
    t.same(await unknownAfter([], 4), [], 'a report made before socket 5 had its id');
    t.same(await unknownAfter([5], 5), [], 'leaves it known');
    t.same(await unknownAfter([], 5), [], 'a report made after it, without it');
    t.same(await unknownAfter([5], 5), [5], 'forgets it');
  });

  await t.test('kill -9 a gateway: its clients reconnect to the other, miss nothing, see nothing twice', async (t) => {
    const carol = await member(base, owner, serverId);
    const stream = await openSocket(g1.url, '/api/ws', { client: carol });
    await stream.event('ready');
    const seen = collect(stream);
    const sent = [await post('one'), await post('two'), await post('three')];
    await eventually('carol has the first three', () => seen.length === 3);
    await killed(g1.child);
    const closed = await stream.closed();
    t.equal(closed.code, 1006, 'the socket dropped with the gateway');
    sent.push(await post('four (while carol is away)'), await post('five (while carol is away)'));
    // The documented catch-up: open the new stream first, buffer, fetch after= the last seen, apply.
    const again = await openSocket(g2.url, '/api/ws', { client: carol });
    const ready = await again.event('ready');
    const buffered = collect(again);
    const entry = ready.servers.find((s: { id: string }) => s.id === serverId).channels.find((c: { id: string }) => c.id === channelId);
    t.equal(entry.last_message_id, sent[4], 'ready says what the channel holds now');
    const page = await must(carol.get(`${messagesPath}?after=${seen[seen.length - 1]}&limit=100`), 200);
    seen.push(...page.body.map((m: { id: string }) => m.id));
    sent.push(await post('six (live again)'));
    await eventually('the live message arrives on gateway 2', () => buffered.includes(sent[5]));
    for (const id of buffered) if (!seen.includes(id)) seen.push(id);
    t.same(seen, sent, 'every message once, in order');
    again.close();
    g1 = await startGateway();
  });

  await t.test('restart Redis: nothing lost, delivery resumes', async (t) => {
    const dan = await member(base, owner, serverId);
    const one = await openSocket(g1.url, '/api/ws', { client: dan });
    const two = await openSocket(g2.url, '/api/ws', { client: dan });
    await one.event('ready');
    await two.event('ready');
    const seenOne = collect(one);
    const seenTwo = collect(two);
    const sent = [await post('before the restart')];
    await eventually('both have it', () => seenOne.length === 1 && seenTwo.length === 1);
    await killed(redis);
    sent.push(await post('while Redis is down (1)'), await post('while Redis is down (2)'));
    await sleep(500);
    redis = await startRedis(redisPort);
    processes.add(redis);
    sent.push(await post('after the restart'));
    await eventually('both streams have every message', () => seenOne.length === 4 && seenTwo.length === 4, 15_000);
    t.same(seenOne, sent, 'gateway 1: every message once, in order');
    t.same(seenTwo, sent, 'gateway 2: every message once, in order');
    const opened = await openSocket(g1.url, '/api/ws', { client: dan });
    t.equal((await opened.event('ready')).event, 'ready', 'new sockets open again');
    for (const socket of [one, two, opened]) socket.close();
  });

  await t.test('the bus loses entries it acknowledged: the gateways see the gap, their sockets reconnect (1012) and catch up', async (t) => {
    const hana = await member(base, owner, serverId);
    const stream = await openSocket(g1.url, '/api/ws', { client: hana });
    await stream.event('ready');
    const seen = collect(stream);
    const sent = [await post('before the loss')];
    await eventually('hana has it', () => seen.length === 1);
    // Both gateways stopped, an entry appended for each, then Redis "forgets" it, as a bus that
    // acknowledged before writing to disk does when it restarts.
    // (Their blocking reads end unanswered first: an entry is handed to a waiting reader at once.)
    for (const gateway of [g1, g2]) gateway.child.kill('SIGSTOP');
    await sleep(BUS_BLOCK_MS + 500);
    sent.push(await post('lost by the bus'));
    await sleep(300);
    const bus = createClient({ url: BUS_URL });
    await bus.connect();
    for (const key of await bus.keys('chat:gateway:*')) await bus.del(key);
    await bus.close();
    for (const gateway of [g1, g2]) gateway.child.kill('SIGCONT');
    sent.push(await post('after the loss'));
    t.equal((await stream.closed()).code, 1012, 'the gateway closes the socket that may have missed events (1012)');
    const again = await openSocket(g2.url, '/api/ws', { client: hana });
    await again.event('ready');
    const page = await must(hana.get(`${messagesPath}?after=${seen[0]}&limit=100`), 200);
    const caughtUp = [seen[0], ...page.body.map((m: { id: string }) => m.id)];
    t.same(caughtUp, sent, 'the catch-up from the database has what the bus lost');
    again.close();
  });

  await t.test('a signed-out or suspended user is cut off on every gateway within a second', async (t) => {
    const erin = await member(base, owner, serverId);
    const sockets = [await openSocket(g1.url, '/api/ws', { client: erin }), await openSocket(g2.url, '/api/ws', { client: erin })];
    const room = await openSocket(g2.url, `/api/channels/${channelId}/ws`, { client: erin });
    for (const socket of sockets) await socket.event('ready');
    let started = Date.now();
    await must(erin.post('/api/logout'), 204);
    for (const socket of [...sockets, room]) t.equal((await socket.closed(1_000)).code, 4001, 'signed out: closed with 4001');
    t.ok(Date.now() - started <= 1_000, `within a second (${Date.now() - started} ms)`);

    const admin = await signUp(base, 'admin');
    const frank = await member(base, owner, serverId);
    const frankSockets = [await openSocket(g1.url, '/api/ws', { client: frank }), await openSocket(g2.url, '/api/ws', { client: frank })];
    for (const socket of frankSockets) await socket.event('ready');
    started = Date.now();
    await must(admin.put(`/api/admin/users/${frank.userId}/standing`, { standing: 4 }), 200);
    for (const socket of frankSockets) {
      t.equal((await socket.event('standing', 1_000)).account_standing, 4, 'told of the suspension');
      t.equal((await socket.closed(1_000)).code, 4003, 'suspended: closed with 4003');
    }
    t.ok(Date.now() - started <= 1_000, `within a second (${Date.now() - started} ms)`);
  });

  await t.test(
    'the core stopped: the gateways hold their sockets; restarted: sessions end (4001), and a remembered client comes back and misses nothing',
    async (t) => {
      const gina = await member(base, owner, serverId, uniqueName('gina'), true);
      t.ok(gina.device, 'gina is remembered on this device');
      const stream = await openSocket(g1.url, '/api/ws', { client: gina });
      await stream.event('ready');
      const seen = collect(stream);
      const sent = [await post('before the pause')];
      await eventually('gina has it', () => seen.length === 1);

      // Stopped (not restarted): the sockets are held, and go on when the core does.
      core.child.kill('SIGSTOP');
      await sleep(3_000);
      core.child.kill('SIGCONT');
      sent.push(await post('after the pause'));
      await eventually('the held stream goes on', () => seen.length === 2);

      // Restarted: its sessions lived in its memory (as for one process, docs/api.md "Close codes").
      await killed(core.child);
      await sleep(1_500);
      t.equal(stream.ws.readyState, stream.ws.OPEN, 'the gateway holds the socket while the core is down');
      core = await startCore();
      t.equal((await stream.closed(10_000)).code, 4001, 'once the core answers again, the stream hears its session ended (4001)');
      await must(gina.post('/api/session/resume'), 200);
      const ownerAgain = new Client(base);
      await must(ownerAgain.post('/api/login', { username: owner.username, password: PASSWORD }), 200);
      const again = await openSocket(g2.url, '/api/ws', { client: gina });
      await again.event('ready');
      const live = collect(again);
      const page = await must(gina.get(`${messagesPath}?after=${seen[seen.length - 1]}&limit=100`), 200);
      seen.push(...page.body.map((m: { id: string }) => m.id));
      sent.push((await must(ownerAgain.post(messagesPath, { content: 'after the restart' }), 201)).body.id);
      await eventually('the live message arrives', () => live.length === 1);
      for (const id of live) if (!seen.includes(id)) seen.push(id);
      t.same(seen, sent, 'every message once, in order');
      again.close();
    },
  );
});

t.test('a server with no gateways (ROLE=all) answers 404 to the cluster routes', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  for (const route of ['/api/cluster/sockets', '/api/cluster/alive']) {
    const res = await fetch(`${server.url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    t.equal(res.status, 404, route);
    t.match(await res.text(), /no gateways here/);
  }
});
