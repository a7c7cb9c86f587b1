/**
 * Throughput (issue 10, measurements 1 and 2): posting a channel message on the real server
 * (session cookie, membership check, validation, insert, serialise, broadcast to the channel's
 * sockets, none connected) against the ceiling (bench/ceiling.ts), with the same load client,
 * connections and duration. Runs alternate ceiling, chat, ceiling, chat... so drift in a
 * shared machine's speed hits both alike. Target: chat >= 50 % of the ceiling's requests/s.
 *
 * Run alone: node dist-bench/bench/post-message.js   (BENCH_SECONDS and BENCH_RUNS shorten it)
 */
import path from 'node:path';
import { type LoadResult, type Row, load, median, ms, ownerWithChannel, printTable, runAlone, startChat, startProcess, tempDir, verdict } from './lib';

export const CONNECTIONS = 32;
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WARMUP_SECONDS = 3;
export const TARGET_RATIO = 0.5;

/** A typical chat line: the same small JSON body for both servers. */
const BODY = JSON.stringify({ content: 'Benchmark message: hello everyone, the build is green again.' });

export interface ThroughputFigures {
  ceiling: LoadResult[];
  chat: LoadResult[];
  ceilingRps: number;
  chatRps: number;
  ratio: number;
}

export async function measureThroughput(): Promise<ThroughputFigures> {
  const ceilingServer = await startProcess('ceiling', path.join(__dirname, 'ceiling.js'), { env: { DATA_DIR: tempDir('chat-bench-ceiling-') } });
  const chatServer = await startChat(tempDir('chat-bench-post-'));
  try {
    const { cookie, messagesUrl } = await ownerWithChannel(chatServer.base, `poster_${process.pid}`);
    const targets = {
      ceiling: { url: `${ceilingServer.base}/messages`, headers: { 'content-type': 'application/json' } },
      chat: { url: chatServer.base + messagesUrl, headers: { 'content-type': 'application/json', cookie } },
    };
    const run = (which: keyof typeof targets, seconds: number) =>
      load({ ...targets[which], method: 'POST', body: BODY, connections: CONNECTIONS, seconds, expectStatus: 201 });

    await run('ceiling', WARMUP_SECONDS);
    await run('chat', WARMUP_SECONDS);
    const ceiling: LoadResult[] = [];
    const chat: LoadResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      ceiling.push(await run('ceiling', SECONDS));
      chat.push(await run('chat', SECONDS));
    }
    const ceilingRps = median(ceiling.map((r) => r.rps));
    const chatRps = median(chat.map((r) => r.rps));
    return { ceiling, chat, ceilingRps, chatRps, ratio: chatRps / ceilingRps };
  } finally {
    await chatServer.stop();
    await ceilingServer.stop();
  }
}

export function throughputRows(f: ThroughputFigures): { ceiling: Row[]; post: Row[] } {
  const perRun = (name: string, results: LoadResult[]): Row[] =>
    results.map((r, i) => [`${name} run ${i + 1}: req/s, p50 / p99`, `${r.rps.toFixed(0)}, ${ms(r.p50)} / ${ms(r.p99)}`, '', '']);
  return {
    ceiling: [...perRun('ceiling', f.ceiling), ['ceiling req/s (median of runs)', f.ceilingRps.toFixed(0), '', '']],
    post: [
      ...perRun('post', f.chat),
      ['post req/s (median of runs)', f.chatRps.toFixed(0), '', ''],
      ['post / ceiling req/s', `${(f.ratio * 100).toFixed(1)} %`, `>= ${TARGET_RATIO * 100} %`, verdict(f.ratio >= TARGET_RATIO)],
    ],
  };
}

export const throughputSetup = `${CONNECTIONS} connections, ${SECONDS} s per run, ${RUNS} runs each, alternating; autocannon`;

runAlone(module, 'post-message', async () => {
  const figures = await measureThroughput();
  const rows = throughputRows(figures);
  printTable(`1. Ceiling: bare node:http + one prepared INSERT (${throughputSetup})`, rows.ceiling);
  printTable('2. Post a channel message (real server, session cookie)', rows.post);
});
