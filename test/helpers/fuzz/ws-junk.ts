import fc from 'fast-check';
import WebSocket from 'ws';
import { Long } from './deferred';

/**
 * Junk on the sockets: text and binary frames of generated content, frames over the 4 KiB a
 * client may send, text that is not UTF-8, fragmented messages, pings and pongs, bursts of
 * many frames, and raw bytes that are no frame at all.
 *
 * docs/api.md ("Close codes") says what the server does: more than 50 frames in 10 s close the
 * socket with 1008, a frame over 4 KiB with 1009; frames are otherwise ignored. `expectClose`
 * replays that rule over the frames, so a case knows whether the socket must stay open or
 * which code must close it (1007 for text that is not UTF-8, as RFC 6455 says).
 */
export const MAX_FRAME_BYTES = 4 * 1024;
export const FLOOD_FRAMES = 50;

export type Frame =
  | { kind: 'text'; data: string | Long }
  | { kind: 'binary'; bytes: Uint8Array | Long }
  | { kind: 'notUtf8'; bytes: Uint8Array }
  | { kind: 'fragmented'; pieces: string[] }
  | { kind: 'ping' | 'pong'; bytes: Uint8Array }
  | { kind: 'burst'; count: number; binary: boolean }
  | { kind: 'raw'; bytes: Uint8Array };

export type Target = 'user' | 'channel' | 'conversation';

const lookalike = fc
  .record({
    op: fc.constantFrom('identify', 'subscribe', 'heartbeat', 'resume', 'typing', 'message_create', 'ready', 'presence', 'ping'),
    d: fc.jsonValue({ maxDepth: 2 }),
  })
  .map((v) => JSON.stringify(v));

const textFrame = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 2, arbitrary: lookalike },
  { weight: 1, arbitrary: fc.constantFrom('', '{', 'null', '[]', 'ping', '\u0000', '\ufeff{}', '😀'.repeat(1024)) },
  { weight: 1, arbitrary: fc.integer({ min: MAX_FRAME_BYTES - 2, max: MAX_FRAME_BYTES }).map((n) => new Long('a', n)) },
  { weight: 2, arbitrary: fc.integer({ min: MAX_FRAME_BYTES + 1, max: 256 * 1024 }).map((n) => new Long('a', n)) },
);

const binaryFrame = fc.oneof(
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 300 }) as fc.Arbitrary<Uint8Array | Long> },
  { weight: 1, arbitrary: fc.integer({ min: MAX_FRAME_BYTES + 1, max: 1024 * 1024 }).map((n) => new Long('\u0000', n)) },
);

const NOT_UTF8 = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x61, 0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]];

const rawFrame = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 64 }),
  fc
    .constantFrom(
      // an unmasked text frame (clients must mask)
      [0x81, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f],
      // a masked frame claiming a 2^63-1 byte payload
      [0x82, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
      // reserved opcodes 3 and 0xB
      [0x83, 0x80, 1, 2, 3, 4],
      [0x8b, 0x80, 1, 2, 3, 4],
      // RSV1 set without an extension
      [0xc1, 0x80, 1, 2, 3, 4],
      // a continuation with nothing to continue
      [0x80, 0x80, 1, 2, 3, 4],
      // a fragmented ping (control frames must not be fragmented)
      [0x09, 0x80, 1, 2, 3, 4],
      // a close frame with code 999, and one with a 1-byte payload
      [0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe7],
      [0x88, 0x81, 0, 0, 0, 0, 0x01],
      // a ping with a 126-byte payload length (control frames are at most 125)
      [0x89, 0xfe, 0x00, 0x7e, 0, 0, 0, 0],
    )
    .map((a) => Uint8Array.from(a)),
);

