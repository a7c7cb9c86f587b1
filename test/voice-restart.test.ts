import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Client, signUp } from './helpers/client';
import { must } from './helpers/community';
import { createJanusClient } from '../src/parts/voice/janus';
import { createVideoRoom } from '../src/parts/voice/videoroom';
import { startServer, type TestServer } from './helpers/server';
import { openSocket } from './helpers/ws';
import { Caller, eventually } from './helpers/voice/caller';
import { voiceSkipReason } from './helpers/voice/janus';
import { startJanusWithPeers } from './helpers/voice/peers';

/**
 * Issue 48, "state is rebuilt after a restart of either side": two wrtc participants in a call
 * through our signaling; Janus crashes and comes back (same configuration, same namespace). The
 * server sees it go down and up (/healthz, /metrics), ends both calls with `disconnected`
 * `media_restart`, the participants join again through our socket, the room is made again on
 * the new Janus and each decodes the other's tone again. Then the chat server restarts on the
 * same data directory: `ready` carries no voice state of the old process, and the room the old
 * process left in Janus is gone.
 */
const SKIP = voiceSkipReason();

t.test('a restart of Janus, then of the chat server', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const { janus, host } = await startJanusWithPeers((fn) => t.teardown(fn));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-voice-restart-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    JANUS_URL: janus.url,
    JANUS_ADMIN_URL: janus.adminUrl,
    JANUS_ADMIN_SECRET: janus.adminSecret,
    JANUS_ROOM_KEY: janus.roomKey,
    METRICS: 'on',
    METRICS_HOST: '*',
  };
  // The test's own look at Janus's rooms (a second client, as an operator's would be).
  const observer = createJanusClient({ url: janus.url, adminUrl: janus.adminUrl, adminSecret: janus.adminSecret, log: () => {}, retryMaxMs: 1_000 });
  t.teardown(() => observer.close());
  const roomsInJanus = async () => {
    await observer.ready(15_000);
    return (await createVideoRoom(observer, janus.roomKey).listRooms()).map((r) => r.room);
  };
  let server: TestServer = await startServer({ dataDir, env });
  t.teardown(() => server.close());
  const owner = await signUp(server.url);
  const voiceOf = async (client: Client) => (await client.get('/healthz')).body.voice;
  await eventually('Janus is reachable', async () => (await voiceOf(owner))?.janus === 'up');

  const serverId: string = (await must(owner.post('/api/servers', { name: 'restarts' }), 201)).body.id;
  const base = `/api/servers/${serverId}`;
  const invite: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const [a, b] = await Promise.all([signUp(server.url), signUp(server.url)]);
  for (const member of [a, b]) await must(member.post(`/api/invites/${invite}/accept`), 200);
  const lounge: string = (await must(owner.post(`${base}/channels`, { name: 'lounge', type: 'voice' }), 201)).body.id;
  const watch = await openSocket(server.url, '/api/ws', { client: owner });
  t.teardown(() => watch.close());
  await watch.event('ready');

  const callers: Caller[] = [];
  t.teardown(() => {
    for (const one of callers) one.close();
  });
  const caller = (client: Client, name: string, frequency: number) => {
    const made = new Caller((problem) => t.fail(problem), server.url, host, client, name, frequency);
    callers.push(made);
    return made.open();
  };
  const alice = await caller(a, 'alice', 440);
  const bob = await caller(b, 'bob', 660);
  const call = async (when: string) => {
    t.equal((await alice.join(lounge)).event, 'joined', `${when}: alice joined`);
    t.equal((await bob.join(lounge)).event, 'joined', `${when}: bob joined`);
    t.ok(Math.abs((await alice.hears(bob)) - 660) <= 5, `${when}: alice decodes bob's tone`);
    t.ok(Math.abs((await bob.hears(alice)) - 440) <= 5, `${when}: bob decodes alice's tone`);
    t.same(await voiceOf(owner), { janus: 'up', rooms: 1, participants: 2 }, `${when}: /healthz counts the room and the two`);
  };
  await call('before');

  // Janus crashes: both calls end, and the server says Janus is down.
  const [fromA, fromB] = [alice.frames.length, bob.frames.length];
  await janus.crash();
  for (const one of [alice, bob]) {
    const said = await one.frame((f) => f.event === 'disconnected', one === alice ? fromA : fromB);
    t.match(said, { reason: 'media_restart', message: /restarted/ }, `${one.name} is told the call dropped`);
  }
  for (const userId of [a.userId, b.userId]) {
    await watch.until((f) => f.event === 'voice_state' && f.user_id === userId && f.channel_id === null, 15_000);
  }
  t.pass('those who see the channel hear that both left');
  t.same(await voiceOf(owner), { janus: 'down', rooms: 0, participants: 0 }, '/healthz: Janus down, nobody in voice');
  t.match((await owner.get('/metrics')).text, /chat_voice_janus_up 0/);
  const refused = await alice.join(lounge);
  t.match(refused, { event: 'error', op: 'join', status: 503 }, 'a join while Janus is away is refused (503)');

  // Janus is back: the server reconnects by itself; the two join again, the room is made again.
  await janus.start();
  await eventually('the server reconnects to Janus', async () => (await voiceOf(owner))?.janus === 'up');
  t.match((await owner.get('/metrics')).text, /chat_voice_janus_up 1/);
  await call('after the Janus restart');
  t.same(await roomsInJanus(), [`voice-${lounge}`], 'the room is made again on the new Janus');
  t.ok(/chat_voice_participants 2/.test((await owner.get('/metrics')).text), 'metrics count the two again');

  // The chat server restarts on the same data directory, the two still in the call.
  watch.close();
  for (const one of callers) one.close();
  await server.close();
  server = await startServer({ dataDir, env });
  const again = new Client(server.url);
  await must(again.post('/api/login', { username: owner.username, password: 'correct horse' }), 200);
  await eventually('the new process reaches Janus', async () => (await voiceOf(again))?.janus === 'up');
  const fresh = await openSocket(server.url, '/api/ws', { client: again });
  t.same((await fresh.event('ready')).voice_states, [], 'ready carries no voice state of the old process');
  fresh.close();
  t.same(await voiceOf(again), { janus: 'up', rooms: 0, participants: 0 }, '/healthz: no room, nobody');
  t.same(await eventually('no room is left in Janus', async () => ((await roomsInJanus()).length === 0 ? [] : null)), [], 'no room is left in Janus');
});
