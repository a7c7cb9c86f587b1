/**
 * The user stream, GET /api/ws (issue 16), in three parts:
 *
 * a. Fan-out: one server of 2 000 members (plus its owner, who posts), each member with one user
 *    stream open; the owner posts 10 messages/s for STREAM_SECONDS (30) into one channel, open
 *    loop (on a clock, not waiting for deliveries). The baseline, bench/bare-broadcast.ts, has as
 *    many sockets of this client open at the same time and is fed the chat server's own frames
 *    (the same bytes) at the same rate; the two take turns in blocks of 5 s, each drained before
 *    the next, so a noisy moment on a shared machine hits both alike. Reported: per message, the
 *    time from sending the POST to the last stream having it (p50, p99; the issue's target: chat
 *    p99 <= 1.5 x bare), every delivery's latency, whether every stream got every message, and
 *    the CPU time of each server, of this client and of the whole machine during the blocks, so
 *    the output says which side was saturated.
 * b. Presence: 2 000 users, all members of one server (over the 250-member presence limit), each
 *    with 20 friends (a ring: the 10 on either side), connecting one by one over 10 s. Counted:
 *    presence events received, from friends and from anyone else (the rule: a change goes to
 *    friends and to members of servers of at most 250 members, so none may come through the big
 *    server), frames the server sent (its /metrics), and server CPU per connection against a bare
 *    `ws` server taking the same connections.
 * c. Ready: one user in 100 servers x 20 channels with 20 000 messages (some unread, some
 *    mentioning them), three channels in four with overwrites (issue 30), 25 conversations, 50 friends and 5 incoming requests; 200 connects one
 *    at a time (after 20 warm-up). Reported: the `ready` frame's size, and the time from the
 *    upgrade to the ready frame as the server's request log times it (authorize, handshake,
 *    subscribe, build and write `ready`; target: p99 <= 20 ms), and as the client sees it, beside
 *    a bare `ws` server sending the same bytes on each connect (the socket, the handshake and the
 *    transfer to this client on this machine, nothing built).
 *
 * Users are seeded straight into SQLite with one real argon2 hash of the bench password; the
 * servers that need thousands of sessions get bench/argon2-memo.js preloaded so the 2 000 logins
 * (sessions live in memory: each must be a real POST /api/login) verify that hash once.
 *
 * Run alone: node dist-bench/bench/user-stream.js [fanout] [presence] [ready]   (default all three;
 * or USER_STREAM=fanout,ready). STREAM_MEMBERS (2000) and STREAM_SECONDS (30) change the load.
 * Everything listens on 127.0.0.1, in temporary directories, and stops by itself.
 */
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type RecordableHistogram, createHistogram } from 'node:perf_hooks';
import WebSocket from 'ws';
import {
  type Row,
  type Started,
  loggedTimes,
  login,
  median,
  ms,
  openForSeeding,
  ownerWithChannel,
  percentile,
  printTable,
  register,
  request,
  runAlone,
  sleep,
  startChat,
  startProcess,
  tempDir,
  verdict,
  machineTicks,
} from './lib';

export const STREAM_MEMBERS = Number(process.env.STREAM_MEMBERS ?? 2000);
export const STREAM_SECONDS = Number(process.env.STREAM_SECONDS ?? 30);
const RATE = 10;
/** Chat and bare take turns posting, this long each. */
const BLOCK_SECONDS = 5;
/** Posted first (two seconds at the rate) and not measured. */
const WARMUP_MESSAGES = 20;
const CONNECT_BATCH = 100;
/** After the last post, how long the last deliveries may take before the run counts them lost. */
const DRAIN_TIMEOUT_MS = 10_000;
const SETTLE_MS = 1_000;
/** The issue's targets. */
export const TARGET_P99_RATIO = 1.5;
export const TARGET_READY_P99_MS = 20;

const PRESENCE_FRIENDS = 20;
const PRESENCE_WINDOW_MS = 10_000;

const READY_SERVERS = 100;
const READY_CHANNELS = 20;
const READY_MESSAGES_PER_CHANNEL = 10;
const READY_FRIENDS = 50;
const READY_DMS = 20;
const READY_GROUPS = 5;
const READY_REQUESTS = 5;
export const READY_CONNECTS = 200;
/**
 * Threads (issue 49, part ready-threads): a channel of the first server with this many threads,
 * READY_ACTIVE_THREADS of them active (a server's cap) and the rest archived; the reader follows
 * READY_FOLLOWED_THREADS of the active ones, each with messages (some unread, some mentions).
 */
export const READY_THREADS = 10_000;
const READY_ACTIVE_THREADS = 1000;
const READY_FOLLOWED_THREADS = 100;
const READY_WARMUP = 20;

/** In every fan-out message's content: `ufan-<n>-`, found in a frame with one indexOf. */
const MARK = 'ufan-';
const MARK_BYTES = Buffer.from(MARK);
const marker = (n: number) => `${MARK}${n}-`;

