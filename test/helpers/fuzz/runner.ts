import crypto from 'node:crypto';
import fc from 'fast-check';
import { compile, match } from '../../../src/core/http/router';
import { VOICE_NOT_SET_UP } from '../../../src/parts/voice/voice';
import { checkAgainstContract } from '../contract';
import { allowanceFor } from './allow-list';
import { type Findings, normalizeMessage } from './findings';
import { type Operation, operations } from './openapi';
import { type Case, type Materialized, caseArb, materializeCase } from './requests';
import { NoAnswer, abortInFlight, send } from './wire';
import type { FixtureUser, UserRole, World } from './world';

/**
 * Runs the generated requests of one operation, as each of its callers, through fast-check,
 * and holds every answer to the rules: never a 5xx, always an answer the document describes,
 * a 4xx for input the document calls invalid, no 400 for input it calls valid (beyond the prose
 * allow-list). The first two stop the property (fast-check shrinks and reports the case); the
 * last two are collected, so one run lists them all.
 */
export interface FuzzConfig {
  seed: number;
  /** Generated requests in all, shared out over operations and callers. */
  runs: number;
  /** Generated socket cases per socket kind. */
  wsRuns: number;
  only?: RegExp;
  caller?: string;
  /** A fast-check path to replay (with FUZZ_ONLY and FUZZ_CALLER naming one property). */
  path?: string;
  timeoutMs: number;
  /** Print every request and its answer to stderr. */
  trace: boolean;
}

