import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

// Garbage-collection stress of the database layer. On Node 24.19 and later, better-sqlite3 12
// could abort the process when V8 collected its statement objects (nodejs/node#65446): its
// ~Statement asserts that a Node environment is current, which is false when the collector runs
// on its own (an idle or background task) or at exit. A crash that signs every user out, seen
// only now and then in the whole suite. Two children make it likely every run:
// - IDLE leaves thousands of statements for the collector while the process waits on timers,
//   then exits with more of them alive: with better-sqlite3 12.11 built for Node 24.21 this
//   aborted in about one run of three on a busy machine, fewer on a quiet one (SIGABRT,
//   "Assertion failed: (env) != nullptr"), so six run at once;
// - STRESS forces collections (--expose-gc) over every kind of object the driver hands out:
//   statements, iterators stopped early, transactions, statements outliving their database.
const DB_MODULE = path.join(__dirname, '..', 'dist', 'core', 'db.js');
// The children run plain Node, as the server does: without the test runner's loader options.
const PLAIN_ENV = { ...process.env, NODE_OPTIONS: '' };

const STRESS = `
const { openDatabase } = require(${JSON.stringify(DB_MODULE)});
const path = require('node:path');
const dir = process.argv[1];
let rows = 0;
for (let round = 0; round < 8; round++) {
  const db = openDatabase(path.join(dir, 'chat-' + round + '.db'));
  db.exec('CREATE TABLE IF NOT EXISTS stress (id INTEGER PRIMARY KEY, body TEXT)');
  const insertMany = db.transaction((n) => {
    for (let i = 0; i < n; i++) db.prepare('INSERT INTO stress (body) VALUES (?)').run('row ' + i);
  });
  const leftOpen = [];
  for (let i = 0; i < 2500; i++) {
    // A fresh statement every time, dropped at once: thousands of wrappers for the collector.
    rows += db.prepare('SELECT COUNT(*) AS n FROM users WHERE id = ?').all('x' + i).length;
    if (i % 50 === 0) insertMany(20);
    // An iterator stopped after one row (it holds the connection until stopped), or read to the end.
    const it = db.prepare('SELECT id, body FROM stress ORDER BY id LIMIT 40').iterate();
    if (i % 3 === 0) for (const row of it) void row;
    else { it.next(); it.return(); }
    if (i % 100 === 0) leftOpen.push(db.prepare('SELECT body FROM stress WHERE id = ?'));
    if (i % 200 === 0) global.gc();
  }
  // Statements that outlive their database: closed first, collected after.
  db.close();
  global.gc();
  for (const statement of leftOpen) {
    try { statement.get(1); } catch { rows++; }
  }
  leftOpen.length = 0;
  global.gc();
}
console.log('rows ' + rows);
`;

const IDLE = `
const { openDatabase } = require(${JSON.stringify(DB_MODULE)});
const path = require('node:path');
const db = openDatabase(path.join(process.argv[1], 'idle.db'));
let rows = 0;
const burst = () => {
  for (let i = 0; i < 5000; i++) rows += db.prepare('SELECT COUNT(*) AS n FROM users WHERE id = ?').all('x' + i).length;
};
(async () => {
  for (let round = 0; round < 10; round++) {
    burst();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  burst();
  console.log('rows ' + rows);
})();
`;

t.test('statements collected while the process idles, and at exit, do not abort it', async (t) => {
  // Six at once: the abort depends on when the collector runs, and a busy machine made it likelier.
  const runs = await Promise.all(
    [1, 2, 3, 4, 5, 6].map((run) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-gc-idle-'));
      t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
      return new Promise<{ run: number; code: number | null; signal: string | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ['-e', IDLE, dir], { env: PLAIN_ENV, timeout: 90_000 });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk));
        child.on('close', (code, signal) => resolve({ run, code, signal, out, err }));
      });
    }),
  );
  for (const { run, code, signal, out, err } of runs) {
    t.equal(signal, null, `run ${run}: no signal; stderr: ${err.slice(0, 1000)}`);
    t.equal(code, 0, `run ${run}: exit code 0 (an abort is 134)`);
    t.equal(out.trim(), `rows ${11 * 5000}`, `run ${run}: every query ran`);
  }
});

t.test('the database layer survives garbage collection running all the time', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-gc-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const child = spawnSync(process.execPath, ['--expose-gc', '-e', STRESS, dir], { encoding: 'utf8', timeout: 90_000, env: PLAIN_ENV });
  t.equal(child.signal, null, `no signal (an abort in collection is SIGABRT or SIGSEGV); stderr: ${child.stderr.slice(0, 2000)}`);
  t.equal(child.status, 0, 'exit code 0');
  // 8 rounds x 2500 lookups, plus one refusal per statement used after its database closed.
  t.equal(child.stdout.trim(), `rows ${8 * 2500 + 8 * 25}`, 'every query ran and every statement of a closed database refused');
  t.end();
});
