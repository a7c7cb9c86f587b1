/**
 * Account export (issue 20): one user with 100 000 messages and 1 GiB of attachments (64 files
 * of 16 MiB, random bytes: nothing to compress), seeded into the database and uploads/. The
 * server runs in this process so the event loop it uses is the one measured: a
 * monitorEventLoopDelay histogram (1 ms resolution) runs from the export's start to its end,
 * while GET /healthz is asked every 20 ms (what another user would feel). Reported: the time to
 * a finished zip, the longest event-loop delay, /healthz p99 and max, and the zip's size.
 *
 * Run alone: node dist-bench/bench/export.js   (EXPORT_MESSAGES, EXPORT_FILES change the size)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type * as App from '../src/app';
import type * as Config from '../src/core/config';
import { ROOT, type Row, assertBuilt, call, login, ms, percentile, printTable, register, runAlone, sleep, tempDir, verdict } from './lib';

const MESSAGES = Number(process.env.EXPORT_MESSAGES ?? 100_000);
const FILES = Number(process.env.EXPORT_FILES ?? 64);
const FILE_BYTES = 16 * 1024 * 1024;
/** "Without blocking the event loop for more than a few ms at a time". */
export const TARGET_MAX_DELAY_MS = 20;
const USER = 'export_user';

interface Watched {
  ms: number;
  loopP99: number;
  loopMax: number;
  pingP99: number;
  pingMax: number;
  pings: number;
}

export interface ExportFigures {
  messages: number;
  files: number;
  attachmentBytes: number;
  seedMs: number;
  zipBytes: number;
  /** 5 s of the same watching with no export: the machine's own noise. */
  idle: Watched;
  busy: Watched;
}

export async function measureExport(): Promise<ExportFigures> {
  // The built server (dist/), as every other benchmark runs it: it finds schema.sql beside it.
  assertBuilt();
  const { createApp } = require(path.join(ROOT, 'dist', 'app.js')) as typeof App;
  const { loadConfig } = require(path.join(ROOT, 'dist', 'config.js')) as typeof Config;
  const dataDir = tempDir('chat-bench-export-');
  const running = createApp({ config: loadConfig({ DATA_DIR: dataDir, RATE_LIMIT: 'off' }), log: () => {} });
  await new Promise<void>((resolve) => running.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(running.server.address() as AddressInfo).port}`;
  try {
    const seedStarted = performance.now();
    await register(base, USER);
    const cookie = await login(base, USER);
    const serverId = (await call(base, 'POST', '/api/servers', { name: 'export' }, cookie)).body.id;
    const channelId = (await call(base, 'GET', `/api/servers/${serverId}/channels`, undefined, cookie)).body[0].id;
    const { db } = running.app;
    const userId = (db.prepare('SELECT id FROM users WHERE username = ?').get(USER) as { id: string }).id;
    const insertMessage = db.prepare('INSERT INTO messages (id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?) RETURNING seq');
    const insertAttachment = db.prepare(
      `INSERT INTO attachments (id, message_seq, name, content_type, size, preview_kind, position, created_at)
       VALUES (?, ?, ?, 'application/octet-stream', ?, 'code', 0, ?)`,
    );
    const now = new Date().toISOString();
    const withFileEvery = Math.floor(MESSAGES / FILES);
    const attachmentIds: string[] = [];
    db.transaction(() => {
      for (let i = 0; i < MESSAGES; i++) {
        const { seq } = insertMessage.get(crypto.randomUUID(), channelId, userId, `message ${i}: the export carries every word the user wrote`, now) as {
          seq: number;
        };
        if (i % withFileEvery === 0 && attachmentIds.length < FILES) {
          const id = crypto.randomUUID();
          insertAttachment.run(id, seq, `file-${attachmentIds.length}.bin`, FILE_BYTES, now);
          attachmentIds.push(id);
        }
      }
    })();
    const chunk = crypto.randomBytes(FILE_BYTES);
    for (const id of attachmentIds) {
      // Each file differs (its first bytes), none compresses.
      crypto.randomFillSync(chunk, 0, 4096);
      fs.writeFileSync(path.join(dataDir, 'uploads', id), chunk);
    }
    const seedMs = performance.now() - seedStarted;

    // The floor: the same watching and pinging for 5 s with no export running.
    const idle = await watch(base, () => sleep(5_000));
    const busy = await watch(base, async () => {
      const start = await fetch(`${base}/api/account/export`, { method: 'POST', headers: { cookie } });
      if (start.status !== 202) throw new Error(`POST /api/account/export answered ${start.status}`);
      let status = 'running';
      while (status === 'running') {
        await sleep(100);
        status = ((await (await fetch(`${base}/api/account/export`, { headers: { cookie } })).json()) as { status: string }).status;
      }
      if (status !== 'ready') throw new Error(`the export ended as ${status}`);
    });
    const zipBytes = fs.statSync(path.join(dataDir, 'exports', `${userId}.zip`)).size;
    return { messages: MESSAGES, files: attachmentIds.length, attachmentBytes: attachmentIds.length * FILE_BYTES, seedMs, zipBytes, idle, busy };
  } finally {
    await running.close();
  }
}

/** Runs `work` while watching the event loop (1 ms resolution) and asking /healthz every 20 ms. */
async function watch(base: string, work: () => Promise<void>): Promise<Watched> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const pings: number[] = [];
  let working = true;
  const pinger = (async () => {
    while (working) {
      const started = performance.now();
      await fetch(`${base}/healthz`);
      pings.push(performance.now() - started);
      await sleep(20);
    }
  })();
  loop.enable();
  const started = performance.now();
  try {
    await work();
  } finally {
    loop.disable();
    working = false;
    await pinger;
  }
  pings.sort((a, b) => a - b);
  return {
    ms: performance.now() - started,
    loopP99: loop.percentile(99) / 1e6,
    loopMax: loop.max / 1e6,
    pingP99: percentile(pings, 99),
    pingMax: pings[pings.length - 1],
    pings: pings.length,
  };
}

export function exportRows(f: ExportFigures): Row[] {
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  const { idle, busy } = f;
  return [
    ['messages / attachments', `${f.messages} / ${f.files} files, ${gib(f.attachmentBytes)}`, '', ''],
    ['seeding', `${(f.seedMs / 1000).toFixed(1)} s`, '', ''],
    ['export: start to ready zip', `${(busy.ms / 1000).toFixed(1)} s (${gib(f.zipBytes)} zip)`, '', ''],
    [
      'event-loop delay during the export: p99 / longest',
      `${ms(busy.loopP99)} / ${ms(busy.loopMax)}`,
      `longest <= ${TARGET_MAX_DELAY_MS} ms`,
      verdict(busy.loopMax <= TARGET_MAX_DELAY_MS),
    ],
    ['event-loop delay, 5 s idle (the floor): p99 / longest', `${ms(idle.loopP99)} / ${ms(idle.loopMax)}`, '', ''],
    [`GET /healthz every 20 ms during the export (${busy.pings}): p99 / max`, `${ms(busy.pingP99)} / ${ms(busy.pingMax)}`, '', ''],
    [`GET /healthz every 20 ms, idle (${idle.pings}): p99 / max`, `${ms(idle.pingP99)} / ${ms(idle.pingMax)}`, '', ''],
  ];
}

runAlone(module, 'export', async () => {
  printTable('9. Account export: one user, in-process server, event loop watched', exportRows(await measureExport()));
});
