/**
 * Cold start (issue 10, measurement 6): from spawning `node dist/server.js` to the first 200
 * from GET /healthz, on the database of 1 000 000 messages that bench/history.ts seeded.
 * Several starts, each a new process; the median is held to the target, the slowest shown.
 * An empty database is started the same way for scale (what Node and our modules cost alone).
 * The OS file cache is warm (the file was just written): a first start after a reboot also
 * reads the pages it needs from disk.
 *
 * Run alone: node dist-bench/bench/cold-start.js   (seeds its own history first)
 */
import { seedHistory } from './history';
import { type Row, median, ms, printTable, request, runAlone, startChat, tempDir, verdict } from './lib';

export const STARTS = 5;
export const TARGET_MS = 500;

export interface ColdStartFigures {
  messages: number;
  /** spawn -> first 200, per start */
  seeded: number[];
  empty: number[];
}

async function timeStarts(dataDir: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const chat = await startChat(dataDir);
    try {
      const res = await request(chat.base, 'GET', '/healthz');
      if (res.status !== 200) throw new Error(`/healthz answered ${res.status}`);
      times.push(performance.now() - chat.spawnedAt);
    } finally {
      await chat.stop();
    }
  }
  return times;
}

export async function measureColdStart(dataDir: string, messages: number): Promise<ColdStartFigures> {
  const empty = tempDir('chat-bench-empty-');
  await timeStarts(empty); // creates the schema: later starts open an existing empty database
  return { messages, seeded: await timeStarts(dataDir), empty: await timeStarts(empty) };
}

export function coldStartRows(f: ColdStartFigures): Row[] {
  const seededMedian = median(f.seeded);
  return [
    [`empty database: spawn to first 200, median (max)`, `${ms(median(f.empty))} (${ms(Math.max(...f.empty))})`, '', ''],
    [`${f.messages} messages: each start`, f.seeded.map((t) => t.toFixed(0)).join(', ') + ' ms', '', ''],
    [
      `${f.messages} messages: spawn to first 200, median (max)`,
      `${ms(seededMedian)} (${ms(Math.max(...f.seeded))})`,
      `<= ${TARGET_MS} ms`,
      verdict(seededMedian <= TARGET_MS),
    ],
  ];
}

runAlone(module, 'cold-start', async () => {
  const seeded = await seedHistory();
  printTable(`6. Cold start (${STARTS} starts each)`, coldStartRows(await measureColdStart(seeded.dataDir, seeded.messages)));
});
