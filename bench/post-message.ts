/**
 * Throughput (issues 10 and 32, measurements 1 and 2): posting a channel message on the real
 * server (session cookie, membership check, validation, insert, serialise, broadcast to the
 * channel's sockets, none connected) against the ceiling (bench/ceiling.ts), with the same load
 * client, connections and duration. Runs alternate ceiling, chat, chat-strict, ceiling, chat...
 * so drift in a shared machine's speed hits all alike.
 *
 * The load client is wrk, and the judge is server CPU per request: each server's CPU time
 * (/proc/<pid>/stat, every thread) over a run divided by the requests it answered. On two cores
 * the load client and the server share the machine, so requests/s depends on how the client
 * and the scheduler fare; what a request costs the server does not. autocannon saturated
 * before the bare ceiling did, which flattened the requests/s ratio (issue 32).
 * Target: ceiling CPU per request / chat CPU per request >= 0.5 (medians). chat-strict is the
 * same server with DURABILITY=strict (SQLite synchronous=FULL, every commit waits for fsync):
 * its figures are reported, no target.
 *
 * Run alone: node dist-bench/bench/post-message.js   (BENCH_SECONDS and BENCH_RUNS shorten it)
 */
import path from 'node:path';
import {
  type LoadResult,
  type Row,
  type Started,
  cpuMicros,
  median,
  ms,
  ownerWithChannel,
  printTable,
  runAlone,
  startChat,
  startProcess,
  tempDir,
  verdict,
  wrk,
} from './lib';

export const CONNECTIONS = 32;
/**
 * One wrk thread: on two cores it takes one and leaves the other to the server, whose
 * JavaScript runs on one thread. One C thread on epoll drives far more than the ~12 000 req/s
 * the ceiling reaches, so the server, not the client, is what saturates; a second wrk thread
 * would only compete with the server for its core.
 */
export const THREADS = 1;
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WARMUP_SECONDS = 3;
export const TARGET_RATIO = 0.5;

/** A typical chat line: the same small JSON body for both servers. */
export const BODY = JSON.stringify({ content: 'Benchmark message: hello everyone, the build is green again.' });

/** One run: wrk's figures and the server's CPU time over it. */
export interface RunResult extends LoadResult {
  /** Server CPU (user + system, all threads) per request answered, in microseconds. */
  cpuPerRequest: number;
}

export interface ThroughputFigures {
  ceiling: RunResult[];
  chat: RunResult[];
  strict: RunResult[];
  /** Medians of the runs: requests/s and server CPU µs per request. */
  ceilingRps: number;
  chatRps: number;
  strictRps: number;
  ceilingCpu: number;
  chatCpu: number;
  strictCpu: number;
  /** The judged ratio: ceiling CPU per request / chat CPU per request. */
  ratio: number;
  /** chat / ceiling requests/s */
  rpsRatio: number;
  /** ceiling CPU per request / chat-strict CPU per request */
  strictRatio: number;
  /** chat CPU per request / chat-strict CPU per request */
  strictVsNormal: number;
}

/** A POST target for wrk: URL and headers. */
export interface PostTarget {
  url: string;
  headers: Record<string, string>;
}

/** The ceiling's POST /messages. */
export const ceilingTarget = (server: Started): PostTarget => ({ url: `${server.base}/messages`, headers: { 'content-type': 'application/json' } });

/** A signed-in owner's first channel on a chat server. */
export async function chatTarget(server: Started): Promise<PostTarget> {
  const { cookie, messagesUrl } = await ownerWithChannel(server.base, `poster_${process.pid}`);
  return { url: server.base + messagesUrl, headers: { 'content-type': 'application/json', cookie } };
}

/** One wrk run of the post against `server`, with the server's CPU time over it. */
export async function postRun(server: Started, target: PostTarget, seconds: number): Promise<RunResult> {
  const before = cpuMicros(server.pid);
  const result = await wrk({ ...target, method: 'POST', body: BODY, connections: CONNECTIONS, threads: THREADS, seconds });
  return { ...result, cpuPerRequest: (cpuMicros(server.pid) - before) / result.requests };
}

