/**
 * Import memory (issue 45): what an upload costs the server's memory, read as the peak resident
 * memory of the server's own process (VmHWM of dist/server.js, started as `make run` starts it).
 *
 * 1. Hostile uploads at the 256 MiB channel-file cap, a few KiB zipped: `[],` junk inside a kept
 *    array (refused at its first item) and in a field the format ignores (read through, never
 *    built, the export accepted). JSON.parse held about 770 MiB for 16 MiB of such junk.
 * 2. A legitimate export (bench/discord-synth.ts, IMPORT_MEMORY_MESSAGES messages, 300 000 by
 *    default) uploaded, checked and imported: the server's peak, and how long each took.
 * 3. One channel file of 256 MiB (the cap): the heap the import holds for it (its messages, to sort
 *    them), read in this process after a collection: what IMPORT_LIMITS (src/parts/import/imports.ts)
 *    is sized for.
 * 4. The streaming read against JSON.parse over the same channel files: MB/s each.
 *
 * Run alone: node dist-bench/bench/import-memory.js   (after `npx tsc -p bench/tsconfig.json`)
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import yazl from 'yazl';
import { writeSyntheticExport } from './discord-synth';
import { type Row, call, login, printTable, register, request, runAlone, sleep, startChat, tempDir, verdict } from './lib';
import { openExport } from '../src/parts/import/export-files';
import { isChannelFile, readChannel } from '../src/parts/import/discord-plan';
import { CHANNEL_FILE } from '../src/parts/import/discord-format';
import { readJson } from '../src/parts/import/json-reader';
import { IMPORT_LIMITS } from '../src/parts/import/imports';

const MESSAGES = Number(process.env.IMPORT_MEMORY_MESSAGES ?? 300_000);
const MIB = 1024 * 1024;
const CAP_BYTES = 256 * MIB;

const peakKb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);
const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;

/** A zip of `files` (path in the zip -> bytes, or a file on disk). */
async function zipOf(files: Record<string, Buffer | { disk: string }>): Promise<string> {
  const file = path.join(tempDir('import-memory-zip-'), 'export.zip');
  const zip = new yazl.ZipFile();
  for (const [name, value] of Object.entries(files)) {
    if (Buffer.isBuffer(value)) zip.addBuffer(value, name);
    else zip.addFile(value.disk, name);
  }
  zip.end();
  await new Promise<void>((resolve, reject) => zip.outputStream.pipe(fs.createWriteStream(file)).on('close', resolve).on('error', reject));
  return file;
}

