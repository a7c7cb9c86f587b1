/**
 * Upload memory benchmark (issue 4): five 25 MiB attachments upload at once, in five requests,
 * and the server's resident memory must stay flat: busboy streams each file to disk, so the
 * peak should grow by buffers, not by file sizes (target: under 20 MiB over idle).
 *
 * The server runs as a child process (dist/server.js; a missing or stale dist/ stops the run,
 * as in every benchmark: `make bench` builds first) and its RSS is read from /proc/<pid>/status
 * every 50 ms. The bodies are generated while they are sent, so the client holds one 64 KiB
 * block per request, not the files.
 *
 * For scale, the same load then goes to a bare node:http server that only counts the bytes
 * (this script run with --sink): Node's HTTP parser copies every body chunk into a fresh
 * buffer that lives until the next garbage collection, and that floor is no upload code's.
 *
 * Run: npm run build && npx tsc -p bench/tsconfig.json && node dist-bench/bench/upload-memory.js
 * (FILES=n and FILE_MIB=m change the load; the target is stated for the default 5 x 25 MiB.)
 * Everything listens on 127.0.0.1, in a temporary directory, and stops by itself.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { type Row, formatRows, mib, ownerWithChannel, rssKb, runAlone, sampleRss, sleep, startChat, startProcess, type Started, tempDir, verdict } from './lib';

const FILES = Number(process.env.FILES ?? 5);
const FILE_BYTES = Number(process.env.FILE_MIB ?? 25) * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const SAMPLE_MS = 50;
/** Lets the child settle (start-up garbage collected, warm-up buffers freed) before idle is read. */
const SETTLE_MS = 1_500;
const UPLOAD_TIMEOUT_MS = 120_000;
const TARGET_INCREASE_MIB = 20;

const MIB = 1024 * 1024;

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
  server: Started;
  cookie: string;
  /** Where a message with attachments is posted. */
  url: string;
}

async function chatTarget(): Promise<Target> {
  const server = await startChat(tempDir('chat-bench-uploads-'), { env: { BASE_URL: '' } });
  const { cookie, messagesUrl } = await ownerWithChannel(server.base, `bench_${process.pid % 100000}`);
  return { name: 'chat', server, cookie, url: messagesUrl };
}

async function sinkTarget(): Promise<Target> {
  const server = await startProcess('bare sink', __filename, { args: ['--sink'] });
  return { name: 'bare node:http', server, cookie: '', url: '/' };
}

/**
 * The comparison server: reads and counts the body, answers like a message with one attachment.
 * SIGTERM ends it (lib.ts exits on it); nothing needs closing first.
 */
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
}

async function measure(target: Target): Promise<{ idleKb: number; peakKb: number; seconds: number; sizes: number[] }> {
  const { pid, base } = target.server;
  // Warm-up: the upload path runs once, so idle already includes its code and first buffers.
  await uploadFile(base, target.url, target.cookie, MIB);
  await sleep(SETTLE_MS);
  const idleKb = rssKb(pid);
  const sampler = sampleRss(pid, SAMPLE_MS);
  const started = performance.now();
  const sizes = await Promise.all(Array.from({ length: FILES }, () => uploadFile(base, target.url, target.cookie, FILE_BYTES)));
  const seconds = (performance.now() - started) / 1000;
  const peakKb = sampler.stop();
  await target.server.stop();
  return { idleKb, peakKb, seconds, sizes };
}

async function main(): Promise<void> {
  const chat = await measure(await chatTarget());
  if (chat.sizes.some((size) => size !== FILE_BYTES)) throw new Error(`sizes stored: ${chat.sizes.join(', ')}; expected ${FILE_BYTES} each`);
  const bare = await measure(await sinkTarget());
  const chatIncrease = (chat.peakKb - chat.idleKb) / 1024;
  const bareIncrease = (bare.peakKb - bare.idleKb) / 1024;
  const rows: Row[] = [
    ['uploads', `${FILES} requests of one ${FILE_BYTES / MIB} MiB file, at once`, '', ''],
    ['chat: time', `${chat.seconds.toFixed(2)} s (${((FILES * FILE_BYTES) / MIB / chat.seconds).toFixed(0)} MiB/s)`, '', ''],
    ['chat: server RSS idle', mib(chat.idleKb), '', ''],
    ['chat: server RSS peak', mib(chat.peakKb), '', ''],
    ['chat: increase', `${chatIncrease.toFixed(1)} MiB`, `< ${TARGET_INCREASE_MIB} MiB`, verdict(chatIncrease < TARGET_INCREASE_MIB)],
    ['bare node:http: increase', `${bareIncrease.toFixed(1)} MiB`, '', ''],
    ['chat over bare', `${(chatIncrease - bareIncrease).toFixed(1)} MiB`, '', ''],
  ];
  console.log(formatRows(rows));
}

if (process.argv[2] === '--sink') runSink();
else runAlone(module, 'upload-memory', main);