export function readConfig(env: NodeJS.ProcessEnv): FuzzConfig {
  const seed = env.FUZZ_SEED !== undefined && env.FUZZ_SEED !== '' ? Number(env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not ${env.FUZZ_SEED}`);
  const runs = env.FUZZ_RUNS ? Number(env.FUZZ_RUNS) : 8_000;
  const wsRuns = env.FUZZ_WS_RUNS ? Number(env.FUZZ_WS_RUNS) : Math.max(10, Math.round(runs / 130));
  return {
    seed,
    runs,
    wsRuns,
    only: env.FUZZ_ONLY ? new RegExp(env.FUZZ_ONLY) : undefined,
    caller: env.FUZZ_CALLER || undefined,
    path: env.FUZZ_PATH || undefined,
    timeoutMs: 15_000,
    trace: env.FUZZ_TRACE === '1',
  };
}

/** A property's own seed: the run's seed, the operation and the caller (so FUZZ_ONLY replays the same cases). */
export function deriveSeed(seed: number, ...parts: string[]): number {
  let h = 0x811c9dc5 ^ seed;
  for (const ch of parts.join('|')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

// ---------------------------------------------------------------------------------------------
// Who sends what

export interface CallerSpec {
  name: string;
  role?: UserRole;
  /** A throwaway account: one per operation, a new session per case, or a new account per case. */
  throwaway?: 'op' | 'session' | 'user';
}

const C = {
  owner: { name: 'owner', role: 'owner' },
  member: { name: 'member', role: 'member' },
  outsider: { name: 'outsider', role: 'outsider' },
  admin: { name: 'admin', role: 'admin' },
  anon: { name: 'anonymous' },
} satisfies Record<string, CallerSpec>;

/** Operations that verify a password (argon2, tens of ms each), start background work or read a whole server: fewer cases. */
const COSTLY = new Set([
  'POST /api/register',
  'POST /api/login',
  'PUT /api/account/password',
  'DELETE /api/account',
  'POST /api/account/export',
  'GET /api/servers/{server_id}/export',
  'POST /api/imports',
  'POST /api/imports/{import_id}/start',
  'POST /api/account/claims/discord-package',
  'POST /api/logout',
  'DELETE /api/account/2fa',
]);
/** Crashes of one operation's batch after which its remaining cases are skipped (each crash costs a restart). */
const MAX_CRASHES_PER_OPERATION = 3;
/** Operations that may end the caller's own session. */
const SESSION_ENDERS = new Set(['DELETE /api/account/sessions/{session_id}', 'DELETE /api/account/sessions', 'PUT /api/account/password']);
/**
 * Operations whose path id is all that can make them 404 (issue 45, 10): a 404 for a real id the
 * caller may not see must be, byte for byte, the 404 of an id of nothing. Each such answer is
 * sent again with a random id in its place and the two compared.
 */
const ORACLE_OPS = new Set(['PUT /api/account/notifications/{target_id}', 'DELETE /api/account/notifications/{target_id}']);
/** Operations that take multipart bodies: more cases, there is more to vary. */
const MULTIPART = (op: Operation) => Boolean(op.body?.content['multipart/form-data']);

export function callersFor(op: Operation): { spec: CallerSpec; weight: number }[] {
  switch (op.key) {
    case 'POST /api/logout':
      // Each case ends its session: a new one per case, of a throwaway account.
      return [
        { spec: { name: 'throwaway', throwaway: 'session' }, weight: 1 },
        { spec: C.anon, weight: 0.3 },
      ];
    case 'DELETE /api/account':
      // A case may delete the account: a new throwaway account per case. The fixture callers
      // never see their own password generated, so they are safe to send too.
      return [
        { spec: { name: 'throwaway', throwaway: 'user' }, weight: 1 },
        { spec: C.owner, weight: 0.4 },
        { spec: C.anon, weight: 0.2 },
      ];
    case 'PUT /api/account/password':
      return [
        { spec: { name: 'throwaway', throwaway: 'op' }, weight: 1 },
        { spec: C.owner, weight: 0.5 },
        { spec: C.anon, weight: 0.2 },
      ];
  }
  if (op.public)
    return [
      { spec: C.anon, weight: 1 },
      { spec: C.owner, weight: 0.4 },
    ];
  if (op.auth === 'admin')
    return [
      { spec: C.admin, weight: 1 },
      { spec: C.owner, weight: 0.3 },
      { spec: C.member, weight: 0.2 },
      { spec: C.anon, weight: 0.1 },
    ];
  return [
    { spec: C.owner, weight: 1 },
    { spec: C.member, weight: 1 },
    { spec: C.outsider, weight: 0.6 },
    { spec: C.anon, weight: 0.15 },
  ];
}

export interface Job {
  op: Operation;
  spec: CallerSpec;
  runs: number;
}

/** Shares `total` cases out over operations and callers by weight; every pair gets a few. */
export function plan(ops: Operation[], total: number): Job[] {
  const raw = ops.flatMap((op) => {
    const cost = COSTLY.has(op.key) ? 0.3 : MULTIPART(op) ? 2 : 1;
    return callersFor(op).map(({ spec, weight }) => ({ op, spec, w: weight * cost }));
  });
  const sum = raw.reduce((s, r) => s + r.w, 0);
  return raw.map(({ op, spec, w }) => ({ op, spec, runs: Math.max(spec.role || spec.throwaway ? 4 : 2, Math.round((total * w) / sum)) }));
}

// ---------------------------------------------------------------------------------------------
// Crashes of the in-process server

interface Tracked {
  op: Operation;
  spec: CallerSpec;
  c: Case;
  summary: string;
}

/**
 * The server runs in this process: an exception it throws outside any request (a parser
 * callback, a timer) is an uncaught exception here, and would end a real server process. The
 * guard records it with what was in flight, fails those requests at once, and has the world
 * start a new server, so the run goes on and reports every crash.
 */
export class CrashGuard {
  readonly events: { error: string; inFlight: Tracked[]; recent: Tracked[] }[] = [];
  private readonly inFlight = new Map<number, Tracked>();
  private recent: Tracked[] = [];
  private next = 0;
  private readonly handler = (err: unknown) => this.crash(err);

  constructor(private readonly world: World) {}

  install(): void {
    process.on('uncaughtException', this.handler);
    process.on('unhandledRejection', this.handler);
  }

  uninstall(): void {
    process.off('uncaughtException', this.handler);
    process.off('unhandledRejection', this.handler);
  }

  track(t: Tracked): number {
    const id = ++this.next;
    this.inFlight.set(id, t);
    return id;
  }

  untrack(id: number): void {
    const t = this.inFlight.get(id);
    if (!t) return;
    this.inFlight.delete(id);
    this.recent = [...this.recent.slice(-4), t];
  }

  private crash(err: unknown): void {
    const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    this.events.push({ error, inFlight: [...this.inFlight.values()], recent: this.recent });
    this.world.crashed = true;
    abortInFlight(`the server process crashed: ${error.split('\n')[0]}`);
  }
}

// ---------------------------------------------------------------------------------------------

export interface OpStats {
  op: string;
  cases: number;
  ms: number;
  statuses: Record<number, number>;
  verdicts: { valid: number; invalid: number; unknown: number };
  allowed: number;
  /** Answers the contract check could hold against this operation (it skips paths it cannot route). */
  checked: number;
  /** Crashes recorded before this batch; cases skipped after it crashed the server too often. */
  crashesBefore: number;
  skipped: number;
}

/** The document's routes, read as test/helpers/contract.ts reads them. */
const contractTable = compile(operations.map((op) => ({ method: op.method, path: op.route.replace(/\{([a-z_]+)\}/g, ':$1'), route: op.route })));

function contractSees(op: Operation, contractPath: string): boolean {
  try {
    const found = match(contractTable, op.method, new URL(contractPath, 'http://x').pathname);
    return found !== null && 'route' in found && found.route.route === op.route;
  } catch {
    return false; // a malformed id: the router's own 400
  }
}

const preview = (body: Buffer | undefined) => {
  if (!body || body.length === 0) return '';
  const limit = 2000;
  const text = body.subarray(0, limit).toString('utf8');
  return `${JSON.stringify(text)}${body.length > limit ? `…(${body.length} bytes)` : ''}`;
};

export function summarize(m: Materialized): string {
  const ct = m.wire.headers['content-type'];
  const extra = Object.entries(m.wire.headers)
    .filter(([k]) => k !== 'cookie' && k !== 'content-type')
    .map(([k, v]) => `${k}: ${v.slice(0, 60)}`);
  const target = m.wire.target.length > 300 ? `${m.wire.target.slice(0, 300)}…` : m.wire.target;
  return [
    `${m.wire.method} ${target}${m.wire.upgrade ? ' (upgrade)' : ''}`,
    ct !== undefined ? `[${ct.slice(0, 120)}]` : '',
    extra.length ? `{${extra.join('; ')}}` : '',
    preview(m.wire.body),
  ]
    .filter(Boolean)
    .join(' ');
}

async function userFor(world: World, spec: CallerSpec, state: { user?: FixtureUser; generation?: number }): Promise<FixtureUser | undefined> {
  if (state.generation !== world.generation) state.user = undefined;
  state.generation = world.generation;
  if (spec.role) return world.users[spec.role];
  switch (spec.throwaway) {
    case 'op':
      return (state.user ??= await world.throwaway());
    case 'session':
      state.user ??= await world.throwaway();
      return world.freshSession(state.user);
    case 'user':
      return world.throwaway();
    default:
      return undefined;
  }
}

export interface RunContext {
  world: World;
  guard: CrashGuard;
  findings: Findings;
  cfg: FuzzConfig;
}

/** One case: send it, then hold the answer to the rules. Returns a reason to stop (a hard failure). */
async function runCase(
  rc: RunContext,
  op: Operation,
  spec: CallerSpec,
  c: Case,
  state: { user?: FixtureUser; generation?: number },
  stats: OpStats,
  replay: string | undefined,
): Promise<string | undefined> {
  const { world, guard, findings, cfg } = rc;
  // An operation that keeps crashing the server is reported; the rest of its cases would only restart it.
  if (guard.events.length - stats.crashesBefore >= MAX_CRASHES_PER_OPERATION) {
    stats.skipped++;
    return undefined;
  }
  await world.recover();
  const generation = world.generation;
  const user = await userFor(world, spec, state);
  const m = materializeCase(op, c, world.contextFor(user), user?.cookie);
  const summary = summarize(m);
  const id = guard.track({ op, spec, c, summary });
  stats.cases++;
  stats.verdicts[m.verdict.kind]++;
  let answer;
  try {
    answer = await send(world.url, m.wire, cfg.timeoutMs);
  } catch (err) {
    if (world.crashed || generation !== world.generation) return undefined; // the guard has it
    // A body the server refused early (413) may cut the connection before the answer is read.
    if (err instanceof NoAnswer && (m.wire.body?.length ?? 0) > 64 * 1024 && /connection failed/.test(err.message)) return undefined;
    return `no answer (${(err as Error).message})\n  request: ${summary}`;
  } finally {
    guard.untrack(id);
  }
  stats.statuses[answer.status] = (stats.statuses[answer.status] ?? 0) + 1;
  if (cfg.trace)
    process.stderr.write(`# ${spec.name} ${m.verdict.kind} -> ${answer.status} ${answer.text.slice(0, 80).replace(/\s+/g, ' ')} :: ${summary.slice(0, 300)}\n`);
  if (op.method !== 'GET' && answer.status < 400) world.dirty = true;
  // A fixture caller that may just have ended its own session gets a new one for the next case.
  if (spec.role && user && SESSION_ENDERS.has(op.key) && answer.status < 300) await world.reviveSession(user);
  // The one 5xx by design: voice without JANUS_URL (the fuzzer's server has none) says so with 503.
  const voiceOff = answer.status === 503 && answer.text.trim() === VOICE_NOT_SET_UP;
  if (answer.status >= 500 && !voiceOff) return `${answer.status} ${answer.text.slice(0, 300)}\n  request: ${summary}`;
  if (contractSees(op, m.contractPath)) stats.checked++;
  try {
    checkAgainstContract(op.method, m.contractPath, answer.status, answer.contentType, answer.text);
  } catch (err) {
    return `${(err as Error).message}\n  request: ${summary}`;
  }
  if (answer.status === 404 && ORACLE_OPS.has(op.key)) await compareWithNothing(rc, op, spec, m, answer, summary, replay);
  const v = m.verdict;
  const refusal = await formRefusal(world, op, m, answer, cfg.timeoutMs);
  const status = refusal?.status ?? answer.status;
  const said = refusal ? `form refused: 303 to ${answer.headers.location} (the same fields as JSON: ${refusal.status})` : answer.text;
  if (v.kind === 'valid' && (status === 400 || status === 415)) {
    if (allowanceFor(op.key, status, refusal ? refusal.code : answer.text)) stats.allowed++;
    else
      findings.add('valid-refused', op.key, status, normalizeMessage(said), {
        detail: `the document accepts this input; the server said ${JSON.stringify(said.slice(0, 200))}`,
        example: summary,
        caller: spec.name,
        replay,
      });
  }
  if (v.kind === 'invalid' && (status < 400 || status >= 500)) {
    findings.add('invalid-accepted', op.key, answer.status, normalizeMessage(v.reasons[0]), {
      detail: `the document rejects this input (${v.reasons.slice(0, 3).join('; ')}); the server answered ${answer.status} ${answer.text.slice(0, 120)}`,
      example: summary,
      caller: spec.name,
      replay,
    });
  }
  return undefined;
}

/** The same request with its path id (a UUID) replaced by a random one: its 404 must be the same. */
async function compareWithNothing(
  rc: RunContext,
  op: Operation,
  spec: CallerSpec,
  m: Materialized,
  answer: { status: number; text: string },
  summary: string,
  replay: string | undefined,
) {
  const [path, query] = m.wire.target.split('?');
  const id = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i.exec(path)?.[0];
  if (!id) return;
  const target = path.replace(id, crypto.randomUUID()) + (query === undefined ? '' : `?${query}`);
  const nothing = await send(rc.world.url, { ...m.wire, target }, rc.cfg.timeoutMs).catch(() => undefined);
  if (!nothing || (nothing.status === answer.status && nothing.text === answer.text)) return;
  rc.findings.add('oracle', op.key, answer.status, normalizeMessage(answer.text), {
    detail: `an id of nothing answers ${nothing.status} ${JSON.stringify(nothing.text.slice(0, 120))}; this one ${answer.status} ${JSON.stringify(answer.text.slice(0, 120))}`,
    example: summary,
    caller: spec.name,
    replay,
  });
}

/**
 * The document's 303 of a browser form: "/?error=<code>" is how register, login and logout
 * refuse a form post (docs/openapi.json, their 303 responses), without saying which status
 * each code stands for. The same fields are sent again as JSON (the operation takes both, with
 * one schema): the JSON answer's status is the refusal's status.
 */
async function formRefusal(
  world: World,
  op: Operation,
  m: Materialized,
  answer: { status: number; headers: Record<string, unknown> },
  timeoutMs: number,
): Promise<{ status: number; code: string } | undefined> {
  if (answer.status !== 303 || !op.responses.includes('303')) return undefined;
  if (
    !String(m.wire.headers['content-type'] ?? '')
      .toLowerCase()
      .startsWith('application/x-www-form-urlencoded')
  )
    return undefined;
  const code = /[?&]error=([^&#]+)/.exec(String(answer.headers.location ?? ''))?.[1];
  if (!code) return undefined;
  if (!op.body?.content['application/json']) return { status: 400, code };
  const fields = Object.fromEntries(new URLSearchParams((m.wire.body ?? Buffer.alloc(0)).toString('utf8')));
  const replay = await send(
    world.url,
    { ...m.wire, headers: { ...m.wire.headers, 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(fields)) },
    timeoutMs,
  ).catch(() => undefined);
  return { status: replay?.status ?? 400, code };
}

/** Every caller of one operation at once (a few requests in flight), then the checks between batches. */
export async function fuzzOperation(rc: RunContext, op: Operation, jobs: Job[]): Promise<OpStats> {
  const { world, guard, findings, cfg } = rc;
  const crashesBefore = guard.events.length;
  const stats: OpStats = {
    op: op.key,
    cases: 0,
    ms: 0,
    statuses: {},
    verdicts: { valid: 0, invalid: 0, unknown: 0 },
    allowed: 0,
    checked: 0,
    crashesBefore,
    skipped: 0,
  };
  const started = performance.now();
  await world.ensureScene();
  const arb = caseArb(op);
  await Promise.all(
    jobs.map(async (job) => {
      const state: { user?: FixtureUser; generation?: number } = {};
      const seed = deriveSeed(cfg.seed, op.key, job.spec.name);
      const replayOf = (path: string) =>
        `FUZZ_SEED=${cfg.seed} FUZZ_RUNS=${cfg.runs} FUZZ_ONLY='^${escapeRegex(op.key)}$' FUZZ_CALLER=${job.spec.name} FUZZ_PATH=${path}`;
      // fast-check's path starts with the run's index: a case of the first pass is replayed by it
      // alone (once a case fails, fast-check shrinks and the count no longer says which).
      let index = cfg.path ? Number(cfg.path.split(':')[0]) - 1 : -1;
      let failing = false;
      const property = fc.asyncProperty(arb, async (c) => {
        index++;
        const stop = await runCase(rc, op, job.spec, c, state, stats, failing ? undefined : replayOf(String(index)));
        if (stop) {
          failing = true;
          throw new Error(stop);
        }
      });
      // With FUZZ_PATH, that one case (and its shrinking) only.
      const numRuns = cfg.path ? 1 : job.runs;
      const details = await fc.check(property, { seed, numRuns, path: cfg.path, endOnFailure: false, includeErrorInReport: true });
      if (details.failed) {
        const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance ?? 'interrupted');
        const status = /^(\d{3}) /.exec(error)?.[1] ?? /answered (\d{3})/.exec(error)?.[1];
        const replay = `${replayOf(details.counterexamplePath ?? '')} (fast-check seed ${seed}, path ${details.counterexamplePath})`;
        findings.add('hard', op.key, status ? Number(status) : null, normalizeMessage(error.replace(/^contract: /, '')), {
          detail: error,
          example: `${fc.stringify(details.counterexample?.[0]).slice(0, 1500)}\n   shrunk after ${details.numShrinks} shrinks, ${details.numRuns} runs`,
          caller: job.spec.name,
          replay,
        });
      }
    }),
  );
  // Crashes during the batch: each request that was in flight is sent again alone, to find the one.
  for (const event of guard.events.slice(crashesBefore)) {
    const suspects = [...event.inFlight, ...event.recent.filter((r) => !event.inFlight.includes(r))];
    let culprit: Tracked | undefined;
    for (const suspect of suspects) {
      await world.recover();
      const before = guard.events.length;
      const user = suspect.spec.role ? world.users[suspect.spec.role] : undefined;
      const m = materializeCase(suspect.op, suspect.c, world.contextFor(user), user?.cookie);
      await send(world.url, m.wire, cfg.timeoutMs).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (guard.events.length > before) {
        guard.events.splice(before);
        culprit = suspect;
        break;
      }
    }
    await world.recover();
    findings.add('crash', culprit?.op.key ?? op.key, null, normalizeMessage(event.error.split('\n')[0]), {
      detail: event.error.split('\n').slice(0, 8).join('\n      '),
      example: culprit
        ? `${culprit.summary}\n   case: ${fc.stringify(culprit.c).slice(0, 1500)}`
        : `not reproduced alone; in flight: ${suspects.map((s) => s.summary).join(' || ') || 'nothing'}`,
      caller: culprit?.spec.name ?? '?',
      replay: `FUZZ_SEED=${cfg.seed} FUZZ_ONLY='^${escapeRegex(culprit?.op.key ?? op.key)}$'${culprit ? ` FUZZ_CALLER=${culprit.spec.name}` : ''}`,
    });
  }
  // The process still answers.
  const health = await send(world.url, { method: 'GET', target: '/healthz', headers: {}, upgrade: false }, 5_000).catch((err: Error) => ({
    status: 0,
    text: err.message,
  }));
  if (health.status !== 200) {
    findings.add('health', op.key, health.status, `GET /healthz answered ${health.status || 'nothing'} after the batch`, {
      detail: health.text.slice(0, 200),
      example: '',
      caller: '-',
    });
    world.crashed = true;
    await world.recover();
  }
  stats.ms = performance.now() - started;
  return stats;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
