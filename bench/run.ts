/**
 * `make bench`: every measurement in one run (issues 10, 14, 16, 19, 20, 33), each printed as a table
 * with its target, then a summary. Every server is a child process on 127.0.0.1 with a temporary
 * data directory (the export bench runs one in-process, to watch its event loop); everything is
 * stopped and removed at the end. A measurement that fails is reported as ERROR and the others
 * still run; the exit code is 1 if any failed (a MISS is a figure, not a failure).
 *
 * The optional 5 000-socket fan-out (about a minute more) runs when the open-files limit
 * allows it; FANOUT_5000=0 skips it. BENCH_SECONDS / BENCH_RUNS shorten the throughput runs
 * for a quick look; STREAM_SECONDS shortens the user-stream fan-out (30 s).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { automodRows, automodSetup, measureAutomod } from './automod';
import { avatarRows, measureAvatars } from './avatars';
import { coldStartRows, measureColdStart } from './cold-start';
import { type FanoutFigures, fanoutRows, fanoutSetup, runFanout } from './fanout';
import { type SeededHistory, MESSAGES, historyRows, historySetup, measureHistory, seedHistory } from './history';
import { type Row, type Verdict, assertBuilt, formatTable, machine, printTable } from './lib';
import { exportRows, measureExport } from './export';
import { importRows, importSetup, measureImport } from './import';
import { measureMemory, memoryRows } from './memory';
import { measurePageWeight, pageWeightRows } from './page-weight';
import { measureThroughput, micros, percent, throughputRows, throughputSetup } from './post-message';
import { measurePush, pushRows, pushSetup } from './push';
import { measureReactions, reactionsRows, reactionsSetup } from './reactions';
import { SEARCH_MESSAGES, measureSearch, searchRows, searchSetup, seedSearch } from './search';
import {
  measurePresence,
  measureReady,
  measureStreamFanout,
  presenceRows,
  presenceSetup,
  readyRows,
  readySetup,
  streamFanoutRows,
  streamFanoutSetup,
} from './user-stream';

/** One line of the final summary: a figure against its target. */
const summary: Row[] = [];
let failed = false;

async function section(title: string, work: () => Promise<void>): Promise<void> {
  const started = performance.now();
  try {
    await work();
  } catch (err) {
    failed = true;
    console.log(`\n## ${title}\nERROR: ${(err as Error).stack ?? err}`);
    summary.push([title, 'ERROR', '', 'MISS']);
  }
  console.log(`(${title}: ${((performance.now() - started) / 1000).toFixed(0)} s)`);
}

/** The soft limit on open files (5 000 sockets need as many descriptors in this process and the server). */
function openFilesLimit(): number {
  const found = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync('/proc/self/limits', 'utf8'));
  return !found ? 0 : found[1] === 'unlimited' ? Infinity : Number(found[1]);
}

/** The rows of a table that carry a target, for the summary. */
const targets = (rows: Row[], prefix: string): Row[] => rows.filter((r) => r[3] !== '').map((r) => [`${prefix} ${r[0]}`, r[1], r[2], r[3]]);

/**
 * bench/upload-memory.ts runs as a child process and prints one table; its rows are read
 * back by splitting on the column gaps (two or more spaces).
 */
function uploadMemory(): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'upload-memory.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`upload-memory exited with ${code}:\n${out}`));
      const lines = out.split('\n');
      const header = lines.findIndex((l) => /^metric\s{2,}value/.test(l));
      if (header === -1) return reject(new Error(`no table in upload-memory's output:\n${out}`));
      const rows = lines
        .slice(header + 2)
        .filter((l) => l.trim() !== '')
        .map((l) => {
          const cells = l.split(/\s{2,}/);
          const result = (['PASS', 'MISS'].includes(cells[cells.length - 1]) ? cells.pop() : '') as Verdict;
          return [cells[0] ?? '', cells[1] ?? '', cells[2] ?? '', result] as Row;
        });
      resolve(rows);
    });
  });
}

