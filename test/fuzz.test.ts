// A property-based fuzzer driven by docs/openapi.json: every operation, as the owner, a member,
// an outsider and an anonymous caller (an administrator for /api/admin), over a scene of real
// fixtures, with generated valid and invalid path parameters, queries, JSON, form and multipart
// bodies; then junk frames on the user stream and the room sockets. A 404 of an operation whose
// path id is all that can refuse it is held against the 404 of a random id (an existence oracle).
//
//   FUZZ_SEED=N        replay a run (the seed is printed first: "# fuzz seed: N")
//   FUZZ_RUNS=N        generated requests in all (default 8000: about 50 s alone, 70 s beside another test
//                      file on two cores); 25000 takes about 90 s alone
//   FUZZ_WS_RUNS=N     junk cases per socket kind (default FUZZ_RUNS / 130)
//   FUZZ_ONLY=regex    only the operations whose "METHOD /path" matches; the sockets are "socket /api/ws",
//                      "socket /api/channels/{channel_id}/ws", "socket /api/conversations/{conversation_id}/ws"
//   FUZZ_CALLER=name   only this caller (owner, member, outsider, anonymous, admin, throwaway)
//   FUZZ_PATH=path     with FUZZ_ONLY and FUZZ_CALLER naming one property: replay fast-check's counterexample
//   FUZZ_TRACE=1       print every request and its answer (to stderr)
//
// Findings are also written to a file in the temporary directory (its name is printed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { PROSE_ALLOW_LIST, allowanceUse } from './helpers/fuzz/allow-list';
import { materialize, placeholderContext } from './helpers/fuzz/deferred';
import { type FindingKind, Findings } from './helpers/fuzz/findings';
import { type JsonSchema, operations, resolvePointer, schemaErrors } from './helpers/fuzz/openapi';
import { CrashGuard, type Job, type OpStats, deriveSeed, fuzzOperation, plan, readConfig } from './helpers/fuzz/runner';
import { invalidArb, validArb } from './helpers/fuzz/schema';
import { closeAgent } from './helpers/fuzz/wire';
import { type Target, frameArb, junkCase } from './helpers/fuzz/ws-junk';
import { World } from './helpers/fuzz/world';

const cfg = readConfig(process.env);
t.comment(`fuzz seed: ${cfg.seed}`);
process.stderr.write(`# fuzz seed: ${cfg.seed} (FUZZ_RUNS=${cfg.runs}, FUZZ_WS_RUNS=${cfg.wsRuns})\n`);
// A long run (FUZZ_RUNS) gets the time it needs.
t.setTimeout(Math.max(300_000, cfg.runs * 40));

interface RunResult {
  findings: Findings;
  stats: OpStats[];
  jobs: Job[];
  socketCases: Record<string, number>;
  socketOutcomes: Record<string, Record<string, number>>;
  ms: number;
  scenes: number;
  sceneMs: number;
  restarts: number;
}

