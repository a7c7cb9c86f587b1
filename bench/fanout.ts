/**
 * Fan-out benchmark (issue 6): 1 000 sockets watch one channel; 200 messages are posted one at
 * a time, each waiting until every socket has it. Reports the time from the POST to the last
 * socket receiving the message (p50, p99), the server's memory per socket, and the same run
 * against a bare `ws` broadcast server (bench/bare-broadcast.ts) for comparison.
 *
 * Run: npm run build && npx tsc -p bench/tsconfig.json && node dist-bench/bench/fanout.js
 * Everything listens on 127.0.0.1, in temporary directories, and stops by itself.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';

const SOCKETS = Number(process.env.SOCKETS ?? 1000);
/** Sockets are spread over this many users (a user may have several tabs open). */
const USERS = 50;
const MESSAGES = 200;
/** Posted first and not measured, so both servers are measured warm. */
const WARMUP_MESSAGES = 20;
const CONNECT_BATCH = 100;
const MESSAGE_TIMEOUT_MS = 10_000;
const START_TIMEOUT_MS = 15_000;
/** Lets the child settle (buffers freed, handshakes done) before RSS is read. */
const SETTLE_MS = 1_000;

const TARGET_KB_PER_SOCKET = 20;
const TARGET_P99_RATIO = 1.5;

const ROOT = path.resolve(__dirname, '..', '..');
const children = new Set<ChildProcess>();
process.on('exit', () => children.forEach((child) => child.kill('SIGKILL')));

interface Target {
  name: string;
  child: ChildProcess;
  base: string;
  socketUrl: string;
  /** Socket n sends cookies[n % length]; the bare server needs none. */
  cookies: string[];
  /** Posts message content; resolves when the server answered. */
  post(content: string): Promise<void>;
}

interface Result {
  p50: number;
  p99: number;
  kbPerSocket: number;
}

/** Thrown, not exited on: bench/run.ts calls this benchmark as a function. */
function fail(reason: string): never {
  throw new Error(reason);
}

function start(name: string, script: string, env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/[^\s:]+:\d+)/.exec(out);
      if (!found) return;
      clearTimeout(timer);
      // The chat server logs a line per request: drain it so the pipe never blocks the child.
      child.stdout!.off('data', onData);
      child.stdout!.resume();
      resolve({ child, base: found[1] });
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
  children.delete(child);
}

function rssKb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const found = /VmRSS:\s+(\d+) kB/.exec(status);
  if (!found) fail(`no VmRSS in /proc/${pid}/status`);
  return Number(found[1]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A one-cookie HTTP session against the chat server. */
async function call(base: string, method: string, url: string, body?: unknown, cookie?: string) {
  const headers: Record<string, string> = {};
  if (cookie) headers.cookie = cookie;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (res.status >= 300) fail(`${method} ${url} answered ${res.status}: ${text}`);
  const setCookie = res.headers.get('set-cookie')?.match(/app_session=([^;]+)/);
  return { body: text ? JSON.parse(text) : undefined, cookie: setCookie ? `app_session=${setCookie[1]}` : cookie };
}

async function signUp(base: string, username: string): Promise<string> {
  const password = 'benchmark password';
  await call(base, 'POST', '/api/register', { username, password });
  const { cookie } = await call(base, 'POST', '/api/login', { username, password });
  return cookie!;
}

async function startChat(): Promise<Target> {
  const serverJs = path.join(ROOT, 'dist', 'server.js');
  if (!fs.existsSync(serverJs)) fail('dist/server.js is missing: run `npm run build` first');
  const newestSource = Math.max(...fs.readdirSync(path.join(ROOT, 'src'), { recursive: true })
    .filter((f) => String(f).endsWith('.ts'))
    .map((f) => fs.statSync(path.join(ROOT, 'src', String(f))).mtimeMs));
  if (newestSource > fs.statSync(serverJs).mtimeMs) fail('dist/ is older than src/: run `npm run build` first');

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-bench-'));
  process.on('exit', () => fs.rmSync(dataDir, { recursive: true, force: true }));
  const { child, base } = await start('chat', serverJs, { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: 'off' });

  const tag = process.pid % 10000;
  const owner = await signUp(base, `owner_${tag}`);
  const server = (await call(base, 'POST', '/api/servers', { name: 'bench' }, owner)).body;
  const channel = (await call(base, 'GET', `/api/servers/${server.id}/channels`, undefined, owner)).body[0];
  const invite = (await call(base, 'POST', `/api/servers/${server.id}/invites`, undefined, owner)).body;
  const cookies: string[] = [];
  // Password hashing dominates set-up: ten sign-ups at a time.
  for (let i = 0; i < USERS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, USERS - i) }, async (_, j) => {
        const cookie = await signUp(base, `member_${tag}_${i + j}`);
        await call(base, 'POST', `/api/invites/${invite.token}/accept`, undefined, cookie);
        return cookie;
      }),
    );
    cookies.push(...batch);
  }
  const messages = `/api/servers/${server.id}/channels/${channel.id}/messages`;
  return {
    name: 'chat',
    child,
    base,
    socketUrl: `${base.replace('http', 'ws')}/api/channels/${channel.id}/ws`,
    cookies,
    post: async (content) => {
      await call(base, 'POST', messages, { content }, owner);
    },
  };
}

