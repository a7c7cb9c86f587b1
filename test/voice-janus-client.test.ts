import net, { type AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import WebSocket, { WebSocketServer } from 'ws';
import { type HandleEvent, JanusError } from '../src/parts/voice/janus-api';
import { type JanusClient, createJanusClient } from '../src/parts/voice/janus';

/**
 * The Janus client's transport rules against a scripted stand-in for Janus (two WebSocket
 * servers speaking its framing): replies by transaction, events by handle, deadlines, what it
 * does with frames it cannot read and listeners that throw, and reconnection. The real Janus
 * is test/voice-janus.test.ts.
 */
type Message = Record<string, unknown> & { janus: string; transaction: string };
type Script = (message: Message, reply: (frame: Record<string, unknown>) => void, socket: WebSocket) => void;

interface FakeJanus {
  url: string;
  adminUrl: string;
  /** What the API socket received, in order. */
  received: Message[];
  /** Replaces how the API answers `message` requests (the rest is standard). */
  onMessage: Script;
  answerKeepalives: boolean;
  sessions: number;
  /** Sends a frame on every open API socket. */
  push(frame: Record<string, unknown>): void;
  raw(text: string): void;
  /** Drops every connection (as a Janus restart does). */
  dropAll(): void;
  close(): Promise<void>;
}

async function fakeJanus(t: Test): Promise<FakeJanus> {
  const api = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  const admin = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await Promise.all([api, admin].map((server) => new Promise((resolve) => server.once('listening', resolve))));
  let handles = 100;
  const fake: FakeJanus = {
    url: `ws://127.0.0.1:${(api.address() as AddressInfo).port}`,
    adminUrl: `ws://127.0.0.1:${(admin.address() as AddressInfo).port}`,
    received: [],
    onMessage: () => {},
    answerKeepalives: true,
    sessions: 0,
    push: (frame) => fake.raw(JSON.stringify(frame)),
    raw: (text) => api.clients.forEach((socket) => socket.send(text)),
    dropAll: () => [...api.clients, ...admin.clients].forEach((socket) => socket.terminate()),
    close: () => Promise.all([api, admin].map((server) => new Promise((resolve) => server.close(resolve)))).then(() => {}),
  };
  admin.on('connection', (socket, request) => {
    t.equal(request.headers['sec-websocket-protocol'], 'janus-admin-protocol');
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Message;
      const reply = { transaction: message.transaction };
      // As Janus: a ping needs no secret, everything else does.
      if (message.janus === 'ping') socket.send(JSON.stringify({ janus: 'pong', ...reply }));
      else if (message.admin_secret !== 'admin')
        socket.send(JSON.stringify({ janus: 'error', ...reply, error: { code: 403, reason: 'Unauthorized request' } }));
      else socket.send(JSON.stringify({ janus: 'success', ...reply }));
    });
  });
  api.on('connection', (socket, request) => {
    t.equal(request.headers['sec-websocket-protocol'], 'janus-protocol');
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Message;
      fake.received.push(message);
      const reply = (frame: Record<string, unknown>) => socket.send(JSON.stringify({ transaction: message.transaction, ...frame }));
      switch (message.janus) {
        case 'create':
          return reply({ janus: 'success', data: { id: 1000 + ++fake.sessions } });
        case 'attach':
          return reply({ janus: 'success', data: { id: ++handles } });
        case 'keepalive':
        case 'trickle':
          return fake.answerKeepalives || message.janus === 'trickle' ? reply({ janus: 'ack' }) : undefined;
        case 'detach':
        case 'destroy':
          return reply({ janus: 'success' });
        case 'message':
          return fake.onMessage(message, reply, socket);
      }
    });
  });
  t.teardown(() => fake.close());
  return fake;
}

function clientOf(t: Test, fake: FakeJanus, extra: Partial<Parameters<typeof createJanusClient>[0]> = {}): { janus: JanusClient; logged: string[] } {
  const logged: string[] = [];
  const janus = createJanusClient({
    url: fake.url,
    adminUrl: fake.adminUrl,
    adminSecret: 'admin',
    log: (line) => logged.push(line),
    requestTimeoutMs: 5_000,
    retryMinMs: 20,
    retryMaxMs: 100,
    ...extra,
  });
  t.teardown(() => janus.close());
  return { janus, logged };
}

