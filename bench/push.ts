/**
 * Web push at scale (issue 33 "Speed"), measurement 14 of `make bench`: an `@everyone` in a
 * server whose 2 000 members each hold a push subscription, beside 1 000 members holding
 * visible user streams.
 *
 * Set-up: one server of PUSH_SUBSCRIBERS + PUSH_STREAMS members (users seeded straight into
 * SQLite with one real argon2 hash; the server started with bench/argon2-memo.js, METRICS=on,
 * PUSH_INSECURE_HOSTS=127.0.0.1), each member signed in for real. The subscribers hold no
 * stream (so they are pushed), except HIDDEN_STREAMS of them whose stream says
 * `{"op":"visibility","visible":false}` (pushed too); VISIBLE_SUBSCRIBED of the stream holders
 * also hold a subscription (a visible stream: never pushed). Every subscription is a real
 * `POST /api/account/push-subscriptions` (a fresh P-256 key pair and auth secret each) whose
 * endpoint is `http://127.0.0.1:<port>/push/<name>` on a receiver of our own (this file again,
 * as a child process, so its work does not stall the stream client's event loop): it answers
 * 201 at once and counts requests by endpoint and by `Topic` (the digest of the room: one
 * channel per message makes it the message), refusing a request whose Authorization is not
 * `vapid t=…, k=…` or whose body is not an aes128gcm record (86-byte header, keyid of 65 bytes,
 * one record of at most rs bytes, at most 4 096 in all).
 *
 * Measured: the owner posts an `@everyone` every SPACING_MS, ROUND_MESSAGES to a round, each in
 * a channel of its own (one push per device per message: bursts collapse per device and room).
 * Rounds take turns between two conditions on the same server with the same streams: "push"
 * (every subscription in place) and "none" (every subscription deleted through the API, so the
 * server has none at all), in the order of ROUNDS (ABBA BAAB), each drained before the next.
 * Reported per condition: the POST as the client times it and as the server's request log
 * times it, and the time from sending the POST until the last of the 1 000 visible streams had
 * the message (p50 / p99 over the messages; target: with push ≤ 1.2 × without); per pushed
 * message, the time from the POST until the receiver had the last of its 2 000 pushes (target:
 * ≤ 10 s for one `@everyone`, the first of a round, whose queue is empty; the later ones of a
 * round wait behind the earlier ones' pushes and are reported beside it); CPU of the server, the
 * receiver and this client, and the server's event-loop delay, per condition; the server's RSS
 * before the first push, at its peak while pushes drained and after each round, and its heap;
 * `chat_push_total` by outcome (target: none dropped, failed or gone). Last, a burst: BURST
 * messages back to back into one channel, and the pushes that makes per device: one or two (the
 * first when its turn in the queue comes, carrying what came meanwhile; one more 3 s later for
 * what came after it).
 *
 * Run alone: node dist-bench/bench/push.js   (PUSH_SUBSCRIBERS, PUSH_STREAMS change the load;
 * PUSH_REPEAT=k runs the eight rounds k times; PUSH_CPU_PROF=<dir> writes the server's CPU
 * profile there).
 * Everything listens on 127.0.0.1, in temporary directories, and stops by itself.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import {
  type Row,
  type Started,
  call,
  cpuMicros,
  loggedTimes,
  login,
  mib,
  ms,
  openForSeeding,
  ownerWithChannel,
  percentile,
  printTable,
  request,
  rssKb,
  runAlone,
  sleep,
  startChat,
  startProcess,
  tempDir,
  verdict,
  machineTicks,
} from './lib';

export const PUSH_SUBSCRIBERS = Number(process.env.PUSH_SUBSCRIBERS ?? 2000);
export const PUSH_STREAMS = Number(process.env.PUSH_STREAMS ?? 1000);
/** Of the subscribers: a stream that said it is hidden (so still pushed). */
const HIDDEN_STREAMS = 100;
/** Of the stream holders: a subscription too, but a visible stream (so never pushed). */
const VISIBLE_SUBSCRIBED = 100;
/** The order of the rounds: ABBA BAAB, so neither condition always goes first or last. */
const PATTERN = ['push', 'none', 'none', 'push', 'none', 'push', 'push', 'none'] as const;
/** PUSH_REPEAT=k: the pattern k times (to watch memory over more rounds). */
const ROUNDS = Array.from({ length: Number(process.env.PUSH_REPEAT ?? 1) }, () => PATTERN).flat();
const ROUND_MESSAGES = Number(process.env.PUSH_ROUND_MESSAGES ?? 4);
/** Between two posts of a round: the next lands while the last one's pushes drain. */
const SPACING_MS = Number(process.env.PUSH_SPACING_MS ?? 1500);
/** Posted back to back into one channel at the end, to see the collapse. */
const BURST = 5;
/** The server's collapse window (src/parts/push/sender.ts COLLAPSE_MS). */
const COLLAPSE_MS = 3_000;
const CONNECT_BATCH = 100;
const CALL_BATCH = 50;
const STREAM_TIMEOUT_MS = 10_000;
const DRAIN_TIMEOUT_MS = 30_000;
const SETTLE_MS = 1_000;
const RSS_EVERY_MS = 20;
/** The issue's targets. */
export const TARGET_RATIO = 1.2;
export const TARGET_PUSH_MS = 10_000;

