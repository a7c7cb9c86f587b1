/**
 * Search (issue 19): 1 000 000 messages of Zipf-distributed words from a 30 000-word vocabulary
 * (a few very common words, a long tail of rare ones) over 100 channels, seeded in bulk into
 * the SQLite file, the index built as the 4 -> 5 migration builds it. Then through HTTP with a
 * session cookie, one request at a time, taking turns with GET /healthz (the noise floor):
 * a common word (limit 25), a rare word, a phrase, a prefix, and a common word scoped to one
 * channel. Each kind rotates over 50 different queries. Target: p99 <= 20 ms each. A prefix of
 * four letters (past the three-letter prefix index) is reported beside them.
 *
 * Visibility (issue 28): every message but those of one channel holds the word "hello" (99 %).
 * That one channel is a server of its own, whose one member (`search_none`) sees 1 % of the
 * messages and none of those that match; another channel is another server, whose member
 * (`search_narrow`) sees 1 % of the matching ones. Each searches for "hello": p99 <= 20 ms.
 *
 * Run alone: node dist-bench/bench/search.js   (SEARCH_MESSAGES changes the size)
 */
import crypto from 'node:crypto';
import { fillSearchIndex } from '../src/core/db';
import {
  type Latency,
  type Row,
  call,
  checkpointedSize,
  openForSeeding,
  rng,
  login,
  ms,
  printTable,
  register,
  runAlone,
  sequentialLatency,
  startChat,
  tempDir,
  verdict,
} from './lib';

export const SEARCH_MESSAGES = Number(process.env.SEARCH_MESSAGES ?? 1_000_000);
const CHANNELS = 100;
const VOCABULARY = 30_000;
const ROWS_PER_TRANSACTION = 50_000;
const REQUESTS = 500;
const WARMUP = 50;
const VARIANTS = 50;
export const TARGET_P99_MS = 20;
const READER = 'search_reader';
/** Sees channel NARROW_CHANNEL only: 1 % of the messages that hold WORD. */
const NARROW = 'search_narrow';
/** Sees channel NONE_CHANNEL only: 1 % of the messages, none of which holds WORD. */
const NONE = 'search_none';
const NARROW_CHANNEL = CHANNELS - 1;
const NONE_CHANNEL = CHANNELS - 2;
/** In every message but those of NONE_CHANNEL. */
const WORD = 'hello';

/** A vocabulary of distinct pronounceable words, 2 to 4 syllables. */
function vocabulary(random: () => number): string[] {
  const onsets = ['b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'z', 'br', 'st', 'tr', 'ch', 'sh', 'pl'];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'ou'];
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = '';
    for (let i = 0; i < syllables; i++) word += onsets[Math.floor(random() * onsets.length)] + vowels[Math.floor(random() * vowels.length)];
    if (random() < 0.3) word += 'n';
    words.add(word);
  }
  return [...words];
}

/** Draws word ranks by Zipf's law (s = 1.05): rank 0 is the most common. */
function zipf(n: number, random: () => number): () => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let rank = 0; rank < n; rank++) cumulative[rank] = total += 1 / (rank + 1) ** 1.05;
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface SeededSearch {
  dataDir: string;
  serverId: string;
  /** By index; NARROW_CHANNEL and NONE_CHANNEL are each the one channel of a server of its own. */
  channelIds: string[];
  words: string[];
  /** How many messages hold each word (by rank). */
  counts: Uint32Array;
  /** Adjacent word pairs seen, with their counts, to pick phrases that occur. */
  pairs: Map<string, number>;
  seedMs: number;
  rebuildMs: number;
  dbBytes: number;
  indexBytes: number;
}