const MEMO = path.join(__dirname, 'argon2-memo.js');
/** STREAM_CPU_PROF=<dir>: the measured chat servers write a V8 CPU profile there when they stop. */
const PROFILE = process.env.STREAM_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.STREAM_CPU_PROF)}`] : [];
const iso = (at: number) => new Date(at).toISOString();

// ---------------------------------------------------------------------------------------------
// CPU time

let clockTicks = 0;

/** A process's user + system CPU time in ms, from /proc/<pid>/stat (10 ms resolution). */
export function cpuMs(pid: number): number {
  clockTicks ||= (() => {
    try {
      return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
    } catch {
      return 100;
    }
  })();
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after "(comm) ": state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** CPU of the chat server, of this client and of the whole machine over a window, and the wall time. */
interface CpuWindow {
  wallMs: number;
  serverMs: number;
  clientMs: number;
  /** Share of all the machine's CPUs busy (every process), 0..1. */
  machine: number;
}

function cpuWindow(pid: number): { stop(): CpuWindow } {
  const wall = performance.now();
  const server = cpuMs(pid);
  const client = process.cpuUsage();
  const ticks = machineTicks();
  return {
    stop() {
      const used = process.cpuUsage(client);
      const now = machineTicks();
      return {
        wallMs: performance.now() - wall,
        serverMs: cpuMs(pid) - server,
        clientMs: (used.user + used.system) / 1000,
        machine: (now.busy - ticks.busy) / Math.max(1, now.total - ticks.total),
      };
    },
  };
}

const share = (cpu: number, wall: number) => `${((100 * cpu) / wall).toFixed(0)} %`;
const CPUS = os.availableParallelism();

/**
 * Which side was saturated: a process near a full core (one event loop) is; when neither is but
 * every CPU of the machine was busy, the other processes on it were taking the time.
 */
function saturated(w: CpuWindow): string {
  const s = w.serverMs / w.wallMs;
  const c = w.clientMs / w.wallMs;
  const busy = [s >= 0.85 ? 'server' : '', c >= 0.85 ? 'client' : ''].filter(Boolean);
  const machine = `machine ${(100 * w.machine).toFixed(0)} % of ${CPUS} CPUs busy`;
  if (busy.length) return `${busy.join(' and ')} (>= 85 % of a core); ${machine}`;
  if (w.machine >= 0.9) return `the machine: ${machine}, server + client only ${share(w.serverMs + w.clientMs, w.wallMs * CPUS)} of it`;
  return `neither (both < 85 % of a core); ${machine}`;
}

// ---------------------------------------------------------------------------------------------
// Seeding

interface User {
  id: string;
  username: string;
}

interface Community {
  dataDir: string;
  owner: string;
  serverId: string;
  channelId: string;
  members: User[];
  /** Friends of member i, as member indexes. */
  friendsOf: (i: number) => number[];
}

/**
 * One server made through the real server (owner, server, its first channel), then `members`
 * users seeded straight into SQLite as its members, sharing the owner's real password hash,
 * each with `friends` friends (a ring: friends/2 on either side).
 */
/**
 * `seeing: 'half'`: the channel is private to a role every other member holds (everyone denied
 * view_channel, the role allowed it), so half the streams receive its messages (issue 30).
 */
async function seedCommunity(members: number, friends: number, prefix: string, seeing: 'all' | 'half' = 'all'): Promise<Community> {
  const dataDir = tempDir(`chat-bench-${prefix}-`);
  const owner = `${prefix}_owner`;
  const chat = await startChat(dataDir);
  let serverId: string;
  let channelId: string;
  try {
    ({ serverId, channelId } = await ownerWithChannel(chat.base, owner));
  } finally {
    await chat.stop();
  }
  const db = openForSeeding(dataDir);
  const hash = (db.prepare('SELECT password_hash FROM users WHERE username = ?').get(owner) as { password_hash: string }).password_hash;
  const insertUser = db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const insertFriend = db.prepare(
    "INSERT INTO friend_requests (id, from_user, to_user, status, pair_key, created_at, accepted_at) VALUES (?, ?, ?, 'accepted', ?, ?, ?)",
  );
  const list: User[] = Array.from({ length: members }, (_, i) => ({ id: crypto.randomUUID(), username: `${prefix}_${i}` }));
  const half = Math.min(friends / 2, Math.floor((members - 1) / 2));
  const now = Date.now();
  db.transaction(() => {
    for (const [i, u] of list.entries()) {
      insertUser.run(u.id, u.username, hash, iso(now));
      insertMember.run(serverId, u.id, iso(now + i));
    }
    if (seeing === 'half') {
      const roleId = crypto.randomUUID();
      db.prepare("INSERT INTO roles (id, server_id, name, created_at) VALUES (?, ?, 'half', ?)").run(roleId, serverId, iso(now));
      const holds = db.prepare('INSERT INTO member_roles (server_id, user_id, role_id) VALUES (?, ?, ?)');
      for (let i = 0; i < members; i += 2) holds.run(serverId, list[i].id, roleId);
      const overwrite = db.prepare('INSERT INTO channel_overwrites (channel_id, target_id, kind, allow, deny, server_id) VALUES (?, ?, ?, ?, ?, ?)');
      overwrite.run(channelId, serverId, 'everyone', 0, 1, serverId);
      overwrite.run(channelId, roleId, 'role', 1, 0, serverId);
    }
    for (let i = 0; i < members; i++) {
      for (let d = 1; d <= half; d++) {
        const a = list[i].id;
        const b = list[(i + d) % members].id;
        insertFriend.run(crypto.randomUUID(), a, b, a < b ? `${a}:${b}` : `${b}:${a}`, iso(now), iso(now));
      }
    }
  })();
  db.close();
  return {
    dataDir,
    owner,
    serverId,
    channelId,
    members: list,
    friendsOf: (i) => Array.from({ length: 2 * half }, (_, k) => (k < half ? (i + k + 1) % members : (i - (k - half) - 1 + members) % members)),
  };
}

/** The chat server on a seeded directory, with the login memo; every member signed in (cookies by index). */
async function startSignedIn(community: Community): Promise<{ server: Started; cookies: string[]; ownerCookie: string; signInMs: number }> {
  const server = await startChat(community.dataDir, { nodeArgs: [...PROFILE, '--require', MEMO], env: { METRICS: 'on' } });
  const started = performance.now();
  const ownerCookie = await login(server.base, community.owner);
  const cookies: string[] = [];
  for (let i = 0; i < community.members.length; i += 50) {
    cookies.push(...(await Promise.all(community.members.slice(i, i + 50).map((u) => login(server.base, u.username)))));
  }
  return { server, cookies, ownerCookie, signInMs: performance.now() - started };
}

/** Counters or gauges from one scrape of the server's /metrics (METRICS=on). */
async function metrics(base: string, names: string[]): Promise<number[]> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return names.map((name) => {
    const found = new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text);
    if (!found) throw new Error(`/metrics has no ${name}`);
    return Number(found[1]);
  });
}

const metric = async (base: string, name: string) => (await metrics(base, [name]))[0];

/** Opens a socket; resolves once open. */
function open(url: string, cookie: string, onMessage: (data: Buffer) => void, label: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers: cookie ? { cookie } : {}, perMessageDeflate: false });
  ws.on('message', onMessage);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', (err) => reject(new Error(`${label}: ${err.message}`)));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`${label}: upgrade answered ${res.statusCode}`)));
  });
}

const closeAll = (sockets: WebSocket[]) => {
  for (const ws of sockets) ws.terminate();
};

const sorted = (values: ArrayLike<number>) => Float64Array.from(values).sort() as unknown as number[];

// ---------------------------------------------------------------------------------------------
// a. Fan-out

interface FanoutTarget {
  name: string;
  server: Started;
  url: string;
  cookies: string[];
  post(n: number): Promise<void>;
  /** The server's own event-loop delay since the last call (ms), where it can tell. */
  loopLag?(): Promise<{ p99: number; max: number }>;
}

export interface FanoutResult {
  /** Per message: POST sent to the last stream having it. */
  lastP50: number;
  lastP99: number;
  /** Every delivery: POST sent to that stream having it. */
  eachP50: number;
  eachP99: number;
  /** Deliveries made / expected over the measured messages. */
  delivered: number;
  expected: number;
  connectMs: number;
  /** Messages posted per second within the blocks. */
  rate: number;
  frameBytes: number;
  /** Summed over this target's blocks. */
  cpu: CpuWindow;
  /** This client's event-loop delay during this target's blocks, p99 and max (ms). */
  clientLag: { p99: number; max: number };
  /** The server's event-loop delay during its blocks: the highest block p99 and the longest delay (ms); null when not known. */
  serverLag: { p99: number; max: number } | null;
}

/**
 * This client's event-loop delay into `into` (ns) until stopped: a 5 ms timer, each tick's
 * lateness recorded. (perf_hooks' own monitor cannot be paused between blocks: re-enabled, it
 * counts the pause as one long delay.)
 */
function sampleLag(into: RecordableHistogram): () => void {
  const EVERY_MS = 5;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    into.record(Math.max(1, Math.round((now - last - EVERY_MS) * 1e6)));
    last = now;
  }, EVERY_MS);
  return () => clearInterval(timer);
}

/** One target's sockets and what they received. */
class FanoutRun {
  readonly total: number;
  readonly sentAt: Float64Array;
  readonly got: Uint32Array;
  readonly lastAt: Float64Array;
  readonly each: Float64Array;
  eachCount = 0;
  frameBytes = 0;
  readonly sockets: WebSocket[] = [];
  /** This client's event-loop delay, over the measured blocks only (each block's own monitor, added here). */
  readonly lag = createHistogram();
  readonly failures: string[] = [];
  cpu: CpuWindow = { wallMs: 0, serverMs: 0, clientMs: 0, machine: 0 };
  connectMs = 0;
  postingMs = 0;
  posted = 0;
  serverLag: { p99: number; max: number } | null = null;
  private block = { from: 0, to: 0, left: 0, done: () => {} };

  /** Sockets that receive each message: every one, or (a channel half the members see) half. */
  readonly receivers: number;

  constructor(
    readonly target: FanoutTarget,
    readonly members: number,
    measured: number,
    private readonly capture?: (frame: string) => void,
    receivers = members,
  ) {
    this.receivers = receivers;
    this.total = WARMUP_MESSAGES + measured;
    this.sentAt = new Float64Array(this.total);
    this.got = new Uint32Array(this.total);
    this.lastAt = new Float64Array(this.total);
    this.each = new Float64Array(measured * receivers);
  }

  // The hot path: 20 000 frames a second on two cores. One indexOf for the marker and a digit
  // loop; no JSON.parse, no string.
  private readonly onMessage = (data: Buffer) => {
    const at = performance.now();
    const i = data.indexOf(MARK_BYTES);
    if (i < 0) return;
    let n = 0;
    for (let k = i + MARK_BYTES.length; k < data.length; k++) {
      const c = data[k];
      if (c < 48 || c > 57) break;
      n = n * 10 + c - 48;
    }
    if (n >= this.total) return;
    this.lastAt[n] = at;
    if (n >= WARMUP_MESSAGES) this.each[this.eachCount++] = at - this.sentAt[n];
    else if (n === WARMUP_MESSAGES - 1 && this.got[n] === 0) {
      this.frameBytes = data.length;
      this.capture?.(data.toString());
    }
    if (++this.got[n] === this.receivers && n >= this.block.from && n < this.block.to && --this.block.left === 0) this.block.done();
  };

  async connect(): Promise<void> {
    const started = performance.now();
    const { target, members } = this;
    for (let i = 0; i < members; i += CONNECT_BATCH) {
      const batch = Array.from({ length: Math.min(CONNECT_BATCH, members - i) }, (_, j) =>
        open(target.url, target.cookies[(i + j) % target.cookies.length], this.onMessage, `${target.name}: socket ${i + j}`),
      );
      this.sockets.push(...(await Promise.all(batch)));
    }
    this.connectMs = performance.now() - started;
  }

  /**
   * Posts messages [from, to) at RATE a second, open loop (on the clock, whatever the
   * deliveries do), then waits until every socket has them (or DRAIN_TIMEOUT_MS). Measured
   * blocks add to this target's CPU and event-loop figures.
   */
  async postBlock(from: number, to: number): Promise<void> {
    const measured = from >= WARMUP_MESSAGES;
    // Scraped before and after the block (each scrape resets it), outside the CPU window.
    if (measured) await this.target.loopLag?.();
    const done = new Promise<void>((resolve) => {
      this.block = { from, to, left: to - from, done: resolve };
    });
    const window = cpuWindow(this.target.server.pid);
    const stopLag = measured ? sampleLag(this.lag) : () => {};
    const first = performance.now() + 20;
    for (let n = from; n < to; n++) {
      const wait = first + ((n - from) * 1000) / RATE - performance.now();
      if (wait > 0) await sleep(wait);
      this.sentAt[n] = performance.now();
      this.target.post(n).catch((err: Error) => this.failures.push(err.message));
    }
    const postedFor = this.sentAt[to - 1] - this.sentAt[from];
    await Promise.race([done, sleep(DRAIN_TIMEOUT_MS)]);
    const cpu = window.stop();
    stopLag();
    if (this.failures.length) throw new Error(`${this.target.name}: ${this.failures.length} posts failed (first: ${this.failures[0]})`);
    if (!measured) return;
    const loop = await this.target.loopLag?.();
    if (loop) this.serverLag = { p99: Math.max(loop.p99, this.serverLag?.p99 ?? 0), max: Math.max(loop.max, this.serverLag?.max ?? 0) };
    const c = this.cpu;
    c.machine = (c.machine * c.wallMs + cpu.machine * cpu.wallMs) / (c.wallMs + cpu.wallMs);
    c.wallMs += cpu.wallMs;
    c.serverMs += cpu.serverMs;
    c.clientMs += cpu.clientMs;
    this.postingMs += postedFor;
    this.posted += to - from - 1;
  }

  result(): FanoutResult {
    const measured = this.total - WARMUP_MESSAGES;
    const lasts = sorted(
      Array.from({ length: measured }, (_, k) => {
        const n = WARMUP_MESSAGES + k;
        return this.got[n] === this.receivers ? this.lastAt[n] - this.sentAt[n] : Infinity;
      }),
    );
    const each = sorted(this.each.subarray(0, this.eachCount));
    return {
      lastP50: percentile(lasts, 50),
      lastP99: percentile(lasts, 99),
      eachP50: percentile(each, 50),
      eachP99: percentile(each, 99),
      delivered: this.eachCount,
      expected: measured * this.receivers,
      connectMs: this.connectMs,
      rate: this.posted / (this.postingMs / 1000),
      frameBytes: this.frameBytes,
      cpu: { ...this.cpu },
      clientLag: { p99: this.lag.percentile(99) / 1e6, max: this.lag.max / 1e6 },
      serverLag: this.serverLag,
    };
  }

  async close(): Promise<void> {
    closeAll(this.sockets);
    await this.target.server.stop();
  }
}

export interface StreamFanoutFigures {
  members: number;
  /** Who sees the channel: every member, or half of them. */
  seeing: 'all' | 'half';
  seconds: number;
  blocks: number;
  signInMs: number;
  chat: FanoutResult;
  bare: FanoutResult;
  /** chat p99 / bare p99, to the last stream. */
  ratio: number;
  /** The measured POSTs as the chat server's request log times them (arrival to response written). */
  post: { p50: number; p99: number; max: number };
}

/**
 * Both servers run at once, each with its own `members` sockets open, and take turns posting
 * in blocks of BLOCK_SECONDS (chat, bare, chat, bare...), each block drained before the next:
 * a noisy moment on a shared machine hits both alike, and only one is ever posting.
 */
export async function measureStreamFanout(members = STREAM_MEMBERS, seconds = STREAM_SECONDS, seeing: 'all' | 'half' = 'all'): Promise<StreamFanoutFigures> {
  const community = await seedCommunity(members, 0, 'sfan', seeing);
  // With half seeing, the even members (the role's holders) receive; the bare server sends to every other socket.
  const receivers = seeing === 'half' ? Math.ceil(members / 2) : members;
  const blocks = Math.max(1, Math.round(seconds / BLOCK_SECONDS));
  const perBlock = Math.round((seconds * RATE) / blocks);
  const measured = blocks * perBlock;
  const { server, cookies, ownerCookie, signInMs } = await startSignedIn(community);
  const messagesUrl = `/api/servers/${community.serverId}/channels/${community.channelId}/messages`;
  const body = (n: number) => JSON.stringify({ content: `${marker(n)} the build is green again, ship it after lunch` });
  let frame = '';
  const chat = new FanoutRun(
    {
      name: 'chat',
      server,
      url: `${server.base.replace('http', 'ws')}/api/ws`,
      cookies,
      post: async (n) => {
        const res = await request(server.base, 'POST', messagesUrl, body(n), { cookie: ownerCookie, 'content-type': 'application/json' });
        if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${res.text.trim()}`);
      },
      loopLag: async () => {
        // One scrape for both: prom-client resets the histogram at every scrape.
        const [p99, max] = await metrics(server.base, ['nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds']);
        return { p99: p99 * 1000, max: max * 1000 };
      },
    },
    members,
    measured,
    (captured) => (frame = captured),
    receivers,
  );
  let bare: FanoutRun | undefined;
  try {
    const bareServer = await startProcess('bare', path.join(__dirname, 'bare-broadcast.js'));
    const captured = marker(WARMUP_MESSAGES - 1);
    bare = new FanoutRun(
      {
        name: 'bare ws',
        server: bareServer,
        url: `${bareServer.base.replace('http', 'ws')}/`,
        cookies: [''],
        post: async (n) => {
          // The chat server's own frame, this message's marker in it: the same bytes.
          const res = await request(
            bareServer.base,
            'POST',
            '/messages',
            JSON.stringify({ content: marker(n), frame: frame.replace(captured, marker(n)), every: seeing === 'half' ? 2 : 1 }),
          );
          if (res.status !== 201) throw new Error(`bare server answered ${res.status}`);
        },
      },
      members,
      measured,
      undefined,
      receivers,
    );
    await chat.connect();
    await bare.connect();
    await sleep(SETTLE_MS);
    // Warm-up: chat first, so its frame is known when the bare server's turn comes.
    await chat.postBlock(0, WARMUP_MESSAGES);
    if (!frame) throw new Error('no chat frame captured for the bare server');
    await bare.postBlock(0, WARMUP_MESSAGES);
    for (let b = 0; b < blocks; b++) {
      const from = WARMUP_MESSAGES + b * perBlock;
      await chat.postBlock(from, from + perBlock);
      await bare.postBlock(from, from + perBlock);
    }
    const c = chat.result();
    const r = bare.result();
    // The request log reaches its file once per event-loop turn.
    await sleep(SETTLE_MS);
    const logged = loggedTimes(server.logFile, 'POST', messagesUrl)
      .slice(WARMUP_MESSAGES)
      .sort((a, b) => a - b);
    const post = { p50: percentile(logged, 50), p99: percentile(logged, 99), max: logged[logged.length - 1] };
    return { members, seeing, seconds: measured / RATE, blocks, signInMs, chat: c, bare: r, ratio: c.lastP99 / r.lastP99, post };
  } finally {
    await chat.close();
    await bare?.close();
  }
}

