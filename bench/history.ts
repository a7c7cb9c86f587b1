/**
 * History (issue 10, measurement 3): one channel holding 1 000 000 messages, some with
 * reactions, attachments and replies, seeded in bulk straight into the SQLite file before the
 * server starts. Then, through HTTP with a session cookie, one request at a time: the newest
 * page of 50, and pages deep in history with ?before=. Target: p99 < 5 ms for both.
 *
 * bench/cold-start.ts reuses the seeded data directory.
 *
 * Run alone: node dist-bench/bench/history.js   (HISTORY_MESSAGES changes the size)
 */
import Database from 'better-sqlite3';
import crypto from 'node:crypto';
import path from 'node:path';
import {
  type Latency,
  type Row,
  call,
  checkpointedSize,
  openForSeeding,
  rng,
  loggedTimes,
  login,
  ms,
  percentile,
  printTable,
  register,
  runAlone,
  sequentialLatency,
  startChat,
  tempDir,
  verdict,
} from './lib';

export const MESSAGES = Number(process.env.HISTORY_MESSAGES ?? 1_000_000);
const ROWS_PER_TRANSACTION = 50_000;
const AUTHORS = 20;
const REQUESTS = 1000;
const WARMUP = 100;
/** Deep pages start at these many different messages in the older half, taken in turn. */
const DEEP_STARTS = 200;
export const TARGET_P99_MS = 5;

const READER = 'history_reader';

export interface SeededHistory {
  dataDir: string;
  serverId: string;
  channelId: string;
  messages: number;
  reactions: number;
  attachments: number;
  replies: number;
  seedMs: number;
  dbBytes: number;
}

const EMOJIS = ['👍', '🎉', '😂', '❤️', '🚀', '👀'];
const WORDS =
  'the build is green again and we can ship the release after lunch if nobody objects to the new theme or the migration plan we talked about yesterday in the call'.split(
    ' ',
  );

/**
 * Creates the schema, the reader and the server through the real server (so the file is
 * exactly what the app makes), stops it, then bulk-inserts the history.
 */