export async function measureThroughput(): Promise<ThroughputFigures> {
  const ceilingServer = await startProcess('ceiling', path.join(__dirname, 'ceiling.js'), { env: { DATA_DIR: tempDir('chat-bench-ceiling-') } });
  const chatServer = await startChat(tempDir('chat-bench-post-'));
  const strictServer = await startChat(tempDir('chat-bench-post-strict-'), { env: { DURABILITY: 'strict' } });
  try {
    const servers = { ceiling: ceilingServer, chat: chatServer, strict: strictServer };
    const targets = {
      ceiling: ceilingTarget(ceilingServer),
      chat: await chatTarget(chatServer),
      strict: await chatTarget(strictServer),
    };
    const run = (which: keyof typeof targets, seconds: number) => postRun(servers[which], targets[which], seconds);

    await run('ceiling', WARMUP_SECONDS);
    await run('chat', WARMUP_SECONDS);
    await run('strict', WARMUP_SECONDS);
    const ceiling: RunResult[] = [];
    const chat: RunResult[] = [];
    const strict: RunResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      ceiling.push(await run('ceiling', SECONDS));
      chat.push(await run('chat', SECONDS));
      strict.push(await run('strict', SECONDS));
    }
    const rps = (results: RunResult[]) => median(results.map((r) => r.rps));
    const cpu = (results: RunResult[]) => median(results.map((r) => r.cpuPerRequest));
    const f = {
      ceiling,
      chat,
      strict,
      ceilingRps: rps(ceiling),
      chatRps: rps(chat),
      strictRps: rps(strict),
      ceilingCpu: cpu(ceiling),
      chatCpu: cpu(chat),
      strictCpu: cpu(strict),
    };
    return {
      ...f,
      ratio: f.ceilingCpu / f.chatCpu,
      rpsRatio: f.chatRps / f.ceilingRps,
      strictRatio: f.ceilingCpu / f.strictCpu,
      strictVsNormal: f.chatCpu / f.strictCpu,
    };
  } finally {
    await strictServer.stop();
    await chatServer.stop();
    await ceilingServer.stop();
  }
}

export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;
export const micros = (value: number) => `${value.toFixed(0)} µs`;

export function throughputRows(f: ThroughputFigures): { ceiling: Row[]; post: Row[] } {
  const perRun = (name: string, results: RunResult[]): Row[] =>
    results.map((r, i) => [
      `${name} run ${i + 1}: req/s, CPU/request, p50 / p99`,
      `${r.rps.toFixed(0)}, ${micros(r.cpuPerRequest)}, ${ms(r.p50)} / ${ms(r.p99)}`,
      '',
      '',
    ]);
  return {
    ceiling: [
      ...perRun('ceiling', f.ceiling),
      ['ceiling req/s (median of runs)', f.ceilingRps.toFixed(0), '', ''],
      ['ceiling server CPU per request (median of runs)', micros(f.ceilingCpu), '', ''],
    ],
    post: [
      ...perRun('post', f.chat),
      ['post req/s (median of runs)', f.chatRps.toFixed(0), '', ''],
      ['post server CPU per request (median of runs)', micros(f.chatCpu), '', ''],
      ['post / ceiling req/s', percent(f.rpsRatio), '', ''],
      ['ceiling / post server CPU per request', f.ratio.toFixed(2), `>= ${TARGET_RATIO}`, verdict(f.ratio >= TARGET_RATIO)],
      ...perRun('post (DURABILITY=strict)', f.strict),
      ['post (DURABILITY=strict) req/s (median of runs)', f.strictRps.toFixed(0), '', ''],
      ['post (DURABILITY=strict) server CPU per request (median of runs)', micros(f.strictCpu), '', ''],
      ['ceiling / strict server CPU per request', f.strictRatio.toFixed(2), '', ''],
      ['post / strict server CPU per request', f.strictVsNormal.toFixed(2), '', ''],
    ],
  };
}

export const throughputSetup = `wrk, ${THREADS} thread, ${CONNECTIONS} connections, ${SECONDS} s per run, ${RUNS} runs each of ceiling, chat and chat with DURABILITY=strict, alternating; server CPU from /proc`;

runAlone(module, 'post-message', async () => {
  const figures = await measureThroughput();
  const rows = throughputRows(figures);
  printTable(`1. Ceiling: bare node:http + one prepared INSERT (${throughputSetup})`, rows.ceiling);
  printTable('2. Post a channel message (real server, session cookie; then the same with DURABILITY=strict)', rows.post);
});
