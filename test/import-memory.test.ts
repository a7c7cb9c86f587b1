// Issue 45, item 1: an upload by any account cannot take the server's memory. A hostile channel
// file (16 MiB of `[],` junk, a few KiB zipped) is read in little memory, refused at once where
// the junk sits in a field the format keeps, and three at once leave the server answering, its
// peak memory (VmHWM of the server's own process, dist/server.js) within the bound
// docs/security.md "Import memory" states. Checks run one at a time; an account has one pending
// upload (429), the server a few in all (503).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { MAX_PENDING_CHECKS } from '../src/parts/import/imports';
import { type ServerProcess, SERVER, killed, startServerProcess } from './helpers/process';
import { type Client, signUp } from './helpers/client';
import { channelFile, hostileChannelFile, message, writeZip } from './helpers/discord-export';

if (!fs.existsSync(SERVER)) execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: path.join(__dirname, '..'), stdio: 'inherit' });

/** The server process's peak resident memory so far, MiB (Linux: /proc). */
const peakMib = (server: ServerProcess) => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) / 1024;

/** What docs/security.md "Import memory" promises: a check adds at most this to the server's peak. */
const CHECK_BOUND_MIB = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const form = (field: string, zip: string) => {
  const data = new FormData();
  data.append(field, new Blob([fs.readFileSync(zip)], { type: 'application/zip' }), 'export.zip');
  return data;
};

t.test(
  'hostile channel files: refused at once or read in little memory, three at once, the server answering',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-memory-'));
    const server = await startServerProcess(dataDir);
    t.teardown(async () => {
      await killed(server.child);
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const [a, b, c, d] = await Promise.all([1, 2, 3, 4].map(() => signUp(server.url)));
    const zips = {
      ignored: await writeZip({ 'general.json': hostileChannelFile('ignored') }),
      ignoredValid: await writeZip({ 'general.json': hostileChannelFile('ignored-valid') }),
      kept: await writeZip({ 'general.json': hostileChannelFile('kept') }),
      keptCount: await writeZip({ 'general.json': hostileChannelFile('kept-count') }),
    };
    t.ok(fs.statSync(zips.ignored).size < 100 * 1024, '16 MiB of junk zips to a few KiB');
    const before = peakMib(server);

    let answering = true;
    let pings = 0;
    let failed = 0;
    const pinging = (async () => {
      while (answering) {
        const res = await fetch(`${server.url}/healthz`);
        if (res.status !== 200) failed++;
        pings++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const upload = (client: Client, zip: string) => client.post('/api/imports', form('export', zip));
    const [ignored, kept, keptCount, ignoredValid] = await Promise.all([
      upload(a, zips.ignored),
      upload(b, zips.kept),
      upload(c, zips.keptCount),
      upload(d, zips.ignoredValid),
    ]);
    answering = false;
    await pinging;

    t.equal(ignored.status, 400);
    t.match(
      ignored.text,
      /^cannot import: general\.json: not a DiscordChatExporter channel file: \/messages\/0\/id: /,
      'junk where the format ignores it is skipped; the real fault is named',
    );
    t.equal(kept.status, 400);
    t.match(
      kept.text,
      /^cannot import: general\.json: not a DiscordChatExporter channel file: \/messages\/0\/mentions\/0: Expected object, not array/,
      'junk inside a kept array: refused at its first item',
    );
    t.equal(keptCount.status, 400);
    t.match(keptCount.text, /\/messages\/0\/mentions: Expected array length to be less or equal to 1000/, 'an array past its bound: refused at once');
    t.equal(ignoredValid.status, 201, 'junk in a field the format ignores, in a valid file: checked, never built');
    t.equal(ignoredValid.body.plan.channels[0].messages, 1);
    t.ok(pings > 0 && failed === 0, `the server answered all along (${pings} health checks, ${failed} failed)`);
    const added = peakMib(server) - before;
    t.ok(
      added < CHECK_BOUND_MIB,
      `the server's peak memory rose by ${added.toFixed(0)} MiB (bound ${CHECK_BOUND_MIB} MiB; JSON.parse took about 770 MiB for each)`,
    );
    t.equal((await fetch(`${server.url}/healthz`)).status, 200, 'and it is still up');
  },
);

/**
 * An upload whose body is held half-sent until `finish()`: the server has admitted it (its
 * handler runs once the headers are in) and waits for the rest.
 */
function heldUpload(base: string, cookie: string, zip: string) {
  const boundary = 'heldupload0123456789';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="export"; filename="export.zip"\r\nContent-Type: application/zip\r\n\r\n`);
  const body = Buffer.concat([head, fs.readFileSync(zip), Buffer.from(`\r\n--${boundary}--\r\n`)]);
  const req = http.request(`${base}/api/imports`, {
    method: 'POST',
    headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(body.length) },
  });
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
  });
  req.write(body.subarray(0, head.length + 10));
  return { answer, finish: () => req.end(body.subarray(head.length + 10)) };
}

t.test('one pending upload per account (429), a few in all (503); the others wait their turn', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-queue-'));
  const server = await startServerProcess(dataDir);
  t.teardown(async () => {
    await killed(server.child);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const clients = await Promise.all(Array.from({ length: MAX_PENDING_CHECKS + 1 }, () => signUp(server.url)));
  const zip = await writeZip({
    'general.json': channelFile({ id: '810000000000000001', type: 'GuildTextChat', name: 'general', messages: [message({ content: 'hi' })] }),
  });
  const [first, ...others] = clients;
  const held = heldUpload(server.url, first.cookie!, zip);
  // The server takes the held upload's headers in a moment (a second sent at once might pass first).
  await sleep(1000);
  const second = await first.post('/api/imports', form('export', zip));
  t.equal(second.status, 429, 'one pending upload per account, refused before its body is read');
  t.match(second.text, /an export of yours is being uploaded or checked/);
  t.equal(second.headers.get('retry-after'), '60');

  const alsoHeld = others.slice(0, MAX_PENDING_CHECKS - 1).map((client) => heldUpload(server.url, client.cookie!, zip));
  const last = others.at(-1)!;
  await sleep(1000);
  const full = await last.post('/api/imports', form('export', zip));
  t.equal(full.status, 503, `at most ${MAX_PENDING_CHECKS} uploads pending on the server`);
  t.match(full.text, /exports are waiting to be checked on this server; try again in a few minutes/);
  t.equal(full.headers.get('retry-after'), '60');

  for (const upload of [held, ...alsoHeld]) upload.finish();
  const answers = await Promise.all([held, ...alsoHeld].map((upload) => upload.answer));
  t.same(
    answers.map((a) => a.status),
    answers.map(() => 201),
    'each waits its turn and is checked',
  );
  t.equal((await last.post('/api/imports', form('export', zip))).status, 201, 'then the next is taken');
});
