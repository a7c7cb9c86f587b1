/**
 * Shared pieces of the benchmarks: starting servers as child processes on 127.0.0.1, temporary
 * data directories, RSS and CPU time from /proc, percentiles, the autocannon and wrk load runs
 * and the tables.
 * Everything a benchmark starts is killed and removed when the benchmark process exits.
 */
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SERVER_JS = path.join(ROOT, 'dist', 'server.js');
export const START_TIMEOUT_MS = 30_000;

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});
// Ctrl-C must still clean up: exit through the 'exit' handler above.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

/** Deterministic pseudo-random numbers (mulberry32), so every run seeds the same data. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Opens a data directory's database for bulk seeding, after the real server made it: no fsync
 * and no foreign key checks (the rows are consistent by construction).
 */
export function openForSeeding(dataDir: string): Database.Database {
  const db = new Database(path.join(dataDir, 'chat.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('foreign_keys = OFF');
  return db;
}

/** The database file's size in bytes, once the WAL is folded in. */
export function checkpointedSize(db: Database.Database): number {
  db.pragma('wal_checkpoint(TRUNCATE)');
  return (db.prepare('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()').get() as { bytes: number }).bytes;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A temporary directory removed when the process exits. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

let checkedBuild = false;

/**
 * Stale dist/ would measure yesterday's code: refuse rather than print wrong figures.
 * Checked once per run, so a source edited mid-run does not stop a run that started current.
 */
export function assertBuilt(): void {
  if (checkedBuild) return;
  checkedBuild = true;
  if (!fs.existsSync(SERVER_JS)) throw new Error('dist/server.js is missing: run `make build` first');
  const newest = Math.max(
    ...fs
      .readdirSync(path.join(ROOT, 'src'), { recursive: true })
      .filter((f) => String(f).endsWith('.ts'))
      .map((f) => fs.statSync(path.join(ROOT, 'src', String(f))).mtimeMs),
  );
  if (newest > fs.statSync(SERVER_JS).mtimeMs) throw new Error('dist/ is older than src/: run `make build` first');
}

export interface Started {
  child: ChildProcess;
  pid: number;
  /** http://127.0.0.1:PORT */
  base: string;
  /** performance.now() at spawn. */
  spawnedAt: number;
  /** Where its stdout goes (the chat server's request log). */
  logFile: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Extra arguments for node before the script (--cpu-prof ...). */
  nodeArgs?: string[];
  /** Arguments for the script itself (--sink ...). */
  args?: string[];
  env?: Record<string, string>;
  /** Matches the line announcing the address; group 1 is the base URL. */
  ready?: RegExp;
}

/**
 * Spawns a script and resolves once it printed its listening line. stdout goes to a file in a
 * temporary directory, not a pipe to this process: the chat server writes a log line per
 * request, synchronously, and a pipe read by a process that is also the load client would
 * stall it whenever the load client is busy. A file is what a deployment writes to at worst.
 */
export function startProcess(name: string, script: string, options: StartOptions = {}): Promise<Started> {
  const ready = options.ready ?? /listening on (http:\/\/[^\s:]+:\d+)/;
  const logFile = path.join(tempDir('chat-bench-log-'), `${name}.log`);
  const out = fs.openSync(logFile, 'w');
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', out, 'inherit'],
  });
  fs.closeSync(out);
  children.add(child);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child);
      return;
    }
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
    children.delete(child);
  };
  return new Promise((resolve, reject) => {
    const deadline = spawnedAt + START_TIMEOUT_MS;
    const onExit = (code: number | null) => {
      clearInterval(poll);
      reject(new Error(`${name} exited with ${code} before listening:\n${fs.readFileSync(logFile, 'utf8')}`));
    };
    // Every 2 ms: cold start is measured from spawn, so the wait for this line must stay short.
    const poll = setInterval(() => {
      const found = ready.exec(fs.readFileSync(logFile, 'utf8'));
      if (found) {
        clearInterval(poll);
        child.off('exit', onExit);
        resolve({ child, pid: child.pid!, base: found[1], spawnedAt, logFile, stop });
      } else if (performance.now() > deadline) {
        clearInterval(poll);
        child.off('exit', onExit);
        reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`));
      }
    }, 2);
    child.once('exit', onExit);
  });
}

/**
 * The chat server (dist/server.js) on an ephemeral port of 127.0.0.1, rate limits off. Every
 * bench client comes from 127.0.0.1, so the per-address connection cap (128 by default) is
 * raised far past what any bench opens; callers may override it.
 */
export function startChat(dataDir: string, options: StartOptions = {}): Promise<Started> {
  assertBuilt();
  return startProcess('chat', SERVER_JS, {
    ...options,
    // As `make run` and deploy/chat.service start it (README "Memory").
    env: {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      RATE_LIMIT: 'off',
      CONNECTIONS_PER_CLIENT: '100000',
      MALLOC_MMAP_THRESHOLD_: '131072',
      ...options.env,
    },
  });
}

/** Resident set size of a process in KiB (VmRSS). */
export function rssKb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const found = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!found) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(found[1]);
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak in KiB. */
export function sampleRss(pid: number, everyMs = 5): { stop(): number } {
  let peak = rssKb(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssKb(pid));
    } catch {
      // The process ended: keep the peak seen so far.
    }
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssKb(pid));
    },
  };
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

// ---------------------------------------------------------------------------------------------
// HTTP calls for set-up (not measured)

/**
 * `timeout` is what lets Node honour the server's `Keep-Alive: timeout=5` (closing an idle
 * connection a second before the server does): Node 20's agent applies that hint only when it
 * is shorter than the agent's own timeout, and without one it is ignored, so a connection idle
 * for about 5 s could be reused just as the server closed it (ECONNRESET). An idle socket
 * during a request only emits 'timeout', which nothing here listens to.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 60_000 });

export interface Answer {
  status: number;
  text: string;
  headers: http.IncomingHttpHeaders;
}

/** One request through a keep-alive agent; the whole body is read. */
export function request(base: string, method: string, url: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  // Node sends a DELETE's body with neither Content-Length nor chunked encoding (so the server
  // reads no body, then the JSON as the next request): always state the length.
  if (body !== undefined) headers = { 'content-length': String(Buffer.byteLength(body)), ...headers };
  return new Promise((resolve, reject) => {
    const req = http.request(base + url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString(), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A JSON call with an optional session cookie; anything but 2xx is an error. Returns the parsed body and the cookie. */
export async function call(base: string, method: string, url: string, body?: unknown, cookie?: string): Promise<{ body: any; cookie?: string }> {
  const headers: Record<string, string> = {};
  if (cookie) headers.cookie = cookie;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(base, method, url, body === undefined ? undefined : JSON.stringify(body), headers);
  if (res.status >= 300) throw new Error(`${method} ${url} answered ${res.status}: ${res.text.trim()}`);
  const setCookie = String(res.headers['set-cookie'] ?? '').match(/app_session=([^;]+)/);
  return { body: res.text ? JSON.parse(res.text) : undefined, cookie: setCookie ? `app_session=${setCookie[1]}` : cookie };
}

export const BENCH_PASSWORD = 'benchmark password';

export async function register(base: string, username: string): Promise<void> {
  await call(base, 'POST', '/api/register', { username, password: BENCH_PASSWORD });
}

export async function login(base: string, username: string): Promise<string> {
  const { cookie } = await call(base, 'POST', '/api/login', { username, password: BENCH_PASSWORD });
  if (!cookie) throw new Error('login set no session cookie');
  return cookie;
}

/** A signed-in owner with a server and its first channel. */
export async function ownerWithChannel(base: string, username: string): Promise<{ cookie: string; serverId: string; channelId: string; messagesUrl: string }> {
  await register(base, username);
  const cookie = await login(base, username);
  const server = (await call(base, 'POST', '/api/servers', { name: 'bench' }, cookie)).body;
  const channel = (await call(base, 'GET', `/api/servers/${server.id}/channels`, undefined, cookie)).body[0];
  return { cookie, serverId: server.id, channelId: channel.id, messagesUrl: `/api/servers/${server.id}/channels/${channel.id}/messages` };
}

// ---------------------------------------------------------------------------------------------
// Load runs

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
  /** The status every response must have; anything else fails the run. */
  expectStatus: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
}

/**
 * One autocannon run. Latencies are collected from every response in full precision
 * (autocannon's own histogram rounds to whole milliseconds).
 */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let wrongStatus = 0;
  let firstWrong = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        method: options.method ?? 'GET',
        headers: options.headers,
        body: options.body,
        connections: options.connections,
        duration: options.seconds,
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode !== options.expectStatus) {
        wrongStatus++;
        firstWrong ||= statusCode;
      }
      latencies.push(responseTime);
    });
  });
  if (wrongStatus > 0) throw new Error(`${wrongStatus} responses were not ${options.expectStatus} (first: ${firstWrong})`);
  if (result.errors > 0 || result.timeouts > 0) throw new Error(`load run had ${result.errors} errors and ${result.timeouts} timeouts`);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / options.seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

export const WRK = '/usr/bin/wrk';

export interface WrkOptions extends Omit<LoadOptions, 'expectStatus'> {
  /** wrk's threads, each with connections / threads of the connections. */
  threads: number;
}

/**
 * One wrk run (Debian's wrk, C and epoll: it stays far from saturating where autocannon, in
 * Node, saturates before a bare node:http server does). The request is set by a small Lua
 * script in a temporary file; its `done` hook prints the summary as one JSON line, so nothing
 * depends on wrk's human-readable report. wrk counts every answer of 400 or more as a status
 * error; any of those, or any socket error or timeout, fails the run. Latencies are wrk's
 * (HdrHistogram, microsecond precision), in milliseconds here.
 */
export function wrk(options: WrkOptions): Promise<LoadResult> {
  const url = new URL(options.url);
  if (url.hostname !== '127.0.0.1') throw new Error(`wrk must target 127.0.0.1, not ${url.hostname}`);
  // A Lua long string takes the body and header values as they are, quotes and backslashes
  // included. (Spaced inside an index: `[[` would open a long string.)
  const literal = (value: string) => {
    if (value.includes(']==]')) throw new Error('a wrk value may not contain ]==]');
    return `[==[${value}]==]`;
  };
  const script = [
    `wrk.method = ${literal(options.method ?? 'GET')}`,
    ...(options.body === undefined ? [] : [`wrk.body = ${literal(options.body)}`]),
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `wrk.headers[ ${literal(name)} ] = ${literal(value)}`),
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'WRK_RESULT {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d}\\n\',',
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout, latency:percentile(50), latency:percentile(99)))',
    'end',
  ].join('\n');
  const scriptFile = path.join(tempDir('chat-bench-wrk-'), 'request.lua');
  fs.writeFileSync(scriptFile, script);
  const args = ['-t', String(options.threads), '-c', String(options.connections), '-d', `${options.seconds}s`, '-s', scriptFile, options.url];
  return new Promise((resolve, reject) => {
    const child = spawn(WRK, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      children.delete(child);
      const line = /^WRK_RESULT (.+)$/m.exec(out);
      if (code !== 0 || !line) return reject(new Error(`wrk exited with ${code}:\n${out}`));
      const r = JSON.parse(line[1]) as Record<string, number>;
      if (r.status > 0) return reject(new Error(`${r.status} of ${r.requests} responses were 400 or more:\n${out}`));
      const socketErrors = r.connect + r.read + r.write + r.timeout;
      if (socketErrors > 0) return reject(new Error(`wrk run had ${socketErrors} socket errors or timeouts:\n${out}`));
      resolve({ requests: r.requests, rps: r.requests / (r.duration_us / 1e6), p50: r.p50_us / 1000, p99: r.p99_us / 1000 });
    });
  });
}

/** The kernel's clock ticks per second, the unit of /proc/<pid>/stat's CPU times (normally 100). */
export const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/**
 * CPU time a process has used so far, all its threads (utime + stime of /proc/<pid>/stat), in
 * microseconds. Resolution one clock tick (10 ms): read over runs of seconds only.
 */
export function cpuMicros(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 (utime) and 15 (stime), numbered from 1 with pid and comm as 1 and 2.
  return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS) * 1e6;
}

export interface Latency {
  p50: number;
  p99: number;
  max: number;
}

/**
 * Latency without queueing: one request at a time on one keep-alive connection. With several
 * URLs the requests take turns (a, b, c, a, b, c...), so a noisy moment on a shared machine
 * hits each of them alike and a trivial URL among them shows the noise floor.
 */
export async function sequentialLatency(
  base: string,
  urls: (string | (() => string) | { next: () => string; headers: Record<string, string> })[],
  headers: Record<string, string>,
  count: number,
  warmup: number,
): Promise<Latency[]> {
  const times = urls.map(() => [] as number[]);
  for (let i = 0; i < warmup + count; i++) {
    for (const [u, url] of urls.entries()) {
      const target = typeof url === 'string' ? url : typeof url === 'function' ? url() : url.next();
      const started = performance.now();
      const res = await request(base, 'GET', target, undefined, typeof url === 'object' ? url.headers : headers);
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`GET ${target} answered ${res.status}: ${res.text.trim()}`);
      if (i >= warmup) times[u].push(took);
    }
  }
  return times.map((t) => {
    t.sort((a, b) => a - b);
    return { p50: percentile(t, 50), p99: percentile(t, 99), max: t[t.length - 1] };
  });
}

/**
 * Server-side times of `method path` from the chat server's request log ("GET /x 200 1.2ms":
 * from the request's arrival to the response handed to the kernel), in log order.
 */
export function loggedTimes(logFile: string, method: string, pathname: string): number[] {
  const prefix = `${method} ${pathname} `;
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .map((line) => Number(/ ([\d.]+)ms$/.exec(line)?.[1]))
    .filter((t) => Number.isFinite(t));
}

// ---------------------------------------------------------------------------------------------
// Tables

export type Verdict = 'PASS' | 'MISS' | '';
export type Row = [metric: string, value: string, target: string, result: Verdict];

export const verdict = (ok: boolean): Verdict => (ok ? 'PASS' : 'MISS');
export const ms = (value: number) => `${value.toFixed(2)} ms`;
export const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;

/** The table without its title: header, rule, rows (bench/run.ts parses this from upload-memory). */
export function formatRows(rows: Row[]): string {
  const header = ['metric', 'value', 'target', 'result'];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...[header, ...rows].map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function formatTable(title: string, rows: Row[]): string {
  return `## ${title}\n${formatRows(rows)}`;
}

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n${formatTable(title, rows)}`);
}

/** The machine a run happened on, for the README. */
export function machine(): string {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1].trim() ?? os.cpus()[0]?.model ?? 'unknown CPU';
  const memGiB = os.totalmem() / 1024 ** 3;
  return `${os.availableParallelism()} CPUs (${model}), ${memGiB.toFixed(1)} GiB RAM, ${os.type()} ${os.release()}, Node ${process.version}`;
}

/** Runs `main` when the file is executed directly (not when run.ts imports it). */
export function runAlone(module: NodeModule, name: string, main: () => Promise<void>): void {
  if (require.main !== module) return;
  main().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`${name}: ${err.stack ?? err.message}`);
      process.exit(1);
    },
  );
}

/** Busy and total jiffies of the whole machine (every CPU), from the first line of /proc/stat. */
export function machineTicks(): { busy: number; total: number } {
  // user nice system idle iowait irq softirq steal (guest time is already in user).
  const n = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = n.reduce((a, b) => a + b, 0);
  return { busy: total - n[3] - n[4], total };
}