export const streamFanoutSetup = (f: { members: number; seeing: 'all' | 'half'; seconds: number; blocks: number }) =>
  `${f.members} members of one server, one user stream each; the owner posts ${RATE}/s into one channel ${f.seeing === 'half' ? 'private to a role half of them hold (everyone denied view_channel; the bare server sends to every other socket) ' : ''}for ${f.seconds} s (after ${WARMUP_MESSAGES} warm-up); bare ws: as many sockets, the same rate and frames; the two take turns in ${f.blocks} blocks of ${f.seconds / f.blocks} s`;

export function streamFanoutRows(f: StreamFanoutFigures): Row[] {
  const { chat, bare } = f;
  const cpu = (r: FanoutResult) =>
    `${share(r.cpu.serverMs, r.cpu.wallMs)} server, ${share(r.cpu.clientMs, r.cpu.wallMs)} client (${(r.cpu.serverMs / (f.seconds * RATE)).toFixed(1)} ms server CPU a message)`;
  return [
    ['chat: last stream has it, p50 / p99', `${ms(chat.lastP50)} / ${ms(chat.lastP99)}`, '', ''],
    ['bare ws: last socket has it, p50 / p99', `${ms(bare.lastP50)} / ${ms(bare.lastP99)}`, '', ''],
    ['p99 to the last stream: chat / bare', `${f.ratio.toFixed(2)}x`, `<= ${TARGET_P99_RATIO}x`, verdict(f.ratio <= TARGET_P99_RATIO)],
    ['chat: every delivery, p50 / p99', `${ms(chat.eachP50)} / ${ms(chat.eachP99)}`, '', ''],
    ['bare ws: every delivery, p50 / p99', `${ms(bare.eachP50)} / ${ms(bare.eachP99)}`, '', ''],
    ['chat: deliveries (every stream every message)', `${chat.delivered} of ${chat.expected}`, 'all', verdict(chat.delivered === chat.expected)],
    ['bare ws: deliveries', `${bare.delivered} of ${bare.expected}`, '', ''],
    ['chat: CPU during its blocks (of one core)', cpu(chat), '', ''],
    ['bare ws: CPU during its blocks (of one core)', cpu(bare), '', ''],
    ['saturated: chat blocks; bare blocks', `${saturated(chat.cpu)}; ${saturated(bare.cpu)}`, '', ''],
    ['chat: POST as the server logs it, p50 / p99 / max', `${ms(f.post.p50)} / ${ms(f.post.p99)} / ${ms(f.post.max)}`, '', ''],
    ['chat: server event-loop delay, worst block p99 / longest', chat.serverLag ? `${ms(chat.serverLag.p99)} / ${ms(chat.serverLag.max)}` : 'unknown', '', ''],
    [
      'client event-loop delay p99 / max: chat blocks; bare blocks',
      `${ms(chat.clientLag.p99)} / ${ms(chat.clientLag.max)}; ${ms(bare.clientLag.p99)} / ${ms(bare.clientLag.max)}`,
      '',
      '',
    ],
    ['posting rate achieved: chat; bare', `${chat.rate.toFixed(2)}/s; ${bare.rate.toFixed(2)}/s`, '', ''],
    ['frame bytes: chat; bare', `${chat.frameBytes}; ${bare.frameBytes}`, '', ''],
    [
      `${f.members} sockets connected in: chat; bare (batches of ${CONNECT_BATCH})`,
      `${(chat.connectMs / 1000).toFixed(1)} s; ${(bare.connectMs / 1000).toFixed(1)} s`,
      '',
      '',
    ],
  ];
}

