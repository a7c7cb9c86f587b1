import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import yazl from 'yazl';
import { type Clock, DAY, HOUR } from '../../core/clock';
import type { DB } from '../../core/db';
import { VIEW } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';
import type { Directory } from '../community/directory';
import { conflict } from '../../core/http/errors';
import { isUuid } from '../../core/http/router';
import { cleanFileName } from '../messages/upload-store';
import { describeError, every, failpoint, logFailure } from '../../core/callbacks';
import type { Log } from '../../core/types';

/** A finished export is kept this long, then deleted. */
export const EXPORT_KEEP_MS = 7 * DAY;
/** Messages read per step: each step is one short query, then the event loop gets a turn. */
export const EXPORT_BATCH = 250;

export type ExportStatus = { status: 'none' } | { status: 'running' } | { status: 'ready'; url: string; created_at: string; size: number };

export interface Exports {
  /** Starts building the user's export in the background; 409 while one is running. `charge` runs first (the rate limit). */
  start(userId: string, charge?: () => void): void;
  status(userId: string): ExportStatus;
  /** The finished zip, or null. */
  file(userId: string): string | null;
  /** Deletes the user's export (account deletion). */
  remove(userId: string): void;
  /** Resolves once every running export has stopped (shutdown). */
  close(): Promise<void>;
}

interface MessageRow {
  seq: number;
  id: string;
  server_id: string | null;
  server_name: string | null;
  channel_id: string | null;
  channel_name: string | null;
  conversation_id: string | null;
  conversation_kind: string | null;
  conversation_name: string | null;
  content: string;
  reply_to: string | null;
  created_at: string;
  edited_at: string | null;
}

/**
 * Account exports: one zip per user under DATA_DIR/exports/, holding JSON files of the
 * account, its servers, friends and conversations, every message the user wrote (with the
 * names of where they were written), and the files the user uploaded. The zip is written as a
 * stream by yazl; messages are read EXPORT_BATCH at a time between event-loop turns and files
 * are streamed from disk uncompressed, so the server keeps answering while an export runs.
 */
