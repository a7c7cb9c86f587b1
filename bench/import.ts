/**
 * Discord import: a synthetic DiscordChatExporter export (bench/discord-synth.ts: 1 000 000
 * messages over 40 channels, partitioned by 10 000, 2 000 authors, 50 000 attachments of 1 to
 * 20 KiB) brought into a new server while the server runs: the CLI (`chat import discord`)
 * against its data directory, as a self-hoster runs it. Meanwhile GET /healthz is asked every
 * 10 ms on one keep-alive connection (what another user would feel), and the server's event-loop
 * delay is read from /metrics (METRICS=on: prom-client's histogram at 1 ms, reset at each read).
 * The importing process's own longest event-loop delay and peak RSS are reported beside them.
 * The phases are read from the import's row (`imports.done` moves once per batch).
 *
 * Targets: the import done (search index and read state included) in <= 3 minutes, /healthz
 * p99 <= 20 ms, the server's event loop never blocked more than 50 ms. Then checked: every
 * message and file is in the new server (the database), a search finds the one message with a
 * word no other holds and a full page of a common one, and the owner's new server is not unread.
 *
 * Run alone: node dist-bench/bench/import.js   (IMPORT_MESSAGES, IMPORT_ATTACHMENTS change the
 * size; IMPORT_PROFILE=<dir> writes a CPU profile of the importing process there)
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { COMMON_WORD, type SynthExport, UNIQUE_WORD, writeSyntheticExport } from './discord-synth';
import {
  ROOT,
  type Row,
  call,
  loggedTimes,
  login,
  mib,
  ms,
  percentile,
  printTable,
  register,
  request,
  rssKb,
  runAlone,
  sleep,
  startChat,
  tempDir,
  verdict,
} from './lib';

export const IMPORT_MESSAGES = Number(process.env.IMPORT_MESSAGES ?? 1_000_000);
export const IMPORT_ATTACHMENTS = Number(process.env.IMPORT_ATTACHMENTS ?? 50_000);
export const TARGET_IMPORT_MS = 180_000;
export const TARGET_HEALTHZ_P99_MS = 20;
export const TARGET_LOOP_MAX_MS = 50;
const PING_EVERY_MS = 10;
const IDLE_MS = 5_000;
/** How often the import's row is read for its phases. */
const POLL_MS = 100;
const CLI_JS = path.join(ROOT, 'dist', 'cli.js');
const OWNER = 'import_owner';

/** Where an import goes: the running server, its owner's session and data directory, and the export. */
interface ImportTarget {
  base: string;
  cookie: string;
  dataDir: string;
  exportDir: string;
}

/** What the importing process reports of itself (the in-server import will not have all of it). */
interface ImportRun {
  output: string;
  /** Longest event-loop delay of the importing process, ms. */
  loopMaxMs: number | null;
  peakRssKb: number | null;
}