// ---------------------------------------------------------------------------------------------
// b. Presence

interface ConnectStorm {
  connects: number;
  cpu: CpuWindow;
  /** Upgrade sent to the socket open (and, for chat, to its ready frame), p50 / p99. */
  openP50: number;
  openP99: number;
}

export interface PresenceFigures {
  members: number;
  friends: number;
  signInMs: number;
  chat: ConnectStorm;
  bare: ConnectStorm;
  readies: number;
  /** Presence events received about a friend, about someone else, about oneself. */
  fromFriends: number;
  fromOthers: number;
  own: number;
  /** Friendships: each is one `online` event (to whichever of the two connected first). */
  expectedFromFriends: number;
  otherFrames: number;
  /** chat_websocket_frames_sent_total over the window (events through the outbox; ready is not one). */
  framesSent: number;
}

/** `count` sockets opened one by one, evenly over `windowMs`; resolves when all are open (and ready, when `ready`). */
async function storm(
  url: string,
  count: number,
  windowMs: number,
  cookieOf: (i: number) => string,
  handler: (i: number) => (data: Buffer) => void,
  sockets: WebSocket[],
  ready: (i: number) => Promise<void>,
): Promise<number[]> {
  const times: number[] = [];
  const pending: Promise<void>[] = [];
  const first = performance.now() + 20;
  for (let i = 0; i < count; i++) {
    const wait = first + (i * windowMs) / count - performance.now();
    if (wait > 0) await sleep(wait);
    const started = performance.now();
    pending.push(
      open(url, cookieOf(i), handler(i), `socket ${i}`).then(async (ws) => {
        sockets.push(ws);
        await ready(i);
        times.push(performance.now() - started);
      }),
    );
  }
  await Promise.all(pending);
  return times.sort((a, b) => a - b);
}

