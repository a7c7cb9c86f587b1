// Importing from Discord (issue 31): an import the server stops midway resumes at the next start.
// Synthetic exports only (test/helpers/discord-export.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { startServer } from './helpers/server';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { channelFile, message } from './helpers/discord-export';
import { zipForm } from './helpers/imports';
t.test('an import the server stops midway resumes at the next start, and nothing is twice', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-resume-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir });
  const owner = await signUp(server.url);
  const total = 8000;
  const parts: Record<string, unknown> = {};
  for (let p = 0; p < 8; p++) {
    // The last of each thousand a join: system lines are skipped, before the stop and after it.
    const messages = Array.from({ length: 1000 }, (_, i) =>
      message({
        id: String(960000000000000000n + BigInt(p * 1000 + i)),
        type: i === 999 ? 'GuildMemberJoin' : 'Default',
        content: `line ${p * 1000 + i}`,
        timestamp: new Date(Date.UTC(2024, 0, 1) + (p * 1000 + i) * 1000).toISOString(),
      }),
    );
    parts[`Hobby Club - general [810000000000000001] [part ${p + 1}].json`] = channelFile({
      id: '810000000000000001',
      type: 'GuildTextChat',
      name: 'general',
      messages,
    });
  }
  const upload = await must(owner.post('/api/imports', await zipForm('export', parts)), 201);
  await must(owner.post(`/api/imports/${upload.body.id}/start`, { system: 'skip' }), 202);
  const done = () => server.app.db.prepare('SELECT done FROM imports WHERE id = ?').pluck().get(upload.body.id) as number;
  while (done() < 400) await new Promise((resolve) => setTimeout(resolve, 2));
  await server.close();
  const stoppedAt = new Database(path.join(dataDir, 'chat.db')).prepare('SELECT status, done FROM imports').get() as { status: string; done: number };
  t.equal(stoppedAt.status, 'running', 'a stop leaves it to resume');
  t.ok(stoppedAt.done < total, `stopped midway (${stoppedAt.done} of ${total})`);

  const again = await startServer({ dataDir });
  t.teardown(again.close);
  const db = again.app.db;
  for (let i = 0; i < 2000 && db.prepare('SELECT status FROM imports').pluck().get() === 'running'; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(db.prepare('SELECT status FROM imports').pluck().get(), 'done', 'resumed at start and finished');
  t.equal(db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), total - 8, 'every message once, the system lines skipped as asked');
  t.same(
    db.prepare('SELECT content FROM messages ORDER BY seq').pluck().all(),
    Array.from({ length: total }, (_, i) => `line ${i}`).filter((_, i) => i % 1000 !== 999),
    'in order across the stop',
  );
});