export async function seedHistory(dataDir = tempDir('chat-bench-history-'), messages = MESSAGES): Promise<SeededHistory> {
  const started = performance.now();
  const chat = await startChat(dataDir);
  let serverId: string;
  let channelId: string;
  try {
    await register(chat.base, READER);
    const cookie = await login(chat.base, READER);
    serverId = (await call(chat.base, 'POST', '/api/servers', { name: 'history' }, cookie)).body.id;
    channelId = (await call(chat.base, 'GET', `/api/servers/${serverId}/channels`, undefined, cookie)).body[0].id;
  } finally {
    await chat.stop();
  }

  const db = openForSeeding(dataDir);
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const insertUser = db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const insertMessage = db.prepare('INSERT INTO messages (seq, id, channel_id, author_id, content, reply_to, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const insertReaction = db.prepare('INSERT INTO reactions (message_seq, emoji, user_id, created_at) VALUES (?, ?, ?, ?)');
  const insertAttachment = db.prepare(
    `INSERT INTO attachments (id, message_seq, name, content_type, size, preview_kind, position, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  const authors: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < AUTHORS; i++) {
      const id = crypto.randomUUID();
      // Not a valid hash: these authors never sign in.
      insertUser.run(id, `history_author_${i}`, 'x', iso(now));
      insertMember.run(serverId, id, iso(now));
      authors.push(id);
    }
  })();

  const random = rng(10);
  const recent: string[] = [];
  let reactions = 0;
  let attachments = 0;
  let replies = 0;
  // One message a second up to now: created_at increases with seq, as in real history.
  const firstAt = now - messages * 1000;
  for (let from = 1; from <= messages; from += ROWS_PER_TRANSACTION) {
    db.transaction(() => {
      for (let seq = from; seq < from + ROWS_PER_TRANSACTION && seq <= messages; seq++) {
        const id = crypto.randomUUID();
        const at = iso(firstAt + seq * 1000);
        const words = 3 + Math.floor(random() * 30);
        let content = '';
        for (let w = 0; w < words; w++) content += (w ? ' ' : '') + WORDS[Math.floor(random() * WORDS.length)];
        let replyTo: string | null = null;
        if (seq % 20 === 0 && recent.length > 0) {
          replyTo = recent[Math.floor(random() * recent.length)];
          replies++;
        }
        insertMessage.run(seq, id, channelId, authors[seq % AUTHORS], content, replyTo, at);
        if (seq % 10 === 0) {
          const kinds = 1 + (seq % 3);
          for (let k = 0; k < kinds; k++) {
            const people = 1 + Math.floor(random() * 5);
            for (let p = 0; p < people; p++) {
              insertReaction.run(seq, EMOJIS[(seq + k) % EMOJIS.length], authors[(seq + p) % AUTHORS], at);
              reactions++;
            }
          }
        }
        if (seq % 25 === 0) {
          const files = 1 + (seq % 2);
          for (let position = 0; position < files; position++) {
            insertAttachment.run(crypto.randomUUID(), seq, `photo-${seq}-${position}.png`, 'image/png', 10_000 + seq, 'image', position, at);
            attachments++;
          }
        }
        recent.push(id);
        if (recent.length > 50) recent.shift();
      }
    })();
  }
  // Start-up must not replay a huge WAL: fold it into the database file, as a long-running server would have.
  // No ANALYZE or PRAGMA optimize: statistics would steer the query planner differently from
  // a database the server built itself, which never has any.
  const dbBytes = checkpointedSize(db);
  db.close();
  return { dataDir, serverId, channelId, messages, reactions, attachments, replies, seedMs: performance.now() - started, dbBytes };
}

export interface HistoryFigures {
  seeded: SeededHistory;
  /** GET /healthz in turn with the pages: what the machine and HTTP alone cost. */
  floor: Latency;
  newest: Latency;
  deep: Latency;
  /** Both kinds of page as the server's request log times them (no client, no loopback). */
  serverSide: Latency;
  /** How full the pages were, to show they carried what they should. */
  newestPage: { messages: number; withReactions: number; withAttachments: number; withReplies: number };
}

export async function measureHistory(seeded: SeededHistory): Promise<HistoryFigures> {
  // Deep starting points from the older half, picked before the server opens the file.
  const db = new Database(path.join(seeded.dataDir, 'chat.db'), { readonly: true });
  const pick = rng(20);
  const deepIds: string[] = [];
  const byseq = db.prepare<[number], { id: string }>('SELECT id FROM messages WHERE seq = ?');
  for (let i = 0; i < DEEP_STARTS; i++) {
    deepIds.push(byseq.get(1000 + Math.floor(pick() * (seeded.messages / 2)))!.id);
  }
  db.close();

  const chat = await startChat(seeded.dataDir);
  try {
    const cookie = await login(chat.base, READER);
    const url = `/api/servers/${seeded.serverId}/channels/${seeded.channelId}/messages`;
    const headers = { cookie };

    const page = (await call(chat.base, 'GET', url, undefined, cookie)).body as { reactions: unknown[]; attachments: unknown[]; reply_to: string | null }[];
    const newestPage = {
      messages: page.length,
      withReactions: page.filter((m) => m.reactions.length > 0).length,
      withAttachments: page.filter((m) => m.attachments.length > 0).length,
      withReplies: page.filter((m) => m.reply_to !== null).length,
    };
    if (page.length !== 50) throw new Error(`the newest page held ${page.length} messages, not 50`);

    let next = 0;
    const deepUrl = () => `${url}?before=${deepIds[next++ % deepIds.length]}`;
    const [floor, newest, deep] = await sequentialLatency(chat.base, ['/healthz', url, deepUrl], headers, REQUESTS, WARMUP);
    await chat.stop();
    // The log has no query strings: newest and deep pages together, after the check and the warm-up.
    const logged = loggedTimes(chat.logFile, 'GET', url)
      .slice(1 + 2 * WARMUP)
      .sort((a, b) => a - b);
    if (logged.length !== 2 * REQUESTS) throw new Error(`the request log holds ${logged.length} page requests, not ${2 * REQUESTS}`);
    const serverSide = { p50: percentile(logged, 50), p99: percentile(logged, 99), max: logged[logged.length - 1] };
    return { seeded, floor, newest, deep, serverSide, newestPage };
  } finally {
    await chat.stop();
  }
}

export function historyRows(f: HistoryFigures): Row[] {
  const s = f.seeded;
  const p = f.newestPage;
  return [
    ['seeded messages / reactions / attachments / replies', `${s.messages} / ${s.reactions} / ${s.attachments} / ${s.replies}`, '', ''],
    ['seeding time, database size', `${(s.seedMs / 1000).toFixed(1)} s, ${(s.dbBytes / 1024 ** 2).toFixed(0)} MiB`, '', ''],
    ['newest page: messages (reactions / attachments / replies)', `${p.messages} (${p.withReactions} / ${p.withAttachments} / ${p.withReplies})`, '', ''],
    ['newest page of 50: p50', ms(f.newest.p50), '', ''],
    ['newest page of 50: p99', ms(f.newest.p99), `< ${TARGET_P99_MS} ms`, verdict(f.newest.p99 < TARGET_P99_MS)],
    [`deep page (?before=, ${DEEP_STARTS} starts in the older half): p50`, ms(f.deep.p50), '', ''],
    [`deep page: p99`, ms(f.deep.p99), `< ${TARGET_P99_MS} ms`, verdict(f.deep.p99 < TARGET_P99_MS)],
    ['noise floor: GET /healthz in turn with the pages, p50 / p99', `${ms(f.floor.p50)} / ${ms(f.floor.p99)}`, '', ''],
    ['both pages, server-side (request log, 0.1 ms steps), p50 / p99', `${ms(f.serverSide.p50)} / ${ms(f.serverSide.p99)}`, '', ''],
  ];
}

export const historySetup = `${REQUESTS} requests each, one at a time on one keep-alive connection, taking turns, after ${WARMUP} warm-up`;

runAlone(module, 'history', async () => {
  const figures = await measureHistory(await seedHistory());
  printTable(`3. History: one channel of ${MESSAGES} messages (${historySetup})`, historyRows(figures));
});
