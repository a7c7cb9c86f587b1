/**
 * Upload memory benchmark (issue 4): five 25 MiB attachments upload at once, in five requests,
 * and the server's resident memory must stay flat: busboy streams each file to disk, so the
 * peak should grow by buffers, not by file sizes (target: under 20 MiB over idle).
 *
 * The server runs as a child process (dist/server.js, built first if missing or stale) and its
 * RSS is read from /proc/<pid>/status every 50 ms. The bodies are generated while they are
 * sent, so the client holds one 64 KiB block per request, not the files.
 *
 * For scale, the same load then goes to a bare node:http server that only counts the bytes
 * (this script run with --sink): Node's HTTP parser copies every body chunk into a fresh
 * buffer that lives until the next garbage collection, and that floor is no upload code's.
 *
 * Run: npx tsc -p bench/tsconfig.json && node dist-bench/bench/upload-memory.js
 * (FILES=n and FILE_MIB=m change the load; the target is stated for the default 5 x 25 MiB.)
 * Everything listens on 127.0.0.1, in a temporary directory, and stops by itself.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const FILES = Number(process.env.FILES ?? 5);
const FILE_BYTES = Number(process.env.FILE_MIB ?? 25) * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const SAMPLE_MS = 50;
/** Lets the child settle (start-up garbage collected, warm-up buffers freed) before idle is read. */
const SETTLE_MS = 1_500;
const START_TIMEOUT_MS = 15_000;
const UPLOAD_TIMEOUT_MS = 120_000;
const TARGET_INCREASE_MIB = 20;

