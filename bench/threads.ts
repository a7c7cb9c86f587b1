/**
 * Threads (issue 49): a channel with 10 000 threads (1 000 active, a server's cap; 9 000
 * archived), in the `ready` scene of 10c (one user in 100 servers × 20 channels, who follows 100
 * of the active threads, each with messages). Through HTTP with a session cookie, one request at
 * a time, taking turns with GET /healthz (the noise floor): the channel's active threads (all
 * 1 000, the whole list as the browser asks for it), and a page of 50 archived ones from the
 * middle (`?archived=true&before=`). Target: p99 <= 20 ms each, as `ready`'s (a list of active
 * threads is at most a server's cap, as ready's threads are).
 *
 * `ready` with the same threads is part `ready-threads` of bench/user-stream.ts (10d).
 *
 * Run alone: node dist-bench/bench/threads.js
 */
import { type Latency, type Row, login, ms, printTable, request, runAlone, sequentialLatency, startChat, verdict } from './lib';
import { READY_THREADS, seedReady } from './user-stream';

const TARGET_P99_MS = 20;
const REQUESTS = 200;
const WARMUP = 20;

export interface ThreadListFigures {
  threads: number;
  active: number;
  activeBytes: number;
  archivedBytes: number;
  list: Latency;
  archived: Latency;
  healthz: Latency;
}

export async function measureThreadList(): Promise<ThreadListFigures> {
  const seeded = await seedReady(READY_THREADS);
  const server = await startChat(seeded.dataDir);
  try {
    const cookie = await login(server.base, seeded.reader);
    const headers = { cookie };
    const list = `/api/servers/${seeded.threadServer}/channels/${seeded.threadChannel}/threads`;
    const first = await request(server.base, 'GET', list, undefined, headers);
    const active = JSON.parse(first.text) as unknown[];
    if (active.length !== seeded.threads) throw new Error(`the list holds ${active.length} threads, not ${seeded.threads}`);
    // Pages of archived threads from different places: the cursor of each is a thread of the page before.
    const cursors: string[] = [];
    let before = '';
    for (let page = 0; page < 40; page++) {
      const res = await request(server.base, 'GET', `${list}?archived=true&limit=100${before}`, undefined, headers);
      const rows = JSON.parse(res.text) as { id: string }[];
      if (rows.length === 0) break;
      before = `&before=${rows[rows.length - 1].id}`;
      cursors.push(rows[rows.length - 1].id);
    }
    let turn = 0;
    const archivedPage = () => `${list}?archived=true&limit=50&before=${cursors[turn++ % cursors.length]}`;
    const sample = await request(server.base, 'GET', archivedPage(), undefined, headers);
    const [listed, archived, healthz] = await sequentialLatency(server.base, [list, archivedPage, '/healthz'], headers, REQUESTS, WARMUP);
    return {
      threads: READY_THREADS,
      active: active.length,
      activeBytes: Buffer.byteLength(first.text),
      archivedBytes: Buffer.byteLength(sample.text),
      list: listed,
      archived,
      healthz,
    };
  } finally {
    await server.stop();
  }
}

export function threadListRows(f: ThreadListFigures): Row[] {
  const triple = (l: Latency) => `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}`;
  return [
    ['active threads listed (all of them), p50 / p99 / max', `${triple(f.list)}; ${f.active} threads, ${f.activeBytes} bytes`, '', ''],
    ['active threads listed, p99', ms(f.list.p99), `<= ${TARGET_P99_MS} ms`, verdict(f.list.p99 <= TARGET_P99_MS)],
    ['a page of 50 archived threads, p50 / p99 / max', `${triple(f.archived)}; ${f.archivedBytes} bytes`, '', ''],
    ['a page of 50 archived threads, p99', ms(f.archived.p99), `<= ${TARGET_P99_MS} ms`, verdict(f.archived.p99 <= TARGET_P99_MS)],
    ['GET /healthz taking turns with them, p50 / p99', `${ms(f.healthz.p50)} / ${ms(f.healthz.p99)}`, '', ''],
  ];
}

runAlone(module, 'threads', async () => {
  const f = await measureThreadList();
  printTable(`15. Threads: a channel of ${f.threads} threads (${f.active} active), one request at a time`, threadListRows(f));
});