/** A port of 127.0.0.1 that nothing listens on (one just released). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function eventually(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within 5 s: ${what}`);
    await sleep(10);
  }
}

t.test('every request carries our token and session; an asynchronous one settles on its event, not its ack', async (t) => {
  const fake = await fakeJanus(t);
  fake.onMessage = (message, reply) => {
    reply({ janus: 'ack' });
    setTimeout(
      () =>
        reply({
          janus: 'event',
          sender: message.handle_id,
          plugindata: { plugin: 'janus.plugin.videoroom', data: { videoroom: 'event', configured: 'ok' } },
          jsep: { type: 'answer', sdp: 'v=0' },
        }),
      20,
    );
  };
  const { janus } = clientOf(t, fake);
  await janus.ready();
  const handle = await janus.attach(() => {});
  const answer = await handle.message({ request: 'configure' }, { type: 'offer', sdp: 'v=0' });
  t.same(answer, { data: { videoroom: 'event', configured: 'ok' }, jsep: { type: 'answer', sdp: 'v=0' } });
  await handle.trickle({ candidate: 'candidate:1 1 udp 1 198.18.0.1 9 typ host', sdpMid: '0', sdpMLineIndex: 0 });
  await handle.trickle(null);
  const sent = fake.received.filter((m) => m.janus !== 'create');
  t.ok(
    fake.received.every((m) => typeof m.token === 'string' && m.token.length >= 32),
    'a token of ours on every request',
  );
  t.ok(
    sent.every((m) => m.session_id === 1001),
    'the session on every request after create',
  );
  t.match(sent.at(-1), { janus: 'trickle', handle_id: handle.id, candidate: { completed: true } }, 'the end of candidates');
});

t.test('a plugin error comes back as a JanusError with its code; a silent Janus fails a request at its deadline', async (t) => {
  const fake = await fakeJanus(t);
  fake.onMessage = (message, reply) => {
    const body = message.body as { request: string };
    if (body.request === 'destroy')
      reply({
        janus: 'success',
        sender: message.handle_id,
        plugindata: { plugin: 'janus.plugin.videoroom', data: { videoroom: 'event', error_code: 426, error: 'No such room (x)' } },
      });
    if (body.request === 'join') reply({ janus: 'ack' }); // and never the event
  };
  const { janus } = clientOf(t, fake, { requestTimeoutMs: 1_000 });
  await janus.ready(5_000);
  const handle = await janus.attach(() => {});
  await t.rejects(handle.message({ request: 'destroy', room: 'x' }), { name: 'JanusError', kind: 'plugin', code: 426, message: 'No such room (x)' });
  await t.rejects(handle.message({ request: 'join' }), { name: 'JanusError', kind: 'timeout' });
  t.equal(janus.connected, true, 'a request that timed out leaves the session alone');
});

t.test('frames we cannot read and listeners that throw are logged, never thrown out of the socket', async (t) => {
  const fake = await fakeJanus(t);
  const { janus, logged } = clientOf(t, fake);
  await janus.ready();
  const heard: HandleEvent[] = [];
  const handle = await janus.attach((event) => {
    heard.push(event);
    throw new Error('a listener bug');
  });
  fake.push({ janus: 'webrtcup', session_id: 1001, sender: handle.id });
  fake.push({ janus: 'media', session_id: 1001, sender: handle.id, type: 'audio', mid: '0', receiving: true });
  fake.push({ janus: 'hangup', session_id: 1001, sender: 987654, reason: 'not a handle of ours' });
  for (const text of ['not json', '[1,2]', '{"janus":"event"}']) fake.raw(text);
  await eventually('both events heard', () => heard.length === 2);
  t.same(heard, [{ kind: 'webrtcup' }, { kind: 'media', type: 'audio', mid: '0', receiving: true }]);
  await eventually('the failures logged', () => logged.filter((line) => /janus handle listener failed: Error: a listener bug/.test(line)).length === 2);
  t.equal(logged.filter((line) => /a frame we do not read/.test(line)).length, 3);
  t.equal(janus.connected, true);
});

t.test('when Janus goes away the client says so, reconnects by itself and says so again', async (t) => {
  const fake = await fakeJanus(t);
  const events: string[] = [];
  const { janus } = clientOf(t, fake, { onReady: ({ reconnected }) => events.push(reconnected ? 'again' : 'first'), onLost: () => events.push('lost') });
  await janus.ready();
  const handle = await janus.attach(() => {});
  fake.dropAll();
  await eventually('a new session', () => events.length === 3);
  t.same(events, ['first', 'lost', 'again']);
  t.equal(handle.alive, false, 'the old handle is gone');
  await t.rejects(handle.message({ request: 'list' }), { name: 'JanusError', kind: 'unavailable' });
  await janus.attach(() => {});
  t.equal(fake.received.at(-1)!.session_id, 1002, 'requests go to the new session');

  fake.answerKeepalives = false;
  const quiet = clientOf(t, fake, { keepaliveMs: 50, requestTimeoutMs: 300, onLost: (reason) => events.push(`lost: ${reason}`) }).janus;
  await quiet.ready(5_000);
  await eventually('an unanswered keepalive ends the session', () => events.some((e) => /^lost: keepalive/.test(e)));
  fake.push({ janus: 'timeout', session_id: 1002 });
  await eventually('Janus timing the session out ends it', () => events.filter((e) => e === 'lost').length === 2);
});

t.test('the reachability check never throws; a closed client refuses work', async (t) => {
  const fake = await fakeJanus(t);
  const { janus } = clientOf(t, fake);
  await janus.ready();
  t.equal(await janus.reachable(), true);
  await janus.close();
  t.equal(await janus.reachable(), false);
  t.equal(janus.connected, false);
  await t.rejects(janus.ready(), JanusError);
  await t.rejects(
    janus.attach(() => {}),
    { name: 'JanusError', kind: 'unavailable' },
  );
  const nobody = `ws://127.0.0.1:${await closedPort()}`;
  const gone = createJanusClient({ url: nobody, adminUrl: nobody, adminSecret: 'admin', log: () => {}, requestTimeoutMs: 200, retryMinMs: 50 });
  t.teardown(() => gone.close());
  await t.rejects(gone.ready(300), { name: 'JanusError', kind: 'unavailable' }, 'no Janus: ready() says so in time');
  t.equal(await gone.reachable(), false);
});