export const frameArb: fc.Arbitrary<Frame> = fc.oneof(
  { weight: 5, arbitrary: textFrame.map((data) => ({ kind: 'text' as const, data })) },
  { weight: 3, arbitrary: binaryFrame.map((bytes) => ({ kind: 'binary' as const, bytes })) },
  { weight: 1, arbitrary: fc.constantFrom(...NOT_UTF8).map((a) => ({ kind: 'notUtf8' as const, bytes: Uint8Array.from(a) })) },
  { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 2000 }), { minLength: 2, maxLength: 5 }).map((pieces) => ({ kind: 'fragmented' as const, pieces })) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom<'ping' | 'pong'>('ping', 'pong'), fc.uint8Array({ maxLength: 125 })).map(([kind, bytes]) => ({ kind, bytes })),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('burst' as const), count: fc.integer({ min: 5, max: 90 }), binary: fc.boolean() }) },
  { weight: 1, arbitrary: rawFrame.map((bytes) => ({ kind: 'raw' as const, bytes })) },
);

const size = (v: Uint8Array | Long | string) =>
  v instanceof Long ? Buffer.byteLength(v.unit) * v.count : typeof v === 'string' ? Buffer.byteLength(v) : v.length;

/**
 * What the server must do with these frames and one closing ping (the sentinel): close with a
 * code, or keep the socket open; `lenient` after raw bytes (the stream is no longer framed).
 */
export function expectClose(frames: Frame[]): { code: number | null; lenient: boolean; sendUpTo: number } {
  let counted = 0;
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i];
    switch (f.kind) {
      case 'raw':
        return { code: null, lenient: true, sendUpTo: i + 1 };
      case 'notUtf8':
        return { code: 1007, lenient: false, sendUpTo: i + 1 };
      case 'text':
      case 'binary': {
        if (size(f.kind === 'text' ? f.data : f.bytes) > MAX_FRAME_BYTES) return { code: 1009, lenient: false, sendUpTo: i + 1 };
        counted++;
        break;
      }
      case 'fragmented':
        if (f.pieces.reduce((s, p) => s + Buffer.byteLength(p), 0) > MAX_FRAME_BYTES) return { code: 1009, lenient: false, sendUpTo: i + 1 };
        counted++;
        break;
      case 'ping':
        counted++;
        break;
      case 'pong':
        break;
      case 'burst':
        if (counted + f.count > FLOOD_FRAMES) return { code: 1008, lenient: false, sendUpTo: i + 1 };
        counted += f.count;
        break;
    }
    if (counted > FLOOD_FRAMES) return { code: 1008, lenient: false, sendUpTo: i + 1 };
  }
  // The sentinel ping counts too.
  return { code: counted + 1 > FLOOD_FRAMES ? 1008 : null, lenient: false, sendUpTo: frames.length };
}

const sendAsync = (ws: WebSocket, data: Buffer | string, opts: { binary?: boolean; fin?: boolean } = {}) =>
  new Promise<void>((resolve) => {
    if (ws.readyState !== WebSocket.OPEN) return resolve();
    ws.send(data, opts, () => resolve());
  });