export async function measurePresence(members = STREAM_MEMBERS, friends = PRESENCE_FRIENDS): Promise<PresenceFigures> {
  const community = await seedCommunity(members, friends, 'spre');
  const friendIds = (i: number) => new Set(community.friendsOf(i).map((k) => community.members[k].id));
  const { server, cookies, signInMs } = await startSignedIn(community);
  const sockets: WebSocket[] = [];
  let fromFriends = 0;
  let fromOthers = 0;
  let own = 0;
  let readies = 0;
  let otherFrames = 0;
  const readyWaiters = new Map<number, () => void>();
  const gotReady = new Set<number>();
  let chat: ConnectStorm;
  let framesSent: number;
  try {
    const framesBefore = await metric(server.base, 'chat_websocket_frames_sent_total');
    await sleep(SETTLE_MS);
    const window = cpuWindow(server.pid);
    const times = await storm(
      `${server.base.replace('http', 'ws')}/api/ws`,
      members,
      PRESENCE_WINDOW_MS,
      (i) => cookies[i],
      (i) => {
        const self = community.members[i].id;
        let mine: Set<string> | undefined;
        return (data) => {
          // Only presence frames are parsed (tens of thousands at most).
          if (data.includes('"event":"presence"')) {
            const event = JSON.parse(data.toString());
            mine ??= friendIds(i);
            if (event.user_id === self) own++;
            else if (mine.has(event.user_id)) fromFriends++;
            else fromOthers++;
          } else if (!gotReady.has(i) && data.includes('"event":"ready"')) {
            readies++;
            gotReady.add(i);
            readyWaiters.get(i)?.();
          } else otherFrames++;
        };
      },
      sockets,
      (i) => (gotReady.has(i) ? Promise.resolve() : new Promise((resolve) => readyWaiters.set(i, resolve))),
    );
    // The last connections' events go out through the outbox in later turns.
    await sleep(SETTLE_MS);
    const cpu = window.stop();
    framesSent = (await metric(server.base, 'chat_websocket_frames_sent_total')) - framesBefore;
    chat = { connects: members, cpu, openP50: percentile(times, 50), openP99: percentile(times, 99) };
  } finally {
    closeAll(sockets);
    await server.stop();
  }

  // The floor: a bare ws server taking the same connections at the same pace.
  const bareServer = await startProcess('bare', path.join(__dirname, 'bare-broadcast.js'));
  const bareSockets: WebSocket[] = [];
  let bare: ConnectStorm;
  try {
    await sleep(SETTLE_MS);
    const window = cpuWindow(bareServer.pid);
    const times = await storm(
      `${bareServer.base.replace('http', 'ws')}/`,
      members,
      PRESENCE_WINDOW_MS,
      () => '',
      () => () => {},
      bareSockets,
      async () => {},
    );
    await sleep(SETTLE_MS);
    bare = { connects: members, cpu: window.stop(), openP50: percentile(times, 50), openP99: percentile(times, 99) };
  } finally {
    closeAll(bareSockets);
    await bareServer.stop();
  }
  const half = Math.min(friends / 2, Math.floor((members - 1) / 2));
  return {
    members,
    friends: 2 * half,
    signInMs,
    chat,
    bare,
    readies,
    fromFriends,
    fromOthers,
    own,
    expectedFromFriends: members * half,
    otherFrames,
    framesSent,
  };
}

export const presenceSetup = (f: { members: number; friends: number }) =>
  `${f.members} users, all members of one server (over the 250-member presence limit), ${f.friends} friends each (a ring), connecting one by one over ${PRESENCE_WINDOW_MS / 1000} s; bare ws: the same connections`;

