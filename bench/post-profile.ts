/**
 * What a post costs beyond the ceiling (issue 32): the chat server and the ceiling
 * (bench/ceiling.ts) each run under node --cpu-prof with the same wrk POST load as
 * bench/post-message.ts, then their profiles are summed by function and by area (HTTP, our
 * pipeline, sessions, permissions, SQLite, JSON, logging, the hub, GC...), in microseconds of the
 * main thread per request. Only the samples inside the measured wrk run count (not start-up or
 * warm-up): V8 stamps samples with the monotonic clock that process.hrtime reads here. Beside
 * them, each server's whole CPU per request from /proc (every thread: GC helpers, libuv, the
 * kernel's side of the sockets), as post-message.ts judges it.
 *
 * Run alone: node dist-bench/bench/post-profile.js   (BENCH_SECONDS: the measured run, 15 s;
 * PROFILE_DIR keeps the .cpuprofile files there for Chrome's DevTools or speedscope)
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Started, cpuMicros, runAlone, startChat, startProcess, tempDir, wrk } from './lib';
import { BODY, CONNECTIONS, type PostTarget, THREADS, ceilingTarget, chatTarget } from './post-message';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const WARMUP_SECONDS = 3;
/** V8's default sampling interval is 1 ms; a quarter of that resolves the small functions. */
const SAMPLE_INTERVAL_US = 250;
/** Functions listed per server. */
const TOP = 30;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Cost {
  name: string;
  area: string;
  /** Main-thread microseconds per request. */
  us: number;
}

export interface ProfileFigures {
  requests: number;
  rps: number;
  /** /proc: every thread, per request. */
  cpuPerRequest: number;
  /** Main-thread time the profile saw busy (everything but idle), per request. */
  busyPerRequest: number;
  functions: Cost[];
  areas: Map<string, number>;
}

/**
 * The area a function's self time belongs to, by its file (relative to dist/ for ours) and name.
 * First match wins; the order puts the specific before the general.
 */
const AREAS: [area: string, test: (file: string, name: string) => boolean][] = [
  ['GC', (_f, n) => n === '(garbage collector)'],
  ['V8/native, unattributed', (_f, n) => n === '(program)'],
  ['HTTP: parse request (llhttp, headers, IncomingMessage)', (f, n) => /^node:(_http_common|_http_incoming)$/.test(f) || (f === '' && n === 'execute')],
  ['HTTP: server (node:_http_server)', (f) => f === 'node:_http_server'],
  ['HTTP: write response (node:_http_outgoing)', (f) => f === 'node:_http_outgoing'],
  [
    'sockets, streams, events, timers (node:net, streams)',
    (f, n) =>
      /^node:(net|stream|events|timers|internal\/(streams|timers|stream_base_commons|net|async_hooks|process\/task_queues|event_target|fixed_queue|buffer|util|validators|errors))/.test(
        f,
      ) ||
      (f === '' && /^(writev|writeUtf8String|writeBuffer|writeLatin1String|setStreamTimeout|readStop|readStart|close)$/.test(n)),
  ],
  [
    'SQLite (better-sqlite3, statements, commit)',
    (f, n) => f.includes('better-sqlite3') || f === 'core/group-commit.js' || (f === '' && /^(run|get|all|iterate|exec|pragma|transaction|prepare)$/.test(n)),
  ],
  ['our pipeline, router, respond', (f) => /^core\/http\/(pipeline|router|respond|client|errors|encoding)\.js$/.test(f) || f === 'core/callbacks.js'],
  ['request body (read, JSON.parse)', (f, n) => f === 'core/http/body.js' || (f === '' && n === 'parse') || f === 'node:string_decoder'],
  ['session and auth', (f) => /^parts\/accounts\//.test(f)],
  ['permissions, standing, rate limits', (f) => /^rules\//.test(f) || f === 'core/ratelimit.js' || /^parts\/community\//.test(f)],
  ['validation', (f) => f === 'core/validate.js'],
  ['messages: route, store, mentions, tails', (f) => f === 'api/messages.js' || /^parts\/messages\//.test(f)],
  ['JSON serialisation, records', (f, n) => f === 'core/message-record.js' || (f === '' && n === 'stringify')],
  ['hub and broadcast', (f) => /^parts\/(live|cluster)\//.test(f)],
  ['logging', (f) => f === 'core/log.js'],
  ['metrics', (f) => f === 'core/metrics.js'],
  [
    'ids, time (crypto.randomUUID, Date)',
    (f, n) => f === 'node:crypto' || f.startsWith('node:internal/crypto') || (f === '' && /^(toISOString|now)$/.test(n)) || f === 'core/clock.js',
  ],
  ['the ceiling itself (bench/ceiling.js)', (f) => f.endsWith('bench/ceiling.js')],
];

/** A profile's file URL as the tables show it: node:..., a path under dist/, or a package. */
function shortFile(url: string): string {
  if (url === '' || url.startsWith('node:')) return url;
  const dist = url.indexOf('/dist/');
  if (dist !== -1 && !url.includes('/node_modules/')) return url.slice(dist + '/dist/'.length);
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) return url.slice(modules + '/node_modules/'.length);
  const bench = url.indexOf('/dist-bench/');
  return bench === -1 ? url : url.slice(bench + '/dist-'.length);
}

export function areaOf(file: string, name: string): string {
  for (const [area, test] of AREAS) if (test(file, name)) return area;
  return file.startsWith('node:') ? 'Node internals, other' : 'other';
}

/** Self time per function within [fromUs, toUs] (the monotonic clock, microseconds), per request. */
export function summarise(
  profile: CpuProfile,
  fromUs: number,
  toUs: number,
  requests: number,
): { functions: Cost[]; busy: number; areas: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i];
    if (t < fromUs || t > toUs) return;
    // The time since the previous sample goes to the function this sample found running.
    selfUs.set(id, (selfUs.get(id) ?? 0) + profile.timeDeltas[i]);
  });
  const functions = new Map<string, Cost>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    const file = shortFile(url);
    // A regex is named by its source (the router's run to 200 characters): cut to stay readable.
    const fullName = `${functionName || '(anonymous)'}${file ? ` ${file}:${lineNumber + 1}` : ''}`;
    const name = fullName.length > 72 ? `${fullName.slice(0, 69)}...` : fullName;
    const cost = functions.get(name) ?? { name, area: areaOf(file, functionName), us: 0 };
    cost.us += us / requests;
    functions.set(name, cost);
  }
  const areas = new Map<string, number>();
  for (const cost of functions.values()) areas.set(cost.area, (areas.get(cost.area) ?? 0) + cost.us);
  return { functions: [...functions.values()].sort((a, b) => b.us - a.us), busy: busy / requests, areas };
}

