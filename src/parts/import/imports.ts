import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Clock } from '../../core/clock';
import type { DB } from '../../core/db';
import { HttpError, badRequest, conflict, notFound } from '../../core/http/errors';
import { describeError, owned } from '../../core/callbacks';
import { receiveFile } from '../../core/http/multipart';
import type { Log } from '../../core/types';
import { markInterrupted, recordImport, setImportStatus } from './discord-import';
import type { ImportPlan } from './discord-plan';
import type { WorkerJob, WorkerMessage } from './import-worker';
import { DEFAULT_MEDIA_SLOTS, type MediaSlots } from './discord-media';

/**
 * Imports from the browser (docs/import.md): a zip of a DiscordChatExporter export is uploaded
 * (kept under DATA_DIR/imports/ until the import ends), its dry run shown, and on confirmation
 * imported, the progress readable meanwhile. The reading and writing happen on a worker thread
 * (src/parts/import/import-worker.ts), so the server keeps answering. One import runs at a
 * time; one interrupted by a stop (or a crash) resumes at the next start.
 *
 * An upload is anyone's, so its check is held within bounds (docs/security.md "Import memory"):
 * checks run one at a time, each on a worker whose heap and time are capped; an account has one
 * upload being received, waiting or checked at a time (429), and at most MAX_PENDING_CHECKS wait
 * in all (503). The import itself, which its owner starts, has a heap cap of its own.
 */

/** An upload holds at most this many bytes (IMPORT_MAX_BYTES). */
export const DEFAULT_IMPORT_MAX_BYTES = 4 * 1024 * 1024 * 1024;

export interface ImportRecord {
  id: string;
  /** interrupted: a CLI import whose process ended (the same command resumes it). */
  status: 'checked' | 'running' | 'interrupted' | 'done' | 'failed';
  guild: { id: string; name: string };
  server_name: string;
  /** The server it went into, once made. */
  server_id: string | null;
  plan: ImportPlan;
  progress: { done: number; total: number };
  error: string | null;
  package_claims: boolean;
  created_at: string;
  finished_at: string | null;
  /** Once done: what came across of custom emoji, stickers and polls, and what stayed text, in words. */
  report: string[];
}

/** A worker's bounds: its heap (V8's old generation, MiB) and its time (ms; null: none). */
export interface WorkerLimits {
  heapMb: number;
  maxMs: number | null;
}

/**
 * A check (the dry run of an upload): streamed, it keeps the export's channels, people and roles
 * and one message at a time (bench/import-memory.ts: a 200 000-message export adds 90 MiB to the
 * server's peak); the message ids (8 bytes each, MAX_EXPORT_MESSAGES at most) are held outside
 * this heap.
 */
export const CHECK_LIMITS: WorkerLimits = { heapMb: 256, maxMs: 10 * 60_000 };
/**
 * The import holds a channel's messages to sort them: a 256 MiB channel file (377 000 messages)
 * takes about 640 MiB of heap (bench/import-memory.ts); a channel larger than this allows fails
 * with the reason.
 */
export const IMPORT_LIMITS: WorkerLimits = { heapMb: 2048, maxMs: null };
/** Uploads being received, waiting for their check or checked, everyone's, at most: past it, 503. */
export const MAX_PENDING_CHECKS = 8;
/** What a refused upload is told to wait, in seconds. */
const RETRY_AFTER_S = 60;

export interface StartOptions {
  system: 'lines' | 'skip';
  packageClaims: boolean;
}

export interface Imports {
  /** Throws unless this account may upload an export now: 429 while one of theirs is pending, 503 while too many are. */
  admit(ownerId: string): void;
  /** Receives a zip (multipart field `export`) and checks it: the import, status `checked`; 400 with the reason for an export refused. */
  upload(req: IncomingMessage, ownerId: string, serverName: string | null): Promise<ImportRecord>;
  list(ownerId: string): ImportRecord[];
  /** 404 for anyone's but the owner's. */
  get(importId: string, ownerId: string): ImportRecord;
  /** 409 unless it is `checked`, or while another import runs. */
  start(importId: string, ownerId: string, options: StartOptions): ImportRecord;
  /** Removes an import that is not running, with its upload (the server it made stays). */
  discard(importId: string, ownerId: string): void;
  /** Stops the running import where it is (shutdown): it resumes at the next start. */
  stop(): Promise<void>;
}

