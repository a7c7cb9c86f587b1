/**
 * Capacity (issue 32): how many signed-in people one server carries at once, each holding a user
 * stream and behaving as people in a chat community do (bench/capacity-client.ts RATES: a fifth
 * of them at the keyboard, posting about once a minute with typing first, reacting, opening
 * channels and marking them read, searching now and then; everyone reconnecting about every ten
 * minutes and reading what arrives).
 *
 * The community is seeded straight into SQLite, sized as real ones are (Zipf): one server holds
 * 40 % of the users, four more 20, 13, 10 and 8 %, and the rest are small servers of 5 to 30
 * members that fill up and close as users arrive; each user is in 1 to 5 servers, each server has
 * 2 to 10 channels with some history. Users grow in steps (250, 500, 1 000, 2 000, 3 000, ...),
 * each step adding users to the same servers, so the sizes stay Zipf. At each step the server is
 * started afresh on the same data (sessions live in memory: every user signs in again, through
 * POST /api/login with bench/argon2-memo.js preloaded so the shared hash is verified once), the
 * load clients open every stream (CONNECT_CONCURRENCY upgrades at a time), the behaviour runs WARMUP
 * seconds unmeasured and then CAPACITY_STEP_SECONDS measured.
 *
 * Load: CAPACITY_CLIENTS child processes (default: one per core), each simulating every K-th
 * user, driven over IPC. Measured in the window, on one clock shared by every process of the
 * machine (performance.timeOrigin + performance.now()):
 * - per message, POST sent to its arrival on the LAST stream that should get it (the members of
 *   its server whose stream was ready before the POST and still open after its answer: the
 *   expected audience comes from the memberships seeded here, not from what arrived);
 * - missed deliveries (an expected stream without the message 5 s after the window), errors (any
 *   non-2xx, socket error, upgrade refused, a close the client did not ask for);
 * - POST p99 (sent to answered), ready p99 (upgrade request to `ready`, the reconnects in the window);
 * - the server's CPU (/proc/<pid>/stat) and RSS (VmRSS), per 1 000 users.
 * Targets: POST->last stream p99 <= 250 ms, ready p99 <= 100 ms, POST p99 <= 50 ms, no errors, no
 * missed deliveries. The largest step that holds all of them is the figure; the run stops at
 * the first step that breaks one (and says which), at CAPACITY_MAX_USERS, or when the next step
 * would end past CAPACITY_MAX_SECONDS.
 *
 * CAPACITY_GATEWAYS=K (default 0: one process, ROLE=all): a Redis (/usr/bin/redis-server, started
 * here on a free port, nothing saved), a core (ROLE=core) that takes every REST call, and K
 * gateways (ROLE=gateway) holding the streams, user i on gateway i mod K; CPU is reported per
 * process, with the CPU per delivered message.
 *
 * Run alone: node dist-bench/bench/capacity.js (or `make capacity`). Settings, all optional:
 * CAPACITY_STEPS (a list, "250,500,1000"), CAPACITY_MAX_USERS (16000), CAPACITY_STEP_SECONDS (45),
 * CAPACITY_WARMUP_SECONDS (10), CAPACITY_MAX_SECONDS (600), CAPACITY_CLIENTS, CAPACITY_GATEWAYS,
 * CAPACITY_CONNECT_CONCURRENCY (32; thousands make the start a storm of simultaneous upgrades).
 * Everything listens on 127.0.0.1, in temporary directories, and stops by itself.
 */