const MEMO = path.join(__dirname, 'argon2-memo.js');
/** PUSH_CPU_PROF=<dir>: the chat server writes a V8 CPU profile there when it stops. */
const PROFILE = process.env.PUSH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.PUSH_CPU_PROF)}`] : [];
const MARK = 'pushb-';
const MARK_BYTES = Buffer.from(MARK);
const iso = (at: number) => new Date(at).toISOString();
/** Milliseconds since the epoch, sub-millisecond, comparable between processes on one machine. */
const epoch = () => performance.timeOrigin + performance.now();
/** The Topic header the server sends for a room (src/parts/push/sender.ts). */
const topicOf = (roomId: string) => crypto.createHash('sha256').update(roomId).digest('base64url').slice(0, 32);

// ---------------------------------------------------------------------------------------------
// The receiver: a push service that only counts (run as a child process: `push.js --receiver`)

interface ReceiverStats {
  total: number;
  byEndpoint: Record<string, number>;
  byTopic: Record<string, { n: number; first: number; last: number }>;
  refused: number;
  firstRefusal: string;
}

/** Whether a push request looks like RFC 8291/8292 says; the reason when not. */
function refusal(req: http.IncomingMessage, body: Buffer): string {
  const auth = req.headers.authorization ?? '';
  if (!auth.startsWith('vapid t=') || !/, k=[A-Za-z0-9_-]{87}$/.test(auth)) return `Authorization is "${auth.slice(0, 40)}"`;
  if (req.headers['content-encoding'] !== 'aes128gcm') return `Content-Encoding is ${req.headers['content-encoding']}`;
  // RFC 8188: salt(16) | rs(4) | idlen(1) | keyid(65, the sender's public key) | one record (payload, a delimiter, padding, a 16-byte tag).
  if (body.length < 86 + 17 || body.length > 4096) return `body of ${body.length} bytes`;
  const rs = body.readUInt32BE(16);
  if (body[20] !== 65 || body[21] !== 4) return 'keyid is not a 65-byte P-256 point';
  if (body.length - 86 > rs) return `a record of ${body.length - 86} bytes with rs ${rs}`;
  return '';
}

function runReceiver(): void {
  const stats: ReceiverStats = { total: 0, byEndpoint: {}, byTopic: {}, refused: 0, firstRefusal: '' };
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/stats') {
      const text = JSON.stringify(stats);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return res.end(text);
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = epoch();
      const body = Buffer.concat(chunks);
      const why = req.method === 'POST' && req.url?.startsWith('/push/') ? refusal(req, body) : `${req.method} ${req.url}`;
      if (why) {
        stats.refused++;
        stats.firstRefusal ||= why;
        res.writeHead(400, { 'content-length': '0' });
        return res.end();
      }
      stats.total++;
      const name = req.url!.slice('/push/'.length);
      stats.byEndpoint[name] = (stats.byEndpoint[name] ?? 0) + 1;
      const topic = String(req.headers.topic ?? '');
      const t = (stats.byTopic[topic] ??= { n: 0, first: at, last: at });
      t.n++;
      t.last = at;
      res.writeHead(201, { 'content-length': '0' });
      res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    console.log(`listening on http://127.0.0.1:${port}`);
  });
}

// ---------------------------------------------------------------------------------------------
// Seeding and signing in

interface Member {
  id: string;
  username: string;
  cookie: string;
  /** Where its pushes go (subscribers, and the visible subscribed stream holders). */
  endpointName?: string;
  keys?: { p256dh: string; auth: string };
  subscriptionId?: string;
}

interface Community {
  dataDir: string;
  owner: string;
  serverId: string;
  channelIds: string[];
  subscribers: Member[];
  streamers: Member[];
}

/**
 * The owner, the server and `channels` channels through the real server; then the members
 * straight into SQLite, sharing the owner's real password hash.
 */