/** Starts a server under --cpu-prof, loads it, stops it, and summarises its profile of the measured run. */
async function profile(
  name: string,
  start: (nodeArgs: string[]) => Promise<Started>,
  target: (server: Started) => Promise<PostTarget>,
  dir: string,
): Promise<ProfileFigures> {
  const profileDir = path.join(dir, name);
  const server = await start(['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${SAMPLE_INTERVAL_US}`]);
  let measured;
  try {
    const post = await target(server);
    const load = (seconds: number) => wrk({ ...post, method: 'POST', body: BODY, connections: CONNECTIONS, threads: THREADS, seconds });
    await load(WARMUP_SECONDS);
    const cpuBefore = cpuMicros(server.pid);
    const from = Number(process.hrtime.bigint() / 1000n);
    const result = await load(SECONDS);
    const to = Number(process.hrtime.bigint() / 1000n);
    measured = { result, from, to, cpu: cpuMicros(server.pid) - cpuBefore };
  } finally {
    // SIGTERM: both servers exit cleanly, which is when Node writes the profile.
    await server.stop();
  }
  const files = fs.readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`${name}: expected one profile in ${profileDir}, found ${files.length}`);
  const cpuProfile = JSON.parse(fs.readFileSync(path.join(profileDir, files[0]), 'utf8')) as CpuProfile;
  const { result, from, to, cpu } = measured;
  const { functions, busy, areas } = summarise(cpuProfile, from, to, result.requests);
  return { requests: result.requests, rps: result.rps, cpuPerRequest: cpu / result.requests, busyPerRequest: busy, functions, areas };
}

export async function measureProfiles(dir: string): Promise<{ ceiling: ProfileFigures; chat: ProfileFigures }> {
  const ceiling = await profile(
    'ceiling',
    (nodeArgs) => startProcess('ceiling', path.join(__dirname, 'ceiling.js'), { nodeArgs, env: { DATA_DIR: tempDir('chat-bench-ceiling-') } }),
    async (server) => ceilingTarget(server),
    dir,
  );
  const chat = await profile('chat', (nodeArgs) => startChat(tempDir('chat-bench-post-'), { nodeArgs }), chatTarget, dir);
  return { ceiling, chat };
}

const pad = (rows: string[][]) => {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
};
const us1 = (value: number) => value.toFixed(1);

runAlone(module, 'post-profile', async () => {
  const dir = process.env.PROFILE_DIR ? path.resolve(process.env.PROFILE_DIR) : tempDir('chat-bench-profile-');
  const { ceiling, chat } = await measureProfiles(dir);
  console.log(
    `\n## Post profile: wrk, ${THREADS} thread, ${CONNECTIONS} connections, ${SECONDS} s measured after ${WARMUP_SECONDS} s warm-up; samples every ${SAMPLE_INTERVAL_US} µs`,
  );
  console.log(
    pad([
      ['', 'ceiling', 'chat'],
      ['req/s (under the profiler)', ceiling.rps.toFixed(0), chat.rps.toFixed(0)],
      ['server CPU per request, /proc (µs)', us1(ceiling.cpuPerRequest), us1(chat.cpuPerRequest)],
      ['main thread busy per request, profile (µs)', us1(ceiling.busyPerRequest), us1(chat.busyPerRequest)],
    ]),
  );
  const areaNames = [...new Set([...chat.areas.keys(), ...ceiling.areas.keys()])].sort((a, b) => (chat.areas.get(b) ?? 0) - (chat.areas.get(a) ?? 0));
  console.log('\n## Self time by area, main-thread µs per request');
  console.log(
    pad([
      ['area', 'ceiling', 'chat', 'chat - ceiling'],
      ...areaNames.map((a) => [a, us1(ceiling.areas.get(a) ?? 0), us1(chat.areas.get(a) ?? 0), us1((chat.areas.get(a) ?? 0) - (ceiling.areas.get(a) ?? 0))]),
      ['total', us1(ceiling.busyPerRequest), us1(chat.busyPerRequest), us1(chat.busyPerRequest - ceiling.busyPerRequest)],
    ]),
  );
  for (const [name, figures] of [
    ['chat', chat],
    ['ceiling', ceiling],
  ] as const) {
    console.log(`\n## ${name}: top ${TOP} functions by self time, main-thread µs per request`);
    console.log(pad([['function', 'area', 'µs'], ...figures.functions.slice(0, TOP).map((c) => [c.name, c.area, us1(c.us)])]));
  }
  if (process.env.PROFILE_DIR) console.log(`\nprofiles kept in ${dir}`);
});
