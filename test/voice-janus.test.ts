import { randomBytes } from 'node:crypto';
import t from 'tap';
import WebSocket from 'ws';
import { JANUS_PROTOCOL, JanusError, VIDEOROOM_ERRORS } from '../src/parts/voice/janus-api';
import { createJanusClient } from '../src/parts/voice/janus';
import { turnCredentials } from '../src/parts/voice/turn';
import { createVideoRoom } from '../src/parts/voice/videoroom';
import { turnAvailable, voiceSkipReason } from './helpers/voice/janus';
import { type Member, joinRoom } from './helpers/voice/members';
import { type PeerHost, startJanusWithPeers } from './helpers/voice/peers';

/**
 * Our Janus client against Debian's Janus (test/helpers/voice/janus.ts: its own network
 * namespace, a generated configuration with token_auth, an admin secret and a room key), with
 * wrtc participants that send tones and decode what they hear. No chat server yet: this holds
 * the foundation the voice channels will stand on (issue 48).
 */
const SKIP = voiceSkipReason();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(100);
  }
}

/** What `member` hears of `feed`: its level and the packets that came, over the last 300 ms. */
async function hearing(host: PeerHost, member: Member, feed: string) {
  const mid = member.midOf(feed);
  return mid === undefined ? undefined : (await host.levels(member.name))[mid];
}

/** Waits until `member` decodes `feed` as a tone within 5 Hz of `frequency`; the frequency heard. */
async function hears(host: PeerHost, member: Member, feed: string, frequency: number): Promise<number> {
  let heard: number | null | undefined;
  await eventually(`${member.name} hears ${feed} at ${frequency} Hz`, async () => {
    heard = (await hearing(host, member, feed))?.frequency;
    return heard != null && Math.abs(heard - frequency) <= 5;
  }).catch(async (err: Error) => {
    const levels = await host.levels(member.name).catch(() => null);
    const state = await host.state(member.name).catch(() => null);
    throw new Error(
      `${err.message}: heard ${heard}, mid ${member.midOf(feed)}, state ${JSON.stringify(state)}, peer events ${JSON.stringify(member.peerEvents)}, levels ${JSON.stringify(levels)}, errors ${member.errors.map((e) => e.message).join('; ')}, subscriber events ${JSON.stringify(member.subEvents)}, room events ${JSON.stringify(member.events.map((e) => e.event))}`,
    );
  });
  return heard!;
}

