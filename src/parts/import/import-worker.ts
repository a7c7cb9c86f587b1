import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../core/clock';
import { openConnection } from '../../core/db';
import { importDiscord } from './discord-import';
import type { MediaSlots } from './discord-media';
import { scanExport } from './discord-plan';
import { ImportError, openExport } from './export-files';

/**
 * An import's heavy work off the server's event loop (src/parts/import/imports.ts starts it):
 * unpacking, JSON parsing and checking a channel file can take a second, which would stall every
 * request. This thread reads the export and writes through a connection of its own (WAL: the
 * server keeps reading and writing meanwhile; each batch holds the write lock for milliseconds).
 */
export interface WorkerJob {
  databaseFile: string;
  dataDir: string;
  durability: 'normal' | 'strict';
  source: string;
  /** 'scan': the dry run only; 'import': the import itself. */
  mode: 'scan' | 'import';
  importId: string;
  ownerId: string;
  serverName: string;
  system: 'lines' | 'skip';
  /** The server's slots for custom emoji and stickers. */
  slots: MediaSlots;
}

export type WorkerMessage =
  | { kind: 'plan'; plan: import('./discord-plan').ImportPlan }
  | { kind: 'server'; serverId: string; created: boolean }
  | { kind: 'done'; result: import('./discord-import').ImportResult }
  | { kind: 'stopped' }
  | { kind: 'failed'; error: string; refused: boolean };

async function run(job: WorkerJob): Promise<WorkerMessage> {
  const files = await openExport(job.source);
  try {
    const scan = await scanExport(files, undefined, job.slots);
    if (job.mode === 'scan') return { kind: 'plan', plan: scan.plan };
    const db = openConnection(job.databaseFile, job.durability);
    try {
      const result = await importDiscord(db, systemClock, job.dataDir, files, scan, {
        importId: job.importId,
        ownerId: job.ownerId,
        serverName: job.serverName,
        system: job.system,
        slots: job.slots,
        onServer: (serverId, created) => parentPort!.postMessage({ kind: 'server', serverId, created } satisfies WorkerMessage),
        stopped: () => stopping,
      });
      return result.complete ? { kind: 'done', result } : { kind: 'stopped' };
    } finally {
      db.close();
    }
  } finally {
    files.close();
  }
}

/** Set by the server's 'stop' (shutdown): the import ends after the batch it is writing. */
let stopping = false;
parentPort!.on('message', (message) => {
  if (message === 'stop') stopping = true;
});

run(workerData as WorkerJob)
  .then(
    (message) => parentPort!.postMessage(message),
    (err: Error) => parentPort!.postMessage({ kind: 'failed', error: err.message, refused: err instanceof ImportError } satisfies WorkerMessage),
  )
  .finally(() => parentPort!.close());