export function createExports({
  db,
  clock,
  directory,
  perms,
  dataDir,
  log,
}: {
  db: DB;
  clock: Clock;
  directory: Directory;
  perms: Pick<Permissions, 'channelRules'>;
  dataDir: string;
  log: Log;
}): Exports {
  const dir = path.join(dataDir, 'exports');
  const uploads = path.join(dataDir, 'uploads');
  fs.mkdirSync(dir, { recursive: true });
  const zipOf = (userId: string) => path.join(dir, `${userId}.zip`);
  const running = new Map<string, Promise<void>>();
  let closing = false;

  const accountOf = db.prepare(
    `SELECT id AS user_id, username, display_name, email, email_verified, created_at, standing, is_admin,
            totp_secret IS NOT NULL AS two_factor, presence
       FROM users WHERE id = ?`,
  );
  const warningsOf = db.prepare('SELECT reason, created_at FROM warnings WHERE user_id = ? ORDER BY created_at');
  const serversOf = db.prepare(
    `SELECT s.id, s.name, s.description, s.owner_id = m.user_id AS owner,
            (SELECT json_group_array(name) FROM (SELECT r.name FROM member_roles mr JOIN roles r ON r.id = mr.role_id
              WHERE mr.server_id = m.server_id AND mr.user_id = m.user_id ORDER BY r.position)) AS roles,
            m.joined_at
       FROM members m JOIN servers s ON s.id = m.server_id
      WHERE m.user_id = ? ORDER BY m.joined_at`,
  );
  const requestsOf = db.prepare(
    `SELECT r.status, f.username AS from_username, t.username AS to_username, r.created_at, r.accepted_at
       FROM friend_requests r JOIN profiles f ON f.id = r.from_user JOIN profiles t ON t.id = r.to_user
      WHERE r.from_user = ? OR r.to_user = ? ORDER BY r.created_at`,
  );
  const blocksOf = db.prepare(
    'SELECT u.username, b.created_at FROM blocks b JOIN profiles u ON u.id = b.blocked_id WHERE b.blocker_id = ? ORDER BY b.created_at',
  );
  const messagesAfter = db.prepare<[string, number, number], MessageRow>(
    `SELECT m.seq, m.id, c.server_id, s.name AS server_name, m.channel_id, c.name AS channel_name,
            m.conversation_id, v.kind AS conversation_kind, v.name AS conversation_name,
            m.content, m.reply_to, m.created_at, m.edited_at
       FROM messages m
       LEFT JOIN channels c ON c.id = m.channel_id
       LEFT JOIN servers s ON s.id = c.server_id
       LEFT JOIN conversations v ON v.id = m.conversation_id
      WHERE m.author_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
  );
  const seqsAfter = db.prepare<[string, number, number], { seq: number; server_id: string | null; channel_id: string | null }>(
    `SELECT m.seq, c.server_id, m.channel_id FROM messages m LEFT JOIN channels c ON c.id = m.channel_id
      WHERE m.author_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?`,
  );
  /**
   * view_channel reaches the export: what the user wrote in a channel of a server they are in
   * but no longer see is left out, with its files. (In a server they left, their words stay
   * theirs to take, as before channel permissions.)
   */
  const shownTo = (userId: string) => (row: { server_id: string | null; channel_id: string | null }) => {
    if (row.server_id === null || row.channel_id === null) return true;
    const rules = perms.channelRules(row.server_id);
    return !rules || rules.joinedSeq(userId) === null || (rules.flags(userId, row.channel_id) & VIEW) !== 0;
  };
  const attachmentsOfPage = db.prepare<[string], { message_seq: number; id: string; name: string; content_type: string; size: number }>(
    `SELECT message_seq, id, name, content_type, size FROM attachments
      WHERE message_seq IN (SELECT value FROM json_each(?)) ORDER BY message_seq, position`,
  );

  // Left by a stop mid-export, or past their week.
  sweep();
  const sweeper = every(HOUR, 'export-sweep', sweep, log);

  function sweep(): void {
    for (const name of fs.readdirSync(dir)) {
      const file = path.join(dir, name);
      const userId = name.replace(/\.zip(\.part)?$/, '');
      if (running.has(userId)) continue;
      // A file removed since the listing (its account deleted meanwhile) has nothing left to sweep.
      const mtimeMs = fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? clock.now();
      if (name.endsWith('.part') || clock.now() - mtimeMs > EXPORT_KEEP_MS) fs.rmSync(file, { force: true });
    }
  }

  const json = (value: unknown) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);

  /** Where a file sits in the zip: its attachment id keeps names unique. */
  const entryName = (a: { id: string; name: string }) => `files/${a.id}-${cleanFileName(a.name)}`;
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  /** messages.json, produced a batch at a time as the zip asks for more. */
  function messagesStream(userId: string): Readable {
    return Readable.from(
      (async function* () {
        let after = 0;
        let first = true;
        yield '[';
        for (;;) {
          if (closing) throw new Error('server shutting down');
          failpoint('export.messages');
          const batch = messagesAfter.all(userId, after, EXPORT_BATCH);
          if (batch.length === 0) break;
          after = batch[batch.length - 1].seq;
          const rows = batch.filter(shownTo(userId));
          const attachments = new Map<number, object[]>();
          for (const { message_seq, ...a } of attachmentsOfPage.all(JSON.stringify(rows.map((r) => r.seq)))) {
            attachments.set(message_seq, [...(attachments.get(message_seq) ?? []), { ...a, file: entryName(a) }]);
          }
          let chunk = '';
          for (const { seq, ...row } of rows) {
            chunk += `${first ? '' : ','}\n  ${JSON.stringify({ ...row, attachments: attachments.get(seq) ?? [] })}`;
            first = false;
          }
          yield chunk;
          // A turn for everything else waiting (requests, sockets) before the next batch.
          await nextTurn();
        }
        yield '\n]\n';
      })(),
    );
  }

  async function build(userId: string): Promise<void> {
    const final = zipOf(userId);
    const part = `${final}.part`;
    const zip = new yazl.ZipFile();
    const out = fs.createWriteStream(part);
    // Every stream of the zip reports its errors here, whenever they come (a file deleted while
    // it is read, the database failing mid-batch, a full disk): the export fails, the process
    // does not. yazl emits a file's read error on the ZipFile itself.
    let failure: unknown = null;
    let fail!: (err: unknown) => void;
    const written = new Promise<void>((resolve, reject) => {
      fail = (err) => {
        failure ??= err;
        reject(err);
      };
      out.on('close', resolve);
    });
    written.catch(() => {}); // awaited below: a failure that comes sooner is not left unhandled
    out.on('error', fail);
    zip.on('error', fail);
    zip.outputStream.on('error', fail);
    zip.outputStream.pipe(out);
    try {
      const mtime = new Date(clock.now());
      const account = accountOf.get(userId) as Record<string, unknown>;
      zip.addBuffer(json({ ...account, warnings: warningsOf.all(userId) }), 'account.json', { mtime });
      // `role`, the first of `roles`, is what the file held when a member had one role.
      const servers = (serversOf.all(userId) as { roles: string; joined_at: string }[]).map(({ roles, joined_at, ...server }) => {
        const names = JSON.parse(roles) as string[];
        return { ...server, role: names[0] ?? null, roles: names, joined_at };
      });
      zip.addBuffer(json(servers), 'servers.json', { mtime });
      const friends = { friends: directory.friendsOf(userId), requests: requestsOf.all(userId, userId), blocked: blocksOf.all(userId) };
      zip.addBuffer(json(friends), 'friends.json', { mtime });
      zip.addBuffer(json(directory.conversationsOf(userId)), 'conversations.json', { mtime });
      const messages = messagesStream(userId);
      messages.on('error', fail);
      zip.addReadStream(messages, 'messages.json', { mtime });
      // The uploaded files, stored as they are (already compressed media gains nothing from
      // deflate). yazl writes entries in order, streaming each from disk as its turn comes.
      let after = 0;
      while (failure === null) {
        if (closing) throw new Error('server shutting down');
        failpoint('export.batch');
        const batch = seqsAfter.all(userId, after, EXPORT_BATCH);
        if (batch.length === 0) break;
        after = batch[batch.length - 1].seq;
        const seqs = batch.filter(shownTo(userId)).map((r) => r.seq);
        for (const a of attachmentsOfPage.all(JSON.stringify(seqs))) {
          const source = path.join(uploads, a.id);
          // A row whose file is gone (reported at start-up) is left out rather than failing the zip.
          if (isUuid(a.id) && (await fs.promises.stat(source).catch(() => null))) {
            zip.addFile(source, entryName(a), { compress: false, mtime });
          }
        }
        await nextTurn();
      }
      zip.end();
      await written;
    } catch (err) {
      out.destroy();
      throw err;
    }
    await fs.promises.rename(part, final);
  }

  return {
    start(userId, charge) {
      if (running.has(userId)) throw conflict('an export is already being made; wait for it to finish');
      charge?.();
      const started = clock.now();
      const job = build(userId)
        .then(() => log(`export of user ${userId} ready in ${((clock.now() - started) / 1000).toFixed(1)} s`))
        .catch((err: unknown) => {
          log(`export of user ${userId} failed: ${describeError(err)}`);
          return fs.promises.rm(`${zipOf(userId)}.part`, { force: true }).catch(logFailure(log, 'removing a failed export'));
        })
        .finally(() => running.delete(userId));
      running.set(userId, job);
    },
    status(userId) {
      if (running.has(userId)) return { status: 'running' };
      const file = zipOf(userId);
      let stat: fs.Stats;
      try {
        stat = fs.statSync(file);
      } catch {
        return { status: 'none' };
      }
      if (clock.now() - stat.mtimeMs > EXPORT_KEEP_MS) {
        fs.rmSync(file, { force: true });
        return { status: 'none' };
      }
      return { status: 'ready', url: '/api/account/export/file', created_at: stat.mtime.toISOString(), size: stat.size };
    },
    file(userId) {
      return this.status(userId).status === 'ready' ? zipOf(userId) : null;
    },
    remove(userId) {
      fs.rmSync(zipOf(userId), { force: true });
    },
    async close() {
      closing = true;
      clearInterval(sweeper);
      await Promise.allSettled(running.values());
    },
  };
}