import crypto from 'node:crypto';
import { type ChildProcess, fork, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import {
  type ClientReport,
  type FromClient,
  type PostAudit,
  type PostRecord,
  type RequestKind,
  type ServerPlan,
  type ToClient,
  type UserPlan,
  RATES,
  WORDS,
  now,
} from './capacity-client';
import {
  BENCH_PASSWORD,
  type Row,
  type Started,
  assertBuilt,
  machine,
  mib,
  ms,
  openForSeeding,
  percentile,
  printTable,
  register,
  rng,
  rssKb,
  runAlone,
  SERVER_JS,
  sleep,
  startChat,
  startProcess,
  tempDir,
  verdict,
  machineTicks,
} from './lib';
import { cpuMs } from './user-stream';

const env = process.env;
const STEP_SECONDS = Number(env.CAPACITY_STEP_SECONDS ?? 45);
const MAX_SECONDS = Number(env.CAPACITY_MAX_SECONDS ?? 600);
const MAX_USERS = Number(env.CAPACITY_MAX_USERS ?? 16_000);
const CLIENTS = Math.max(1, Number(env.CAPACITY_CLIENTS ?? os.availableParallelism()));
const GATEWAYS = Math.max(0, Number(env.CAPACITY_GATEWAYS ?? 0));
const STEPS = env.CAPACITY_STEPS ? env.CAPACITY_STEPS.split(',').map(Number) : [250, 500, 1000, 2000, 3000, 4000, 6000, 8000, 12_000, 16_000];
/** Unmeasured behaviour after the ramp, so the window starts warm. */
const WARMUP_SECONDS = Number(env.CAPACITY_WARMUP_SECONDS ?? 10);
/**
 * Upgrades in flight at the start of a step (all clients together): every stream opens as fast
 * as the server takes them, as after a restart, without piling up thousands of handshakes.
 */
const CONNECT_CONCURRENCY = Number(env.CAPACITY_CONNECT_CONCURRENCY ?? 32);
const LOGIN_CONCURRENCY = 8;
/** After the window, how long the last deliveries may take before they count as missed. */
const DRAIN_MS = 5000;
/** A stream closed by its client this soon after a POST's answer is not expected to have it (the frame may be in flight). */
const GRACE_MS = 2000;

/** The issue's targets. */
const TARGET_LAST_P99_MS = 250;
const TARGET_READY_P99_MS = 100;
const TARGET_POST_P99_MS = 50;

/** The big servers: the share of users in each (Zipf, 0.4 / rank) and their channels. */
const BIG_SHARES = [0.4, 0.2, 0.4 / 3, 0.1, 0.08];
const BIG_CHANNELS = [10, 8, 6, 6, 5];
/** Small servers: members (uniform), channels (uniform); this many fill at once. */
const SMALL_MEMBERS = [5, 30] as const;
const SMALL_CHANNELS = [2, 4] as const;
const OPEN_SMALL = 8;
/** Messages seeded into each new channel, so history pages and search have something to read. */
const HISTORY_PER_CHANNEL = 25;

const MEMO = path.join(__dirname, 'argon2-memo.js');
const CLIENT_JS = path.join(__dirname, 'capacity-client.js');
const REDIS = '/usr/bin/redis-server';
const iso = (at: number) => new Date(at).toISOString();

// ---------------------------------------------------------------------------------------------
// The community

interface PlannedServer {
  id: string;
  channels: string[];
  /** User indexes, in the order they joined. */
  members: number[];
  /** Members at which a small server stops taking new ones; Infinity for the big ones. */
  full: number;
  /** Written to the database (once it has its first member, its owner). */
  seeded: boolean;
}

/** Who is in which server, grown user by user; deterministic (one seed). */
class Community {
  readonly servers: PlannedServer[] = [];
  readonly userIds: string[] = [];
  /** Per user: the servers they are in. */
  readonly memberOf: number[][] = [];
  private readonly open: number[] = [];
  private readonly random = rng(32);
  /** Users already written to the database. */
  seededUsers = 0;

  constructor() {
    for (const channels of BIG_CHANNELS) this.addServer(channels, Infinity);
  }

  private between([lo, hi]: readonly [number, number]): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  private addServer(channels: number, full: number): number {
    this.servers.push({ id: crypto.randomUUID(), channels: Array.from({ length: channels }, () => crypto.randomUUID()), members: [], full, seeded: false });
    return this.servers.length - 1;
  }

  /** Active (RATES.activeShare, a fifth): drawn once per user index, so the same users at every step. */
  isActive(i: number): boolean {
    return rng(1000 + i)() < RATES.activeShare;
  }

  grow(users: number): void {
    for (let i = this.memberOf.length; i < users; i++) {
      this.userIds.push(crypto.randomUUID());
      // User 0 is in every big server (and owns them: a server's first member owns it).
      const mine = i === 0 ? BIG_SHARES.map((_, k) => k) : BIG_SHARES.flatMap((share, k) => (this.random() < share ? [k] : []));
      const smalls = Math.min(5 - mine.length, 1 + (this.random() < 0.5 ? 1 : 0));
      for (let k = 0; k < smalls; k++) {
        while (this.open.length < OPEN_SMALL) this.open.push(this.addServer(this.between(SMALL_CHANNELS), this.between(SMALL_MEMBERS)));
        const choices = this.open.filter((s) => !mine.includes(s));
        mine.push(choices[Math.floor(this.random() * choices.length)]);
      }
      for (const s of mine) {
        const server = this.servers[s];
        server.members.push(i);
        if (server.members.length >= server.full) this.open.splice(this.open.indexOf(s), 1);
      }
      this.memberOf.push(mine);
    }
  }

  /** Server sizes, largest first. */
  sizes(): number[] {
    return this.servers.map((s) => s.members.length).sort((a, b) => b - a);
  }
}

/** Writes the users and servers not yet in the database (the server is stopped meanwhile). */
function seed(db: Database.Database, community: Community, hash: string): void {
  const insertUser = db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const insertServer = db.prepare('INSERT INTO servers (id, name, owner_id, created_at) VALUES (?, ?, ?, ?)');
  const insertChannel = db.prepare('INSERT INTO channels (id, server_id, name, position, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const insertMessage = db.prepare('INSERT INTO messages (id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?)');
  const random = rng(community.seededUsers + 7);
  const users = community.memberOf.length;
  const at = Date.now();
  db.transaction(() => {
    for (let i = community.seededUsers; i < users; i++) insertUser.run(community.userIds[i], username(i), hash, iso(at));
    for (const [s, server] of community.servers.entries()) {
      if (server.seeded || server.members.length === 0) continue;
      server.seeded = true;
      const members = server.members.map((i) => community.userIds[i]);
      insertServer.run(server.id, `server ${s}`, members[0], iso(at));
      for (const [c, channelId] of server.channels.entries()) {
        insertChannel.run(channelId, server.id, c === 0 ? 'general' : `channel-${c}`, c, iso(at));
        for (let m = 0; m < HISTORY_PER_CHANNEL; m++) {
          const words = Array.from({ length: 4 + Math.floor(random() * 8) }, () => WORDS[Math.floor(random() * WORDS.length)]);
          insertMessage.run(crypto.randomUUID(), channelId, members[Math.floor(random() * members.length)], words.join(' '), iso(at - 86_400_000 + m * 1000));
        }
      }
    }
    for (let i = community.seededUsers; i < users; i++) {
      for (const s of community.memberOf[i]) insertMember.run(community.servers[s].id, community.userIds[i], iso(at));
    }
  })();
  community.seededUsers = users;
}

const username = (i: number) => `cap_${i}`;

// ---------------------------------------------------------------------------------------------
// The processes measured

interface Measured {
  name: string;
  pid: number;
}

interface Target {
  restBase: string;
  /** The server's (or the core's) own event-loop delay since the last call, p99 and max (ms). */
  loopLag(): Promise<{ p99: number; max: number }>;
  wsBases: string[];
  processes: Measured[];
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

const spawned = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of spawned) child.kill('SIGKILL');
});