async function seed(subscribers: number, streamers: number, channels: number): Promise<Community> {
  const dataDir = tempDir('chat-bench-push-');
  const owner = 'push_owner';
  const chat = await startChat(dataDir);
  let serverId: string;
  const channelIds: string[] = [];
  try {
    const made = await ownerWithChannel(chat.base, owner);
    serverId = made.serverId;
    for (let c = 0; c < channels; c++) {
      channelIds.push((await call(chat.base, 'POST', `/api/servers/${serverId}/channels`, { name: `push-${c}` }, made.cookie)).body.id);
    }
  } finally {
    await chat.stop();
  }
  const db = openForSeeding(dataDir);
  const hash = (db.prepare('SELECT password_hash FROM users WHERE username = ?').get(owner) as { password_hash: string }).password_hash;
  const insertUser = db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const make = (prefix: string, n: number): Member[] =>
    Array.from({ length: n }, (_, i) => ({ id: crypto.randomUUID(), username: `${prefix}_${i}`, cookie: '' }));
  const subs = make('push_sub', subscribers);
  const streams = make('push_stream', streamers);
  const now = Date.now();
  db.transaction(() => {
    for (const [i, u] of [...subs, ...streams].entries()) {
      insertUser.run(u.id, u.username, hash, iso(now));
      insertMember.run(serverId, u.id, iso(now + i));
    }
  })();
  db.close();
  // A browser's subscription: a P-256 key pair (the public point, uncompressed) and 16 random bytes.
  const subscribe = (m: Member, name: string) => {
    const ecdh = crypto.createECDH('prime256v1');
    m.endpointName = name;
    m.keys = { p256dh: ecdh.generateKeys().toString('base64url'), auth: crypto.randomBytes(16).toString('base64url') };
  };
  subs.forEach((m, i) => subscribe(m, `s${i}`));
  streams.slice(0, VISIBLE_SUBSCRIBED).forEach((m, i) => subscribe(m, `v${i}`));
  return { dataDir, owner, serverId: serverId!, channelIds, subscribers: subs, streamers: streams };
}

/** `work` over `items`, CALL_BATCH at a time. */
async function inBatches<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CALL_BATCH) await Promise.all(items.slice(i, i + CALL_BATCH).map(work));
}

/** Every subscription in place (true) or none at all (false), through the API. */
async function setSubscriptions(base: string, members: Member[], endpointBase: string, on: boolean): Promise<void> {
  await inBatches(members, async (m) => {
    if (on && !m.subscriptionId) {
      const { body } = await call(
        base,
        'POST',
        '/api/account/push-subscriptions',
        { endpoint: `${endpointBase}/push/${m.endpointName}`, keys: m.keys },
        m.cookie,
      );
      m.subscriptionId = body.id;
    } else if (!on && m.subscriptionId) {
      const res = await request(base, 'DELETE', `/api/account/push-subscriptions/${m.subscriptionId}`, undefined, { cookie: m.cookie });
      if (res.status !== 204) throw new Error(`DELETE subscription answered ${res.status}: ${res.text.trim()}`);
      m.subscriptionId = undefined;
    }
  });
}

/** chat_push_total by outcome, from one scrape of /metrics. */
async function pushOutcomes(base: string): Promise<Record<string, number>> {
  const text = (await request(base, 'GET', '/metrics')).text;
  const out: Record<string, number> = { sent: 0, gone: 0, failed: 0, dropped: 0 };
  for (const found of text.matchAll(/^chat_push_total\{outcome="(\w+)"\} ([0-9.e+-]+)$/gm)) out[found[1]] = Number(found[2]);
  return out;
}

async function receiverStats(base: string): Promise<ReceiverStats> {
  return JSON.parse((await request(base, 'GET', '/stats')).text) as ReceiverStats;
}

/** The server's RSS every RSS_EVERY_MS, with when. */
function rssTimeline(pid: number): { at: number[]; kb: number[]; peak(from: number, to: number): number; stop(): void } {
  const at: number[] = [];
  const kb: number[] = [];
  const timer = setInterval(() => {
    try {
      kb.push(rssKb(pid));
      at.push(performance.now());
    } catch {
      // The server ended: the figures so far stand.
    }
  }, RSS_EVERY_MS);
  return {
    at,
    kb,
    peak: (from, to) => Math.max(0, ...kb.filter((_, i) => at[i] >= from && at[i] <= to)),
    stop: () => clearInterval(timer),
  };
}

/** CPU time over the rounds of one condition: the server's, the receiver's, this client's (ms), the machine's share busy. */
interface Cpu {
  wallMs: number;
  serverMs: number;
  receiverMs: number;
  clientMs: number;
  machineBusy: number;
  machineTotal: number;
}

const noCpu = (): Cpu => ({ wallMs: 0, serverMs: 0, receiverMs: 0, clientMs: 0, machineBusy: 0, machineTotal: 0 });

