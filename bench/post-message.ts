/**
 * Throughput (issue 10, measurements 1 and 2): posting a channel message on the real server
 * (session cookie, membership check, validation, insert, serialise, broadcast to the channel's
 * sockets, none connected) against the ceiling (bench/ceiling.ts), with the same load client,
 * connections and duration. Runs alternate ceiling, chat, chat-strict, ceiling, chat... so
 * drift in a shared machine's speed hits all alike. Target: chat >= 50 % of the ceiling's
 * requests/s. chat-strict is the same server with DURABILITY=strict (SQLite synchronous=FULL,
 * every commit waits for fsync); its ratios to the ceiling and to chat are reported, no target.
 *
 * Run alone: node dist-bench/bench/post-message.js   (BENCH_SECONDS and BENCH_RUNS shorten it)
 */
import path from 'node:path';
import { type LoadResult, type Row, type Started, load, median, ms, ownerWithChannel, printTable, runAlone, startChat, startProcess, tempDir, verdict } from './lib';

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
  strict: LoadResult[];
  ceilingRps: number;
  chatRps: number;
  strictRps: number;
  /** chat / ceiling */
  ratio: number;
  /** chat-strict / ceiling */
  strictRatio: number;
  /** chat-strict / chat */
  strictVsNormal: number;
}

export async function measureThroughput(): Promise<ThroughputFigures> {
  const ceilingServer = await startProcess('ceiling', path.join(__dirname, 'ceiling.js'), { env: { DATA_DIR: tempDir('chat-bench-ceiling-') } });
  const chatServer = await startChat(tempDir('chat-bench-post-'));
  const strictServer = await startChat(tempDir('chat-bench-post-strict-'), { env: { DURABILITY: 'strict' } });
  try {
    const chatTarget = async (server: Started) => {
      const { cookie, messagesUrl } = await ownerWithChannel(server.base, `poster_${process.pid}`);
      return { url: server.base + messagesUrl, headers: { 'content-type': 'application/json', cookie } };
    };
    const targets = {
      ceiling: { url: `${ceilingServer.base}/messages`, headers: { 'content-type': 'application/json' } },
      chat: await chatTarget(chatServer),
      strict: await chatTarget(strictServer),
    };
    const run = (which: keyof typeof targets, seconds: number) =>
      load({ ...targets[which], method: 'POST', body: BODY, connections: CONNECTIONS, seconds, expectStatus: 201 });

    await run('ceiling', WARMUP_SECONDS);
    await run('chat', WARMUP_SECONDS);
    await run('strict', WARMUP_SECONDS);
    const ceiling: LoadResult[] = [];
    const chat: LoadResult[] = [];
    const strict: LoadResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      ceiling.push(await run('ceiling', SECONDS));
      chat.push(await run('chat', SECONDS));
      strict.push(await run('strict', SECONDS));
    }
    const ceilingRps = median(ceiling.map((r) => r.rps));
    const chatRps = median(chat.map((r) => r.rps));
    const strictRps = median(strict.map((r) => r.rps));
    return {
      ceiling,
      chat,
      strict,
      ceilingRps,
      chatRps,
      strictRps,
      ratio: chatRps / ceilingRps,
      strictRatio: strictRps / ceilingRps,
      strictVsNormal: strictRps / chatRps,
    };
  } finally {
    await strictServer.stop();
    await chatServer.stop();
    await ceilingServer.stop();
  }
}

export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

export function throughputRows(f: ThroughputFigures): { ceiling: Row[]; post: Row[] } {
  const perRun = (name: string, results: LoadResult[]): Row[] =>
    results.map((r, i) => [`${name} run ${i + 1}: req/s, p50 / p99`, `${r.rps.toFixed(0)}, ${ms(r.p50)} / ${ms(r.p99)}`, '', '']);
  return {
    ceiling: [...perRun('ceiling', f.ceiling), ['ceiling req/s (median of runs)', f.ceilingRps.toFixed(0), '', '']],
    post: [
      ...perRun('post', f.chat),
      ['post req/s (median of runs)', f.chatRps.toFixed(0), '', ''],
      ['post / ceiling req/s', percent(f.ratio), `>= ${TARGET_RATIO * 100} %`, verdict(f.ratio >= TARGET_RATIO)],
      ...perRun('post (DURABILITY=strict)', f.strict),
      ['post (DURABILITY=strict) req/s (median of runs)', f.strictRps.toFixed(0), '', ''],
      ['post (DURABILITY=strict) / ceiling req/s', percent(f.strictRatio), '', ''],
      ['strict / normal req/s', percent(f.strictVsNormal), '', ''],
    ],
  };
}

export const throughputSetup = `${CONNECTIONS} connections, ${SECONDS} s per run, ${RUNS} runs each of ceiling, chat and chat with DURABILITY=strict, alternating; autocannon`;

runAlone(module, 'post-message', async () => {
  const figures = await measureThroughput();
  const rows = throughputRows(figures);
  printTable(`1. Ceiling: bare node:http + one prepared INSERT (${throughputSetup})`, rows.ceiling);
  printTable('2. Post a channel message (real server, session cookie; then the same with DURABILITY=strict)', rows.post);
});
