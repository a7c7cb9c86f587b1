import http from 'node:http';
import t from 'tap';
import WebSocket from 'ws';
import type { Jsep } from '../src/parts/voice/janus-api';
import { type Client, signUp } from './helpers/client';
import { must } from './helpers/community';
import { startServer } from './helpers/server';
import { type LiveSocket, openSocket, refusedUpgrade } from './helpers/ws';
import { Caller, eventually } from './helpers/voice/caller';
import { turnAvailable, voiceSkipReason } from './helpers/voice/janus';
import { startJanusWithPeers } from './helpers/voice/peers';

/**
 * Voice channels end to end (issue 48): the real chat server as Janus's only client, wrtc
 * participants (test/helpers/voice/peer-host.ts) that send a tone each and decode what they
 * hear, all signaling through our voice socket (GET /api/voice/ws): join with an offer, the
 * answer, trickled candidates, the multistream subscription's offers and answers. Janus runs in
 * a network namespace of its own (test/helpers/voice/janus.ts says why).
 */
const SKIP = voiceSkipReason();

t.test('without JANUS_URL, voice channels exist and voice says it is not set up (503)', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const serverId = (await must(owner.post('/api/servers', { name: 'no voice here' }), 201)).body.id;
  const lounge = await must(owner.post(`/api/servers/${serverId}/channels`, { name: 'lounge', type: 'voice' }), 201);
  t.equal(lounge.body.type, 'voice', 'a voice channel is made');
  const refused = await refusedUpgrade(server.url, '/api/voice/ws', { client: owner });
  t.equal(refused.status, 503);
  t.equal(refused.body.trim(), 'voice is not set up on this server');
  const patch = await owner.request('PATCH', `/api/servers/${serverId}/members/${owner.userId}/voice`, { mute: true });
  t.equal(patch.status, 503);
  t.equal(patch.text.trim(), 'voice is not set up on this server');
  // A malformed body is refused as such first (the fuzzer's finding: it was 503).
  for (const body of [{ deaf: 'yes' }, { channel_id: 5 }, {}]) {
    const bad = await owner.request('PATCH', `/api/servers/${serverId}/members/${owner.userId}/voice`, body);
    t.equal(bad.status, 400, JSON.stringify(body));
  }
  const health = await owner.get('/healthz');
  t.same(health.body, { ok: true }, '/healthz says nothing of voice');
  const stream = await openSocket(server.url, '/api/ws', { client: owner });
  t.same((await stream.event('ready')).voice_states, [], 'ready carries voice_states, empty');
  stream.close();
});

