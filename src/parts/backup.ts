import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { DB } from '../core/db';

/**
 * Backups of a data directory, online: the database through SQLite's backup API, the upload
 * files that its rows name. Restores, offline: refused while a server runs on the directory.
 *
 * A backup is consistent: every attachment row in the copied database has its file. The files
 * are first hard-linked into a staging folder inside DATA_DIR (a link is instant and keeps the
 * file even if the server deletes it meanwhile), then the database is copied in one step (one
 * read transaction: a snapshot, never a half-written state), then files that appeared during the
 * copy are linked too, and only the files the copied database names go into the backup.
 * The avatars, the custom emoji, the secret key and the VAPID keys (mode 0600) are copied as they are.
 */
export const DATABASE_FILE = 'chat.db';
export const PID_FILE = 'server.pid';
const UPLOADS = 'uploads';
/** Images named by rows but kept apart from uploads, copied whole: avatars, custom emoji and stickers (src/parts/community/). */
const IMAGE_DIRS = ['avatars', 'emojis', 'stickers'];
/** The key that opens the TOTP secrets (src/core/secret-box.ts): without it, two-factor codes stop working. */
const KEY_FILE = 'secret.key';
/** The server's VAPID key pair (src/parts/push/sender.ts): a new one would end every push subscription. */
const VAPID_FILE = 'vapid.json';
const STAGING_PREFIX = '.backup-staging-';

export interface BackupResult {
  files: number;
  bytes: number;
  /** Attachment rows whose file was already missing in DATA_DIR (they answer 404 there too). */
  missing: string[];
}

export class BackupError extends Error {}

/** Copies DATA_DIR (database and upload files) into `target`, which must be new or empty. */
export async function backup(db: DB, dataDir: string, target: string): Promise<BackupResult> {
  if (fs.existsSync(target) && fs.readdirSync(target).length > 0) throw new BackupError(`${target} is not empty`);
  fs.mkdirSync(path.join(target, UPLOADS), { recursive: true });
  const uploads = path.join(dataDir, UPLOADS);
  removeStaleStaging(dataDir);
  const staging = fs.mkdtempSync(path.join(dataDir, `${STAGING_PREFIX}${process.pid}-`));
  try {
    linkAll(uploads, staging);
    // One step copies every page within one read transaction: a consistent snapshot.
    await db.backup(path.join(target, DATABASE_FILE), { progress: () => 0x7fffffff });
    linkAll(uploads, staging);
    const copy = new Database(path.join(target, DATABASE_FILE), { readonly: true });
    const ids = copy
      .prepare<[], { id: string }>('SELECT id FROM attachments')
      .all()
      .map((row) => row.id);
    copy.close();
    const result: BackupResult = { files: 0, bytes: 0, missing: [] };
    for (const id of ids) {
      const staged = path.join(staging, id);
      if (!fs.existsSync(staged)) {
        result.missing.push(id);
        continue;
      }
      fs.copyFileSync(staged, path.join(target, UPLOADS, id));
      result.files++;
      result.bytes += fs.statSync(staged).size;
    }
    copyExtras(dataDir, target);
    return result;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Hard-links every complete file of `from` into `into` (a copy where links are not possible). */
function linkAll(from: string, into: string): void {
  for (const name of fs.readdirSync(from)) {
    if (name.endsWith('.part') || fs.existsSync(path.join(into, name))) continue;
    try {
      fs.linkSync(path.join(from, name), path.join(into, name));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue; // deleted meanwhile: its row is gone too
      if (code !== 'EPERM' && code !== 'EXDEV') throw err;
      fs.copyFileSync(path.join(from, name), path.join(into, name));
    }
  }
}

/** The pid of a server running on this data directory, or null. */
export function runningServer(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dataDir, PID_FILE), 'utf8').trim());
  } catch {
    return null;
  }
  return isRunning(pid) ? pid : null;
}

/**
 * Puts a backup back into DATA_DIR. The data it replaces is not deleted: it moves to
 * DATA_DIR/before-restore-<time>/, so a restore can itself be undone.
 */
export function restore(source: string, dataDir: string, now = new Date()): { keptIn: string; files: number } {
  const pid = runningServer(dataDir);
  if (pid !== null) throw new BackupError(`a server (pid ${pid}) is running on ${dataDir}: stop it first`);
  const database = path.join(source, DATABASE_FILE);
  if (!fs.existsSync(database)) throw new BackupError(`${source} holds no ${DATABASE_FILE}: not a backup`);
  const check = new Database(database, { readonly: true });
  const verdict = check.pragma('integrity_check', { simple: true });
  check.close();
  if (verdict !== 'ok') throw new BackupError(`the backup's database fails its integrity check: ${verdict}`);

  fs.mkdirSync(dataDir, { recursive: true });
  const keptIn = path.join(dataDir, `before-restore-${now.toISOString().replace(/[:.]/g, '-')}`);
  fs.mkdirSync(keptIn);
  for (const name of [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, UPLOADS, ...IMAGE_DIRS, KEY_FILE, VAPID_FILE]) {
    if (fs.existsSync(path.join(dataDir, name))) fs.renameSync(path.join(dataDir, name), path.join(keptIn, name));
  }
  fs.copyFileSync(database, path.join(dataDir, DATABASE_FILE));
  fs.mkdirSync(path.join(dataDir, UPLOADS));
  let files = 0;
  const uploads = path.join(source, UPLOADS);
  for (const name of fs.existsSync(uploads) ? fs.readdirSync(uploads) : []) {
    fs.copyFileSync(path.join(uploads, name), path.join(dataDir, UPLOADS, name));
    files++;
  }
  copyExtras(source, dataDir);
  return { keptIn, files };
}

/** The avatars, the custom emoji, the secret key and the VAPID keys, from one data directory (or backup) to another. */
function copyExtras(from: string, to: string): void {
  for (const dir of IMAGE_DIRS) {
    const images = path.join(from, dir);
    fs.mkdirSync(path.join(to, dir), { recursive: true });
    for (const name of fs.existsSync(images) ? fs.readdirSync(images) : []) {
      if (!name.endsWith('.part')) fs.copyFileSync(path.join(images, name), path.join(to, dir, name));
    }
  }
  for (const secret of [KEY_FILE, VAPID_FILE]) {
    if (!fs.existsSync(path.join(from, secret))) continue;
    fs.copyFileSync(path.join(from, secret), path.join(to, secret));
    fs.chmodSync(path.join(to, secret), 0o600);
  }
}

/** Staging folders of backups that were killed midway (their process is gone). */
function removeStaleStaging(dataDir: string): void {
  for (const name of fs.readdirSync(dataDir)) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const pid = Number(name.slice(STAGING_PREFIX.length).split('-')[0]);
    if (!isRunning(pid)) fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else: still running.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Marks DATA_DIR as in use by this process (DATA_DIR/server.pid) so that restore refuses to
 * overwrite it and a second server refuses to share it. Returns the function that lets go.
 */
export function claimDataDir(dataDir: string): () => void {
  const pid = runningServer(dataDir);
  if (pid !== null && pid !== process.pid) throw new BackupError(`another server (pid ${pid}) is running on ${dataDir}`);
  const file = path.join(dataDir, PID_FILE);
  fs.writeFileSync(file, `${process.pid}\n`);
  return () => fs.rmSync(file, { force: true });
}