export function presenceRows(f: PresenceFigures): Row[] {
  const perConnect = (s: ConnectStorm) => s.cpu.serverMs / s.connects;
  const events = f.fromFriends + f.fromOthers + f.own;
  const windowS = f.chat.cpu.wallMs / 1000;
  return [
    ['ready frames received', `${f.readies} of ${f.members}`, 'all', verdict(f.readies === f.members)],
    ['presence events received: about a friend', `${f.fromFriends} (one per friendship: ${f.expectedFromFriends})`, '', ''],
    ['presence events received: about a non-friend (through the big server)', `${f.fromOthers}`, '0', verdict(f.fromOthers === 0)],
    ['presence events received: about oneself', `${f.own}`, '', ''],
    ['presence events per connection', `${(events / f.members).toFixed(2)}`, `<= ${f.friends} (friends)`, verdict(events / f.members <= f.friends)],
    ['frames the server sent through its outbox (ready not counted)', `${f.framesSent}; other frames received ${f.otherFrames}`, '', ''],
    ['events sent per second over the window', `${(f.framesSent / windowS).toFixed(0)}/s over ${windowS.toFixed(1)} s`, '', ''],
    [
      'chat: server CPU, total and per connection',
      `${f.chat.cpu.serverMs.toFixed(0)} ms; ${perConnect(f.chat).toFixed(2)} ms (${share(f.chat.cpu.serverMs, f.chat.cpu.wallMs)} of a core)`,
      '',
      '',
    ],
    [
      'bare ws: server CPU, total and per connection',
      `${f.bare.cpu.serverMs.toFixed(0)} ms; ${perConnect(f.bare).toFixed(2)} ms (${share(f.bare.cpu.serverMs, f.bare.cpu.wallMs)} of a core)`,
      '',
      '',
    ],
    ['server CPU per connection: chat / bare', `${(perConnect(f.chat) / perConnect(f.bare)).toFixed(1)}x`, '', ''],
    [
      'client CPU over the window: chat run; bare run',
      `${share(f.chat.cpu.clientMs, f.chat.cpu.wallMs)}; ${share(f.bare.cpu.clientMs, f.bare.cpu.wallMs)} of a core`,
      '',
      '',
    ],
    ['saturated: chat run; bare run', `${saturated(f.chat.cpu)}; ${saturated(f.bare.cpu)}`, '', ''],
    ['chat: upgrade to ready, p50 / p99', `${ms(f.chat.openP50)} / ${ms(f.chat.openP99)}`, '', ''],
    ['bare ws: upgrade to open, p50 / p99', `${ms(f.bare.openP50)} / ${ms(f.bare.openP99)}`, '', ''],
  ];
}

// ---------------------------------------------------------------------------------------------
// c. Ready

interface ReadySeeded {
  dataDir: string;
  reader: string;
  /** The channels the reader sees (of READY_SERVERS x READY_CHANNELS). */
  channels: number;
  messages: number;
  /** The active threads the reader sees (ready lists those), and the channel holding them. */
  threads: number;
  threadServer: string;
  threadChannel: string;
}

const READER = 'stream_reader';

/**
 * The reader in READY_SERVERS servers of READY_CHANNELS channels, each channel with a few
 * messages by others: a third read to the end, a third read halfway, a third never opened;
 * every seventh message names the reader, and one channel in fifty has an @everyone.
 */
