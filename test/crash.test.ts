// The server killed with SIGKILL at a random moment under concurrent writes, then restarted on the
// same data directory, several times: nothing acknowledged is lost, the database is intact, and
// the upload directory holds exactly the files the database names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { Client } from './helpers/client';
import { killed, startServerProcess as start } from './helpers/process';

const ROUNDS = 5;
const WRITERS = 6;
const PASSWORD = 'crash test password';

function upload(content: string, size: number): FormData {
  const form = new FormData();
  form.append('content', content);
  form.append('attachments', new Blob([Buffer.alloc(size, (content.length % 26) + 97)]), `${content}.bin`);
  return form;
}

t.test('SIGKILL at random moments under concurrent posts and uploads loses nothing acknowledged', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-crash-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const acknowledged = new Set<string>();
  const acknowledgedFiles = new Set<string>();
  let messagesPath = '';
  let username = '';

  for (let round = 0; round < ROUNDS; round++) {
    const { child, url } = await start(dataDir);
    t.teardown(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    const client = new Client(url);
    if (round === 0) {
      username = `crash${process.pid % 10000}`;
      await client.post('/api/register', { username, password: PASSWORD });
    }
    const login = await client.post('/api/login', { username, password: PASSWORD });
    t.equal(login.status, 200, `round ${round}: signed in again (sessions live in memory)`);
    if (round === 0) {
      const server = (await client.post('/api/servers', { name: 'crash' })).body;
      const channel = (await client.get(`/api/servers/${server.id}/channels`)).body[0];
      messagesPath = `/api/servers/${server.id}/channels/${channel.id}/messages`;
    }

    // Writers post until the kill; each remembers what the server acknowledged (201).
    let running = true;
    const writer = async (w: number) => {
      for (let i = 0; running; i++) {
        const content = `r${round}w${w}m${i}`;
        try {
          const res = i % 4 === 3 ? await client.post(messagesPath, upload(content, 64 * 1024 + w)) : await client.post(messagesPath, { content });
          if (res.status === 201) {
            acknowledged.add(res.body.id);
            for (const a of res.body.attachments) acknowledgedFiles.add(a.id);
          }
        } catch {
          return; // the connection died with the server
        }
      }
    };
    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    await new Promise((resolve) => setTimeout(resolve, 150 + Math.floor(Math.random() * 600)));
    await killed(child);
    running = false;
    await Promise.all(writers);
  }

  // One last start: its start-up sweep runs, then everything is checked.
  const { child, url } = await start(dataDir);
  t.teardown(() => child.kill('SIGKILL'));
  const client = new Client(url);
  await client.post('/api/login', { username, password: PASSWORD });
  t.ok(acknowledged.size > ROUNDS * 10, `${acknowledged.size} messages and ${acknowledgedFiles.size} files were acknowledged`);

  const db = new Database(path.join(dataDir, 'chat.db'), { readonly: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'PRAGMA integrity_check is ok');
  const stored = new Set(
    db
      .prepare<[], { id: string }>('SELECT id FROM messages')
      .all()
      .map((r) => r.id),
  );
  const lost = [...acknowledged].filter((id) => !stored.has(id));
  t.same(lost, [], 'every acknowledged message is stored');
  const rows = new Set(
    db
      .prepare<[], { id: string }>('SELECT id FROM attachments')
      .all()
      .map((r) => r.id),
  );
  t.same(
    [...acknowledgedFiles].filter((id) => !rows.has(id)),
    [],
    'every acknowledged attachment has its row',
  );
  const files = fs.readdirSync(path.join(dataDir, 'uploads'));
  t.same(
    files.filter((name) => name.endsWith('.part')),
    [],
    'no .part file remains',
  );
  t.same(
    files.filter((name) => !rows.has(name)),
    [],
    'no file without a row remains',
  );
  t.same(
    [...rows].filter((id) => !files.includes(id)),
    [],
    'no attachment row lacks its file',
  );
  const newest = await client.get(`${messagesPath}?limit=1`);
  t.equal(newest.status, 200, 'the restarted server answers');
});
