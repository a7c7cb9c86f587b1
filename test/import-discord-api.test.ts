// Importing from Discord through the API (issue 31): a zip uploaded, its dry run read, the import
// started and followed to its end while the server keeps answering; an import stopped midway
// resumed; what each channel type becomes. Claims are in import-discord-claims.test.ts.
// Synthetic exports only (test/helpers/discord-export.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { startServer } from './helpers/server';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { channelFile, message, standardExport } from './helpers/discord-export';
import { zipForm } from './helpers/imports';

t.test('upload, dry run, start, progress, done: the server keeps serving', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const other = await signUp(server.url);

  const upload = await must(owner.post('/api/imports?server_name=Club%20Archive', await zipForm('export', standardExport())), 201);
  t.equal(upload.body.status, 'checked');
  t.same(upload.body.guild, { id: '800000000000000001', name: 'Hobby Club' });
  t.equal(upload.body.server_name, 'Club Archive');
  t.same(upload.body.progress, { done: 0, total: 11 });
  t.same(
    upload.body.plan.channels.map((c: { name: string }) => c.name),
    ['general', 'lounge', 'news', 'plans'],
    'the dry run, per channel',
  );
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM servers').pluck().get(), 0, 'a dry run writes no server');
  t.same(
    (await must(owner.get('/api/imports'), 200)).body.map((i: { id: string }) => i.id),
    [upload.body.id],
  );
  t.equal((await other.get(`/api/imports/${upload.body.id}`)).status, 404, "someone else's import is not there");
  t.equal((await other.post(`/api/imports/${upload.body.id}/start`, {})).status, 404);
  t.equal((await owner.post(`/api/imports/${upload.body.id}/start`, { system: 'sometimes' })).status, 400);

  const started = await must(owner.post(`/api/imports/${upload.body.id}/start`, { system: 'skip' }), 202);
  t.equal(started.body.status, 'running');
  t.equal((await owner.post(`/api/imports/${upload.body.id}/start`, {})).status, 409, 'once');
  t.equal((await owner.delete(`/api/imports/${upload.body.id}`)).status, 409, 'a running import stays');
  let record = started.body;
  while (record.status === 'running') {
    t.equal((await fetch(`${server.url}/healthz`)).status, 200);
    record = (await must(owner.get(`/api/imports/${upload.body.id}`), 200)).body;
    await new Promise((resolve) => setTimeout(resolve, 25)); // leave the import's worker the cores
  }
  t.equal(record.status, 'done', record.error ?? '');
  t.same(record.progress, { done: 11, total: 11 });
  const [made] = (await owner.get('/api/servers')).body;
  t.equal(made.name, 'Club Archive');
  t.equal(record.server_id, made.id);
  const general = (await owner.get(`/api/servers/${made.id}/channels`)).body.find((c: { name: string }) => c.name === 'general');
  const page = (await owner.get(`/api/servers/${made.id}/channels/${general.id}/messages`)).body;
  t.notOk(
    page.some((m: { content: string }) => m.content.startsWith('*')),
    'system lines skipped when asked',
  );
  t.equal(page.length, 4);
  t.notOk(
    fs.readdirSync(`${server.dataDir}/imports`).some((f) => f.endsWith('.zip')),
    'the upload is removed once imported',
  );

  // Refusals: not a zip, not an export, wrong field.
  const junk = new FormData();
  junk.append('export', new Blob(['not a zip']), 'x.zip');
  const refused = await owner.post('/api/imports', junk);
  t.equal(refused.status, 400);
  t.match(refused.text, /cannot import: .*not a zip file/);
  const empty = await owner.post('/api/imports', await zipForm('export', { 'readme.txt': Buffer.from('hi') }));
  t.equal(empty.status, 400);
  t.match(empty.text, /no DiscordChatExporter JSON files/);
  t.equal((await owner.post('/api/imports', await zipForm('file', standardExport()))).status, 400, 'the zip goes in export');
  t.equal((await owner.post('/api/imports', { a: 1 })).status, 415);
  const discard = await must(owner.post('/api/imports', await zipForm('export', standardExport())), 201);
  await must(owner.delete(`/api/imports/${discard.body.id}`), 204);
  t.equal((await owner.get(`/api/imports/${discard.body.id}`)).status, 404, 'a checked import can be discarded');
});

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

t.test('every channel type: what each becomes', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const kinds: [string, string][] = [
    ['GuildTextChat', 'text'],
    ['GuildNews', 'news'],
    ['GuildForum', 'forum'],
    ['GuildPublicThread', 'public'],
    ['GuildPrivateThread', 'private'],
    ['GuildNewsThread', 'newsthread'],
    ['GuildVoiceChat', 'voice'],
    ['GuildStageVoice', 'stage'],
    ['GuildCategory', 'category'],
    ['DirectTextChat', 'dm'],
    ['DirectGroupTextChat', 'group'],
  ];
  const files: Record<string, unknown> = {};
  kinds.forEach(([type, name], i) => {
    const thread = type.endsWith('Thread');
    files[`Hobby Club - ${name} [88000000000000000${i}].json`] = channelFile({
      id: `88000000000000000${i}`,
      type,
      name,
      ...(thread ? { category: 'text', categoryId: '880000000000000000' } : {}),
      messages: [message({ content: `in ${name}` })],
    });
  });
  const upload = await must(owner.post('/api/imports', await zipForm('export', files)), 201);
  const becomes = Object.fromEntries(upload.body.plan.channels.map((c: { name: string; becomes: string }) => [c.name, c.becomes]));
  t.same(becomes, {
    category: 'nothing',
    dm: 'nothing',
    forum: 'forum',
    group: 'nothing',
    news: 'channel',
    newsthread: 'thread',
    private: 'thread',
    public: 'thread',
    stage: 'voice',
    text: 'channel',
    voice: 'voice',
  });
  t.match(upload.body.plan.notCarried.join('\n'), /channels of type DirectTextChat \(dm\)/);
  await must(owner.post(`/api/imports/${upload.body.id}/start`, {}), 202);
  let record = upload.body;
  while (record.status !== 'done' && record.status !== 'failed') record = (await owner.get(`/api/imports/${upload.body.id}`)).body;
  t.equal(record.status, 'done', record.error ?? '');
  const channels = (await owner.get(`/api/servers/${record.server_id}/channels`)).body as { id: string; name: string; type: string }[];
  t.same(channels.map((c) => `${c.name}:${c.type}`).sort(), ['forum:forum', 'news:text', 'stage:text', 'text:text', 'voice:text']);
  // Threads come under their channel (issue 49), a private one private.
  const text = channels.find((c) => c.name === 'text')!;
  const threads = [
    ...(await owner.get(`/api/servers/${record.server_id}/channels/${text.id}/threads`)).body,
    ...(await owner.get(`/api/servers/${record.server_id}/channels/${text.id}/threads?archived=true`)).body,
  ];
  t.same(threads.map((x: { name: string; private: boolean }) => `${x.name}:${x.private}`).sort(), ['newsthread:false', 'private:true', 'public:false']);
});
