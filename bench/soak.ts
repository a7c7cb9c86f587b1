/**
 * Soak: moderate, steady mixed traffic against one chat server for SOAK_MINUTES
 * (default 30), to find leaks rather than limits. About 20 users in one channel:
 *
 *   - JSON message posts, and multipart posts with one file of 100 to 500 KB
 *   - history page reads (the newest page, and pages before a random earlier message)
 *   - downloads of recent attachments
 *   - reactions added and removed on recent messages (8 emoji, within every cap)
 *   - WebSocket sockets opening and closing (a pool of 40: the oldest is closed, alternately
 *     with a closing handshake and by cutting the connection, and a new one opened)
 *   - logins of existing users, each followed by a logout of that new session (argon2 is
 *     expensive: one every 2 s)
 *   - a few deliberate refusals (an emoji that is not one: 400; an unknown channel: 404)
 *
 * The server's RSS and open file descriptors are sampled every 5 s. After a warm-up (the
 * first 20 % of the run) the RSS slope is fitted by least squares and reported in MiB per
 * hour, with the RSS at the start of the traffic, after the warm-up and at the end, the count
 * of each kind of operation, and every answer that was not the expected one. The exit code is
 * 1 if any request failed unexpectedly (a non-2xx answer that was not deliberate, a refused
 * upgrade, a socket the server closed, a connection error).
 *
 * SOAK_HEAP=1 tells whether RSS growth is the JS heap: the server then runs with the inspector
 * on 127.0.0.1, and once a minute the soak forces a full garbage collection there and reads
 * process.memoryUsage(); the heap left after it is reported like the RSS. Off by default: a
 * forced collection changes the very RSS being measured.
 *
 * Not part of `make bench` (bench/run.ts): it takes half an hour. Run it alone:
 *   make build && npx tsc -p bench/tsconfig.json && node dist-bench/bench/soak.js
 *   SOAK_MINUTES=2 node dist-bench/bench/soak.js     (a short look)
 * Everything listens on 127.0.0.1, in a temporary directory, and stops by itself.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import {
  BENCH_PASSWORD,
  type Row,
  call,
  login,
  mib,
  ownerWithChannel,
  printTable,
  register,
  request,
  rssKb,
  runAlone,
  sleep,
  startChat,
  tempDir,
  verdict,
} from './lib';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const HEAP = process.env.SOAK_HEAP === '1';
const HEAP_SAMPLE_MS = 60_000;
const USERS = 20;
const WARMUP_SHARE = 0.2;
const SAMPLE_MS = 5_000;
/** Operations per second of each kind. */
const RATES = {
  post: 8,
  upload: 0.5,
  history: 8,
  download: 0.5,
  reaction: 4,
  socket: 1,
  login: 0.5,
  refusal: 0.2,
};
const OPEN_SOCKETS = 40;
const EMOJI = ['👍', '🎉', '😂', '❤️', '🚀', '👀', '🔥', '🙏'];
/** Reactions and downloads pick among the newest messages and attachments. */
const RECENT = 50;

type Kind = keyof typeof RATES;

/** One unexpected answer, kept for the report (the first few of each kind). */
interface Failure {
  kind: string;
  what: string;
}

