// Issue 45, items 15 and 16: one import of an export at a time, held by a lock in the database,
// and a CLI import killed with -9 is not left "running" for ever: the next start of the server,
// or the next run, marks it interrupted, and the same command resumes it under the same record.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { startServer } from './helpers/server';
import { cli, startCli } from './helpers/cli';
import { Client, signUp } from './helpers/client';
import { ALICE, BOB, channelFile, message, writeExport } from './helpers/discord-export';

const GENERAL = { id: '810000000000000001', type: 'GuildTextChat', name: 'general' };

/** An export of `total` messages in files of 1 000. */
function bigExport(total: number): string {
  const messages = Array.from({ length: total }, (_, i) =>
    message({
      id: String(950000000000000000n + BigInt(i)),
      content: `line ${i}`,
      author: i % 2 ? ALICE : BOB,
      timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    }),
  );
  const parts: Record<string, unknown> = {};
  for (let p = 0; p * 1000 < total; p++)
    parts[`Hobby Club - general [810000000000000001] [part ${p + 1}].json`] = channelFile({ ...GENERAL, messages: messages.slice(p * 1000, (p + 1) * 1000) });
  return writeExport(parts);
}

t.test('two CLI imports of the same export at once: one server, every message once, the other refused clearly', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const folder = bigExport(3000);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  const db = server.app.db;

  const [first, second] = await Promise.all([0, 1].map(() => cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)));
  t.equal(db.prepare('SELECT COUNT(*) FROM servers').pluck().get(), 1, 'one server');
  t.equal(db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), 3000, 'every message once');
  const refused = [first, second].filter((r) => r.code !== 0);
  // The two may also come one after the other (the second then appends nothing): either way, nothing twice.
  for (const r of refused)
    t.match(
      r.stderr,
      /cannot import: an import of this Discord server into this owner's server is running from the command line \(process \d+\), since .*; run this again once it has ended/,
    );

  // Deterministically: a lock held by a live process refuses the run, and writes nothing.
  const importId = db.prepare('SELECT id FROM imports ORDER BY created_at LIMIT 1').pluck().get() as string;
  db.prepare("UPDATE imports SET status = 'running', runner_pid = ? WHERE id = ?").run(process.pid, importId);
  const held = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  t.equal(held.code, 1);
  t.match(held.stderr, new RegExp(`is running from the command line \\(process ${process.pid}\\).*\\(import ${importId}\\)`));
  t.equal(db.prepare("SELECT COUNT(*) FROM imports WHERE status = 'running'").pluck().get(), 1, 'the lock: one running import of a Discord server per owner');
  t.throws(
    () =>
      db
        .prepare(
          "INSERT INTO imports (id, owner_id, guild_id, server_name, status, plan, created_at) SELECT 'another', owner_id, guild_id, server_name, 'running', plan, created_at FROM imports WHERE id = ?",
        )
        .run(importId),
    /UNIQUE constraint failed/,
    'held by the database itself',
  );
  db.prepare("UPDATE imports SET status = 'done', runner_pid = NULL WHERE id = ?").run(importId);
});

t.test('a CLI import killed with -9 is marked interrupted at the next start, and resumed under the same record', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-killed-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir });
  const owner = await signUp(server.url);
  const total = 6000;
  const folder = bigExport(total);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  const db = server.app.db;
  const run = startCli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  const done = () => (db.prepare('SELECT COALESCE(MAX(done), 0) FROM imports').pluck().get() as number) ?? 0;
  for (let i = 0; i < 4000 && done() < 400; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  run.child.kill('SIGKILL');
  t.equal((await run.done).signal, 'SIGKILL');
  const [killed] = db.prepare('SELECT id, status, runner_pid FROM imports').all() as { id: string; status: string; runner_pid: number }[];
  t.equal(killed.status, 'running', 'left running by the killed process');
  t.equal(killed.runner_pid, run.child.pid, 'naming it');

  // The next start of the server: interrupted, and the owner reads so.
  await server.close();
  const again = await startServer({ dataDir });
  t.teardown(again.close);
  const reader = new Client(again.url);
  await reader.post('/api/login', { username: owner.username, password: 'correct horse' });
  const [seen] = (await reader.get('/api/imports')).body;
  t.equal(seen.id, killed.id);
  t.equal(seen.status, 'interrupted');
  t.match(seen.error, /run the same command again to resume/);

  // The same command: the same record, to the end, every message once.
  const resumed = await cli(['import', 'discord', folder, '--owner', owner.username], dataDir);
  t.equal(resumed.code, 0, resumed.stderr);
  const rows = again.app.db.prepare('SELECT id, status, runner_pid, done, total FROM imports').all();
  t.same(rows, [{ id: killed.id, status: 'done', runner_pid: null, done: total, total }], 'one record, done');
  t.equal(again.app.db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), total);
});

t.test('a run finds a killed import still marked running, and resumes it', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const folder = bigExport(1000);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  const db = server.app.db;
  t.equal((await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)).code, 0);
  // As a kill -9 leaves it: running, by a process that is gone.
  const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
  const importId = db.prepare('SELECT id FROM imports').pluck().get() as string;
  db.prepare("UPDATE imports SET status = 'running', runner_pid = ?, finished_at = NULL WHERE id = ?").run(gone, importId);
  const run = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  t.equal(run.code, 0, run.stderr);
  t.same(db.prepare('SELECT id, status FROM imports').all(), [{ id: importId, status: 'done' }], 'resumed under the same record');
});