async function startBare(): Promise<Target> {
  const { child, base } = await start('bare', path.join(__dirname, 'bare-broadcast.js'), {});
  return {
    name: 'bare ws',
    child,
    base,
    socketUrl: `${base.replace('http', 'ws')}/`,
    cookies: [''],
    post: async (content) => {
      const res = await fetch(`${base}/messages`, { method: 'POST', body: JSON.stringify({ content }) });
      await res.text();
      if (res.status !== 201) fail(`bare server answered ${res.status}`);
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function measure(target: Target, total: number): Promise<Result> {
  // received[n]: how many sockets have message n; done[n] resolves when all have it.
  const received = new Map<number, number>();
  const waiters = new Map<number, () => void>();
  const onMessage = (data: WebSocket.RawData) => {
    const n = Number(/^m(\d+)$/.exec(JSON.parse(data.toString()).content)?.[1]);
    const count = (received.get(n) ?? 0) + 1;
    received.set(n, count);
    if (count === total) waiters.get(n)?.();
  };

  await sleep(SETTLE_MS);
  const rssBefore = rssKb(target.child.pid!);
  const sockets: WebSocket[] = [];
  for (let i = 0; i < total; i += CONNECT_BATCH) {
    await Promise.all(
      Array.from({ length: Math.min(CONNECT_BATCH, total - i) }, (_, j) => {
        const cookie = target.cookies[(i + j) % target.cookies.length];
        const ws = new WebSocket(target.socketUrl, { headers: cookie ? { cookie } : {} });
        sockets.push(ws);
        ws.on('message', onMessage);
        return new Promise<void>((resolve, reject) => {
          ws.once('open', () => resolve());
          ws.once('error', (err) => reject(new Error(`${target.name}: socket ${i + j} failed: ${err.message}`)));
          ws.once('unexpected-response', (_req, res) => reject(new Error(`${target.name}: upgrade answered ${res.statusCode}`)));
        });
      }),
    );
  }
  await sleep(SETTLE_MS);
  const rssAfter = rssKb(target.child.pid!);

  const latencies: number[] = [];
  for (let n = 0; n < WARMUP_MESSAGES + MESSAGES; n++) {
    const allReceived = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${target.name}: message ${n} reached ${received.get(n) ?? 0} of ${total} sockets in ${MESSAGE_TIMEOUT_MS} ms`)),
        MESSAGE_TIMEOUT_MS,
      );
      waiters.set(n, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const started = performance.now();
    await Promise.all([target.post(`m${n}`), allReceived]);
    if (n >= WARMUP_MESSAGES) latencies.push(performance.now() - started);
    waiters.delete(n);
  }
  for (const ws of sockets) ws.terminate();
  await stop(target.child);

  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), kbPerSocket: (rssAfter - rssBefore) / total };
}

export interface FanoutFigures {
  sockets: number;
  chat: Result;
  bare: Result;
  /** chat p99 / bare p99 */
  ratio: number;
}

export const fanoutSetup = (sockets: number) =>
  `${sockets} sockets over ${USERS} users, ${MESSAGES} messages (after ${WARMUP_MESSAGES} warm-up)`;

/** Both servers, one after the other, with the same clients; for bench/run.ts and main below. */
export async function runFanout(sockets = SOCKETS): Promise<FanoutFigures> {
  const chat = await measure(await startChat(), sockets);
  const bare = await measure(await startBare(), sockets);
  return { sockets, chat, bare, ratio: chat.p99 / bare.p99 };
}

export function fanoutRows({ chat, bare, ratio }: FanoutFigures): [string, string, string, '' | 'PASS' | 'MISS'][] {
  return [
    ['chat: all received, p50', `${chat.p50.toFixed(1)} ms`, '', ''],
    ['chat: all received, p99', `${chat.p99.toFixed(1)} ms`, '', ''],
    ['bare ws: all received, p50', `${bare.p50.toFixed(1)} ms`, '', ''],
    ['bare ws: all received, p99', `${bare.p99.toFixed(1)} ms`, '', ''],
    ['p99 chat / bare', `${ratio.toFixed(2)}x`, `<= ${TARGET_P99_RATIO}x`, ratio <= TARGET_P99_RATIO ? 'PASS' : 'MISS'],
    ['chat: server memory per socket', `${chat.kbPerSocket.toFixed(1)} KB`, `<= ${TARGET_KB_PER_SOCKET} KB`, chat.kbPerSocket <= TARGET_KB_PER_SOCKET ? 'PASS' : 'MISS'],
    ['bare ws: server memory per socket', `${bare.kbPerSocket.toFixed(1)} KB`, '', ''],
  ];
}

async function main(): Promise<void> {
  console.log(`fanout: ${fanoutSetup(SOCKETS)}`);
  const rows = fanoutRows(await runFanout());
  const widths = [0, 1, 2, 3].map((i) => Math.max(...[['metric', 'value', 'target', 'result'], ...rows].map((r) => r[i].length)));
  const line = (r: string[]) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd();
  console.log(line(['metric', 'value', 'target', 'result']));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: Error) => {
      console.error(`fanout: ${err.message}`);
      process.exit(1);
    },
  );
}