/** A multipart message body with one file of `size` random bytes. */
function multipart(size: number): { body: Buffer; contentType: string } {
  const boundary = `----soak${crypto.randomBytes(12).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\nsoak upload\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="attachments"; filename="soak.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    crypto.randomBytes(size),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A free TCP port of 127.0.0.1 (for the server's inspector). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

/**
 * The server's memory after a full garbage collection, through its inspector (node --inspect):
 * one session, commands answered in order.
 */
async function heapProbe(port: number): Promise<{ sample(): Promise<NodeJS.MemoryUsage>; close(): void }> {
  const targets = JSON.parse((await request(`http://127.0.0.1:${port}`, 'GET', '/json/list')).text);
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  let id = 0;
  const pending = new Map<number, (result: any) => void>();
  ws.on('message', (data) => {
    const answer = JSON.parse(data.toString());
    pending.get(answer.id)?.(answer.result);
    pending.delete(answer.id);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return {
    async sample() {
      await send('HeapProfiler.collectGarbage');
      const { result } = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
      return JSON.parse(result.value);
    },
    close: () => ws.close(),
  };
}

/** Least-squares slope of y over x, as "+1.23 MiB/h" ("n/a" under two points). */
const perHour = (points: [hours: number, mib: number][]) => {
  if (points.length < 2) return 'n/a';
  const s = slope(points);
  return `${s >= 0 ? '+' : ''}${s.toFixed(2)} MiB/h`;
};

/** Least-squares slope of y over x. */
function slope(points: [x: number, y: number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxy / sxx;
}

const pick = <T>(items: T[]): T => items[Math.floor(Math.random() * items.length)];

async function main(): Promise<void> {
  const durationMs = MINUTES * 60_000;
  const inspectPort = HEAP ? await freePort() : 0;
  const server = await startChat(tempDir('chat-bench-soak-'), { nodeArgs: HEAP ? [`--inspect=127.0.0.1:${inspectPort}`] : [] });
  const { base, pid } = server;
  const probe = HEAP ? await heapProbe(inspectPort) : undefined;
  const tag = process.pid % 10000;

  // Set-up: an owner and USERS members in one channel.
  const owner = await ownerWithChannel(base, `soak_owner_${tag}`);
  const invite = (await call(base, 'POST', `/api/servers/${owner.serverId}/invites`, undefined, owner.cookie)).body;
  const users: { name: string; cookie: string }[] = [];
  for (let i = 0; i < USERS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, USERS - i) }, async (_, j) => {
        const name = `soak_${tag}_${i + j}`;
        await register(base, name);
        const cookie = await login(base, name);
        await call(base, 'POST', `/api/invites/${invite.token}/accept`, undefined, cookie);
        return { name, cookie };
      }),
    );
    users.push(...batch);
  }
  const { messagesUrl } = owner;
  const socketUrl = `${base.replace('http', 'ws')}/api/channels/${owner.channelId}/ws`;

  /** Operations done, by kind (logouts apart from logins). */
  const counts: Record<string, number> = {};
  const failures: Failure[] = [];
  /** When the traffic started (set-up failures count from the process start). */
  let started = 0;
  const failed = new Map<string, number>();
  const fail = (kind: string, what: string) => {
    failed.set(kind, (failed.get(kind) ?? 0) + 1);
    if (failures.length < 20) failures.push({ kind, what: `${((performance.now() - started) / 60_000).toFixed(2)} min: ${what}` });
  };
  const messageIds: string[] = [];
  const attachmentUrls: string[] = [];
  /** Reactions currently held, by `${message}|${user}|${emoji}`. */
  const reacted = new Map<string, { message: string; user: (typeof users)[number]; emoji: string }>();
  let frames = 0;

  /**
   * One request, counted under `kind`; an answer other than `expect` (any 2xx when not given)
   * or a connection error is a failure, and resolves to undefined.
   */
  const attempt = async (kind: string, method: string, url: string, headers: Record<string, string>, body?: string | Buffer, expect?: number) => {
    try {
      const res = await request(base, method, url, body, headers);
      const ok = expect === undefined ? res.status >= 200 && res.status < 300 : res.status === expect;
      if (!ok) {
        fail(kind, `${method} ${url.split('?')[0]} answered ${res.status}: ${res.text.trim().slice(0, 200)}`);
        return undefined;
      }
      counts[kind] = (counts[kind] ?? 0) + 1;
      return res;
    } catch (err) {
      fail(kind, `${method} ${url.split('?')[0]} failed: ${(err as Error).message}`);
      return undefined;
    }
  };
  /** A request with a session cookie (when given) and a JSON body (when given). */
  const json = (kind: string, method: string, url: string, cookie: string | undefined, body?: unknown, expect?: number) => {
    const headers: Record<string, string> = cookie ? { cookie } : {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    return attempt(kind, method, url, headers, body === undefined ? undefined : JSON.stringify(body), expect);
  };

  const ops: Record<Kind, () => Promise<void>> = {
    async post() {
      const res = await json('post', 'POST', messagesUrl, pick(users).cookie, { content: `soak message ${crypto.randomUUID()}` });
      if (res) messageIds.push(JSON.parse(res.text).id);
    },
    async upload() {
      const { body, contentType } = multipart(100_000 + Math.floor(Math.random() * 400_000));
      const res = await attempt('upload', 'POST', messagesUrl, { cookie: pick(users).cookie, 'content-type': contentType }, body);
      if (res) {
        const record = JSON.parse(res.text);
        messageIds.push(record.id);
        attachmentUrls.push(record.attachments[0].url);
      }
    },
    async history() {
      // Half the reads open the channel, half scroll back from a random earlier message.
      const before = messageIds.length > 0 && Math.random() < 0.5 ? `&before=${pick(messageIds)}` : '';
      await json('history', 'GET', `${messagesUrl}?limit=50${before}`, pick(users).cookie);
    },
    async download() {
      if (attachmentUrls.length === 0) return;
      await json('download', 'GET', pick(attachmentUrls.slice(-RECENT)), pick(users).cookie);
    },
    async reaction() {
      if (messageIds.length === 0) return;
      // Half the time a reaction still held on a recent message is taken back, otherwise a
      // random user reacts to a recent message (or takes back that one, if already held).
      const recent = new Set(messageIds.slice(-RECENT));
      const held = [...reacted.values()].filter((r) => recent.has(r.message));
      const { message, user, emoji } =
        held.length > 0 && Math.random() < 0.5 ? pick(held) : { message: pick([...recent]), user: pick(users), emoji: pick(EMOJI) };
      const key = `${message}|${user.name}|${emoji}`;
      const add = !reacted.has(key);
      const res = await json(add ? 'react' : 'unreact', add ? 'PUT' : 'DELETE', `${messagesUrl}/${message}/reactions`, user.cookie, { emoji });
      if (res) {
        if (add) reacted.set(key, { message, user, emoji });
        else reacted.delete(key);
      }
    },
    async socket() {
      // Closing the oldest and opening one more keeps the pool steady; socket n belongs to
      // user n % USERS, so each session holds OPEN_SOCKETS / USERS of them (the cap is 10).
      if (pool.length >= OPEN_SOCKETS) {
        const oldest = pool.shift()!;
        oldest.closing = true;
        if (socketsOpened % 2 === 0) oldest.ws.close(1000);
        else oldest.ws.terminate();
      }
      await openSocket();
    },
    async login() {
      // A new session of an existing user, then its logout: sessions come and go.
      const name = pick(users).name;
      const res = await json('login', 'POST', '/api/login', undefined, { username: name, password: BENCH_PASSWORD });
      const cookie = /app_session=([^;]+)/.exec(String(res?.headers['set-cookie'] ?? ''))?.[1];
      if (res && !cookie) fail('login', 'login set no session cookie');
      if (cookie) await json('logout', 'POST', '/api/logout', `app_session=${cookie}`, undefined, 204);
    },
    async refusal() {
      await json('refusal', 'PUT', `${messagesUrl}/${messageIds[0] ?? crypto.randomUUID()}/reactions`, pick(users).cookie, { emoji: 'hello' }, 400);
      await json('refusal', 'GET', `/api/servers/${owner.serverId}/channels/${crypto.randomUUID()}/messages`, pick(users).cookie, undefined, 404);
    },
  };

  const pool: { ws: WebSocket; closing: boolean }[] = [];
  let socketsOpened = 0;
  function openSocket(): Promise<void> {
    const user = users[socketsOpened++ % USERS];
    const entry = { ws: new WebSocket(socketUrl, { headers: { cookie: user.cookie } }), closing: false };
    pool.push(entry);
    entry.ws.on('message', () => frames++);
    entry.ws.on('error', () => {});
    entry.ws.on('close', (code) => {
      if (!entry.closing) fail('socket', `the server closed a socket of ${user.name} with ${code}`);
      const at = pool.indexOf(entry);
      if (at !== -1) pool.splice(at, 1);
    });
    return new Promise((resolve) => {
      entry.ws.once('open', () => {
        counts.socket = (counts.socket ?? 0) + 1;
        resolve();
      });
      entry.ws.once('unexpected-response', (_req, res) => {
        entry.closing = true;
        fail('socket', `upgrade answered ${res.statusCode}`);
        resolve();
      });
      entry.ws.once('error', (err) => {
        if (entry.ws.readyState !== WebSocket.OPEN) resolve();
        if (!entry.closing) fail('socket', `socket error: ${err.message}`);
        entry.closing = true;
      });
    });
  }
  while (pool.length < OPEN_SOCKETS) await openSocket();
  counts.socket = 0;

  // The traffic: one paced loop per kind, each starting an operation every 1/rate seconds
  // (the next one right away if an operation took longer).
  started = performance.now();
  const stopAt = started + durationMs;
  const loops = (Object.keys(RATES) as Kind[]).map(async (kind) => {
    const interval = 1000 / RATES[kind];
    // Spread the first operations so the kinds do not all fire together.
    let next = started + Math.random() * interval;
    while (next < stopAt) {
      await sleep(Math.max(0, next - performance.now()));
      await ops[kind]();
      next = Math.max(next + interval, performance.now() - interval);
    }
  });

  const samples: { t: number; rssKb: number; fds: number }[] = [];
  const sample = () => samples.push({ t: (performance.now() - started) / 1000, rssKb: rssKb(pid), fds: fs.readdirSync(`/proc/${pid}/fd`).length });
  sample();
  const sampler = setInterval(sample, SAMPLE_MS);
  const heapSamples: { t: number; heapKb: number; heapTotalKb: number; externalKb: number }[] = [];
  const sampleHeap = async () => {
    const t = (performance.now() - started) / 1000;
    const usage = await probe!.sample();
    heapSamples.push({ t, heapKb: usage.heapUsed / 1024, heapTotalKb: usage.heapTotal / 1024, externalKb: usage.external / 1024 });
  };
  if (probe) await sampleHeap();
  const heapSampler = probe && setInterval(() => void sampleHeap(), HEAP_SAMPLE_MS);
  const progress = setInterval(() => {
    const last = samples[samples.length - 1];
    console.error(
      `soak: ${(last.t / 60).toFixed(1)} min, RSS ${mib(last.rssKb)}, ${last.fds} fds, ${[...failed.values()].reduce((a, b) => a + b, 0)} failures`,
    );
  }, 60_000);
  await Promise.all(loops);
  clearInterval(progress);
  clearInterval(sampler);
  clearInterval(heapSampler);
  sample();
  if (probe) {
    await sampleHeap();
    probe.close();
  }
  const seconds = (performance.now() - started) / 1000;

  for (const entry of pool.splice(0)) {
    entry.closing = true;
    entry.ws.terminate();
  }
  await server.stop();
  // The request log goes with the temporary directory; after a failure it is worth keeping.
  const keptLog = path.join(os.tmpdir(), `chat-soak-${process.pid}.log`);
  if (failed.size > 0) fs.copyFileSync(server.logFile, keptLog);

  const warm = samples.filter((s) => s.t >= seconds * WARMUP_SHARE);
  const first = samples[0];
  const afterWarmup = warm[0];
  const last = samples[samples.length - 1];
  const peak = Math.max(...samples.map((s) => s.rssKb));
  const unexpected = [...failed.values()].reduce((a, b) => a + b, 0);
  const perSecond = (n = 0) => `${n} (${(n / seconds).toFixed(2)}/s)`;
  const rows: Row[] = [
    ['duration', `${(seconds / 60).toFixed(1)} min (warm-up: first ${WARMUP_SHARE * 100} %)`, '', ''],
    ['posts (JSON)', perSecond(counts.post), '', ''],
    ['posts with a 100-500 KB file (multipart)', perSecond(counts.upload), '', ''],
    ['history pages of 50', perSecond(counts.history), '', ''],
    ['attachment downloads', perSecond(counts.download), '', ''],
    ['reactions added', perSecond(counts.react), '', ''],
    ['reactions removed', perSecond(counts.unreact), '', ''],
    [`sockets opened and closed (${OPEN_SOCKETS} open)`, perSecond(counts.socket), '', ''],
    ['logins of existing users', perSecond(counts.login), '', ''],
    ['logouts of those sessions', perSecond(counts.logout), '', ''],
    ['deliberate refusals answered as expected (400, 404)', perSecond(counts.refusal), '', ''],
    ['socket frames received', perSecond(frames), '', ''],
    ['unexpected answers or failures', String(unexpected), '0', verdict(unexpected === 0)],
    ['RSS at start of traffic', mib(first.rssKb), '', ''],
    [`RSS after warm-up (${(afterWarmup.t / 60).toFixed(1)} min)`, mib(afterWarmup.rssKb), '', ''],
    ['RSS at end', mib(last.rssKb), '', ''],
    ['RSS peak', mib(peak), '', ''],
    [`RSS slope after warm-up (least squares, ${warm.length} samples)`, perHour(warm.map((s) => [s.t / 3600, s.rssKb / 1024])), '', ''],
    ['open file descriptors: start / after warm-up / end', `${first.fds} / ${afterWarmup.fds} / ${last.fds}`, '', ''],
  ];
  if (heapSamples.length > 1) {
    const warmHeap = heapSamples.filter((s) => s.t >= seconds * WARMUP_SHARE);
    const [h0, h1, h2] = [heapSamples[0], warmHeap[0], heapSamples[heapSamples.length - 1]];
    rows.push(
      ['JS heap used after a full GC: start / after warm-up / end', `${mib(h0.heapKb)} / ${mib(h1.heapKb)} / ${mib(h2.heapKb)}`, '', ''],
      ['JS heap reserved (heapTotal): start / after warm-up / end', `${mib(h0.heapTotalKb)} / ${mib(h1.heapTotalKb)} / ${mib(h2.heapTotalKb)}`, '', ''],
      [`JS heap used: slope after warm-up (${warmHeap.length} samples)`, perHour(warmHeap.map((s) => [s.t / 3600, s.heapKb / 1024])), '', ''],
      ['external (Buffers) after a full GC: start / after warm-up / end', `${mib(h0.externalKb)} / ${mib(h1.externalKb)} / ${mib(h2.externalKb)}`, '', ''],
    );
  }
  const heapNote = HEAP ? `, heap after a forced full GC every ${HEAP_SAMPLE_MS / 1000} s (SOAK_HEAP=1)` : '';
  printTable(`Soak: ${MINUTES} min of mixed traffic from ${USERS} users against one server, RSS every ${SAMPLE_MS / 1000} s${heapNote}`, rows);
  if (unexpected > 0) {
    console.log(`\nunexpected: ${[...failed].map(([k, n]) => `${k} ${n}`).join(', ')}; the first ones:`);
    for (const f of failures) console.log(`  ${f.kind}: ${f.what}`);
    console.log(`the server's request log is kept in ${keptLog}`);
    throw new Error(`${unexpected} requests failed unexpectedly`);
  }
}

runAlone(module, 'soak', main);