/** Starts a CPU window; its stop adds what passed to `into`. */
function cpuWindow(serverPid: number, receiverPid: number): { stop(into: Cpu): void } {
  const wall = performance.now();
  const server = cpuMicros(serverPid);
  const receiver = cpuMicros(receiverPid);
  const client = process.cpuUsage();
  const ticks = machineTicks();
  return {
    stop(into) {
      const used = process.cpuUsage(client);
      const now = machineTicks();
      into.wallMs += performance.now() - wall;
      into.serverMs += (cpuMicros(serverPid) - server) / 1000;
      into.receiverMs += (cpuMicros(receiverPid) - receiver) / 1000;
      into.clientMs += (used.user + used.system) / 1000;
      into.machineBusy += now.busy - ticks.busy;
      into.machineTotal += now.total - ticks.total;
    },
  };
}

/** The server's V8 heap (used, total) and memory outside it (external, array buffers included), KiB, from /metrics. */
async function heap(base: string): Promise<{ usedKb: number; totalKb: number; externalKb: number }> {
  const text = (await request(base, 'GET', '/metrics')).text;
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { usedKb: value('nodejs_heap_size_used_bytes'), totalKb: value('nodejs_heap_size_total_bytes'), externalKb: value('nodejs_external_memory_bytes') };
}

/** The server's event-loop delay since the last scrape (prom-client resets it at each), p99 and max in ms. */
async function loopDelay(base: string): Promise<{ p99: number; max: number }> {
  const text = (await request(base, 'GET', '/metrics')).text;
  const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') };
}

// ---------------------------------------------------------------------------------------------
// The measurement

type Condition = 'push' | 'none';

interface Posted {
  n: number;
  condition: Condition | 'warm-up' | 'burst';
  channelId: string;
  sentAt: number;
  sentEpoch: number;
  /** POST sent to answer read, as the client times it. */
  postMs: number;
  /** POST sent to the last visible stream having it. */
  lastStreamMs: number;
  /** POST sent to the receiver having the last of its pushes (push rounds). */
  lastPushMs: number;
  pushes: number;
}

export interface Side {
  messages: number;
  cpu: Cpu;
  /** The server's event-loop delay: the worst round's p99, the longest delay (ms). */
  loop: { p99: number; max: number };
  postP50: number;
  postP99: number;
  loggedP50: number;
  loggedP99: number;
  streamP50: number;
  streamP99: number;
}

export interface PushFigures {
  subscribers: number;
  streams: number;
  rounds: number;
  roundMessages: number;
  spacingMs: number;
  push: Side;
  none: Side;
  postRatio: number;
  streamRatio: number;
  /** Per pushed message: POST to its last push received; the first of each round (the queue empty) and all of them. */
  pushFirstMax: number;
  pushP50: number;
  pushMax: number;
  /** Pushes received per measured message (fewest), and how many were expected. */
  pushesFewest: number;
  pushesExpected: number;
  /** Subscribers that got exactly one push per pushed message (the warm-up and the measured ones). */
  devicesExact: number;
  /** Pushes a second while a message's pushes drained (its first to its last received), median over the messages. */
  pushRate: number;
  /** Deliveries to the visible streams: made / expected, over every measured message. */
  streamDelivered: number;
  streamExpected: number;
  /** Pushes to subscribers with a visible stream (must be 0) and to hidden-stream subscribers (received / expected). */
  visiblePushed: number;
  hiddenPushed: number;
  hiddenExpected: number;
  rssBeforeKb: number;
  rssPeakKb: number;
  rssAfterKb: number;
  /** RSS at the end of each round, in order (after the warm-up first). */
  rssRoundsKb: number[];
  /** The V8 heap before the first push and at the end of the last round. */
  heapBefore: { usedKb: number; totalKb: number; externalKb: number };
  heapAfter: { usedKb: number; totalKb: number; externalKb: number };
  /** The peak over the "none" rounds, the same streams and posts without pushes. */
  rssPeakNoneKb: number;
  outcomes: Record<string, number>;
  refused: number;
  firstRefusal: string;
  /** The burst: how many devices got 0, 1, 2, more pushes for BURST messages, and the span from the first POST to the last push. */
  burstDevices: number[];
  burstSpanMs: number;
  setupMs: number;
  toggleMs: number;
}

