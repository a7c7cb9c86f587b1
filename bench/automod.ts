/**
 * AutoMod's cost on a post (issue 53): a member posts the same chat line (post-message.ts's
 * BODY) on two chat servers, one with no AutoMod rule (today's post: the rules are asked, there
 * are none) and one whose server has a keyword rule of 1 000 keywords (the most one rule holds:
 * whole words, prefixes, suffixes and anywhere-in-a-word ones, none in the line, so the whole
 * line is read and the message is written). Runs alternate plain, automod, plain... with wrk,
 * and the judge is server CPU per request (/proc), as in post-message.ts.
 *
 * Target: automod CPU per request - plain CPU per request <= 20 µs (medians of the runs); the
 * ratio plain / automod is reported too. For scale, the automaton alone is timed in this process:
 * the line matched against the 1 000 keywords, per message.
 *
 * Run alone: node dist-bench/bench/automod.js   (BENCH_SECONDS and BENCH_RUNS shorten it)
 */
import { compileKeywords } from '../src/rules/keyword-matcher';
import {
  type Row,
  type Started,
  call,
  cpuMicros,
  login,
  median,
  ownerWithChannel,
  printTable,
  register,
  runAlone,
  startChat,
  tempDir,
  verdict,
  wrk,
} from './lib';
import { BODY, CONNECTIONS, THREADS, micros } from './post-message';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WARMUP_SECONDS = 3;
export const TARGET_EXTRA_MICROS = 20;
export const KEYWORDS = 1000;

/** 1 000 made-up keywords of 5 to 12 letters (seeded: every run the same), a quarter of each kind. */
export function benchKeywords(): string[] {
  let seed = 53;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  const word = () => Array.from({ length: 5 + (next() % 8) }, () => String.fromCharCode(97 + (next() % 26))).join('');
  return Array.from({ length: KEYWORDS }, (_, i) => {
    const w = word();
    return i % 4 === 0 ? w : i % 4 === 1 ? `${w}*` : i % 4 === 2 ? `*${w}` : `*${w}*`;
  });
}

/** A member (not exempt: not the owner, no manage_server) of a fresh server; with the rule when `rule`. */
async function memberTarget(server: Started, rule: boolean): Promise<{ url: string; headers: Record<string, string> }> {
  const owner = await ownerWithChannel(server.base, `owner_${process.pid}`);
  if (rule) {
    const body = { name: 'words', trigger: { type: 'keyword', keyword_filter: benchKeywords() }, actions: [{ type: 'block_message' }] };
    await call(server.base, 'POST', `/api/servers/${owner.serverId}/automod/rules`, body, owner.cookie);
  }
  const invite = (await call(server.base, 'POST', `/api/servers/${owner.serverId}/invites`, {}, owner.cookie)).body;
  const name = `member_${process.pid}`;
  await register(server.base, name);
  const cookie = await login(server.base, name);
  await call(server.base, 'POST', `/api/invites/${invite.token}/accept`, undefined, cookie);
  return { url: server.base + owner.messagesUrl, headers: { 'content-type': 'application/json', cookie } };
}

export interface AutomodFigures {
  plainCpu: number[];
  automodCpu: number[];
  plain: number;
  automod: number;
  extra: number;
  /** The automaton alone: one message against 1 000 keywords, in µs (this process). */
  matchMicros: number;
}

export async function measureAutomod(): Promise<AutomodFigures> {
  const matcher = compileKeywords(benchKeywords());
  const text = (JSON.parse(BODY) as { content: string }).content;
  if (matcher.find(text) !== null) throw new Error('the bench line must match no keyword');
  for (let i = 0; i < 20_000; i++) matcher.find(text);
  const rounds = 200_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < rounds; i++) matcher.find(text);
  const matchMicros = Number(process.hrtime.bigint() - started) / 1000 / rounds;

  const plainServer = await startChat(tempDir('chat-bench-automod-plain-'));
  const ruledServer = await startChat(tempDir('chat-bench-automod-rule-'));
  try {
    const servers = { plain: plainServer, automod: ruledServer };
    const targets = { plain: await memberTarget(plainServer, false), automod: await memberTarget(ruledServer, true) };
    const run = async (which: 'plain' | 'automod', seconds: number) => {
      const before = cpuMicros(servers[which].pid);
      const result = await wrk({ ...targets[which], method: 'POST', body: BODY, connections: CONNECTIONS, threads: THREADS, seconds });
      return (cpuMicros(servers[which].pid) - before) / result.requests;
    };
    await run('plain', WARMUP_SECONDS);
    await run('automod', WARMUP_SECONDS);
    const plainCpu: number[] = [];
    const automodCpu: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      plainCpu.push(await run('plain', SECONDS));
      automodCpu.push(await run('automod', SECONDS));
    }
    const plain = median(plainCpu);
    const automod = median(automodCpu);
    return { plainCpu, automodCpu, plain, automod, extra: automod - plain, matchMicros };
  } finally {
    await ruledServer.stop();
    await plainServer.stop();
  }
}

export function automodRows(f: AutomodFigures): Row[] {
  return [
    ['post, no rule: server CPU per request (runs)', f.plainCpu.map(micros).join(', '), '', ''],
    [`post, a rule of ${KEYWORDS} keywords: server CPU per request (runs)`, f.automodCpu.map(micros).join(', '), '', ''],
    ['no rule / rule server CPU per request (medians)', (f.plain / f.automod).toFixed(3), '', ''],
    [
      `extra server CPU per post for ${KEYWORDS} keywords (medians)`,
      `${f.extra.toFixed(1)} µs`,
      `<= ${TARGET_EXTRA_MICROS} µs`,
      verdict(f.extra <= TARGET_EXTRA_MICROS),
    ],
    [`the automaton alone: one line against ${KEYWORDS} keywords`, `${f.matchMicros.toFixed(2)} µs`, '', ''],
  ];
}

export const automodSetup = `wrk, ${THREADS} thread, ${CONNECTIONS} connections, ${SECONDS} s per run, ${RUNS} runs each, alternating; server CPU from /proc`;

runAlone(module, 'automod', async () => {
  printTable(`AutoMod: a member's post with and without a keyword rule of ${KEYWORDS} keywords (${automodSetup})`, automodRows(await measureAutomod()));
});