const MIB = 1024 * 1024;
const ROOT = path.resolve(__dirname, '..', '..');
const children = new Set<ChildProcess>();
const dataDirs: string[] = [];
process.on('exit', () => {
  children.forEach((child) => child.kill('SIGKILL'));
  for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function fail(reason: string): never {
  console.error(`upload-memory: ${reason}`);
  process.exit(1);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** dist/ is what `npm start` runs; build it when it is missing or older than src/. */
function ensureBuilt(): string {
  const serverJs = path.join(ROOT, 'dist', 'server.js');
  const newestSource = Math.max(
    ...fs
      .readdirSync(path.join(ROOT, 'src'), { recursive: true })
      .filter((f) => String(f).endsWith('.ts'))
      .map((f) => fs.statSync(path.join(ROOT, 'src', String(f))).mtimeMs),
  );
  if (!fs.existsSync(serverJs) || newestSource > fs.statSync(serverJs).mtimeMs) {
    console.log('upload-memory: building dist/ first');
    const tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
    const built = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
    if (built.status !== 0) fail('the build failed');
  }
  return serverJs;
}

function start(name: string, args: string[], env: Record<string, string>): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const found = /listening on (http:\/\/[^\s:]+:\d+)/.exec(out);
      if (!found) return;
      clearTimeout(timer);
      // The chat server logs a line per request: keep draining so the pipe never blocks it.
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
  const found = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!found) fail(`no VmRSS in /proc/${pid}/status`);
  return Number(found[1]);
}

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

/**
 * POSTs a message with one generated file of `size` bytes, written with backpressure.
 * Resolves with the attachment size the server reports.
 */
function uploadFile(base: string, url: string, cookie: string, size: number): Promise<number> {
  const boundary = `----bench${crypto.randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\nbenchmark\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="attachments"; filename="big.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const block = crypto.randomBytes(CHUNK_BYTES);
  return new Promise((resolve, reject) => {
    const req = http.request(base + url, {
      method: 'POST',
      headers: {
        cookie,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
      },
    });
    req.setTimeout(UPLOAD_TIMEOUT_MS, () => req.destroy(new Error('upload timed out')));
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        if (res.statusCode !== 201) return reject(new Error(`upload answered ${res.statusCode}: ${text}`));
        resolve(JSON.parse(text).attachments[0].size);
      });
    });
    req.write(head);
    let left = size;
    const pump = () => {
      while (left > 0) {
        const chunk = left >= CHUNK_BYTES ? block : block.subarray(0, left);
        left -= chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end(tail);
    };
    pump();
  });
}

interface Target {
  name: string;
  child: ChildProcess;
  base: string;
  cookie: string;
  /** Where a message with attachments is posted. */
  url: string;
}

async function startChat(): Promise<Target> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-bench-uploads-'));
  dataDirs.push(dataDir);
  const { child, base } = await start('chat', [ensureBuilt()], { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, RATE_LIMIT: 'off', BASE_URL: '' });
  const username = `bench_${process.pid % 100000}`;
  const password = 'benchmark password';
  await call(base, 'POST', '/api/register', { username, password });
  const { cookie } = await call(base, 'POST', '/api/login', { username, password });
  const created = (await call(base, 'POST', '/api/servers', { name: 'bench' }, cookie)).body;
  const channel = (await call(base, 'GET', `/api/servers/${created.id}/channels`, undefined, cookie)).body[0];
  return { name: 'chat', child, base, cookie: cookie!, url: `/api/servers/${created.id}/channels/${channel.id}/messages` };
}

async function startSink(): Promise<Target> {
  const { child, base } = await start('bare sink', [__filename, '--sink'], {});
  return { name: 'bare node:http', child, base, cookie: '', url: '/' };
}

/** The comparison server: reads and counts the body, answers like a message with one attachment. */
function runSink(): void {
  const server = http.createServer((req, res) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => (size += chunk.length));
    req.on('end', () => {
      res.writeHead(201, { 'Content-Type': 'application/json' });
      // The whole body, multipart framing included: the size check below is for the chat server.
      res.end(JSON.stringify({ attachments: [{ size }] }));
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as import('node:net').AddressInfo;
    console.log(`bare sink listening on http://127.0.0.1:${port}`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

async function measure(target: Target): Promise<{ idleKb: number; peakKb: number; seconds: number; sizes: number[] }> {
  const pid = target.child.pid!;
  // Warm-up: the upload path runs once, so idle already includes its code and first buffers.
  await uploadFile(target.base, target.url, target.cookie, MIB);
  await sleep(SETTLE_MS);
  const idleKb = rssKb(pid);
  let peakKb = idleKb;
  const sampler = setInterval(() => {
    peakKb = Math.max(peakKb, rssKb(pid));
  }, SAMPLE_MS);
  const started = performance.now();
  const sizes = await Promise.all(Array.from({ length: FILES }, () => uploadFile(target.base, target.url, target.cookie, FILE_BYTES)));
  const seconds = (performance.now() - started) / 1000;
  peakKb = Math.max(peakKb, rssKb(pid));
  clearInterval(sampler);
  await stop(target.child);
  return { idleKb, peakKb, seconds, sizes };
}

async function main(): Promise<void> {
  const chat = await measure(await startChat());
  if (chat.sizes.some((size) => size !== FILE_BYTES)) fail(`sizes stored: ${chat.sizes.join(', ')}; expected ${FILE_BYTES} each`);
  const bare = await measure(await startSink());
  const mib = (kb: number) => `${(kb / 1024).toFixed(1)} MiB`;
  const chatIncrease = (chat.peakKb - chat.idleKb) / 1024;
  const bareIncrease = (bare.peakKb - bare.idleKb) / 1024;
  const rows: [string, string, string, string][] = [
    ['uploads', `${FILES} requests of one ${FILE_BYTES / MIB} MiB file, at once`, '', ''],
    ['chat: time', `${chat.seconds.toFixed(2)} s (${((FILES * FILE_BYTES) / MIB / chat.seconds).toFixed(0)} MiB/s)`, '', ''],
    ['chat: server RSS idle', mib(chat.idleKb), '', ''],
    ['chat: server RSS peak', mib(chat.peakKb), '', ''],
    ['chat: increase', `${chatIncrease.toFixed(1)} MiB`, `< ${TARGET_INCREASE_MIB} MiB`, chatIncrease < TARGET_INCREASE_MIB ? 'PASS' : 'MISS'],
    ['bare node:http: increase', `${bareIncrease.toFixed(1)} MiB`, '', ''],
    ['chat over bare', `${(chatIncrease - bareIncrease).toFixed(1)} MiB`, '', ''],
  ];
  const header: [string, string, string, string] = ['metric', 'value', 'target', 'result'];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...[header, ...rows].map((r) => r[i].length)));
  const line = (r: string[]) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  for (const row of rows) console.log(line(row));
}

if (process.argv[2] === '--sink') {
  runSink();
} else {
  main().then(
    () => process.exit(0),
    (err: Error) => fail(err.message),
  );
}