/** Sends the frames (stopping early once the socket closes). */
export async function sendFrames(ws: WebSocket, frames: Frame[]): Promise<void> {
  const value = (v: Uint8Array | Long | string) => (v instanceof Long ? Buffer.from(v.resolve()) : typeof v === 'string' ? v : Buffer.from(v));
  for (const f of frames) {
    if (ws.readyState !== WebSocket.OPEN) return;
    switch (f.kind) {
      case 'text':
        await sendAsync(ws, value(f.data) as string | Buffer, { binary: false });
        break;
      case 'binary':
        await sendAsync(ws, value(f.bytes) as Buffer, { binary: true });
        break;
      case 'notUtf8':
        await sendAsync(ws, Buffer.from(f.bytes), { binary: false });
        break;
      case 'fragmented':
        for (let i = 0; i < f.pieces.length; i++) await sendAsync(ws, f.pieces[i], { binary: false, fin: i === f.pieces.length - 1 });
        break;
      case 'ping':
        ws.ping(Buffer.from(f.bytes));
        break;
      case 'pong':
        ws.pong(Buffer.from(f.bytes));
        break;
      case 'burst': {
        const sends: Promise<void>[] = [];
        for (let i = 0; i < f.count; i++) sends.push(sendAsync(ws, f.binary ? Buffer.from([i & 0xff]) : `junk ${i}`, { binary: f.binary }));
        await Promise.all(sends);
        break;
      }
      case 'raw': {
        const socket = (ws as unknown as { _socket?: import('node:net').Socket })._socket;
        await new Promise<void>((resolve) => (socket && !socket.destroyed ? socket.write(Buffer.from(f.bytes), () => resolve()) : resolve()));
        break;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The property

interface SocketWorld {
  url: string;
  crashed: boolean;
  recover(): Promise<void>;
}

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    promise.then((v) => {
      clearTimeout(timer);
      resolve(v);
    });
  });

/**
 * Opens the socket at `path` with `cookie`, sends the frames and checks what the server did
 * against `expectClose`; then the server must still answer /healthz. Returns a reason to fail.
 */
export async function junkCase(
  world: SocketWorld,
  path: string,
  cookie: string,
  frames: Frame[],
  awaitReady: boolean,
  outcomes?: Record<string, number>,
): Promise<string | undefined> {
  const note = (what: string) => {
    if (outcomes) outcomes[what] = (outcomes[what] ?? 0) + 1;
  };
  await world.recover();
  const ws = new WebSocket(world.url.replace(/^http/, 'ws') + path, { headers: { cookie } });
  ws.on('error', () => {});
  const messages: string[] = [];
  ws.on('message', (data) => messages.push(data.toString().slice(0, 100)));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  const opened = await withTimeout(
    new Promise<string | undefined>((resolve) => {
      ws.once('open', () => resolve(undefined));
      ws.once('unexpected-response', (_req, res) => resolve(`the handshake was refused with ${res.statusCode}`));
      ws.once('error', (err) => resolve(`the handshake failed: ${err.message}`));
    }),
    5_000,
  );
  if (opened !== undefined) {
    ws.terminate();
    return opened === 'timeout' ? 'the handshake got no answer within 5 s' : opened;
  }
  try {
    if (awaitReady) {
      const deadline = Date.now() + 3_000;
      while (!messages.some((m) => m.includes('"ready"')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      if (!messages.some((m) => m.includes('"ready"'))) return 'the user stream sent no ready frame within 3 s';
    }
    const expected = expectClose(frames);
    await sendFrames(ws, frames.slice(0, expected.sendUpTo));
    if (expected.lenient) {
      const outcome = await withTimeout(closed, 300);
      if (outcome !== 'timeout' && ![1002, 1005, 1006, 1007, 1008, 1009].includes(outcome.code)) {
        return `after raw bytes the socket closed with ${outcome.code} ${outcome.reason}`;
      }
      note(outcome === 'timeout' ? 'raw bytes, left open' : `raw bytes, closed ${outcome.code}`);
    } else if (expected.code !== null) {
      // The closing ping: it may be the frame that goes over the limit.
      if (ws.readyState === WebSocket.OPEN) ws.ping();
      const outcome = await withTimeout(closed, 3_000);
      if (outcome === 'timeout') return `the socket should have closed with ${expected.code} (docs/api.md close codes) but stayed open`;
      if (outcome.code !== expected.code) return `the socket closed with ${outcome.code} ${JSON.stringify(outcome.reason)}, expected ${expected.code}`;
      note(`closed ${outcome.code}`);
    } else {
      // Nothing here breaks a rule: the socket stays open and answers a ping.
      const pong = new Promise<'pong'>((resolve) => ws.once('pong', () => resolve('pong')));
      if (ws.readyState === WebSocket.OPEN) ws.ping();
      const outcome = await withTimeout(Promise.race([pong, closed]), 3_000);
      if (outcome === 'timeout') return 'the socket neither answered a ping nor closed within 3 s';
      if (outcome !== 'pong') return `the socket closed with ${outcome.code} ${JSON.stringify(outcome.reason)} though its frames break no documented rule`;
      note('stayed open');
    }
  } finally {
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
    if ((await withTimeout(closed, 1_000)) === 'timeout') ws.terminate();
    await withTimeout(closed, 1_000);
  }
  if (world.crashed) return 'the server process crashed';
  const health = await fetch(`${world.url}/healthz`).then(
    (r) => r.status,
    (err: Error) => err.message,
  );
  if (health !== 200) return `GET /healthz answered ${health} afterwards`;
  return undefined;
}