t.test('a voice handshake that never completes gives its place in the session back', async (t) => {
  // Janus need not answer: opening a voice socket asks nothing of it.
  const server = await startServer({
    env: { JANUS_URL: 'ws://127.0.0.1:9', JANUS_ADMIN_URL: 'ws://127.0.0.1:9', JANUS_ADMIN_SECRET: 'x', JANUS_ROOM_KEY: 'x' },
  });
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const { port } = new URL(server.url);
  // A malformed key: ws answers 400 itself and never hands the socket over.
  const malformed = () =>
    new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port,
        path: '/api/voice/ws',
        headers: { cookie: owner.cookie, connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'not a key' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
  for (let i = 0; i < 12; i++) t.equal(await malformed(), 400, `malformed handshake ${i + 1}: 400`);
  const voice = await openSocket(server.url, '/api/voice/ws', { client: owner });
  t.teardown(() => voice.close());
  t.match(await voice.event('ice_servers'), { event: 'ice_servers' }, 'the session still opens a voice socket');
});

t.test('voice channels on Janus, through our signaling', { skip: SKIP, timeout: 300_000 }, async (t) => {
  const { janus, host } = await startJanusWithPeers((fn) => t.teardown(fn));
  // coturn beside Janus (when installed): the server hands out its credentials.
  const turnSecret = 'turn-secret-of-the-test';
  const turnUrls = turnAvailable() ? await janus.startTurn(turnSecret) : null;
  const server = await startServer({
    env: {
      JANUS_URL: janus.url,
      JANUS_ADMIN_URL: janus.adminUrl,
      JANUS_ADMIN_SECRET: janus.adminSecret,
      JANUS_ROOM_KEY: janus.roomKey,
      METRICS: 'on',
      METRICS_HOST: '*',
      ...(turnUrls ? { TURN_URLS: turnUrls, TURN_SECRET: turnSecret } : {}),
    },
  });
  t.teardown(server.close);
  const owner = await signUp(server.url);
  await eventually('Janus is reachable', async () => (await owner.get('/healthz')).body.voice?.janus === 'up');

  const serverId: string = (await must(owner.post('/api/servers', { name: 'voice town' }), 201)).body.id;
  const base = `/api/servers/${serverId}`;
  const invite: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const [a, b, c, d, e] = await Promise.all(Array.from({ length: 5 }, () => signUp(server.url)));
  for (const member of [a, b, c, d, e]) await must(member.post(`/api/invites/${invite}/accept`), 200);
  const lounge: string = (await must(owner.post(`${base}/channels`, { name: 'lounge', type: 'voice' }), 201)).body.id;
  const stage: string = (await must(owner.post(`${base}/channels`, { name: 'stage', type: 'voice' }), 201)).body.id;
  const text: string = (await must(owner.post(`${base}/channels`, { name: 'chatter' }), 201)).body.id;
  // Watching: C's user stream (a member who sees the channels).
  const watch: LiveSocket = await openSocket(server.url, '/api/ws', { client: c });
  t.teardown(() => watch.close());
  await watch.event('ready');
  const stateOf = (userId: string, match: (e: any) => boolean = () => true) =>
    watch.until((f) => f.event === 'voice_state' && f.user_id === userId && match(f), 15_000);

  const callers: Caller[] = [];
  const caller = (client: Client, name: string, frequency: number) => {
    const made = new Caller((problem) => t.fail(problem), server.url, host, client, name, frequency);
    callers.push(made);
    return made.open();
  };
  t.teardown(async () => {
    for (const one of callers) one.close();
  });

  const alice = await caller(a, 'alice', 440);
  const bob = await caller(b, 'bob', 660);

  await t.test('two participants join through our socket and each decodes the other’s tone', async (t) => {
    const joinedA = await alice.join(lounge);
    t.equal(joinedA.event, 'joined', `alice joined: ${JSON.stringify(joinedA)}`);
    t.match(joinedA, { server_id: serverId, channel_id: lounge, can_speak: true, can_video: true, voice_state: { user_id: a.userId, mute: false } });
    t.match(await stateOf(a.userId), { channel_id: lounge, self_mute: false, mute: false, deaf: false, video: false, stream: false });
    const joinedB = await bob.join(lounge);
    t.equal(joinedB.event, 'joined');
    t.match(await stateOf(b.userId), { channel_id: lounge });
    const heardByA = await alice.hears(bob);
    const heardByB = await bob.hears(alice);
    t.ok(Math.abs(heardByA - 660) <= 5, `alice decodes bob's 660 Hz tone (${heardByA} Hz)`);
    t.ok(Math.abs(heardByB - 440) <= 5, `bob decodes alice's 440 Hz tone (${heardByB} Hz)`);
    t.equal(bob.frames.filter((f) => f.event === 'subscription').length >= 1, true, 'bob got a subscription offer over our socket');
    // Speaking comes from the media path: Janus reads the audio level each packet carries.
    t.match(await stateOf(a.userId, (s) => s.speaking), { speaking: true }, 'alice is speaking, as Janus hears her');

    // ready agrees with who is connected.
    const fresh = await openSocket(server.url, '/api/ws', { client: c });
    const ready = await fresh.event('ready');
    fresh.close();
    t.same(ready.voice_states.map((s: any) => s.user_id).sort(), [a.userId, b.userId].sort(), 'ready carries the two in voice');
    t.ok(
      ready.voice_states.every((s: any) => s.channel_id === lounge && s.server_id === serverId),
      'in the lounge',
    );
    const health = await owner.get('/healthz');
    t.same(health.body.voice, { janus: 'up', rooms: 1, participants: 2 }, '/healthz counts the room and the people');
    const metrics = await owner.get('/metrics');
    t.match(metrics.text, /chat_voice_participants 2/);
    t.match(metrics.text, /chat_voice_janus_up 1/);
  });

  await t.test(
    'through TURN: relay-only participants get media both ways with the credentials the server handed out',
    { skip: turnUrls ? false : 'coturn is not installed' },
    async (t) => {
      const [f, g] = await Promise.all([signUp(server.url), signUp(server.url)]);
      for (const member of [f, g]) await must(member.post(`/api/invites/${invite}/accept`), 200);
      const frank = await caller(f, 'frank', 520);
      const gina = await caller(g, 'gina', 610);
      const given = (await frank.frame((x) => x.event === 'ice_servers')).ice_servers;
      t.match(given, [{ urls: [turnUrls], username: new RegExp(`^\\d+:${f.userId}$`), credential: String }], "a TURN credential of frank's own");
      t.equal((await frank.join(stage, { relayOnly: true })).event, 'joined');
      t.equal((await gina.join(stage, { relayOnly: true })).event, 'joined');
      t.ok(Math.abs((await frank.hears(gina)) - 610) <= 5, 'frank hears gina through the relay');
      t.ok(Math.abs((await gina.hears(frank)) - 520) <= 5, 'gina hears frank through the relay');
      // The selected pair's stats can be missing for a moment (a consent check under way): wait for one.
      const chosen = await eventually('frank has a selected candidate pair', async () => (await host.state(frank.peer!)).pubCandidate ?? undefined);
      t.equal(chosen, 'relay', 'frank’s media goes through coturn');
      await frank.leave();
      await gina.leave();
      await stateOf(g.userId, (s) => s.channel_id === null);
    },
  );

  await t.test('a server mute silences one at the SFU; the others keep flowing', async (t) => {
    await must(owner.request('PATCH', `${base}/members/${b.userId}/voice`, { mute: true }), 204);
    t.match(await stateOf(b.userId, (s) => s.mute), { channel_id: lounge, mute: true });
    await alice.hearsNothingOf(bob);
    t.pass('alice hears nothing of bob');
    t.ok(Math.abs((await bob.hears(alice)) - 440) <= 5, 'bob still hears alice');
    const audit = await owner.get(`${base}/audit-log`);
    t.match(audit.body[0], { action: 'member_voice_update', target_id: b.userId, changes: { mute: true, deaf: false } }, 'audited');
    // A plain member may not.
    const refused = await c.request('PATCH', `${base}/members/${a.userId}/voice`, { mute: true });
    t.equal(refused.status, 403, refused.text);
    await must(owner.request('PATCH', `${base}/members/${b.userId}/voice`, { mute: false }), 204);
    t.ok(Math.abs((await alice.hears(bob)) - 660) <= 5, 'unmuted, alice hears bob again');
    // A server deafen: nothing reaches bob (his subscription's audio stops at the SFU).
    await must(owner.request('PATCH', `${base}/members/${b.userId}/voice`, { deaf: true }), 204);
    t.match(await stateOf(b.userId, (s) => s.deaf), { deaf: true });
    await bob.hearsNothingOf(alice);
    t.pass('deafened, bob hears nothing of alice');
    await must(owner.request('PATCH', `${base}/members/${b.userId}/voice`, { deaf: false }), 204);
    t.ok(Math.abs((await bob.hears(alice)) - 440) <= 5, 'undeafened, bob hears alice again');
  });

  await t.test('who cannot see a voice channel cannot probe who is in it through moderation', async (t) => {
    const [x] = await Promise.all([signUp(server.url)]);
    await must(x.post(`/api/invites/${invite}/accept`), 200);
    await must(owner.put(`${base}/channels/${lounge}/overwrites/${x.userId}`, { deny: ['view_channel'] }), 200);
    // Alice is in the hidden lounge, d in no call: the same answer for both, whatever is asked.
    for (const body of [{ mute: true }, { deaf: true }, { channel_id: null }, { channel_id: stage }]) {
      const inHidden = await x.request('PATCH', `${base}/members/${a.userId}/voice`, body);
      const notInVoice = await x.request('PATCH', `${base}/members/${d.userId}/voice`, body);
      t.same([inHidden.status, inHidden.text], [notInVoice.status, notInVoice.text], `${JSON.stringify(body)}: ${inHidden.status} ${inHidden.text}`);
    }
    await must(owner.delete(`${base}/channels/${lounge}/overwrites/${x.userId}`), 204);
  });

  await t.test('who comes to see a voice channel is told everyone in it, even when someone changes state first', async (t) => {
    const y = await signUp(server.url);
    await must(y.post(`/api/invites/${invite}/accept`), 200);
    await must(owner.put(`${base}/channels/${lounge}/overwrites/${y.userId}`, { deny: ['view_channel'] }), 200);
    const stream = await openSocket(server.url, '/api/ws', { client: y });
    t.teardown(() => stream.close());
    t.same((await stream.event('ready')).voice_states, [], 'nothing of the hidden lounge in ready');
    // The lounge shown, and at once (before the quarter-second recheck) alice mutes herself.
    await must(owner.delete(`${base}/channels/${lounge}/overwrites/${y.userId}`), 204);
    alice.send({ op: 'state', self_mute: true, self_deaf: false });
    const told = new Map<string, any>();
    await stream.until((f) => {
      if (f.event === 'voice_state') told.set(f.user_id, f);
      return told.get(a.userId)?.self_mute === true && told.has(b.userId);
    }, 15_000);
    t.match(told.get(b.userId), { channel_id: lounge }, 'bob, who changed nothing, is told too');
    alice.send({ op: 'state', self_mute: false, self_deaf: false });
    await stateOf(a.userId, (s) => !s.self_mute);
  });

  await t.test('user_limit holds', async (t) => {
    await must(owner.request('PATCH', `${base}/channels/${lounge}`, { name: 'lounge', user_limit: 2 }), 200);
    const carol = await caller(c, 'carol', 550);
    const refused = await carol.join(lounge);
    t.match(refused, { event: 'error', op: 'join', status: 403 });
    t.match(refused.message, /full/);
    await must(owner.request('PATCH', `${base}/channels/${lounge}`, { name: 'lounge', user_limit: 0 }), 200);
    const bad = await carol.join(text);
    t.match(bad, { event: 'error', status: 400, message: 'this is not a voice channel' });
    carol.send({ op: 'nonsense' });
    t.match(await carol.frame((f) => f.event === 'error' && f.op === null), { status: 400 }, 'a frame that is no op is refused');
    carol.close();
  });

  await t.test('one connection per user: the newest wins', async (t) => {
    const again = await caller(a, 'alice2', 440);
    const joined = await again.join(lounge);
    t.equal(joined.event, 'joined');
    t.match(await alice.frame((f) => f.event === 'disconnected'), { reason: 'elsewhere' }, 'the other tab is told');
    await alice.leave();
    callers.splice(callers.indexOf(alice), 1, again);
    t.ok(Math.abs((await bob.hears(again)) - 440) <= 5, 'bob hears the new connection');
  });

  await t.test('a kick ends the connection at once and a rejoin is refused', async (t) => {
    await must(owner.delete(`${base}/members/${b.userId}`), 204);
    t.match(await bob.frame((f) => f.event === 'disconnected'), { reason: 'removed' });
    t.match(await stateOf(b.userId, (s) => s.channel_id === null), { channel_id: null }, 'those who saw the channel hear that bob left');
    const rejoin = await bob.join(lounge);
    t.match(rejoin, { event: 'error', status: 404 }, 'no longer a member: refused');
  });

  await t.test('a member waiting in membership screening does not join a call', async (t) => {
    const pending = (on: boolean) =>
      server.app.db.prepare('UPDATE members SET pending = ? WHERE server_id = ? AND user_id = ?').run(on ? 1 : 0, serverId, c.userId);
    pending(true);
    const waiting = await caller(c, 'carol-pending', 550);
    const refused = await waiting.join(lounge);
    t.match(refused, { event: 'error', status: 403 });
    t.match(refused.message, /accept the server's rules first/);
    waiting.close();
    pending(false);
  });

  await t.test('a timeout ends the connection and a rejoin is refused', async (t) => {
    const carol = await caller(c, 'carol2', 550);
    t.equal((await carol.join(lounge)).event, 'joined');
    await must(owner.put(`${base}/members/${c.userId}/timeout`, { seconds: 600 }), 200);
    t.match(await carol.frame((f) => f.event === 'disconnected'), { reason: 'timed_out' });
    const rejoin = await carol.join(lounge);
    t.match(rejoin, { event: 'error', status: 403 });
    t.match(rejoin.message, /timed out/);
  });

  await t.test('a ban ends the connection', async (t) => {
    const dave = await caller(d, 'dave', 500);
    t.equal((await dave.join(stage)).event, 'joined');
    await must(owner.put(`${base}/bans/${d.userId}`, {}), 204);
    t.match(await dave.frame((f) => f.event === 'disconnected'), { reason: 'removed' });
    t.match(await dave.join(stage), { event: 'error', status: 404 });
  });

  await t.test('without speak one joins muted; without video a video m-line is refused; move and disconnect', async (t) => {
    await must(owner.put(`${base}/channels/${stage}/overwrites/${e.userId}`, { kind: 'member', allow: [], deny: ['speak', 'video'] }), 200);
    const erin = await caller(e, 'erin', 700);
    const camera: Jsep = {
      type: 'offer',
      sdp: 'v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=mid:0\r\na=sendrecv\r\na=rtpmap:111 opus/48000/2\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:v\r\na=sendonly\r\na=rtpmap:96 VP8/90000\r\n',
    };
    const refused = await erin.join(stage, { offer: camera });
    t.match(refused, { event: 'error', status: 403, message: 'you do not have permission to use video in this voice channel' });
    const joined = await erin.join(stage);
    t.match(joined, { event: 'joined', can_speak: false, can_video: false, voice_state: { mute: true } }, 'joined muted');
    t.match(await stateOf(e.userId, (s) => s.channel_id === stage), { mute: true });
    // Moved to the lounge: told so, joins it with a new offer.
    const before = erin.frames.length;
    await must(owner.request('PATCH', `${base}/members/${e.userId}/voice`, { channel_id: lounge }), 204);
    t.match(await erin.frame((f) => f.event === 'moved', before), { channel_id: lounge });
    t.equal((await erin.join(lounge)).event, 'joined', 'rejoined where moved');
    t.match(await stateOf(e.userId, (s) => s.channel_id === lounge), { channel_id: lounge, mute: false }, 'speak is allowed in the lounge');
    const audit = await owner.get(`${base}/audit-log`);
    t.match(audit.body[0], { action: 'member_move', target_id: e.userId, changes: { from: stage, channel_id: lounge } });
    await must(owner.request('PATCH', `${base}/members/${e.userId}/voice`, { channel_id: null }), 204);
    t.match(await erin.frame((f) => f.event === 'disconnected'), { reason: 'moderator' });
    t.match(await stateOf(e.userId, (s) => s.channel_id === null), { channel_id: null });
  });

  await t.test('losing connect ends the connection and a rejoin is refused', async (t) => {
    const alice2 = callers.find((one) => one.name === 'alice2')!;
    await must(owner.put(`${base}/channels/${lounge}/overwrites/${a.userId}`, { kind: 'member', allow: [], deny: ['connect'] }), 200);
    t.match(await alice2.frame((f) => f.event === 'disconnected'), { reason: 'no_permission' });
    const rejoin = await alice2.join(lounge);
    t.match(rejoin, { event: 'error', status: 403, message: 'you do not have permission to connect to this voice channel' });
  });

  await t.test('a suspension ends the call and closes the voice socket', async (t) => {
    const [s] = await Promise.all([signUp(server.url)]);
    await must(s.post(`/api/invites/${invite}/accept`), 200);
    const sam = await caller(s, 'sam', 480);
    t.equal((await sam.join(stage)).event, 'joined');
    server.app.accountChanges.setStanding(s.userId, 4);
    t.match(await sam.frame((f) => f.event === 'disconnected'), { reason: 'removed', message: 'Your account is suspended.' });
    await eventually('the voice socket closes', async () => sam.ws.readyState === WebSocket.CLOSED);
    t.match(await stateOf(s.userId, (x) => x.channel_id === null), { channel_id: null }, 'the others hear that sam left');
  });

  await t.test('deleting a voice channel ends its calls, and who saw it hears that they left', async (t) => {
    const attic: string = (await must(owner.post(`${base}/channels`, { name: 'attic', type: 'voice' }), 201)).body.id;
    const z = await signUp(server.url);
    await must(z.post(`/api/invites/${invite}/accept`), 200);
    const dora = await caller(z, 'dora', 500);
    t.equal((await dora.join(attic)).event, 'joined');
    await stateOf(z.userId, (s) => s.channel_id === attic);
    await must(owner.delete(`${base}/channels/${attic}`), 204);
    t.match(await dora.frame((f) => f.event === 'disconnected'), { reason: 'channel_deleted' });
    t.match(await stateOf(z.userId, (s) => s.channel_id === null), { channel_id: null }, 'the watcher is told dora left');
  });

  await t.test('signing out ends the call; ready then agrees that nobody is in voice', async (t) => {
    await must(owner.delete(`${base}/channels/${lounge}/overwrites/${a.userId}`), 204);
    const alice3 = await caller(a, 'alice3', 440);
    t.equal((await alice3.join(lounge)).event, 'joined');
    await must(a.post('/api/logout'), 204);
    await eventually('the voice socket closes', async () => alice3.ws.readyState === WebSocket.CLOSED);
    t.match(await stateOf(a.userId, (s) => s.channel_id === null), { channel_id: null });
    const fresh = await openSocket(server.url, '/api/ws', { client: owner });
    t.same((await fresh.event('ready')).voice_states, [], 'nobody is in voice');
    fresh.close();
    await eventually('the rooms are destroyed', async () => (await owner.get('/healthz')).body.voice.rooms === 0);
  });
});