/** Debian's redis-server on a free port of 127.0.0.1, nothing written to disk. */
async function startRedis(): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  if (!fs.existsSync(REDIS)) throw new Error(`CAPACITY_GATEWAYS needs ${REDIS} (apt-get install redis-server)`);
  const port = await freePort();
  const child = spawn(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  spawned.add(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}:\n${out}`)));
  });
  child.stdout!.resume();
  return {
    pid: child.pid!,
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      spawned.delete(child);
    },
  };
}

/** prom-client's event-loop delay from /metrics (METRICS=on); each scrape starts a new window. */
function loopLagOf(base: string): () => Promise<{ p99: number; max: number }> {
  return async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
    return { p99: value('nodejs_eventloop_lag_p99_seconds'), max: value('nodejs_eventloop_lag_max_seconds') };
  };
}

async function startTarget(dataDir: string): Promise<Target> {
  const nodeArgs = ['--require', MEMO];
  if (GATEWAYS === 0) {
    const chat = await startChat(dataDir, { nodeArgs, env: { METRICS: 'on' } });
    return {
      restBase: chat.base,
      wsBases: [chat.base.replace('http', 'ws')],
      processes: [{ name: 'server', pid: chat.pid }],
      loopLag: loopLagOf(chat.base),
      stop: chat.stop,
    };
  }
  const redis = await startRedis();
  const started: Started[] = [];
  try {
    const core = await startChat(dataDir, { nodeArgs, env: { ROLE: 'core', BUS_URL: redis.url, METRICS: 'on' } });
    started.push(core);
    for (let g = 0; g < GATEWAYS; g++) {
      started.push(
        await startProcess(`gateway-${g}`, SERVER_JS, {
          env: {
            ROLE: 'gateway',
            BUS_URL: redis.url,
            CORE_URL: core.base,
            PORT: '0',
            HOST: '127.0.0.1',
            RATE_LIMIT: 'off',
            CONNECTIONS_PER_CLIENT: '100000',
            MALLOC_MMAP_THRESHOLD_: '131072',
          },
        }),
      );
    }
  } catch (err) {
    for (const s of started) await s.stop();
    await redis.stop();
    throw err;
  }
  const [core, ...gateways] = started;
  return {
    restBase: core.base,
    wsBases: gateways.map((g) => g.base.replace('http', 'ws')),
    loopLag: loopLagOf(core.base),
    processes: [{ name: 'core', pid: core.pid }, ...gateways.map((g, i) => ({ name: `gateway ${i}`, pid: g.pid })), { name: 'redis', pid: redis.pid }],
    stop: async () => {
      for (const s of [...gateways, core]) await s.stop();
      await redis.stop();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The load clients

class Client {
  readonly child: ChildProcess;
  private waiting: { type: FromClient['type']; resolve: (m: FromClient) => void; reject: (err: Error) => void } | null = null;

  constructor(readonly index: number) {
    this.child = fork(CLIENT_JS, [String(index)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    spawned.add(this.child);
    this.child.on('message', (m: FromClient) => {
      const waiting = this.waiting;
      this.waiting = null;
      if (m.type === 'failed') waiting?.reject(new Error(`load client ${index}: ${m.error}`));
      else if (waiting?.type === m.type) waiting.resolve(m);
      else waiting?.reject(new Error(`load client ${index} answered ${m.type}, not ${waiting?.type}`));
    });
    this.child.once('exit', (code) => this.waiting?.reject(new Error(`load client ${index} exited with ${code}`)));
  }

  tell(m: ToClient): void {
    this.child.send(m);
  }

  ask<T extends FromClient['type']>(m: ToClient, type: T): Promise<Extract<FromClient, { type: T }>> {
    if (this.waiting) throw new Error(`load client ${this.index} is already asked for ${this.waiting.type}`);
    return new Promise((resolve, reject) => {
      this.waiting = { type, resolve: resolve as (m: FromClient) => void, reject };
      this.child.send(m);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// One step

interface Summary {
  p50: number;
  p99: number;
  count: number;
}

function summary(values: number[]): Summary {
  const sorted = Float64Array.from(values).sort() as unknown as number[];
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), count: values.length };
}

interface ProcessFigures extends Measured {
  /** Share of one core over the window. */
  cpu: number;
  rssKb: number;
  idleRssKb: number;
}

export interface StepFigures {
  users: number;
  servers: number;
  largest: number[];
  memberships: number;
  seedMs: number;
  signInMs: number;
  connectMs: number;
  windowMs: number;
  posts: number;
  /** POST sent to the last expected stream having it, per message. */
  last: Summary;
  deliveries: number;
  expected: number;
  missed: number;
  duplicates: number;
  post: Summary;
  ready: Summary;
  rampReady: Summary;
  /** CPU of the measured processes (all) while every stream opened. */
  rampCpuMs: number;
  requests: Partial<Record<RequestKind, Summary>>;
  /** From the end of the start on (warm-up, window, drain). */
  errors: number;
  firstErrors: string[];
  /** While the users signed in and opened their streams. */
  startErrors: number;
  firstStartErrors: string[];
  processes: ProcessFigures[];
  /** The server's (the core's) event-loop delay over the window, p99 and max (ms). */
  serverLag: { p99: number; max: number };
  clientsCpu: number;
  clientLag: { p99: number; max: number };
  machineBusy: number;
  frames: number;
  held: boolean;
  broken: string[];
}

async function runStep(users: number, community: Community, dataDir: string, hash: string, clients: Client[]): Promise<StepFigures> {
  const seedStarted = performance.now();
  community.grow(users);
  const db = openForSeeding(dataDir);
  try {
    seed(db, community, hash);
  } finally {
    db.close();
  }
  const seedMs = performance.now() - seedStarted;
  const target = await startTarget(dataDir);
  try {
    await sleep(500);
    const idleRss = target.processes.map((p) => rssKb(p.pid));
    const servers: ServerPlan[] = community.servers.map((s) => ({ id: s.id, channels: s.channels }));
    const plans: UserPlan[] = Array.from({ length: users }, (_, i) => ({
      idx: i,
      username: username(i),
      servers: community.memberOf[i],
      active: community.isActive(i),
    }));
    const signedIn = await Promise.all(
      clients.map((c) =>
        c.ask(
          {
            type: 'setup',
            restBase: target.restBase,
            wsBases: target.wsBases,
            servers,
            users: plans.filter((p) => p.idx % clients.length === c.index),
            password: BENCH_PASSWORD,
            loginConcurrency: LOGIN_CONCURRENCY,
          },
          'signedIn',
        ),
      ),
    );
    const rampFrom = target.processes.map((p) => cpuMs(p.pid));
    const connected = await Promise.all(
      clients.map((c) => c.ask({ type: 'connect', concurrency: Math.ceil(CONNECT_CONCURRENCY / clients.length) }, 'connected')),
    );
    const rampCpuMs = target.processes.reduce((sum, p, i) => sum + cpuMs(p.pid) - rampFrom[i], 0);
    const runAt = now();
    for (const c of clients) c.tell({ type: 'run' });
    await sleep(WARMUP_SECONDS * 1000);

    for (const c of clients) c.tell({ type: 'measure' });
    await target.loopLag();
    const cpuFrom = target.processes.map((p) => cpuMs(p.pid));
    const clientCpuFrom = clients.map((c) => cpuMs(c.child.pid!));
    const ticksFrom = machineTicks();
    const from = now();
    await sleep(STEP_SECONDS * 1000);
    const to = now();
    const cpuTo = target.processes.map((p) => cpuMs(p.pid));
    const clientCpuTo = clients.map((c) => cpuMs(c.child.pid!));
    const ticksTo = machineTicks();
    const rss = target.processes.map((p) => rssKb(p.pid));
    const serverLag = await target.loopLag();
    const windowMs = to - from;
    for (const c of clients) c.tell({ type: 'quiet' });
    await sleep(DRAIN_MS);

    const reports: ClientReport[] = (await Promise.all(clients.map((c) => c.ask({ type: 'report', from, to }, 'report')))).map((r) => r.report);
    const posts: PostRecord[] = reports.flatMap((r) => r.posts);
    const delivered = posts.filter((p) => p.status === 201);
    const audits = await Promise.all(clients.map((c) => c.ask({ type: 'audit', posts: delivered, graceMs: GRACE_MS }, 'audit')));
    await Promise.all(clients.map((c) => c.ask({ type: 'close' }, 'closed')));

    // Per message: the sum over clients of who should have it and who had it, the latest arrival.
    const byId = new Map<number, PostAudit>();
    for (const { audits: list } of audits) {
      for (const a of list) {
        const seen = byId.get(a.id);
        if (!seen) byId.set(a.id, { ...a });
        else {
          seen.expected += a.expected;
          seen.got += a.got;
          seen.last = Math.max(seen.last, a.last);
        }
      }
    }
    let expected = 0;
    let got = 0;
    const lasts: number[] = [];
    for (const p of delivered) {
      const a = byId.get(p.id)!;
      expected += a.expected;
      got += a.got;
      if (a.expected > 0) lasts.push(a.got === a.expected ? a.last - p.sentAt : Infinity);
    }
    const requests: Partial<Record<RequestKind, Summary>> = {};
    for (const kind of ['typing', 'reaction', 'read', 'history', 'search'] as RequestKind[]) {
      const times = reports.flatMap((r) => r.requests.filter((q) => q[0] === kind).map((q) => q[2]));
      if (times.length) requests[kind] = summary(times);
    }
    const all = reports.flatMap((r) => r.errors).sort((a, b) => a[0] - b[0]);
    const errors = all.filter((e) => e[0] >= runAt);
    const distinct = (list: [number, string][]) =>
      [
        ...new Set(
          list.map((e) =>
            e[1]
              .replace(/cap_\d+/g, 'cap_N')
              .replace(/[0-9a-f-]{36}/g, 'ID')
              .replace(/\d+\.\d s/g, 'n s'),
          ),
        ),
      ].slice(0, 3);
    const firstErrors = distinct(errors);
    const figures: StepFigures = {
      users,
      servers: community.servers.filter((s) => s.members.length > 0).length,
      largest: community.sizes().slice(0, 6),
      memberships: community.memberOf.slice(0, users).reduce((sum, m) => sum + m.length, 0),
      seedMs,
      signInMs: Math.max(...signedIn.map((s) => s.ms)),
      connectMs: Math.max(...connected.map((c) => c.ms)),
      windowMs,
      posts: posts.length,
      last: summary(lasts),
      deliveries: got,
      expected,
      missed: expected - got,
      duplicates: audits.reduce((sum, a) => sum + a.duplicates, 0),
      post: summary(posts.map((p) => p.ackAt - p.sentAt)),
      ready: summary(reports.flatMap((r) => r.readies)),
      rampReady: summary(connected.flatMap((c) => c.readies)),
      rampCpuMs,
      requests,
      errors: errors.length,
      firstErrors,
      startErrors: all.length - errors.length,
      firstStartErrors: distinct(all.filter((e) => e[0] < runAt)),
      processes: target.processes.map((p, i) => ({ ...p, cpu: (cpuTo[i] - cpuFrom[i]) / windowMs, rssKb: rss[i], idleRssKb: idleRss[i] })),
      serverLag,
      clientsCpu: clientCpuTo.reduce((sum, t, i) => sum + t - clientCpuFrom[i], 0) / windowMs,
      clientLag: { p99: Math.max(...reports.map((r) => r.lag.p99)), max: Math.max(...reports.map((r) => r.lag.max)) },
      machineBusy: (ticksTo.busy - ticksFrom.busy) / Math.max(1, ticksTo.total - ticksFrom.total),
      frames: reports.reduce((sum, r) => sum + r.frames, 0),
      held: false,
      broken: [],
    };
    const broken = figures.broken;
    if (!(figures.last.p99 <= TARGET_LAST_P99_MS)) broken.push(`POST to last stream p99 ${fmt(figures.last.p99)} > ${TARGET_LAST_P99_MS} ms`);
    if (figures.ready.count > 0 && !(figures.ready.p99 <= TARGET_READY_P99_MS)) broken.push(`ready p99 ${fmt(figures.ready.p99)} > ${TARGET_READY_P99_MS} ms`);
    if (!(figures.post.p99 <= TARGET_POST_P99_MS)) broken.push(`POST p99 ${fmt(figures.post.p99)} > ${TARGET_POST_P99_MS} ms`);
    if (figures.errors > 0) broken.push(`${figures.errors} errors (${firstErrors.join('; ')})`);
    if (figures.missed > 0) broken.push(`${figures.missed} missed deliveries of ${figures.expected}`);
    figures.held = broken.length === 0;
    return figures;
  } finally {
    await target.stop();
  }
}

const fmt = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : v === Infinity ? 'missed' : 'n/a');
const pct = (share: number) => `${(100 * share).toFixed(0)} %`;

function stepRows(f: StepFigures): Row[] {
  const k = f.users / 1000;
  const p = (s: Summary) => `${fmt(s.p50)} / ${fmt(s.p99)} (${s.count})`;
  const rows: Row[] = [
    ['community', `${f.servers} servers, largest ${f.largest.join(', ')} members; ${(f.memberships / f.users).toFixed(1)} servers a user`, '', ''],
    [
      'set-up: seed / sign-in / streams open',
      `${(f.seedMs / 1000).toFixed(1)} s / ${(f.signInMs / 1000).toFixed(1)} s / ${(f.connectMs / 1000).toFixed(1)} s`,
      '',
      '',
    ],
    ['messages posted in the window', `${f.posts} (${((f.posts * 1000) / f.windowMs).toFixed(1)}/s)`, '', ''],
    ['POST to last expected stream, p50 / p99 (messages)', p(f.last), `p99 <= ${TARGET_LAST_P99_MS} ms`, verdict(f.last.p99 <= TARGET_LAST_P99_MS)],
    [
      'deliveries (expected streams having it)',
      `${f.deliveries} of ${f.expected}${f.duplicates ? `, ${f.duplicates} twice` : ''}`,
      'all',
      verdict(f.missed === 0),
    ],
    ['POST answered, p50 / p99', p(f.post), `p99 <= ${TARGET_POST_P99_MS} ms`, verdict(f.post.p99 <= TARGET_POST_P99_MS)],
    [
      'reconnect: upgrade to ready, p50 / p99',
      p(f.ready),
      `p99 <= ${TARGET_READY_P99_MS} ms`,
      f.ready.count ? verdict(f.ready.p99 <= TARGET_READY_P99_MS) : '',
    ],
    [
      `start: upgrade to ready, ${CONNECT_CONCURRENCY} at a time, p50 / p99; streams opened a second`,
      `${p(f.rampReady)}; ${((f.rampReady.count * 1000) / f.connectMs).toFixed(0)}/s`,
      '',
      '',
    ],
    ['start: server CPU per stream opened (ready, presence)', ms(f.rampCpuMs / f.users), '', ''],
    ['errors (after the start)', f.errors ? `${f.errors}: ${f.firstErrors.join('; ')}` : '0', '0', verdict(f.errors === 0)],
    ['errors while signing in and opening the streams', f.startErrors ? `${f.startErrors}: ${f.firstStartErrors.join('; ')}` : '0', '', ''],
  ];
  for (const [kind, s] of Object.entries(f.requests)) rows.push([`${kind}, p50 / p99`, p(s!), '', '']);
  for (const proc of f.processes) {
    rows.push([
      `${proc.name}: CPU (of one core); per 1 000 users`,
      `${pct(proc.cpu)}; ${pct(proc.cpu / k)}${f.deliveries ? `; ${((proc.cpu * f.windowMs * 1000) / f.deliveries).toFixed(1)} µs a delivered message` : ''}`,
      '',
      '',
    ]);
    rows.push([
      `${proc.name}: RSS; per 1 000 users (above idle)`,
      `${mib(proc.rssKb)}; ${mib(proc.rssKb / k)} (${mib((proc.rssKb - proc.idleRssKb) / k)})`,
      '',
      '',
    ]);
  }
  rows.push([`${f.processes[0].name}: event-loop delay p99 / max`, `${ms(f.serverLag.p99)} / ${ms(f.serverLag.max)}`, '', '']);
  rows.push(['load clients: CPU (all); event-loop delay p99 / max', `${pct(f.clientsCpu)}; ${ms(f.clientLag.p99)} / ${ms(f.clientLag.max)}`, '', '']);
  const ours = (f.processes.reduce((sum, p) => sum + p.cpu, 0) + f.clientsCpu) / os.availableParallelism();
  rows.push([
    'machine busy (all CPUs); of it, other processes',
    `${pct(f.machineBusy)} of ${os.availableParallelism()}; ${pct(Math.max(0, f.machineBusy - ours))}`,
    '',
    '',
  ]);
  rows.push(['frames received in the window (all events)', `${f.frames} (${((f.frames * 1000) / f.windowMs).toFixed(0)}/s)`, '', '']);
  rows.push(['held', f.held ? 'yes' : `no: ${f.broken.join('; ')}`, 'all targets', verdict(f.held)]);
  return rows;
}

/** A plain table with any columns (the step summary). */
function columns(header: string[], rows: string[][]): string {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

function summaryTable(steps: StepFigures[]): string {
  const cluster = steps[0].processes.length > 1;
  const sum = (f: StepFigures, pick: (p: ProcessFigures) => number) => f.processes.reduce((total, p) => total + pick(p), 0) / (f.users / 1000);
  return columns(
    [
      'users',
      'held',
      'msg/s',
      'last p99',
      'ready p99',
      'POST p99',
      'errors',
      'missed',
      cluster ? 'CPU/1k: all (core)' : 'CPU/1k',
      'RSS/1k (above idle)',
      'busy (others)',
    ],
    steps.map((f) => {
      const ours = (f.processes.reduce((total, p) => total + p.cpu, 0) + f.clientsCpu) / os.availableParallelism();
      return [
        String(f.users),
        f.held ? 'yes' : 'NO',
        ((f.posts * 1000) / f.windowMs).toFixed(1),
        fmt(f.last.p99),
        fmt(f.ready.p99),
        fmt(f.post.p99),
        String(f.errors),
        String(f.missed),
        `${pct(sum(f, (p) => p.cpu))}${cluster ? ` (${pct(f.processes[0].cpu / (f.users / 1000))})` : ''}`,
        `${mib(sum(f, (p) => p.rssKb))} (${mib(sum(f, (p) => p.rssKb - p.idleRssKb))})`,
        `${pct(f.machineBusy)} (${pct(Math.max(0, f.machineBusy - ours))})`,
      ];
    }),
  );
}

/** The soft limit on open files of this process (its children inherit it). */
function openFilesLimit(): number {
  const found = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  return !found || found[1] === 'unlimited' ? Infinity : Number(found[1]);
}

// ---------------------------------------------------------------------------------------------

export async function measureCapacity(): Promise<{ steps: StepFigures[]; stopped: string }> {
  const started = performance.now();
  assertBuilt();
  // The server holds one descriptor per stream (plus its reserve); each client its share.
  const files = openFilesLimit();
  const maxUsers = Math.min(MAX_USERS, files - 1024);
  const steps = STEPS.filter((n) => n <= maxUsers);
  const rates = `${pct(RATES.activeShare)} active: a post every ~${RATES.postEveryS} s (typing ${RATES.typingLeadS.join('-')} s before), a reaction every ~${RATES.reactEveryS} s, a channel opened every ~${RATES.historyEveryS} s, a search every ~${RATES.searchEveryS} s, read ${RATES.readAfterS.join('-')} s after a message arrives in the channel they look at; the others read what they got every ~${RATES.passiveReadEveryS} s; everyone reconnects every ~${RATES.reconnectEveryS} s`;
  console.log(`capacity: ${machine()}`);
  console.log(
    `steps ${steps.join(', ')} users (open files ${files}), ${STEP_SECONDS} s measured after ${WARMUP_SECONDS} s warm-up, at most ${MAX_SECONDS} s in all; ${CLIENTS} load clients; ${GATEWAYS ? `${GATEWAYS} gateways + core + redis` : 'one process'}`,
  );
  console.log(`behaviour: ${rates}`);

  const dataDir = tempDir('chat-bench-capacity-');
  const bootstrap = await startChat(dataDir);
  try {
    await register(bootstrap.base, 'cap_bootstrap');
  } finally {
    await bootstrap.stop();
  }
  const db = openForSeeding(dataDir);
  const hash = (db.prepare("SELECT password_hash FROM users WHERE username = 'cap_bootstrap'").get() as { password_hash: string }).password_hash;
  db.close();

  const clients = Array.from({ length: CLIENTS }, (_, i) => new Client(i));
  const community = new Community();
  const results: StepFigures[] = [];
  let stopped = `the last step (${steps[steps.length - 1]} users, CAPACITY_MAX_USERS ${MAX_USERS}, open files ${files}) held`;
  let lastStepMs = 0;
  try {
    for (const [i, users] of steps.entries()) {
      // The next step costs about the last one's set-up, scaled, plus its fixed window.
      const fixed = (WARMUP_SECONDS + STEP_SECONDS) * 1000 + DRAIN_MS;
      const expectMs = i === 0 ? fixed : fixed + (lastStepMs - fixed) * (users / steps[i - 1]);
      if (performance.now() - started + expectMs > MAX_SECONDS * 1000) {
        stopped = `time: a step of ${users} users would end past CAPACITY_MAX_SECONDS (${MAX_SECONDS} s)`;
        break;
      }
      const stepStarted = performance.now();
      const f = await runStep(users, community, dataDir, hash, clients);
      lastStepMs = performance.now() - stepStarted;
      results.push(f);
      printTable(`Capacity: ${users} users ${GATEWAYS ? `(core + ${GATEWAYS} gateways + redis)` : '(one process)'}, ${STEP_SECONDS} s`, stepRows(f));
      if (!f.held) {
        stopped = `${users} users broke: ${f.broken.join('; ')}`;
        break;
      }
    }
  } finally {
    for (const c of clients) c.child.kill();
  }
  console.log(`\n(total ${((performance.now() - started) / 1000).toFixed(0)} s)`);
  return { steps: results, stopped };
}

runAlone(module, 'capacity', async () => {
  const { steps, stopped } = await measureCapacity();
  if (steps.length === 0) throw new Error(`no step ran: ${stopped}`);
  console.log(`\n## Capacity summary (${new Date().toISOString().slice(0, 10)}, ${machine()})`);
  console.log(summaryTable(steps));
  const held = steps.filter((s) => s.held);
  console.log(`largest step held: ${held.length ? `${held[held.length - 1].users} users` : 'none'}; stopped: ${stopped}`);
});