export async function seedSearch(dataDir = tempDir('chat-bench-search-'), messages = SEARCH_MESSAGES): Promise<SeededSearch> {
  const started = performance.now();
  const chat = await startChat(dataDir);
  let serverId: string;
  const channelIds: string[] = [];
  const ownChannels = new Map<number, string>();
  try {
    const serverOf = async (name: string) => {
      await register(chat.base, name);
      const cookie = await login(chat.base, name);
      const id: string = (await call(chat.base, 'POST', '/api/servers', { name }, cookie)).body.id;
      return { id, channel: (await call(chat.base, 'GET', `/api/servers/${id}/channels`, undefined, cookie)).body[0].id as string };
    };
    const reader = await serverOf(READER);
    serverId = reader.id;
    channelIds.push(reader.channel);
    ownChannels.set(NARROW_CHANNEL, (await serverOf(NARROW)).channel);
    ownChannels.set(NONE_CHANNEL, (await serverOf(NONE)).channel);
  } finally {
    await chat.stop();
  }

  const db = openForSeeding(dataDir);
  // No index triggers while the rows go in, then the index built as the 8 -> 9 migration builds
  // it (timed). The server puts the triggers back when it opens the file.
  db.exec('DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_delete; DROP TRIGGER messages_fts_update');
  const now = Date.now();
  const iso = (at: number) => new Date(at).toISOString();
  const insertChannel = db.prepare('INSERT INTO channels (id, server_id, name, position, created_at) VALUES (?, ?, ?, ?, ?)');
  const insertUser = db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const insertMember = db.prepare('INSERT INTO members (server_id, user_id, joined_at) VALUES (?, ?, ?)');
  const insertMessage = db.prepare('INSERT INTO messages (seq, id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const authors: string[] = [];
  db.transaction(() => {
    for (let c = 1; c < CHANNELS; c++) {
      if (ownChannels.has(c)) {
        channelIds.push(ownChannels.get(c)!);
        continue;
      }
      const id = crypto.randomUUID();
      insertChannel.run(id, serverId, `channel-${c}`, c, iso(now));
      channelIds.push(id);
    }
    for (let i = 0; i < 50; i++) {
      const id = crypto.randomUUID();
      insertUser.run(id, `search_author_${i}`, 'x', iso(now));
      insertMember.run(serverId, id, iso(now));
      authors.push(id);
    }
  })();

  const random = rng(19);
  const words = vocabulary(random);
  const draw = zipf(VOCABULARY, random);
  const counts = new Uint32Array(VOCABULARY);
  const pairs = new Map<string, number>();
  const firstAt = now - messages * 1000;
  const seen = new Set<number>();
  for (let from = 1; from <= messages; from += ROWS_PER_TRANSACTION) {
    db.transaction(() => {
      for (let seq = from; seq < from + ROWS_PER_TRANSACTION && seq <= messages; seq++) {
        const length = 3 + Math.floor(random() * 25);
        const ranks: number[] = [];
        seen.clear();
        for (let w = 0; w < length; w++) {
          const rank = draw();
          ranks.push(rank);
          if (!seen.has(rank)) counts[rank]++;
          seen.add(rank);
        }
        // Pairs of mid-frequency words only: the phrase queries come from these.
        for (let w = 1; w < length; w++) {
          if (ranks[w - 1] >= 20 && ranks[w - 1] < 500 && ranks[w] >= 20 && ranks[w] < 500) {
            const key = `${words[ranks[w - 1]]} ${words[ranks[w]]}`;
            pairs.set(key, (pairs.get(key) ?? 0) + 1);
          }
        }
        const text = ranks.map((r) => words[r]);
        if (seq % CHANNELS !== NONE_CHANNEL) text.push(WORD);
        const content = text.join(' ');
        insertMessage.run(seq, crypto.randomUUID(), channelIds[seq % CHANNELS], authors[seq % authors.length], content, iso(firstAt + seq * 1000));
      }
    })();
  }
  const seedMs = performance.now() - started;
  const rebuildStarted = performance.now();
  fillSearchIndex(db);
  const rebuildMs = performance.now() - rebuildStarted;
  const dbBytes = checkpointedSize(db);
  const indexBytes = (db.prepare("SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name LIKE 'messages_fts%'").get() as { bytes: number }).bytes;
  db.close();
  return { dataDir, serverId, channelIds, words, counts, pairs, seedMs, rebuildMs, dbBytes, indexBytes };
}

export interface SearchFigures {
  seeded: SeededSearch;
  messages: number;
  floor: Latency;
  /** `reported`: shown beside the target, not held to it. */
  kinds: { name: string; example: string; results: number; latency: Latency; reported?: boolean }[];
}

export async function measureSearch(seeded: SeededSearch, messages = SEARCH_MESSAGES): Promise<SearchFigures> {
  const { words, counts } = seeded;
  const byCount = [...counts.keys()].sort((a, b) => counts[b] - counts[a]);
  const common = byCount.slice(0, VARIANTS).map((r) => words[r]);
  const rare = byCount
    .filter((r) => counts[r] >= 3 && counts[r] <= 30)
    .slice(0, VARIANTS)
    .map((r) => words[r]);
  // The most frequent adjacent pairs of mid-frequency words: phrases that do occur, neither word rare.
  const phrases = [...seeded.pairs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, VARIANTS)
    .map(([p]) => `"${p}"`);
  // Three-letter prefixes of mid-frequency words: each expands to many terms of the index.
  const prefixes = [...new Set(byCount.slice(100, 2000).map((r) => words[r].slice(0, 3)))].slice(0, VARIANTS).map((p) => `${p}*`);
  // Four-letter prefixes of the same words: past the prefix index, spelled out as the words of
  // the index that start so (src/parts/messages/search.ts). Reported beside the target, not held to it.
  const longer = [...new Set(byCount.slice(100, 2000).map((r) => words[r].slice(0, 4)))].slice(0, VARIANTS).map((p) => `${p}*`);
  const readable = seeded.channelIds.filter((_, i) => i !== NARROW_CHANNEL && i !== NONE_CHANNEL);
  const scoped = common.map((w, i) => ({ q: w, channel: readable[i % readable.length] }));
  if (rare.length < VARIANTS || phrases.length < VARIANTS / 2 || prefixes.length < VARIANTS / 2 || longer.length < VARIANTS / 2) {
    throw new Error(
      `too few query variants: rare ${rare.length}, phrases ${phrases.length}, prefixes ${prefixes.length}, four-letter prefixes ${longer.length}`,
    );
  }

  const url = (q: string, extra = '') => `/api/search?q=${encodeURIComponent(q)}&limit=25${extra}`;
  const rotate = (list: string[]) => {
    let next = 0;
    return () => list[next++ % list.length];
  };
  const kinds = [
    { name: 'common word', example: common[0], next: rotate(common.map((q) => url(q))) },
    { name: 'rare word', example: rare[0], next: rotate(rare.map((q) => url(q))) },
    { name: 'phrase', example: phrases[0], next: rotate(phrases.map((q) => url(q))) },
    { name: 'prefix', example: prefixes[0], next: rotate(prefixes.map((q) => url(q))) },
    { name: 'four-letter prefix', example: longer[0], next: rotate(longer.map((q) => url(q))), reported: true },
    { name: 'common word in one channel', example: `${common[0]} (channel_id)`, next: rotate(scoped.map((s) => url(s.q, `&channel_id=${s.channel}`))) },
    { name: 'a user who sees 1 % of the matches', example: `${WORD} (as ${NARROW})`, next: rotate([url(WORD)]), user: NARROW },
    { name: 'a user who sees none of the matches', example: `${WORD} (as ${NONE})`, next: rotate([url(WORD)]), user: NONE },
  ];

  const chat = await startChat(seeded.dataDir);
  try {
    const cookie = await login(chat.base, READER);
    const cookies = new Map<string, string>([[READER, cookie]]);
    for (const name of [NARROW, NONE]) cookies.set(name, await login(chat.base, name));
    const cookieOf = (kind: { user?: string }) => cookies.get(kind.user ?? READER)!;
    // One look at each kind's first query: what a page held.
    const results: number[] = [];
    for (const kind of kinds) {
      const first = kind.next();
      results.push((await call(chat.base, 'GET', first, undefined, cookieOf(kind))).body.results.length);
    }
    const targets = kinds.map((k) => ({ next: k.next, headers: { cookie: cookieOf(k) } }));
    const [floor, ...latencies] = await sequentialLatency(chat.base, ['/healthz', ...targets], { cookie }, REQUESTS, WARMUP);
    return {
      seeded,
      messages,
      floor,
      kinds: kinds.map((k, i) => ({ name: k.name, example: k.example, results: results[i], latency: latencies[i], reported: k.reported })),
    };
  } finally {
    await chat.stop();
  }
}

export function searchRows(f: SearchFigures): Row[] {
  const s = f.seeded;
  const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
  return [
    ['messages / channels / vocabulary', `${f.messages} / ${CHANNELS} / ${VOCABULARY} words (Zipf s = 1.05)`, '', ''],
    [
      `"${WORD}": in every message but one channel's; two channels are servers of their own`,
      `${NARROW} sees ${(100 / CHANNELS).toFixed(0)} % of the matches, ${NONE} none`,
      '',
      '',
    ],
    ["seeding time; index build (the migration's rebuild)", `${(s.seedMs / 1000).toFixed(1)} s; ${(s.rebuildMs / 1000).toFixed(1)} s`, '', ''],
    ['database size; of which the search index', `${mib(s.dbBytes)}; ${mib(s.indexBytes)} (${((100 * s.indexBytes) / s.dbBytes).toFixed(0)} %)`, '', ''],
    ...f.kinds.map((k): Row => [
      `${k.name} (e.g. ${k.example}; ${k.results} results): p50 / p99`,
      `${ms(k.latency.p50)} / ${ms(k.latency.p99)}`,
      k.reported ? '' : `p99 <= ${TARGET_P99_MS} ms`,
      k.reported ? '' : verdict(k.latency.p99 <= TARGET_P99_MS),
    ]),
    ['noise floor: GET /healthz in turn with the searches, p50 / p99', `${ms(f.floor.p50)} / ${ms(f.floor.p99)}`, '', ''],
  ];
}

export const searchSetup = `${REQUESTS} requests of each kind over ${VARIANTS} different queries, one at a time on one keep-alive connection, taking turns, after ${WARMUP} warm-up`;

runAlone(module, 'search', async () => {
  const figures = await measureSearch(await seedSearch());
  printTable(`8. Search: ${SEARCH_MESSAGES} messages over ${CHANNELS} channels (${searchSetup})`, searchRows(figures));
});