async function fuzz(): Promise<RunResult> {
  const started = performance.now();
  const world = await World.create();
  const guard = new CrashGuard(world);
  guard.install();
  const findings = new Findings();
  const rc = { world, guard, findings, cfg };
  const stats: OpStats[] = [];
  const socketCases: Record<string, number> = {};
  const socketOutcomes: Record<string, Record<string, number>> = {};
  const ops = operations.filter((op) => !cfg.only || cfg.only.test(op.key));
  // Planned over every operation, then selected: FUZZ_ONLY replays the very cases of the full run.
  const jobs = plan(operations, cfg.runs).filter((j) => ops.includes(j.op) && (!cfg.caller || j.spec.name === cfg.caller));
  try {
    for (const op of ops) {
      const mine = jobs.filter((j) => j.op === op);
      if (mine.length) stats.push(await fuzzOperation(rc, op, mine));
    }
    const targets: Target[] = ['user', 'channel', 'conversation'];
    const route = { user: '/api/ws', channel: '/api/channels/{channel_id}/ws', conversation: '/api/conversations/{conversation_id}/ws' };
    for (const target of targets.filter((x) => !cfg.only || cfg.only.test(`socket ${route[x]}`))) {
      const scene = await world.ensureScene();
      const socketPath = {
        user: '/api/ws',
        channel: `/api/channels/${scene.ids.channel[0]}/ws`,
        conversation: `/api/conversations/${scene.ids.conversation[0]}/ws`,
      }[target];
      const who = target === 'channel' ? world.users.member : world.users.owner;
      const seed = deriveSeed(cfg.seed, 'socket', target);
      const outcomes: Record<string, number> = {};
      let cases = 0;
      const details = await fc.check(
        fc.asyncProperty(fc.array(frameArb, { minLength: 1, maxLength: 6 }), async (frames) => {
          cases++;
          const failure = await junkCase(world, socketPath, who.cookie, frames, target === 'user', outcomes);
          if (failure) throw new Error(failure);
        }),
        // With FUZZ_PATH, that one case (and its shrinking) only.
        { seed, numRuns: cfg.path ? 1 : cfg.wsRuns, path: cfg.path },
      );
      socketCases[route[target]] = cases;
      socketOutcomes[route[target]] = outcomes;
      if (details.failed) {
        const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
        findings.add('websocket', `GET ${route[target]}`, null, error.split('\n')[0], {
          detail: error,
          example: `${fc.stringify(details.counterexample?.[0]).slice(0, 1500)}\n   shrunk after ${details.numShrinks} shrinks`,
          caller: target === 'channel' ? 'member' : 'owner',
          replay: `FUZZ_SEED=${cfg.seed} FUZZ_ONLY='^socket ${route[target]}$' FUZZ_PATH=${details.counterexamplePath} (fast-check seed ${seed})`,
        });
      }
    }
    if (Object.keys(socketCases).length) {
      // After all that, a new user stream still opens and says ready.
      const after = await junkCase(world, '/api/ws', world.users.owner.cookie, [], true);
      if (after)
        findings.add('websocket', 'GET /api/ws', null, `a fresh user stream after the junk: ${after}`, { detail: after, example: '', caller: 'owner' });
    }
  } finally {
    guard.uninstall();
    await world.close();
    closeAgent();
  }
  return {
    findings,
    stats,
    jobs,
    socketCases,
    socketOutcomes,
    ms: performance.now() - started,
    scenes: world.scenesBuilt,
    sceneMs: world.sceneMs,
    restarts: world.restarts,
  };
}

let running: Promise<RunResult> | undefined;
const results = () => (running ??= fuzz());

function report(r: RunResult): string {
  const kinds: FindingKind[] = ['crash', 'health', 'hard', 'websocket', 'invalid-accepted', 'valid-refused', 'oracle'];
  const cases = r.stats.reduce((s, x) => s + x.cases, 0);
  const total = (f: (s: OpStats) => number) => r.stats.reduce((n, s) => n + f(s), 0);
  const lines = [
    `fuzz seed ${cfg.seed}: ${cases} requests over ${r.stats.length} operations and ${Object.values(r.socketCases).reduce((s, n) => s + n, 0)} socket cases in ${(r.ms / 1000).toFixed(1)} s (${r.scenes} scenes built in ${(r.sceneMs / 1000).toFixed(1)} s, ${r.restarts} restarts after crashes)`,
    `verdicts: ${total((s) => s.verdicts.valid)} valid, ${total((s) => s.verdicts.invalid)} invalid, ${total((s) => s.verdicts.unknown)} undetermined; ${total((s) => s.checked)} answers held against their operation; ${total((s) => s.allowed)} refusals excused by the prose allow-list; ${total((s) => s.skipped)} cases skipped after repeated crashes`,
  ];
  for (const kind of kinds) {
    lines.push('', `== ${kind}: ${r.findings.groups(kind).length} (over ${r.findings.list(kind).length} operation entries)`, r.findings.format(kind));
  }
  lines.push(
    '',
    '== prose allow-list (refusals excused in this run)',
    ...PROSE_ALLOW_LIST.map((a) => `${allowanceUse.get(a) ?? 0}  ${a.op}  "${a.refusal}…"  (${a.rule})`),
  );
  lines.push('', '== socket outcomes', ...Object.entries(r.socketOutcomes).map(([route, o]) => `${route}: ${JSON.stringify(o)}`));
  lines.push(
    '',
    '== slowest operations',
    ...[...r.stats]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 12)
      .map((s) => `${(s.ms / 1000).toFixed(2)} s  ${s.cases} cases  ${s.op}  ${JSON.stringify(s.statuses)}`),
  );
  return lines.join('\n');
}