interface Pings {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

interface Phases {
  /** From the start to the import's row: reading and checking the export (the dry run). */
  checkMs: number;
  /** To the first batch committed: the server, channels, people. */
  setupMs: number;
  /** To the last batch committed. */
  messagesMs: number;
  /** To the end: the read state, closing. */
  finishMs: number;
}

export interface ImportFigures {
  synth: SynthExport;
  importMs: number;
  phases: Phases;
  run: ImportRun;
  idle: Pings;
  busy: Pings;
  /** Server-side time of the same /healthz requests (its request log). */
  busyLogged: Pings;
  serverLoopIdleMs: number;
  serverLoopBusyMs: number;
  dbBytes: number;
  uploadedFiles: number;
  check: {
    messages: number;
    attachments: number;
    placeholders: number;
    uniqueHits: number;
    uniqueMs: number;
    commonHits: number;
    commonMs: number;
    unread: boolean | undefined;
  };
}

/**
 * The import, from its start to its end. Today the CLI against the running server's data
 * directory (the server keeps running: WAL). The in-server import (upload, POST …/start, a
 * worker thread) replaces this one function: its progress is the same `imports` row.
 */
async function runImport({ dataDir, exportDir }: ImportTarget): Promise<ImportRun> {
  const profile = process.env.IMPORT_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.IMPORT_PROFILE)}`] : [];
  // A 1 ms event-loop histogram in the importing process, printed to stderr as it exits.
  const watchLoop = `data:text/javascript,${encodeURIComponent(
    "import { monitorEventLoopDelay } from 'node:perf_hooks'; const h = monitorEventLoopDelay({ resolution: 1 }); h.enable(); process.on('exit', () => process.stderr.write(`bench-event-loop-max ${h.max / 1e6}\\n`));",
  )}`;
  const child = spawn(process.execPath, ['--import', watchLoop, ...profile, CLI_JS, 'import', 'discord', exportDir, '--owner', OWNER], {
    env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
  let peakRssKb = 0;
  const rss = setInterval(() => {
    try {
      peakRssKb = Math.max(peakRssKb, rssKb(child.pid!));
    } catch {
      // Not started yet, or already gone.
    }
  }, 100);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  }).finally(() => clearInterval(rss));
  if (code !== 0) throw new Error(`the import exited with ${code}:\n${stdout}${stderr}`);
  const loop = /bench-event-loop-max ([\d.]+)/.exec(stderr);
  return { output: stdout.trim(), loopMaxMs: loop ? Number(loop[1]) : null, peakRssKb: peakRssKb || null };
}

/** The server's longest event-loop delay since the last read (prom-client resets it at each scrape), ms. */
async function serverLoopMax(base: string): Promise<number> {
  const res = await request(base, 'GET', '/metrics');
  const found = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(res.text);
  if (res.status !== 200 || !found) throw new Error(`GET /metrics answered ${res.status} without nodejs_eventloop_lag_max_seconds`);
  return Number(found[1]) * 1000;
}

const pingFigures = (times: number[]): Pings => {
  const sorted = [...times].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
};

/** Runs `work` while asking /healthz every PING_EVERY_MS (one at a time, one keep-alive connection); the latencies. */
async function pinging(base: string, work: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  let working = true;
  const pinger = (async () => {
    while (working) {
      const started = performance.now();
      const res = await request(base, 'GET', '/healthz');
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`GET /healthz answered ${res.status}`);
      times.push(took);
      await sleep(Math.max(0, PING_EVERY_MS - took));
    }
  })();
  try {
    await work();
  } finally {
    working = false;
    await pinger;
  }
  return times;
}

/** Reads the newest import's row every POLL_MS until stopped: when it appeared, its first batch, its last. */
function watchPhases(dataDir: string, startedAt: number): { stop(): { row: number; first: number; last: number } } {
  let db: Database.Database | null = null;
  const seen = { row: NaN, first: NaN, last: NaN };
  const poll = () => {
    try {
      db ??= new Database(path.join(dataDir, 'chat.db'), { readonly: true, fileMustExist: true });
      const row = db.prepare('SELECT done, total FROM imports ORDER BY created_at DESC LIMIT 1').get() as { done: number; total: number } | undefined;
      if (!row) return;
      const at = performance.now() - startedAt;
      if (Number.isNaN(seen.row)) seen.row = at;
      if (row.done > 0 && Number.isNaN(seen.first)) seen.first = at;
      if (row.done >= row.total && Number.isNaN(seen.last)) seen.last = at;
    } catch {
      // Busy or not there yet: the next poll tries again.
    }
  };
  const timer = setInterval(poll, POLL_MS);
  return {
    stop() {
      clearInterval(timer);
      poll();
      db?.close();
      return seen;
    },
  };
}

export async function measureImport(messages = IMPORT_MESSAGES, attachments = IMPORT_ATTACHMENTS): Promise<ImportFigures> {
  const synth = writeSyntheticExport(tempDir('chat-bench-import-export-'), { messages, attachments });
  const dataDir = tempDir('chat-bench-import-data-');
  const chat = await startChat(dataDir, { env: { METRICS: 'on' } });
  try {
    await register(chat.base, OWNER);
    const cookie = await login(chat.base, OWNER);

    await serverLoopMax(chat.base);
    const idleTimes = await pinging(chat.base, () => sleep(IDLE_MS));
    const serverLoopIdleMs = await serverLoopMax(chat.base);

    let run!: ImportRun;
    let importMs = 0;
    let seen!: ReturnType<ReturnType<typeof watchPhases>['stop']>;
    const busyTimes = await pinging(chat.base, async () => {
      const started = performance.now();
      const phases = watchPhases(dataDir, started);
      try {
        run = await runImport({ base: chat.base, cookie, dataDir, exportDir: synth.dir });
        importMs = performance.now() - started;
      } finally {
        seen = phases.stop();
      }
    });
    const serverLoopBusyMs = await serverLoopMax(chat.base);
    const logged = loggedTimes(chat.logFile, 'GET', '/healthz').slice(idleTimes.length, idleTimes.length + busyTimes.length);

    // What came across: the database, then the API as the owner sees it.
    const db = new Database(path.join(dataDir, 'chat.db'), { readonly: true, fileMustExist: true });
    let serverId: string;
    let counts: { messages: number; attachments: number; placeholders: number };
    let dbBytes: number;
    try {
      serverId = (db.prepare("SELECT server_id FROM imports WHERE status = 'done' ORDER BY created_at DESC LIMIT 1").pluck().get() as string | undefined) ?? '';
      counts = {
        messages: db.prepare('SELECT COUNT(*) FROM messages WHERE channel_id IN (SELECT id FROM channels WHERE server_id = ?)').pluck().get(serverId) as number,
        attachments: db
          .prepare(
            'SELECT COUNT(*) FROM attachments a JOIN messages m ON m.seq = a.message_seq WHERE m.channel_id IN (SELECT id FROM channels WHERE server_id = ?)',
          )
          .pluck()
          .get(serverId) as number,
        placeholders: db.prepare('SELECT COUNT(*) FROM imported_people WHERE server_id = ?').pluck().get(serverId) as number,
      };
      dbBytes = ['chat.db', 'chat.db-wal'].reduce((n, f) => n + (fs.statSync(path.join(dataDir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
    } finally {
      db.close();
    }
    const timed = async (url: string) => {
      const at = performance.now();
      const body = (await call(chat.base, 'GET', url, undefined, cookie)).body;
      return { body, ms: performance.now() - at };
    };
    const unique = await timed(`/api/search?q=${encodeURIComponent(UNIQUE_WORD)}`);
    const common = await timed(`/api/search?q=${encodeURIComponent(COMMON_WORD)}&server_id=${serverId}&limit=25`);
    const servers = (await call(chat.base, 'GET', '/api/servers', undefined, cookie)).body as { id: string; unread: boolean }[];

    return {
      synth,
      importMs,
      phases: {
        checkMs: seen.row,
        setupMs: seen.first - seen.row,
        // The last batch may be seen only by the poll after the end.
        messagesMs: Math.min(seen.last, importMs) - seen.first,
        finishMs: Math.max(0, importMs - seen.last),
      },
      run,
      idle: pingFigures(idleTimes),
      busy: pingFigures(busyTimes),
      busyLogged: pingFigures(logged),
      serverLoopIdleMs,
      serverLoopBusyMs,
      dbBytes,
      uploadedFiles: fs.readdirSync(path.join(dataDir, 'uploads')).length,
      check: {
        ...counts,
        uniqueHits: unique.body.results.length,
        uniqueMs: unique.ms,
        commonHits: common.body.results.length,
        commonMs: common.ms,
        unread: servers.find((s) => s.id === serverId)?.unread,
      },
    };
  } finally {
    await chat.stop();
  }
}

export function importRows(f: ImportFigures): Row[] {
  const s = f.synth;
  const sec = (value: number) => `${(value / 1000).toFixed(1)} s`;
  const pings = (p: Pings) => `${ms(p.p50)} / ${ms(p.p99)} / ${ms(p.max)}`;
  const rate = (n: number, took: number) => `${Math.round(n / (took / 1000))} messages/s`;
  return [
    [
      'export: messages / channels / authors / files',
      `${s.messages} / ${s.channels} / ${s.authors} / ${s.attachments} (${mib(s.attachmentBytes / 1024)}); ${s.jsonFiles} JSON files, ${mib(s.jsonBytes / 1024)}`,
      '',
      '',
    ],
    ['writing the export (not measured)', sec(s.writeMs), '', ''],
    [
      'import: start to end (index and read state included)',
      `${sec(f.importMs)}, ${rate(s.messages, f.importMs)}`,
      `<= ${TARGET_IMPORT_MS / 1000} s`,
      verdict(f.importMs <= TARGET_IMPORT_MS),
    ],
    ['  reading and checking the export (dry run)', sec(f.phases.checkMs), '', ''],
    ['  server, channels, people; first batch', sec(f.phases.setupMs), '', ''],
    ['  messages and files, in batches', `${sec(f.phases.messagesMs)}, ${rate(s.messages, f.phases.messagesMs)}`, '', ''],
    ['  read state, exit', sec(f.phases.finishMs), '', ''],
    [
      `GET /healthz every ${PING_EVERY_MS} ms during the import (${f.busy.count}): p50 / p99 / max`,
      pings(f.busy),
      `p99 <= ${TARGET_HEALTHZ_P99_MS} ms`,
      verdict(f.busy.p99 <= TARGET_HEALTHZ_P99_MS),
    ],
    ['  the same, server side (request log): p50 / p99 / max', pings(f.busyLogged), '', ''],
    [`GET /healthz, ${IDLE_MS / 1000} s idle before (${f.idle.count}): p50 / p99 / max`, pings(f.idle), '', ''],
    [
      'server event loop, longest delay during the import',
      ms(f.serverLoopBusyMs),
      `<= ${TARGET_LOOP_MAX_MS} ms`,
      verdict(f.serverLoopBusyMs <= TARGET_LOOP_MAX_MS),
    ],
    ['server event loop, longest delay idle (the floor)', ms(f.serverLoopIdleMs), '', ''],
    [
      'importing process: longest event-loop delay; peak RSS',
      `${f.run.loopMaxMs === null ? 'n/a' : ms(f.run.loopMaxMs)}; ${f.run.peakRssKb === null ? 'n/a' : mib(f.run.peakRssKb)}`,
      '',
      '',
    ],
    ['database after (file + WAL)', mib(f.dbBytes / 1024), '', ''],
    ['messages in the new server', String(f.check.messages), `= ${s.messages}`, verdict(f.check.messages === s.messages)],
    [
      'attachments in the new server; files in uploads/',
      `${f.check.attachments}; ${f.uploadedFiles}`,
      `= ${s.attachments}`,
      verdict(f.check.attachments === s.attachments && f.uploadedFiles === s.attachments),
    ],
    ['placeholder accounts', String(f.check.placeholders), '', ''],
    [`search "${UNIQUE_WORD}" (in one message): results; time`, `${f.check.uniqueHits}; ${ms(f.check.uniqueMs)}`, '= 1', verdict(f.check.uniqueHits === 1)],
    [
      `search "${COMMON_WORD}" in the server (${s.commonCount} messages): results; time`,
      `${f.check.commonHits}; ${ms(f.check.commonMs)}`,
      '= 25 (a full page)',
      verdict(f.check.commonHits === 25),
    ],
    ["the owner's new server: unread", String(f.check.unread), '= false', verdict(f.check.unread === false)],
  ];
}

export const importSetup = `the CLI into a running server (WAL), /healthz every ${PING_EVERY_MS} ms, server event loop from /metrics`;

runAlone(module, 'import', async () => {
  const f = await measureImport();
  printTable(`13. Discord import: ${f.synth.messages} messages, ${f.synth.attachments} files (${importSetup})`, importRows(f));
});