/** Every file under `dir`, by its path inside it. */
function filesUnder(dir: string, prefix = ''): Record<string, { disk: string }> {
  const out: Record<string, { disk: string }> = {};
  for (const entry of fs.readdirSync(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(out, filesUnder(dir, rel));
    else out[rel] = { disk: path.join(dir, rel) };
  }
  return out;
}

const head = '{"guild":{"id":"800000000000000001","name":"Hostile"},"channel":{"id":"810000000000000001","type":"GuildTextChat","name":"general"},"messages":[';
const valid =
  '{"id":"900000000000000001","type":"Default","timestamp":"2024-01-01T00:00:00+00:00","content":"hi","author":{"id":"700000000000000001","name":"a"}';

/** A channel file of about `bytes`: `[],` junk in a message's ignored field, or inside its kept `mentions`. */
function hostile(where: 'ignored' | 'kept', bytes: number): Buffer {
  const junk = '[],'.repeat(Math.floor(bytes / 3)) + '[]';
  return Buffer.from(where === 'ignored' ? `${head}${valid},"junk":[${junk}]}]}` : `${head}${valid},"mentions":[${junk}]}]}`);
}

/** A legitimate channel file of about `bytes`, written in pieces. */
function bigChannelFile(file: string, bytes: number): number {
  const fd = fs.openSync(file, 'w');
  fs.writeSync(fd, head);
  let written = head.length;
  let n = 0;
  const text = 'the quick brown fox jumps over the lazy dog and then some more words to read '.repeat(3);
  while (written < bytes) {
    const lines: string[] = [];
    for (let i = 0; i < 1000; i++, n++) {
      lines.push(
        JSON.stringify({
          id: String(900000000000000000n + BigInt(n)),
          type: 'Default',
          timestamp: new Date(Date.UTC(2021, 0, 1) + n * 60_000).toISOString(),
          timestampEdited: null,
          isPinned: false,
          content: `${n} ${text}`,
          author: {
            id: String(700000000000000000n + BigInt(n % 500)),
            name: `person${n % 500}`,
            discriminator: '0000',
            nickname: `Person ${n % 500}`,
            color: '#3BA55D',
            isBot: false,
            roles: [{ id: '600000000000000001', name: 'Members', color: null, position: 1 }],
            avatarUrl: null,
          },
          attachments: [],
          embeds: [],
          stickers: [],
          reactions: n % 20 === 0 ? [{ emoji: { id: null, name: '👍', code: 'thumbsup', isAnimated: false, imageUrl: null }, count: 2 }] : [],
          mentions: [],
          inlineEmojis: [],
        }),
      );
    }
    const piece = (n > 1000 ? ',' : '') + lines.join(',');
    fs.writeSync(fd, piece);
    written += piece.length;
  }
  fs.writeSync(fd, ']}');
  fs.closeSync(fd);
  return n;
}

async function upload(base: string, cookie: string, zip: string): Promise<{ status: number; ms: number; body: string }> {
  const boundary = 'benchimportmemory';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="export"; filename="export.zip"\r\nContent-Type: application/zip\r\n\r\n`),
    fs.readFileSync(zip),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const started = performance.now();
  const answer = await request(base, 'POST', '/api/imports', body, { cookie, 'content-type': `multipart/form-data; boundary=${boundary}` });
  return { status: answer.status, ms: performance.now() - started, body: answer.text };
}

/** What docs/security.md "Import memory" states: a check adds at most this to the server's peak. */
export const CHECK_BOUND_KB = 400 * 1024;

export async function measureImportMemory(): Promise<Row[]> {
  const rows: Row[] = [];
  // Each as it is measured (a run takes minutes).
  const push = rows.push.bind(rows);
  rows.push = (...more: Row[]) => (more.forEach((row) => console.error(`  ${row[0]}: ${row[1]}`)), push(...more));
  const dataDir = tempDir('import-memory-data-');
  const chat = await startChat(dataDir);
  try {
    await register(chat.base, 'memory_owner');
    const cookie = await login(chat.base, 'memory_owner');
    const idle = peakKb(chat.pid);
    rows.push(['server at rest (VmHWM)', mib(idle), '', verdict(true)]);

    for (const where of ['kept', 'ignored'] as const) {
      const zip = await zipOf({ 'general.json': hostile(where, CAP_BYTES - MIB) });
      const before = peakKb(chat.pid);
      const res = await upload(chat.base, cookie, zip);
      const added = peakKb(chat.pid) - before;
      const want = where === 'kept' ? 400 : 201;
      rows.push([
        `256 MiB of junk ${where === 'kept' ? 'inside a kept array' : 'in an ignored field'} (${(fs.statSync(zip).size / 1024).toFixed(0)} KiB zipped)`,
        `${res.status} in ${(res.ms / 1000).toFixed(1)} s; peak +${mib(added)}`,
        `${want}, +${mib(CHECK_BOUND_KB)} at most`,
        verdict(res.status === want && added < CHECK_BOUND_KB),
      ]);
    }

    const exportDir = tempDir('import-memory-synth-');
    writeSyntheticExport(exportDir, { messages: MESSAGES, attachments: 0 });
    const zip = await zipOf(filesUnder(exportDir));
    const before = peakKb(chat.pid);
    const checked = await upload(chat.base, cookie, zip);
    if (checked.status !== 201) throw new Error(`the synthetic export was refused: ${checked.status} ${checked.body}`);
    const afterCheck = peakKb(chat.pid);
    rows.push([
      `a legitimate export, ${MESSAGES} messages (${(fs.statSync(zip).size / MIB).toFixed(0)} MiB zipped), checked`,
      `in ${(checked.ms / 1000).toFixed(1)} s; peak +${mib(afterCheck - before)}`,
      `+${mib(CHECK_BOUND_KB)} at most`,
      verdict(afterCheck - before < CHECK_BOUND_KB),
    ]);
    const id = (JSON.parse(checked.body) as { id: string }).id;
    const startedAt = performance.now();
    await call(chat.base, 'POST', `/api/imports/${id}/start`, {}, cookie);
    for (;;) {
      const { body } = await call(chat.base, 'GET', `/api/imports/${id}`, undefined, cookie);
      if ((body as { status: string }).status !== 'running') {
        if ((body as { status: string }).status !== 'done') throw new Error(`the import ended ${JSON.stringify(body)}`);
        break;
      }
      await sleep(250);
    }
    rows.push([
      `  then imported`,
      `in ${((performance.now() - startedAt) / 1000).toFixed(1)} s; server peak ${mib(peakKb(chat.pid))} (+${mib(peakKb(chat.pid) - idle)} over rest)`,
      'done',
      verdict(true),
    ]);

    // 4. The streaming read against JSON.parse, over the synthetic export's channel files.
    const files = await openExport(exportDir);
    const channelFiles = files.paths().filter(isChannelFile);
    const bytes = channelFiles.reduce((n, f) => n + files.size(f)!, 0);
    let started = performance.now();
    for (const file of channelFiles) JSON.parse((await files.read(file)).toString('utf8'));
    const parseMs = performance.now() - started;
    started = performance.now();
    for (const file of channelFiles) await readJson(files.stream(file), CHANNEL_FILE, { streamed: 'messages', onItem: () => {} });
    const streamMs = performance.now() - started;
    files.close();
    rows.push([
      `reading ${(bytes / MIB).toFixed(0)} MiB of channel files: JSON.parse / streamed against the schema`,
      `${(bytes / MIB / (parseMs / 1000)).toFixed(0)} / ${(bytes / MIB / (streamMs / 1000)).toFixed(0)} MiB/s (${(streamMs / parseMs).toFixed(1)}x the time)`,
      '',
      verdict(true),
    ]);
  } finally {
    await chat.stop();
  }

  // 3. The import's heap for one channel file at the cap.
  const dir = tempDir('import-memory-big-');
  const count = bigChannelFile(path.join(dir, 'general.json'), CAP_BYTES - 4 * MIB);
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const files = await openExport(dir);
  gc();
  const base = process.memoryUsage().heapUsed;
  const started = performance.now();
  const held = await readChannel(files, {
    channel: { id: '810000000000000001', type: 'GuildTextChat', name: 'general' },
    files: ['general.json'],
    plain: new Set(),
  });
  gc();
  const heldMib = (process.memoryUsage().heapUsed - base) / MIB;
  rows.push([
    `one 256 MiB channel file (${count} messages): held by the import to sort it`,
    `${heldMib.toFixed(0)} MiB of heap, read in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    `< ${IMPORT_LIMITS.heapMb} MiB (IMPORT_LIMITS)`,
    verdict(heldMib < IMPORT_LIMITS.heapMb * 0.75),
  ]);
  void held.messages.length;
  files.close();
  return rows;
}

runAlone(module, 'import-memory', async () => {
  printTable('Import memory (issue 45, docs/security.md "Import memory")', await measureImportMemory());
});