async function main(): Promise<void> {
  const started = performance.now();
  assertBuilt();
  console.log(`make bench: ${new Date().toISOString()}`);
  console.log(`machine: ${machine()}`);

  await section('1-2. Throughput', async () => {
    const f = await measureThroughput();
    const rows = throughputRows(f);
    printTable(`1. Ceiling: bare node:http, parse JSON, one prepared INSERT (WAL), answer JSON (${throughputSetup})`, rows.ceiling);
    printTable('2. Post a channel message (real server: cookie, membership, validation, insert, serialise, broadcast; then with DURABILITY=strict)', rows.post);
    summary.push(
      ['1. ceiling req/s, server CPU per request', `${f.ceilingRps.toFixed(0)}, ${micros(f.ceilingCpu)}`, '', ''],
      ['2. post req/s, server CPU per request', `${f.chatRps.toFixed(0)}, ${micros(f.chatCpu)}`, '', ''],
      ['2. post / ceiling req/s', percent(f.rpsRatio), '', ''],
      ...targets(rows.post, '2.'),
      ['2. ceiling / post (DURABILITY=strict) server CPU per request', f.strictRatio.toFixed(2), '', ''],
      ['2. post / strict server CPU per request', f.strictVsNormal.toFixed(2), '', ''],
    );
  });

  await section('2b. AutoMod', async () => {
    const rows = automodRows(await measureAutomod());
    printTable(`2b. AutoMod: a member's post with and without a keyword rule of 1 000 keywords (${automodSetup})`, rows);
    summary.push(...targets(rows, '2b.'));
  });

  let seeded: SeededHistory | undefined;
  await section('3. History', async () => {
    seeded = await seedHistory();
    const rows = historyRows(await measureHistory(seeded));
    printTable(`3. History: one channel of ${MESSAGES} messages (${historySetup})`, rows);
    summary.push(...targets(rows, '3.'));
  });

  await section('4. Fan-out', async () => {
    const runs: FanoutFigures[] = [await runFanout(1000)];
    const skip5000 = process.env.FANOUT_5000 === '0' ? 'FANOUT_5000=0' : openFilesLimit() < 6000 ? `open files limit ${openFilesLimit()} < 6000` : '';
    if (skip5000) console.log(`\n(4. Fan-out at 5 000 sockets skipped: ${skip5000})`);
    else runs.push(await runFanout(5000));
    for (const f of runs) {
      const rows = fanoutRows(f);
      printTable(`4. Fan-out: ${fanoutSetup(f.sockets)}`, rows);
      summary.push(...targets(rows, `4/5. ${f.sockets} sockets:`));
    }
  });

  await section('5. Memory', async () => {
    const f = await measureMemory();
    const rows = memoryRows(f);
    printTable('5. Memory: idle, 50 concurrent logins (RSS per socket: table 4)', rows);
    summary.push(['5. idle RSS', rows[0][1], '', ''], ['5. 50 concurrent logins: peak RSS', rows[2][1], `cap ${rows[3][1]}`, '']);
  });

  await section('5. Upload memory', async () => {
    const rows = await uploadMemory();
    printTable('5. Memory: five concurrent 25 MiB uploads (bench/upload-memory.ts)', rows);
    summary.push(...targets(rows, '5. uploads:'));
  });

  await section('6. Cold start', async () => {
    if (!seeded) throw new Error('no seeded history database (section 3 failed)');
    const rows = coldStartRows(await measureColdStart(seeded.dataDir, seeded.messages));
    printTable('6. Cold start: spawn to first 200 from /healthz', rows);
    summary.push(...targets(rows, '6.'));
  });

  await section('7. Reactions', async () => {
    const f = await measureReactions();
    const rows = reactionsRows(f);
    printTable(`7. Reactions: ${reactionsSetup(f)}`, rows);
    summary.push(...targets(rows, '7.'));
  });

  await section('8. Search', async () => {
    const rows = searchRows(await measureSearch(await seedSearch()));
    printTable(`8. Search: ${SEARCH_MESSAGES} messages over 100 channels (${searchSetup})`, rows);
    summary.push(...targets(rows, '8.'));
  });

  await section('9. Account export', async () => {
    const rows = exportRows(await measureExport());
    printTable('9. Account export: 100 000 messages and 1 GiB of files, in-process server, event loop watched', rows);
    summary.push(...targets(rows, '9.'));
  });

  // Three independent parts (bench/user-stream.ts), so one that fails leaves the others' figures.
  await section('10a. User stream fan-out', async () => {
    const f = await measureStreamFanout();
    const rows = streamFanoutRows(f);
    printTable(`10a. User stream fan-out: ${streamFanoutSetup(f)}`, rows);
    summary.push(...targets(rows, '10a.'));
  });

  await section("10a'. User stream fan-out, half may see", async () => {
    const f = await measureStreamFanout(undefined, undefined, 'half');
    const rows = streamFanoutRows(f);
    printTable(`10a'. User stream fan-out, half may see: ${streamFanoutSetup(f)}`, rows);
    summary.push(...targets(rows, "10a'."));
  });

  await section('10b. User stream presence', async () => {
    const f = await measurePresence();
    const rows = presenceRows(f);
    printTable(`10b. User stream presence: ${presenceSetup(f)}`, rows);
    summary.push(...targets(rows, '10b.'));
  });

  await section('10c. User stream ready', async () => {
    const f = await measureReady();
    const rows = readyRows(f);
    printTable(`10c. User stream ready: ${readySetup(f)}`, rows);
    summary.push(...targets(rows, '10c.'));
  });

  await section('11. Avatars', async () => {
    const rows = avatarRows(await measureAvatars());
    printTable("11. Avatars under one user's flood (rate limits on)", rows);
    summary.push(...targets(rows, '11.'));
  });

  await section('12. Page weight', async () => {
    const rows = pageWeightRows(await measurePageWeight());
    printTable('12. Page weight: cold cache, real Chromium, compressed as Chromium asks and uncompressed (as before issue 29)', rows);
    summary.push(...targets(rows, '12.'));
  });

  await section('13. Discord import', async () => {
    const f = await measureImport();
    const rows = importRows(f);
    printTable(`13. Discord import: ${f.synth.messages} messages, ${f.synth.attachments} files (${importSetup})`, rows);
    summary.push(...targets(rows, '13.'));
  });

  await section('14. Web push', async () => {
    const f = await measurePush();
    const rows = pushRows(f);
    printTable(`14. Web push: ${pushSetup(f)}`, rows);
    summary.push(...targets(rows, '14.'));
  });

  console.log(`\n${formatTable('Summary', summary)}`);
  const misses = summary.filter((r) => r[3] === 'MISS').length;
  const passes = summary.filter((r) => r[3] === 'PASS').length;
  console.log(`\n${passes} PASS, ${misses} MISS; whole run ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

main().then(
  () => process.exit(failed ? 1 : 0),
  (err: Error) => {
    console.error(`bench: ${err.stack ?? err.message}`);
    process.exit(1);
  },
);