export interface ImportsParts {
  db: DB;
  clock: Clock;
  log: Log;
  dataDir: string;
  databaseFile: string;
  durability: 'normal' | 'strict';
  maxBytes: number;
  /** A server came to be (told its owner), and an import ended (told the owner again). */
  onServer(ownerId: string, serverId: string): void;
  /** The server's slots for custom emoji and stickers, read when a check or an import starts (defaults: Discord's boosted tiers). */
  mediaSlots?(): MediaSlots;
}

interface Row {
  id: string;
  owner_id: string;
  guild_id: string;
  server_name: string;
  server_id: string | null;
  upload: string | null;
  status: ImportRecord['status'];
  plan: string;
  done: number;
  total: number;
  error: string | null;
  package_claims: number;
  system: StartOptions['system'];
  created_at: string;
  finished_at: string | null;
  report: string | null;
}

const toRecord = (row: Row): ImportRecord => {
  const plan = JSON.parse(row.plan) as ImportPlan;
  return {
    id: row.id,
    status: row.status,
    guild: plan.guild,
    server_name: row.server_name,
    server_id: row.server_id,
    plan,
    progress: { done: row.done, total: row.total },
    error: row.error,
    package_claims: row.package_claims === 1,
    created_at: row.created_at,
    finished_at: row.finished_at,
    report: row.report ? (JSON.parse(row.report) as string[]) : [],
  };
};

/** How long a stop waits for the import to reach the end of a batch. */
const STOP_WAIT_MS = 5000;

/** The worker's file beside this one (.js when built, .ts under the test runner's loader). */
const WORKER_FILE = path.join(__dirname, `import-worker${path.extname(__filename)}`);

/**
 * Runs a worker to its end within its limits; its last word. Past its heap or its time, it is
 * ended and its last word is a refusal saying which (the server goes on: a worker's heap is its own).
 */
export function runWorker(
  job: WorkerJob,
  limits: WorkerLimits,
  onMessage: (message: WorkerMessage) => void,
  log: Log,
): { worker: Worker; ended: Promise<WorkerMessage> } {
  const worker = new Worker(WORKER_FILE, { workerData: job, resourceLimits: { maxOldGenerationSizeMb: limits.heapMb } });
  let last: WorkerMessage | null = null;
  // Called from the worker's events, outside any request: a failure here is logged, never thrown.
  worker.on(
    'message',
    owned(
      (message: WorkerMessage) => {
        last = message;
        onMessage(message);
      },
      (err) => log(`import worker message: ${describeError(err)}`),
    ),
  );
  const late =
    limits.maxMs === null
      ? null
      : setTimeout(() => {
          const ms = limits.maxMs!;
          last ??= {
            kind: 'failed',
            error: `the export could not be checked within ${ms >= 60_000 ? `${ms / 60_000} minutes` : `${ms / 1000} seconds`}`,
            refused: true,
          };
          void worker.terminate();
        }, limits.maxMs);
  const ended = new Promise<WorkerMessage>((resolve) => {
    worker.on('error', (err: Error & { code?: string }) => {
      last =
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? {
              kind: 'failed',
              refused: true,
              error:
                job.mode === 'scan'
                  ? `checking the export needs more memory than a check may use (${limits.heapMb} MiB)`
                  : `the import needs more memory than it may use (${limits.heapMb} MiB): a channel's messages are held to sort them; export its largest channels apart`,
            }
          : { kind: 'failed', error: err.message, refused: false };
    });
    worker.on('exit', () => {
      if (late) clearTimeout(late);
      resolve(last ?? { kind: 'stopped' });
    });
  });
  return { worker, ended };
}

/** A worker's job for the dry run of an export alone (it writes nothing). */
export const checkJob = (source: string, slots: MediaSlots = DEFAULT_MEDIA_SLOTS): WorkerJob => ({
  databaseFile: '',
  dataDir: '',
  durability: 'normal',
  source,
  mode: 'scan',
  importId: '',
  ownerId: '',
  serverName: '',
  system: 'lines',
  slots,
});