export async function measurePush(subscribers = PUSH_SUBSCRIBERS, streams = PUSH_STREAMS): Promise<PushFigures> {
  const setupStarted = performance.now();
  const warmups = 2;
  const measured = ROUNDS.length * ROUND_MESSAGES;
  const community = await seed(subscribers, streams, warmups + measured + 1);
  const receiver = await startProcess('push-receiver', __filename, { args: ['--receiver'] });
  // The receiver stands for push services on other machines: here it shares the two CPUs with
  // the server and the stream client, so it takes only what they leave (its work is not the
  // server's; it still answers every push, and its CPU is reported).
  os.setPriority(receiver.pid, os.constants.priority.PRIORITY_LOW);
  let server: Started | undefined;
  const sockets: WebSocket[] = [];
  try {
    server = await startChat(community.dataDir, {
      nodeArgs: [...PROFILE, '--require', MEMO],
      env: { METRICS: 'on', PUSH_INSECURE_HOSTS: '127.0.0.1' },
    });
    const base = server.base;
    const ownerCookie = await login(base, community.owner);
    const everyone = [...community.subscribers, ...community.streamers];
    await inBatches(everyone, async (m) => {
      m.cookie = await login(base, m.username);
    });
    const subscribed = everyone.filter((m) => m.keys);
    await setSubscriptions(base, subscribed, receiver.base, true);

    // The streams: the visible ones measure the fan-out; the hidden ones only say they are hidden.
    const total = warmups + measured + BURST;
    const got = new Uint32Array(total);
    const lastAt = new Float64Array(total);
    const onMessage = (data: Buffer) => {
      const at = performance.now();
      const i = data.indexOf(MARK_BYTES);
      if (i < 0) return;
      let n = 0;
      for (let k = i + MARK_BYTES.length; k < data.length; k++) {
        const c = data[k];
        if (c < 48 || c > 57) break;
        n = n * 10 + c - 48;
      }
      if (n >= total) return;
      got[n]++;
      lastAt[n] = at;
    };
    const wsUrl = `${base.replace('http', 'ws')}/api/ws`;
    const open = (cookie: string, handler: (data: Buffer) => void) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(wsUrl, { headers: { cookie }, perMessageDeflate: false });
        ws.on('message', handler);
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
        ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
      });
    for (let i = 0; i < community.streamers.length; i += CONNECT_BATCH) {
      sockets.push(...(await Promise.all(community.streamers.slice(i, i + CONNECT_BATCH).map((m) => open(m.cookie, onMessage)))));
    }
    const hidden = community.subscribers.slice(0, HIDDEN_STREAMS);
    for (const m of hidden) {
      const ws = await open(m.cookie, () => {});
      ws.send(JSON.stringify({ op: 'visibility', visible: false }));
      sockets.push(ws);
    }
    await sleep(SETTLE_MS);
    const setupMs = performance.now() - setupStarted;

    const posted: Posted[] = [];
    let next = 0;
    const post = async (condition: Posted['condition'], channelId: string): Promise<Posted> => {
      const n = next++;
      const p: Posted = { n, condition, channelId, sentAt: performance.now(), sentEpoch: epoch(), postMs: NaN, lastStreamMs: NaN, lastPushMs: NaN, pushes: 0 };
      posted.push(p);
      const res = await request(
        base,
        'POST',
        `/api/servers/${community.serverId}/channels/${channelId}/messages`,
        JSON.stringify({ content: `@everyone ${MARK}${n}- the release is out, please update` }),
        {
          cookie: ownerCookie,
          'content-type': 'application/json',
        },
      );
      p.postMs = performance.now() - p.sentAt;
      if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${res.text.trim()}`);
      return p;
    };
    const streamsHave = async (list: Posted[]) => {
      const deadline = performance.now() + STREAM_TIMEOUT_MS;
      while (list.some((p) => got[p.n] < streams) && performance.now() < deadline) await sleep(5);
      for (const p of list) p.lastStreamMs = got[p.n] === streams ? lastAt[p.n] - p.sentAt : Infinity;
    };
    /** Waits until the receiver has `expected` pushes for each message's channel (or the deadline). */
    const pushesArrive = async (list: Posted[], expected: number) => {
      const deadline = performance.now() + DRAIN_TIMEOUT_MS;
      let stats = await receiverStats(receiver.base);
      while (list.some((p) => (stats.byTopic[topicOf(p.channelId)]?.n ?? 0) < expected) && performance.now() < deadline) {
        await sleep(50);
        stats = await receiverStats(receiver.base);
      }
      for (const p of list) {
        const t = stats.byTopic[topicOf(p.channelId)];
        p.pushes = t?.n ?? 0;
        p.lastPushMs = t ? t.last - p.sentEpoch : Infinity;
      }
      return stats;
    };
    /** ROUND_MESSAGES posts SPACING_MS apart (on the clock, not waiting for answers), each to its own channel. */
    const round = async (condition: Posted['condition'], channels: string[]) => {
      const first = performance.now() + 20;
      const pending: Promise<Posted>[] = [];
      for (const [k, channelId] of channels.entries()) {
        const wait = first + k * SPACING_MS - performance.now();
        if (wait > 0) await sleep(wait);
        pending.push(post(condition, channelId));
      }
      const list = await Promise.all(pending);
      await streamsHave(list);
      return list;
    };

    const rss = rssTimeline(server.pid);
    const rssBeforeKb = rssKb(server.pid);
    const heapBefore = await heap(base);
    const rssRoundsKb: number[] = [];
    const cpu = { push: noCpu(), none: noCpu() };
    const loop = { push: { p99: 0, max: 0 }, none: { p99: 0, max: 0 } };
    let channel = 0;
    const take = (k: number) => community.channelIds.slice(channel, (channel += k));
    const expectedPushes = subscribers;
    // Warm-up: one message each way.
    await pushesArrive(await round('warm-up', take(1)), expectedPushes);
    await sleep(SETTLE_MS);
    rssRoundsKb.push(rssKb(server.pid));
    await setSubscriptions(base, subscribed, receiver.base, false);
    await round('warm-up', take(1));
    let on = false;
    let toggleMs = 0;
    let rssAfterKb = 0;
    let rssPeakKb = 0;
    let rssPeakNoneKb = 0;
    const rates: number[] = [];
    const outcomesBefore = await pushOutcomes(base);
    for (const condition of ROUNDS) {
      if (on !== (condition === 'push')) {
        const t = performance.now();
        on = condition === 'push';
        await setSubscriptions(base, subscribed, receiver.base, on);
        toggleMs += performance.now() - t;
        await sleep(SETTLE_MS);
      }
      await loopDelay(base);
      const from = performance.now();
      const window = cpuWindow(server.pid, receiver.pid);
      const list = await round(condition, take(ROUND_MESSAGES));
      if (condition === 'push') {
        const stats = await pushesArrive(list, expectedPushes);
        for (const p of list) {
          const t = stats.byTopic[topicOf(p.channelId)];
          if (t && t.last > t.first) rates.push(t.n / ((t.last - t.first) / 1000));
        }
        rssPeakKb = Math.max(rssPeakKb, rss.peak(from, performance.now()));
      } else {
        rssPeakNoneKb = Math.max(rssPeakNoneKb, rss.peak(from, performance.now()));
      }
      window.stop(cpu[condition]);
      const delay = await loopDelay(base);
      loop[condition] = { p99: Math.max(loop[condition].p99, delay.p99), max: Math.max(loop[condition].max, delay.max) };
      await sleep(SETTLE_MS);
      rssRoundsKb.push(rssKb(server.pid));
      if (condition === 'push') rssAfterKb = rssRoundsKb[rssRoundsKb.length - 1];
    }
    const outcomesAfter = await pushOutcomes(base);
    const heapAfter = await heap(base);
    const outcomes = Object.fromEntries(Object.entries(outcomesAfter).map(([k, v]) => [k, v - (outcomesBefore[k] ?? 0)]));

    // The burst: BURST messages back to back into one channel. Per device: the first push goes
    // when its turn in the queue comes; the messages posted before then join it, those after it
    // gather into one more, COLLAPSE_MS after it: one or two pushes a device, never more.
    if (!on) await setSubscriptions(base, subscribed, receiver.base, true);
    const before = await receiverStats(receiver.base);
    const burstChannel = take(1)[0];
    const burst: Posted[] = [];
    for (let k = 0; k < BURST; k++) burst.push(await post('burst', burstChannel));
    await streamsHave(burst);
    // Done when every device has had one and nothing more came for COLLAPSE_MS and a second.
    const burstOf = (stats: ReceiverStats) =>
      community.subscribers.map((m) => (stats.byEndpoint[m.endpointName!] ?? 0) - (before.byEndpoint[m.endpointName!] ?? 0));
    let afterBurst = await receiverStats(receiver.base);
    const burstDeadline = performance.now() + DRAIN_TIMEOUT_MS;
    while (performance.now() < burstDeadline) {
      const quiet = epoch() - (afterBurst.byTopic[topicOf(burstChannel)]?.last ?? epoch());
      if (burstOf(afterBurst).every((n) => n > 0) && quiet > COLLAPSE_MS + 1000) break;
      await sleep(200);
      afterBurst = await receiverStats(receiver.base);
    }
    const burstDevices = [0, 0, 0, 0];
    for (const n of burstOf(afterBurst)) burstDevices[Math.min(n, 3)]++;
    rss.stop();

    const final = afterBurst;
    await sleep(SETTLE_MS);
    const logged = new Map<string, number>();
    for (const p of posted.filter((p) => p.condition === 'push' || p.condition === 'none')) {
      const times = loggedTimes(server.logFile, 'POST', `/api/servers/${community.serverId}/channels/${p.channelId}/messages`);
      if (times.length) logged.set(p.channelId, times[0]);
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    const side = (condition: Condition): Side => {
      const list = posted.filter((p) => p.condition === condition);
      const post = sorted(list.map((p) => p.postMs));
      const log = sorted(list.map((p) => logged.get(p.channelId) ?? NaN).filter(Number.isFinite));
      const stream = sorted(list.map((p) => p.lastStreamMs));
      return {
        messages: list.length,
        cpu: cpu[condition],
        loop: loop[condition],
        postP50: percentile(post, 50),
        postP99: percentile(post, 99),
        loggedP50: percentile(log, 50),
        loggedP99: percentile(log, 99),
        streamP50: percentile(stream, 50),
        streamP99: percentile(stream, 99),
      };
    };
    const push = side('push');
    const none = side('none');
    const pushed = posted.filter((p) => p.condition === 'push');
    const pushTimes = sorted(pushed.map((p) => p.lastPushMs));
    const firsts = pushed.filter((_, i) => i % ROUND_MESSAGES === 0).map((p) => p.lastPushMs);
    const perMessage = 1 + pushed.length;
    const measuredPosts = posted.filter((p) => p.condition === 'push' || p.condition === 'none');
    return {
      subscribers,
      streams,
      rounds: ROUNDS.length,
      roundMessages: ROUND_MESSAGES,
      spacingMs: SPACING_MS,
      push,
      none,
      postRatio: push.postP99 / none.postP99,
      streamRatio: push.streamP99 / none.streamP99,
      pushFirstMax: Math.max(...firsts),
      pushP50: percentile(pushTimes, 50),
      pushMax: pushTimes[pushTimes.length - 1],
      pushesFewest: Math.min(...pushed.map((p) => p.pushes)),
      pushesExpected: expectedPushes,
      devicesExact: community.subscribers.filter((m) => before.byEndpoint[m.endpointName!] === perMessage).length,
      pushRate: percentile(sorted(rates), 50),
      streamDelivered: measuredPosts.reduce((sum, p) => sum + Math.min(got[p.n], streams), 0),
      streamExpected: measuredPosts.length * streams,
      visiblePushed: community.streamers.slice(0, VISIBLE_SUBSCRIBED).reduce((sum, m) => sum + (final.byEndpoint[m.endpointName!] ?? 0), 0),
      // Each: the warm-up and the measured push messages (the burst apart).
      hiddenPushed: hidden.reduce((sum, m) => sum + (before.byEndpoint[m.endpointName!] ?? 0), 0),
      hiddenExpected: hidden.length * perMessage,
      rssBeforeKb,
      rssPeakKb,
      rssAfterKb,
      rssRoundsKb,
      heapBefore,
      heapAfter,
      rssPeakNoneKb,
      outcomes,
      refused: final.refused,
      firstRefusal: final.firstRefusal,
      burstDevices,
      burstSpanMs: (afterBurst.byTopic[topicOf(burstChannel)]?.last ?? NaN) - burst[0].sentEpoch,
      setupMs,
      toggleMs,
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await server?.stop();
    await receiver.stop();
  }
}

export const pushSetup = (f: { subscribers: number; streams: number; rounds: number; roundMessages: number; spacingMs: number }) =>
  `one server of ${f.subscribers + f.streams} members: ${f.subscribers} with a push subscription on a local receiver (${HIDDEN_STREAMS} of them with a hidden stream), ${f.streams} with a visible user stream (${VISIBLE_SUBSCRIBED} of them subscribed too); the owner posts @everyone every ${f.spacingMs / 1000} s, ${f.roundMessages} a round, each in a channel of its own; ${f.rounds} rounds taking turns (ABBA BAAB) between every subscription in place and none at all`;

const share = (cpuMs: number, wallMs: number) => `${((100 * cpuMs) / wallMs).toFixed(0)} %`;

export function pushRows(f: PushFigures): Row[] {
  const pair = (a: number, b: number) => `${ms(a)} / ${ms(b)}`;
  const failed = f.outcomes.dropped + f.outcomes.failed + f.outcomes.gone;
  const cpu = (c: Cpu) =>
    `server ${share(c.serverMs, c.wallMs)}, receiver ${share(c.receiverMs, c.wallMs)}, client ${share(c.clientMs, c.wallMs)} of a core; machine ${((100 * c.machineBusy) / Math.max(1, c.machineTotal)).toFixed(0)} % busy`;
  const [none, one, two, more] = f.burstDevices;
  return [
    ['POST, client, p50 / p99: with pushes; without', `${pair(f.push.postP50, f.push.postP99)}; ${pair(f.none.postP50, f.none.postP99)}`, '', ''],
    [
      'POST as the server logs it, p50 / p99: with; without',
      `${pair(f.push.loggedP50, f.push.loggedP99)}; ${pair(f.none.loggedP50, f.none.loggedP99)}`,
      '',
      '',
    ],
    ['POST p99 (client): with pushes / without', `${f.postRatio.toFixed(2)}x`, `<= ${TARGET_RATIO}x`, verdict(f.postRatio <= TARGET_RATIO)],
    [
      `last of ${f.streams} streams has it, p50 / p99: with; without`,
      `${pair(f.push.streamP50, f.push.streamP99)}; ${pair(f.none.streamP50, f.none.streamP99)}`,
      '',
      '',
    ],
    ['stream fan-out p99: with pushes / without', `${f.streamRatio.toFixed(2)}x`, `<= ${TARGET_RATIO}x`, verdict(f.streamRatio <= TARGET_RATIO)],
    [
      'stream deliveries (every visible stream every message)',
      `${f.streamDelivered} of ${f.streamExpected}`,
      'all',
      verdict(f.streamDelivered === f.streamExpected),
    ],
    [
      'server event-loop delay, worst round p99 / longest: with; without',
      `${pair(f.push.loop.p99, f.push.loop.max)}; ${pair(f.none.loop.p99, f.none.loop.max)}`,
      '',
      '',
    ],
    ['CPU over the rounds with pushes (posting and draining)', cpu(f.push.cpu), '', ''],
    ['CPU over the rounds without', cpu(f.none.cpu), '', ''],
    [
      `one @everyone (the first of a round, the queue empty): POST to the last of its ${f.pushesExpected} pushes received, worst`,
      ms(f.pushFirstMax),
      `<= ${TARGET_PUSH_MS / 1000} s`,
      verdict(f.pushFirstMax <= TARGET_PUSH_MS && f.pushesFewest >= f.pushesExpected),
    ],
    [
      `all ${f.push.messages} (the later ones of a round queue behind the earlier ones' pushes): POST to the last push, p50 / max`,
      pair(f.pushP50, f.pushMax),
      '',
      '',
    ],
    [
      'pushes received per message, fewest; devices with exactly one per message',
      `${f.pushesFewest} of ${f.pushesExpected}; ${f.devicesExact} of ${f.subscribers}`,
      'all; all',
      verdict(f.pushesFewest >= f.pushesExpected && f.devicesExact === f.subscribers),
    ],
    ["pushes a second while a message's pushes drained, median", `${f.pushRate.toFixed(0)}/s (${(1000 / f.pushRate).toFixed(2)} ms a push)`, '', ''],
    [
      'chat_push_total over the rounds: sent / gone / failed / dropped',
      `${f.outcomes.sent} / ${f.outcomes.gone} / ${f.outcomes.failed} / ${f.outcomes.dropped}`,
      'none but sent',
      verdict(failed === 0),
    ],
    [
      'pushes refused by the receiver (VAPID header, aes128gcm body)',
      `${f.refused}${f.firstRefusal ? ` (first: ${f.firstRefusal})` : ''}`,
      '0',
      verdict(f.refused === 0),
    ],
    [
      `pushes to the ${VISIBLE_SUBSCRIBED} subscribers with a visible stream; to the ${HIDDEN_STREAMS} with a hidden one`,
      `${f.visiblePushed}; ${f.hiddenPushed} of ${f.hiddenExpected}`,
      '0; all',
      verdict(f.visiblePushed === 0 && f.hiddenPushed === f.hiddenExpected),
    ],
    [
      'server RSS: before the first push, peak while pushes drained, after the last push round',
      `${mib(f.rssBeforeKb)}, ${mib(f.rssPeakKb)} (+${mib(f.rssPeakKb - f.rssBeforeKb)}), ${mib(f.rssAfterKb)}`,
      '',
      '',
    ],
    ['server RSS at the end of each round (warm-up first), MiB', f.rssRoundsKb.map((kb) => (kb / 1024).toFixed(0)).join(', '), '', ''],
    ['server RSS peak in the rounds without pushes', mib(f.rssPeakNoneKb), '', ''],
    [
      'server V8 heap used / total, external: before the first push; after the rounds',
      `${mib(f.heapBefore.usedKb)} / ${mib(f.heapBefore.totalKb)}, ${mib(f.heapBefore.externalKb)}; ${mib(f.heapAfter.usedKb)} / ${mib(f.heapAfter.totalKb)}, ${mib(f.heapAfter.externalKb)}`,
      '',
      '',
    ],
    [
      `burst: ${BURST} messages back to back into one channel; devices with 0 / 1 / 2 / more pushes`,
      `${none} / ${one} / ${two} / ${more} (the last push ${(f.burstSpanMs / 1000).toFixed(1)} s after the first POST)`,
      '1 or 2 each',
      verdict(none === 0 && more === 0),
    ],
    [
      'set-up (seed, sign-in, subscribe, connect); subscriptions deleted and made again',
      `${(f.setupMs / 1000).toFixed(1)} s; ${(f.toggleMs / 1000).toFixed(1)} s`,
      '',
      '',
    ],
  ];
}

if (require.main === module && process.argv.includes('--receiver')) runReceiver();
else
  runAlone(module, 'push', async () => {
    const f = await measurePush();
    printTable(`14. Web push: ${pushSetup(f)}`, pushRows(f));
  });