export async function seedReady(threads = 0): Promise<ReadySeeded> {
  const dataDir = tempDir('chat-bench-ready-');
  const chat = await startChat(dataDir);
  try {
    await register(chat.base, READER);
  } finally {
    await chat.stop();
  }
  const db = openForSeeding(dataDir);
  const reader = db.prepare('SELECT id, password_hash FROM users WHERE username = ?').get(READER) as { id: string; password_hash: string };
  const insertUser = db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const insertServer = db.prepare('INSERT INTO servers (id, name, owner_id, created_at) VALUES (?, ?, ?, ?)');
  const insertChannel = db.prepare('INSERT INTO channels (id, server_id, name, position, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const insertMessage = db.prepare(
    'INSERT INTO messages (seq, id, channel_id, conversation_id, author_id, content, created_at, mentions, mention_everyone) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertMention = db.prepare('INSERT INTO message_mentions (user_id, container_id, message_seq) VALUES (?, ?, ?)');
  const insertRead = db.prepare('INSERT INTO read_states (user_id, container_id, last_read_seq) VALUES (?, ?, ?)');
  const insertRole = db.prepare('INSERT INTO roles (id, server_id, name, created_at) VALUES (?, ?, ?, ?)');
  const insertMemberRole = db.prepare('INSERT INTO member_roles (server_id, user_id, role_id) VALUES (?, ?, ?)');
  const insertOverwrite = db.prepare('INSERT INTO channel_overwrites (channel_id, target_id, kind, allow, deny, server_id) VALUES (?, ?, ?, ?, ?, ?)');
  const insertConversation = db.prepare('INSERT INTO conversations (id, kind, name, dm_key, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const insertConversationMember = db.prepare('INSERT INTO conversation_members (conversation_id, user_id) VALUES (?, ?)');
  const insertRequest = db.prepare(
    'INSERT INTO friend_requests (id, from_user, to_user, status, pair_key, created_at, accepted_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertThreadChannel = db.prepare(
    "INSERT INTO channels (id, server_id, type, parent_id, name, position, created_at) VALUES (?, ?, 'thread', ?, ?, 0, ?)",
  );
  const insertThread = db.prepare(
    'INSERT INTO threads (channel_id, server_id, parent_id, owner_id, archived, archived_at, archive_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertThreadMember = db.prepare('INSERT INTO thread_members (thread_id, user_id, server_id, joined_at) VALUES (?, ?, ?, ?)');
  const pair = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`);
  const now = Date.now();
  let threadServer = '';
  let threadChannel = '';
  let seq = 0;
  let channels = 0;
  /** The channels the reader sees (ready lists those). */
  let visible = 0;
  db.transaction(() => {
    const others = Array.from({ length: READY_FRIENDS }, (_, i) => {
      const id = crypto.randomUUID();
      insertUser.run(id, `ready_friend_${i}`, reader.password_hash, iso(now));
      insertRequest.run(crypto.randomUUID(), id, reader.id, 'accepted', pair(id, reader.id), iso(now), iso(now));
      return id;
    });
    for (let i = 0; i < READY_REQUESTS; i++) {
      const id = crypto.randomUUID();
      insertUser.run(id, `ready_asker_${i}`, reader.password_hash, iso(now));
      insertRequest.run(crypto.randomUUID(), id, reader.id, 'pending', pair(id, reader.id), iso(now), null);
    }
    /** Messages by others into a container; returns the first and last seq. */
    const fill = (container: { channel?: string; conversation?: string }, authors: string[], everyone: boolean) => {
      const from = seq + 1;
      for (let m = 0; m < READY_MESSAGES_PER_CHANNEL; m++) {
        seq++;
        const mention = seq % 7 === 0;
        const allOfThem = everyone && m === READY_MESSAGES_PER_CHANNEL - 1;
        const content = `${mention ? `@${READER} ` : ''}${allOfThem ? '@everyone ' : ''}message ${m} of the seeded history`;
        insertMessage.run(
          seq,
          crypto.randomUUID(),
          container.channel ?? null,
          container.conversation ?? null,
          authors[m % authors.length],
          content,
          iso(now - 1e6 + seq),
          mention ? JSON.stringify([reader.id]) : null,
          allOfThem ? 1 : 0,
        );
        if (mention) insertMention.run(reader.id, container.channel ?? container.conversation!, seq);
      }
      return { from, to: seq };
    };
    const markRead = (containerId: string, k: number, range: { from: number; to: number }) => {
      if (k % 3 === 0) insertRead.run(reader.id, containerId, range.to);
      else if (k % 3 === 1) insertRead.run(reader.id, containerId, Math.floor((range.from + range.to) / 2));
    };
    for (let s = 0; s < READY_SERVERS; s++) {
      const serverId = crypto.randomUUID();
      const owner = others[s % others.length];
      const authors = [owner, others[(s + 1) % others.length], others[(s + 2) % others.length]];
      insertServer.run(serverId, `server ${s}`, owner, iso(now));
      insertMember.run(serverId, owner, iso(now));
      insertMember.run(serverId, authors[1], iso(now));
      insertMember.run(serverId, authors[2], iso(now));
      insertMember.run(serverId, reader.id, iso(now + s));
      // Channel permissions (issue 30): a role the reader holds in every other server; a quarter
      // of the channels private to it, a quarter read-only, a quarter with an overwrite for the
      // reader alone. The reader sees the private ones only where they hold the role.
      const crew = crypto.randomUUID();
      insertRole.run(crew, serverId, 'crew', iso(now));
      const holdsCrew = s % 2 === 0;
      if (holdsCrew) insertMemberRole.run(serverId, reader.id, crew);
      for (let c = 0; c < READY_CHANNELS; c++) {
        const channelId = crypto.randomUUID();
        insertChannel.run(channelId, serverId, `channel-${c}`, c, iso(now));
        if (c % 4 === 1) {
          insertOverwrite.run(channelId, serverId, 'everyone', 0, 1, serverId);
          insertOverwrite.run(channelId, crew, 'role', 1, 0, serverId);
        } else if (c % 4 === 2) insertOverwrite.run(channelId, serverId, 'everyone', 0, 2, serverId);
        else if (c % 4 === 3) insertOverwrite.run(channelId, reader.id, 'member', 0, 8, serverId);
        markRead(channelId, channels, fill({ channel: channelId }, authors, channels % 50 === 0));
        if (c % 4 !== 1 || holdsCrew) visible++;
        channels++;
        // The threads, in the first server's first channel (seen by everyone).
        if (s === 0 && c === 0 && threads > 0) {
          threadServer = serverId;
          threadChannel = channelId;
          for (let k = 0; k < threads; k++) {
            const threadId = crypto.randomUUID();
            const active = k < READY_ACTIVE_THREADS;
            insertThreadChannel.run(threadId, serverId, channelId, `thread ${k}`, iso(now - 2e6 + k));
            insertThread.run(
              threadId,
              serverId,
              channelId,
              authors[k % authors.length],
              active ? 0 : 1,
              active ? null : iso(now - 1e6 + k),
              iso(now + 86_400_000),
            );
            if (k < READY_FOLLOWED_THREADS) {
              insertThreadMember.run(threadId, reader.id, serverId, iso(now));
              markRead(threadId, k, fill({ channel: threadId }, authors, false));
            }
          }
        }
      }
    }
    for (let d = 0; d < READY_DMS + READY_GROUPS; d++) {
      const id = crypto.randomUUID();
      const group = d >= READY_DMS;
      const people = group ? [others[d % others.length], others[(d + 1) % others.length], others[(d + 2) % others.length]] : [others[d]];
      insertConversation.run(id, group ? 'group' : 'dm', group ? `group ${d}` : null, group ? null : pair(reader.id, people[0]), people[0], iso(now));
      for (const user of [reader.id, ...people]) insertConversationMember.run(id, user);
      markRead(id, d, fill({ conversation: id }, people, false));
    }
  })();
  db.close();
  return { dataDir, reader: READER, channels: visible, messages: seq, threads: Math.min(threads, READY_ACTIVE_THREADS), threadServer, threadChannel };
}

export interface ReadyFigures {
  servers: number;
  channels: number;
  messages: number;
  bytes: number;
  /** The same ready asked for with ?compress=gzip: one binary frame, and the time to it. */
  gzipBytes: number;
  gzipMs: number;
  /** What the first ready held: servers, channels, conversations, friends, incoming requests. */
  counts: string;
  /** New WebSocket to the ready frame received, in this client. */
  client: { p50: number; p99: number; max: number };
  /** The same from a bare ws server sending the same frame on connect. */
  bare: { p50: number; p99: number; max: number };
  /** The upgrade as the server's request log times it: authorize, handshake, subscribe, build and write ready. */
  server: { p50: number; p99: number; max: number };
  cpuPerReady: number;
  cpu: CpuWindow;
}

/** One connect: the time from the new socket to its first frame (ready), then closed and gone. */
function readyOnce(url: string, cookie: string, label: string): Promise<{ data: Buffer; took: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const ws = new WebSocket(url, { headers: { cookie }, perMessageDeflate: false });
    ws.once('message', (data: Buffer) => {
      const took = performance.now() - started;
      ws.once('close', () => resolve({ data, took }));
      ws.close();
    });
    ws.once('error', (err) => reject(new Error(`${label}: ${err.message}`)));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`${label}: upgrade answered ${res.statusCode}`)));
  });
}

export async function measureReady(connects = READY_CONNECTS, threads = 0): Promise<ReadyFigures> {
  const seeded = await seedReady(threads);
  const summary = (values: number[]) => {
    const s = [...values].sort((a, b) => a - b);
    return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] };
  };
  /** READY_WARMUP + connects one at a time; the times of the last `connects`, and the first frame. */
  const connectLoop = async (url: string, cookie: string, warmedUp = () => {}) => {
    const times: number[] = [];
    let first: Buffer | undefined;
    for (let i = 0; i < READY_WARMUP + connects; i++) {
      if (i === READY_WARMUP) warmedUp();
      const { data, took } = await readyOnce(url, cookie, `ready socket ${i}`);
      if (i >= READY_WARMUP) times.push(took);
      first ??= data;
    }
    return { times, first: first! };
  };
  const server = await startChat(seeded.dataDir, { nodeArgs: PROFILE });
  let chat: Awaited<ReturnType<typeof connectLoop>>;
  let gzipBytes = 0;
  let gzipMs = 0;
  let logged: number[];
  let cpu: CpuWindow;
  try {
    const cookie = await login(server.base, seeded.reader);
    let window: { stop(): CpuWindow } | undefined;
    chat = await connectLoop(`${server.base.replace('http', 'ws')}/api/ws`, cookie, () => (window = cpuWindow(server.pid)));
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const packed = await readyOnce(`${server.base.replace('http', 'ws')}/api/ws?compress=gzip`, cookie, 'compressed ready');
      gzipBytes = packed.data.length;
      times.push(packed.took);
    }
    gzipMs = median(times);
    cpu = window!.stop();
    await sleep(SETTLE_MS);
    logged = loggedTimes(server.logFile, 'GET', '/api/ws').slice(-connects);
  } finally {
    await server.stop();
  }
  const ready = JSON.parse(chat.first.toString());
  if (ready.event !== 'ready') throw new Error(`first frame was ${ready.event}, not ready`);
  const channels = ready.servers.reduce((sum: number, s: { channels: unknown[] }) => sum + s.channels.length, 0);
  let counts = `${ready.servers.length} servers, ${channels} channels, ${ready.conversations.length} conversations, ${ready.friends.length} friends, ${ready.incoming_friend_requests} requests`;
  const threadCount = ready.servers.reduce((sum: number, s: { threads: unknown[] }) => sum + s.threads.length, 0);
  if (ready.servers.length !== READY_SERVERS || channels !== seeded.channels || threadCount !== seeded.threads) {
    throw new Error(`ready holds ${counts}, ${threadCount} threads, not what was seeded`);
  }
  if (threads > 0) counts += `, ${threadCount} active threads (${READY_FOLLOWED_THREADS} followed)`;

  // The floor: the same bytes from a bare ws server, on connect.
  const bareServer = await startProcess('bare', path.join(__dirname, 'bare-broadcast.js'));
  let bare: Awaited<ReturnType<typeof connectLoop>>;
  try {
    const res = await request(bareServer.base, 'POST', '/welcome', JSON.stringify({ frame: chat.first.toString() }));
    if (res.status !== 204) throw new Error(`bare server answered ${res.status}`);
    bare = await connectLoop(`${bareServer.base.replace('http', 'ws')}/`, '');
    if (!bare.first.equals(chat.first)) throw new Error('the bare server did not send the same frame');
  } finally {
    await bareServer.stop();
  }
  return {
    servers: READY_SERVERS,
    channels: seeded.channels,
    messages: seeded.messages,
    bytes: chat.first.length,
    gzipBytes,
    gzipMs,
    counts,
    client: summary(chat.times),
    bare: summary(bare.times),
    server: summary(logged),
    cpuPerReady: cpu.serverMs / connects,
    cpu,
  };
}

export const readySetup = (f: { servers: number; channels: number; messages: number }) =>
  `one user in ${f.servers} servers (${f.servers * READY_CHANNELS} channels with overwrites on three in four: a quarter private to a role the user holds in half the servers, a quarter read-only, a quarter with an overwrite of the user's own; ${f.channels} seen; ${f.messages} messages, a third of the channels unread, some mentions), ${READY_DMS} DMs, ${READY_GROUPS} groups, ${READY_FRIENDS} friends; ${READY_CONNECTS} connects one at a time (after ${READY_WARMUP} warm-up)`;

export function readyRows(f: ReadyFigures): Row[] {
  const triple = (l: { p50: number; p99: number; max: number }) => `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}`;
  return [
    ['ready frame size', `${f.bytes} bytes (${(f.bytes / 1024).toFixed(0)} KiB): ${f.counts}`, '', ''],
    [
      'ready with ?compress=gzip: frame size, new socket to frame p50',
      `${f.gzipBytes} bytes (${(f.gzipBytes / 1024).toFixed(0)} KiB), ${f.gzipMs.toFixed(1)} ms`,
      '',
      '',
    ],
    ['upgrade to ready, server log (build and write), p50 / p99 / max', triple(f.server), '', ''],
    ['upgrade to ready, server log, p99', ms(f.server.p99), `<= ${TARGET_READY_P99_MS} ms`, verdict(f.server.p99 <= TARGET_READY_P99_MS)],
    ['new socket to ready received, client, p50 / p99 / max', triple(f.client), '', ''],
    ['bare ws sending the same frame on connect, client, p50 / p99 / max', triple(f.bare), '', ''],
    ['server CPU per connect (ready, handshake, close)', ms(f.cpuPerReady), '', ''],
    ['saturated', saturated(f.cpu), '', ''],
  ];
}

// ---------------------------------------------------------------------------------------------

export const PARTS = ['fanout', 'fanout-half', 'presence', 'ready', 'ready-threads'] as const;

runAlone(module, 'user-stream', async () => {
  const asked = [...process.argv.slice(2), ...(process.env.USER_STREAM ?? '').split(',')].map((p) => p.trim()).filter(Boolean);
  for (const part of asked) if (!(PARTS as readonly string[]).includes(part)) throw new Error(`unknown part "${part}": use ${PARTS.join(', ')}`);
  const parts = asked.length ? asked : PARTS;
  if (parts.includes('fanout')) {
    const f = await measureStreamFanout();
    printTable(`10a. User stream fan-out: ${streamFanoutSetup(f)}`, streamFanoutRows(f));
    console.log(`(sign-in of ${f.members} users: ${(f.signInMs / 1000).toFixed(1)} s)`);
  }
  if (parts.includes('fanout-half')) {
    const f = await measureStreamFanout(STREAM_MEMBERS, STREAM_SECONDS, 'half');
    printTable(`10a'. User stream fan-out, half may see: ${streamFanoutSetup(f)}`, streamFanoutRows(f));
  }
  if (parts.includes('presence')) {
    const f = await measurePresence();
    printTable(`10b. User stream presence: ${presenceSetup(f)}`, presenceRows(f));
  }
  if (parts.includes('ready')) {
    const f = await measureReady();
    printTable(`10c. User stream ready: ${readySetup(f)}`, readyRows(f));
  }
  if (parts.includes('ready-threads')) {
    const f = await measureReady(READY_CONNECTS, READY_THREADS);
    printTable(
      `10d. User stream ready with threads: the same, and a channel of ${READY_THREADS} threads (${READY_ACTIVE_THREADS} active, ${READY_FOLLOWED_THREADS} followed with messages)`,
      readyRows(f),
    );
  }
});