export function createImports(parts: ImportsParts): Imports {
  const { db, clock, log, dataDir } = parts;
  const dir = path.join(dataDir, 'imports');
  fs.mkdirSync(dir, { recursive: true });
  for (const name of fs.readdirSync(dir)) if (name.endsWith('.part')) fs.rmSync(path.join(dir, name), { force: true });
  const byId = db.prepare<[string], Row>('SELECT * FROM imports WHERE id = ?');
  const byOwner = db.prepare<[string], Row>('SELECT * FROM imports WHERE owner_id = ? ORDER BY created_at DESC, rowid DESC');
  const interrupted = db.prepare<[], Row>("SELECT * FROM imports WHERE status = 'running' AND upload IS NOT NULL ORDER BY created_at");
  const setStarted = db.prepare("UPDATE imports SET status = 'running', package_claims = ?, system = ?, runner_pid = ? WHERE id = ?");
  const setRunner = db.prepare('UPDATE imports SET runner_pid = ? WHERE id = ?');
  const runningOf = db.prepare<[string, string], { id: string }>("SELECT id FROM imports WHERE guild_id = ? AND owner_id = ? AND status = 'running'");
  const forget = db.prepare("DELETE FROM imports WHERE id = ? AND status <> 'running'");
  const clearUpload = db.prepare('UPDATE imports SET upload = NULL WHERE id = ?');

  let running: { id: string; worker: Worker; ended: Promise<void> } | null = null;
  /** Set by stop(): nothing more starts. */
  let stopping = false;

  /** Accounts with an upload being received, waiting or checked. */
  const pending = new Set<string>();
  /** The checks, one after another; and the one running (a stop ends it). */
  let queue: Promise<unknown> = Promise.resolve();
  let checking: Worker | null = null;

  /** `source` checked in its turn. */
  function check(source: string): Promise<WorkerMessage> {
    const turn = queue.then(async () => {
      if (stopping) throw new HttpError(503, 'the server is stopping; upload the export again in a minute', { 'Retry-After': String(RETRY_AFTER_S) });
      const { worker, ended } = runWorker(checkJob(source, parts.mediaSlots?.()), CHECK_LIMITS, () => {}, log);
      checking = worker;
      try {
        return await ended;
      } finally {
        checking = null;
      }
    });
    queue = turn.catch(() => {});
    return turn;
  }

  function admit(ownerId: string): void {
    const retry = { 'Retry-After': String(RETRY_AFTER_S) };
    if (stopping) throw new HttpError(503, 'the server is stopping; upload the export again in a minute', retry);
    if (pending.has(ownerId)) throw new HttpError(429, 'an export of yours is being uploaded or checked; upload the next one when it is done', retry);
    if (pending.size >= MAX_PENDING_CHECKS)
      throw new HttpError(503, `${pending.size} exports are waiting to be checked on this server; try again in a few minutes`, retry);
  }

  const job = (row: Row, mode: WorkerJob['mode']): WorkerJob => ({
    databaseFile: parts.databaseFile,
    dataDir,
    durability: parts.durability,
    source: path.join(dir, row.upload!),
    mode,
    importId: row.id,
    ownerId: row.owner_id,
    serverName: row.server_name,
    system: row.system,
    slots: parts.mediaSlots?.() ?? DEFAULT_MEDIA_SLOTS,
  });

  function begin(row: Row): void {
    setRunner.run(process.pid, row.id);
    const { worker, ended } = runWorker(
      job(row, 'import'),
      IMPORT_LIMITS,
      (message) => {
        if (message.kind === 'server') parts.onServer(row.owner_id, message.serverId);
      },
      log,
    );
    running = {
      id: row.id,
      worker,
      ended: ended
        .then((last) => {
          running = null;
          if (last.kind === 'done') {
            setImportStatus(db, clock, row.id, 'done');
            const current = byId.get(row.id);
            if (current?.server_id) parts.onServer(row.owner_id, current.server_id);
            removeUpload(row.id);
          } else if (last.kind === 'failed') {
            log(`import ${row.id} failed: ${last.error}`);
            setImportStatus(db, clock, row.id, 'failed', last.error);
          }
          // Stopped (shutdown): stays 'running' with its upload, and resumes at the next start.
          if (last.kind !== 'stopped') resumeNext();
        })
        .catch((err: unknown) => log(`import ${row.id}: ${describeError(err)}`)),
    };
  }

  /** The next import a stop interrupted, if any: they carry on one after another. */
  function resumeNext(): void {
    if (stopping) return;
    const [next] = interrupted.all();
    if (next) begin(next);
  }

  function removeUpload(importId: string): void {
    const row = byId.get(importId);
    if (row?.upload) fs.rmSync(path.join(dir, row.upload), { force: true });
    clearUpload.run(importId);
  }

  const own = (importId: string, ownerId: string): Row => {
    const row = byId.get(importId);
    if (!row || row.owner_id !== ownerId) throw notFound('import not found');
    return row;
  };

  // CLI imports whose process is gone are interrupted; imports a stop interrupted carry on, with
  // the choices they were started with.
  markInterrupted(db);
  resumeNext();

  return {
    admit,

    async upload(req, ownerId, serverName) {
      admit(ownerId);
      pending.add(ownerId);
      try {
        const temp = await receiveFile(req, { field: 'export', what: 'an export', maxBytes: parts.maxBytes, dir }, log);
        const id = crypto.randomUUID();
        const upload = `${id}.zip`;
        fs.renameSync(temp, path.join(dir, upload));
        const last = await check(path.join(dir, upload)).catch((err: unknown) => {
          fs.rmSync(path.join(dir, upload), { force: true });
          throw err;
        });
        if (last.kind !== 'plan') {
          fs.rmSync(path.join(dir, upload), { force: true });
          if (last.kind === 'stopped')
            throw new HttpError(503, 'the server is stopping; upload the export again in a minute', { 'Retry-After': String(RETRY_AFTER_S) });
          if (last.kind === 'failed' && last.refused) throw badRequest(`cannot import: ${last.error}`);
          // The reading itself failed: still the export's doing.
          log(`import check failed: ${last.kind === 'failed' ? last.error : last.kind}`);
          throw badRequest('cannot import: the export could not be read');
        }
        const name = serverName ?? last.plan.guild.name;
        recordImport(db, clock, { id, ownerId, plan: last.plan, serverName: name, upload, status: 'checked', packageClaims: false });
        return toRecord(byId.get(id)!);
      } finally {
        pending.delete(ownerId);
      }
    },

    list: (ownerId) => byOwner.all(ownerId).map(toRecord),

    get: (importId, ownerId) => toRecord(own(importId, ownerId)),

    start(importId, ownerId, options) {
      const row = own(importId, ownerId);
      if (row.status !== 'checked') throw conflict(`this import is ${row.status}; only a checked one can start`);
      if (running) throw conflict('another import is running on this server; start this one when it has finished');
      markInterrupted(db);
      if (runningOf.get(row.guild_id, ownerId))
        throw conflict('an import of this Discord server into your server is running from the command line; start this one when it has finished');
      setStarted.run(options.packageClaims ? 1 : 0, options.system, process.pid, importId);
      begin(byId.get(importId)!);
      return toRecord(byId.get(importId)!);
    },

    discard(importId, ownerId) {
      const row = own(importId, ownerId);
      if (row.status === 'running') throw conflict('this import is running; it can be removed once it has finished');
      if (row.upload) fs.rmSync(path.join(dir, row.upload), { force: true });
      forget.run(importId);
    },

    async stop() {
      stopping = true;
      // A check under way is cut (its upload is told 503); checks waiting are refused the same way.
      void checking?.terminate();
      const current = running;
      if (!current) return;
      current.worker.postMessage('stop');
      // A batch takes milliseconds; a channel file being read may take seconds: then it is cut.
      const late = setTimeout(() => void current.worker.terminate(), STOP_WAIT_MS);
      await current.ended;
      clearTimeout(late);
    },
  };
}