t.test('voice on Janus: rooms, multistream subscriptions, moderation, restarts', { skip: SKIP, timeout: 120_000 }, async (t) => {
  const { janus, host } = await startJanusWithPeers((fn) => t.teardown(fn));
  const logged: string[] = [];
  const sessions: { reconnected: boolean }[] = [];
  const losses: string[] = [];
  const client = createJanusClient({
    url: janus.url,
    adminUrl: janus.adminUrl,
    adminSecret: janus.adminSecret,
    log: (line) => logged.push(line),
    keepaliveMs: 5_000,
    retryMinMs: 100,
    retryMaxMs: 1_000,
    onReady: (info) => sessions.push(info),
    onLost: (reason) => losses.push(reason),
  });
  t.teardown(() => client.close());
  await client.ready(15_000);
  const videoroom = createVideoRoom(client, janus.roomKey);
  const secret = randomBytes(16).toString('hex');
  const room = `voice-${randomBytes(4).toString('hex')}`;

  await t.test('Janus takes requests only with our token, and rooms only with the room key', async (t) => {
    const socket = new WebSocket(janus.url, JANUS_PROTOCOL);
    await new Promise((resolve, reject) => (socket.once('open', resolve), socket.once('error', reject)));
    const answer = new Promise<{ janus: string; error?: { code: number } }>((resolve) =>
      socket.once('message', (data) => resolve(JSON.parse(data.toString()))),
    );
    socket.send(JSON.stringify({ janus: 'create', transaction: 'x', token: 'not-ours' }));
    t.match(await answer, { janus: 'error', error: { code: 403 } }, 'a session without a stored token is refused');
    socket.close();
    const stranger = createVideoRoom(client, 'not-the-key');
    await t.rejects(stranger.createRoom({ room: 'nope', secret, publishers: 2, bitrate: 0 }), { kind: 'plugin', code: VIDEOROOM_ERRORS.unauthorized });
    t.equal(await client.reachable(), true, 'the reachability check pings the Admin API');
  });

  await videoroom.createRoom({ room, secret, publishers: 6, bitrate: 64_000 });
  await t.rejects(
    videoroom.createRoom({ room, secret, publishers: 6, bitrate: 64_000 }),
    { kind: 'plugin', code: VIDEOROOM_ERRORS.roomExists },
    'a room id is taken once',
  );
  const rooms = await videoroom.listRooms();
  t.ok(
    rooms.some((r) => r.room === room),
    'the private room is listed with the admin key',
  );

  let alice!: Member;
  let bob!: Member;
  await t.test('two participants each decode the other’s tone over one multistream subscription each', async (t) => {
    alice = await joinRoom(videoroom, host, room, 'alice', 440);
    bob = await joinRoom(videoroom, host, room, 'bob', 660);
    const bobHeard = await hears(host, bob, 'alice', 440);
    const aliceHeard = await hears(host, alice, 'bob', 660);
    t.ok(Math.abs(bobHeard - 440) <= 5, `bob decodes alice at ${bobHeard} Hz`);
    t.ok(Math.abs(aliceHeard - 660) <= 5, `alice decodes bob at ${aliceHeard} Hz`);
    const firstAudio = (await hearing(host, bob, 'alice'))!.firstAudibleAt!;
    t.comment(`bob's join to his first audible frame of alice: ${firstAudio - bob.joinedAt} ms`);
    const participants = await videoroom.listParticipants(room);
    t.same(participants.map((p) => p.id).sort(), ['alice', 'bob'], 'listparticipants names both');
    t.ok(
      participants.every((p) => p.publisher),
      'both publish',
    );
    t.ok(
      bob.peerEvents.some((e) => e.on === 'sub' && e.event.kind === 'webrtcup'),
      'Janus announced the subscriber connection up',
    );
    t.same([...alice.errors, ...bob.errors], []);
  });

  await t.test('a moderated mute silences one participant at the SFU while the other keeps flowing', async (t) => {
    const mid = alice.publisher.streams.find((s) => s.type === 'audio')!.mid;
    await videoroom.moderate(room, secret, 'alice', mid, true);
    await eventually('alice hears the moderation', () => alice.events.some((e) => e.event === 'moderation' && e.id === 'alice' && e.muted));
    await sleep(500); // packets in flight
    const before = { ofAlice: (await hearing(host, bob, 'alice'))!, ofBob: (await hearing(host, alice, 'bob'))! };
    await sleep(1_500);
    const after = { ofAlice: (await hearing(host, bob, 'alice'))!, ofBob: (await hearing(host, alice, 'bob'))! };
    t.ok(after.ofAlice.packets - before.ofAlice.packets <= 3, `bob got ${after.ofAlice.packets - before.ofAlice.packets} packets of muted alice in 1.5 s`);
    t.ok(after.ofAlice.rms < 0.005, `alice is silent at bob (level ${after.ofAlice.rms.toFixed(4)})`);
    t.ok(after.ofBob.packets - before.ofBob.packets >= 30, `alice still got ${after.ofBob.packets - before.ofBob.packets} packets of bob`);
    t.ok(Math.abs((after.ofBob.frequency ?? 0) - 660) <= 5, 'and still decodes bob');
    await videoroom.moderate(room, secret, 'alice', mid, false);
    await hears(host, bob, 'alice', 440);
    t.pass('unmuted, alice is heard again');
  });

  await t.test('a kick ends a participant: the room tells the others, and the subscriptions drop its feed', async (t) => {
    const carol = await joinRoom(videoroom, host, room, 'carol', 880);
    await hears(host, bob, 'carol', 880);
    await videoroom.kick(room, secret, 'carol');
    await eventually('carol is told she was kicked', () => carol.events.some((e) => e.event === 'kicked-self'));
    await eventually('Janus hangs up carol’s connection', () => carol.peerEvents.some((e) => e.on === 'pub' && e.event.kind === 'hangup'));
    await eventually('bob is told carol was kicked', () => bob.events.some((e) => e.event === 'kicked' && e.id === 'carol'));
    t.same((await videoroom.listParticipants(room)).map((p) => p.id).sort(), ['alice', 'bob']);
    await eventually('bob’s subscription no longer carries carol', () => bob.midOf('carol') === undefined);
    await t.rejects(carol.publisher.configure({ bitrate: 32_000 }), JanusError, 'the kicked handle can do nothing more in the room');
    await carol.leave().catch(() => {});
    await hears(host, bob, 'alice', 440);
    await hears(host, alice, 'bob', 660);
    t.same([...bob.errors, ...alice.errors], []);
  });

  if (turnAvailable()) {
    await t.test('through TURN: a relay-only participant gets media both ways with use-auth-secret credentials', async (t) => {
      const turnSecret = randomBytes(16).toString('hex');
      const urls = await janus.startTurn(turnSecret);
      const { username, credential } = turnCredentials(turnSecret, 'dave', Date.now(), 600);
      const dave = await joinRoom(videoroom, host, room, 'dave', 550, { iceServers: [{ urls, username, credential }], relayOnly: true });
      t.ok(Math.abs((await hears(host, dave, 'alice', 440)) - 440) <= 5, 'dave hears alice through the relay');
      t.ok(Math.abs((await hears(host, alice, 'dave', 550)) - 550) <= 5, 'alice hears dave through the relay');
      t.equal((await host.state('dave')).pubCandidate, 'relay', 'dave’s media goes through coturn');
      await dave.leave();
    });
  }

  await t.test('destroying the room tells its participants, and a second destroy finds nothing', async (t) => {
    t.equal(await videoroom.destroyRoom(room, secret), true);
    t.equal(await videoroom.exists(room), false);
    await eventually('alice and bob hear the room destroyed', () => [alice, bob].every((m) => m.events.some((e) => e.event === 'destroyed')));
    t.equal(await videoroom.destroyRoom(room, secret), false);
    await Promise.all([alice.leave(), bob.leave()]);
  });

  await t.test('a Janus restart is noticed, and the client makes a new session that works', async (t) => {
    const handle = await client.attach(() => {});
    await janus.restart();
    await eventually('the loss is announced', () => losses.length === 1);
    t.equal(handle.alive, false, 'handles die with their session');
    await eventually('a new session is announced', () => sessions.length === 2);
    t.same(sessions, [{ reconnected: false }, { reconnected: true }]);
    const again = `voice-${randomBytes(4).toString('hex')}`;
    await videoroom.createRoom({ room: again, secret, publishers: 2, bitrate: 0 });
    t.equal(await videoroom.exists(again), true, 'the VideoRoom answers on the new session');
    t.equal(await videoroom.destroyRoom(again, secret), true);
  });

  t.same(
    logged.filter((line) => !/session lost|connected again|cannot connect/.test(line)),
    [],
    'nothing unexpected was logged',
  );
});