function failEach(t: Test, r: RunResult, kind: FindingKind): void {
  const groups = r.findings.groups(kind);
  for (const g of groups) {
    const smallest = [...g.findings].sort((a, b) => a.exampleSize - b.exampleSize)[0];
    t.fail(g.title, {
      operations: g.findings.map((f) => `${f.op}: ${f.count} case(s) as ${[...f.callers].join(', ')}`),
      why: smallest.detail,
      example: `${smallest.op}: ${smallest.example}`,
      ...(smallest.replay ? { replay: smallest.replay } : {}),
    });
  }
  if (groups.length === 0) t.pass(`no ${kind} findings`);
}

t.test('the schema converter generates values Ajv accepts, and mutations Ajv rejects', async (t) => {
  const ctx = { resolveRef: resolvePointer, long: false };
  const synthetic: Record<string, JsonSchema> = {
    'a string with lengths and a pattern': { type: 'string', minLength: 3, maxLength: 8, pattern: '^[a-z]+$' },
    'a list of types': { type: ['string', 'null'], maxLength: 4 },
    'an integer range': { type: 'integer', minimum: -5, maximum: 7 },
    'an exclusive number range': { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
    'enum, const, required, no additional properties': {
      type: 'object',
      properties: { a: { enum: ['x', 'y'] }, b: { const: 3 }, c: { type: 'boolean' } },
      required: ['a', 'b'],
      additionalProperties: false,
    },
    'array bounds of uuids': { type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 1, maxItems: 3 },
    'unique items': { type: 'array', items: { type: 'integer', minimum: 0, maximum: 3 }, uniqueItems: true, maxItems: 3 },
    'anyOf email or integer': {
      anyOf: [
        { type: 'string', format: 'email' },
        { type: 'integer', minimum: 10 },
      ],
    },
    'oneOf date-time or null': { oneOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
    'a $ref to the document': { $ref: '#/components/schemas/UserRef' },
    'nested required objects': {
      type: 'object',
      properties: { o: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } },
      required: ['o'],
    },
    'binary with a maximum': { type: 'string', format: 'binary', maxLength: 5 },
  };
  const fromDocument: Record<string, JsonSchema> = {};
  for (const op of operations) {
    for (const [ct, media] of Object.entries(op.body?.content ?? {})) fromDocument[`${op.key} ${ct}`] = media.schema;
    for (const p of [...op.pathParams, ...op.queryParams]) fromDocument[`${op.key} ${p.in} ${p.name}`] = p.schema;
  }
  const plain = (v: unknown) => JSON.parse(JSON.stringify(materialize(v, placeholderContext)) ?? 'null');
  const validRefused: Record<string, string[]> = {};
  const mutationsPassing: Record<string, string> = {};
  let mutated = 0;
  for (const [name, schema] of Object.entries({ ...synthetic, ...fromDocument })) {
    const seed = deriveSeed(cfg.seed, 'converter', name);
    const refused = fc.sample(validArb(schema, ctx), { numRuns: 100, seed }).filter((v) => schemaErrors(schema, plain(v), '') !== null);
    if (refused.length) validRefused[name] = refused.slice(0, 3).map((v) => fc.stringify(v));
    const bad = invalidArb(schema, ctx);
    if (!bad) continue;
    mutated++;
    const accepted = fc.sample(bad, { numRuns: 100, seed }).filter((v) => schemaErrors(schema, plain(v), '') === null);
    // A mutation may land on another valid value (one branch of an anyOf broken while another
    // holds, a wrong type that another branch admits); most must not.
    if (accepted.length > 15)
      mutationsPassing[name] = `${accepted.length}/100 pass, e.g. ${accepted
        .slice(0, 3)
        .map((v) => fc.stringify(v))
        .join(', ')}`;
  }
  const total = Object.keys(synthetic).length + Object.keys(fromDocument).length;
  t.same(validRefused, {}, `values generated as valid pass their schema (${total} schemas, 100 values each)`);
  t.same(mutationsPassing, {}, `at least 85 of 100 mutations fail their schema (${mutated} schemas that can be failed)`);
  t.ok(mutated >= Object.keys(synthetic).length, 'every synthetic schema has mutations');
});

t.test('every documented operation is fuzzed, as each of its callers', async (t) => {
  const r = await results();
  const text = report(r);
  const file = path.join(os.tmpdir(), `fuzz-findings-${cfg.seed}.txt`);
  fs.writeFileSync(file, `${text}\n`);
  process.stderr.write(`# fuzz findings written to ${file}\n`);
  t.comment(text.split('\n')[0]);
  for (const job of r.jobs) {
    const s = r.stats.find((x) => x.op === job.op.key);
    t.ok(s && s.cases > 0, `${job.op.key} was sent as ${job.spec.name}`);
  }
  if (!cfg.only) t.equal(r.stats.length, operations.length, 'every path and method of docs/openapi.json was fuzzed');
  const sum = (f: (s: OpStats) => number) => r.stats.reduce((n, s) => n + f(s), 0);
  const cases = sum((s) => s.cases);
  const answered = sum((s) => Object.values(s.statuses).reduce((a, b) => a + b, 0));
  // The mix of a whole run (a replay of one case, or a few cases, proves nothing either way).
  if (!cfg.path && cases >= 500) {
    t.ok(sum((s) => s.checked) >= answered * 0.6, `answers held against their operation in docs/openapi.json: ${sum((s) => s.checked)} of ${answered}`);
    t.ok(sum((s) => s.verdicts.valid) >= cases * 0.25, `requests the document calls valid: ${sum((s) => s.verdicts.valid)} of ${cases}`);
    t.ok(sum((s) => s.verdicts.invalid) >= cases * 0.2, `requests the document calls invalid: ${sum((s) => s.verdicts.invalid)} of ${cases}`);
  }
  t.comment(`allow-list entries: ${PROSE_ALLOW_LIST.length}; answers they excused: ${r.stats.reduce((s, x) => s + x.allowed, 0)}`);
});

t.test('the server process never crashes, and answers /healthz after every batch', async (t) => {
  const r = await results();
  failEach(t, r, 'crash');
  failEach(t, r, 'health');
});

t.test('no generated request is answered with a 5xx or with an answer docs/openapi.json does not describe', async (t) => {
  failEach(t, await results(), 'hard');
});

t.test('input docs/openapi.json calls invalid is refused with a 4xx', async (t) => {
  failEach(t, await results(), 'invalid-accepted');
});

t.test('input docs/openapi.json calls valid is not refused with 400 (or 415), beyond rules its prose states', async (t) => {
  failEach(t, await results(), 'valid-refused');
});

t.test('a 404 for an id the caller may not see is the 404 of an id of nothing (notification settings)', async (t) => {
  failEach(t, await results(), 'oracle');
});

t.test('junk frames on the user stream and the room sockets never take the server down, and close sockets only as docs/api.md says', async (t) => {
  const r = await results();
  if (Object.keys(r.socketCases).length === 0) return t.pass('sockets not selected by FUZZ_ONLY');
  failEach(t, r, 'websocket');
  for (const [route, n] of Object.entries(r.socketCases))
    t.ok(n >= (cfg.path ? 1 : cfg.wsRuns), `${n} junk cases on ${route}: ${JSON.stringify(r.socketOutcomes[route])}`);
});
