// Importing from Discord through the API (issue 31): a zip uploaded, its dry run read, the import
// started and followed to its end while the server keeps answering; the imported people and their
// claim codes for the owner; claims by code and by Discord data package; hiding and erasing one's
// imported messages. Synthetic exports only (test/helpers/discord-export.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { type TestServer, startServer } from './helpers/server';
import { type Client, signUp } from './helpers/client';
import { must } from './helpers/community';
import { ALICE, BOB, channelFile, message, standardExport, writeZip } from './helpers/discord-export';

const zipForm = async (field: string, files: Record<string, unknown>) => {
  const form = new FormData();
  form.append(field, new Blob([fs.readFileSync(await writeZip(files))], { type: 'application/zip' }), 'export.zip');
  return form;
};

/** Uploads the standard export, imports it and waits for the end: the import record. */
async function imported(server: TestServer, owner: Client, start: Record<string, unknown> = {}) {
  const upload = await must(owner.post('/api/imports?server_name=Club%20Archive', await zipForm('export', standardExport())), 201);
  await must(owner.post(`/api/imports/${upload.body.id}/start`, start), 202);
  for (let i = 0; i < 400; i++) {
    const now = await must(owner.get(`/api/imports/${upload.body.id}`), 200);
    if (now.body.status !== 'running') return now.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the import did not end');
}

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

t.test('claiming: by code, by data package where allowed; then hiding and erasing', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const record = await imported(server, owner, { package_claims: true });
  const serverId = record.server_id;
  // An import opens nothing to everyone (issue 47 #2): the owner shows the category Text, as "Who sees what" does.
  const text = (await owner.get(`/api/servers/${serverId}/categories`)).body.find((c: { name: string }) => c.name === 'Text');
  await must(owner.request('DELETE', `/api/servers/${serverId}/categories/${text.id}/overwrites/${serverId}`), 204);
  const stranger = await signUp(server.url);
  t.equal((await stranger.get(`/api/servers/${serverId}/imported-people`)).status, 404, 'outsiders see nothing');

  const people = (await must(owner.get(`/api/servers/${serverId}/imported-people`), 200)).body as any[];
  t.same(
    people.map((p) => [p.discord_name, p.username, p.messages]),
    [
      ['alice', 'alice-discord', 3],
      ['bob', 'bob-discord', 7],
    ],
  );
  const alice = people.find((p) => p.discord_name === 'alice');
  t.match(alice.claim_code, /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);

  // Alice claims with her code: her messages, mentions, reactions and role become hers.
  const claimer = await signUp(server.url);
  const code = alice.claim_code.toLowerCase();
  t.equal((await claimer.post('/api/account/claims', { code: 'AAAA-BBBB-CCCC' })).status, 404);
  const claimed = await must(claimer.post('/api/account/claims', { code }), 200);
  t.same(claimed.body.claimed, [{ server_id: serverId, discord_name: 'alice', messages: 3 }]);
  t.equal((await stranger.post('/api/account/claims', { code })).status, 409, 'a code works once');
  const member = (await claimer.get(`/api/servers/${serverId}/members`)).body.find((m: { user_id: string }) => m.user_id === claimer.userId);
  t.same(member.roles, ['Mods'], "the placeholder's roles are the claimer's");
  const general = (await claimer.get(`/api/servers/${serverId}/channels`)).body.find((c: { name: string }) => c.name === 'general');
  const page = (await claimer.get(`/api/servers/${serverId}/channels/${general.id}/messages`)).body.reverse();
  t.equal(page[0].author_id, claimer.userId, 'her message is hers');
  const photo = page.find((m: { content: string }) => m.content.startsWith('a photo'));
  t.same(
    photo.reactions.find((r: { emoji: string }) => r.emoji === '👍'),
    { emoji: '👍', count: 2, reacted: true },
    'her reaction too',
  );
  const after = (await owner.get(`/api/servers/${serverId}/imported-people`)).body.find((p: any) => p.discord_name === 'alice');
  t.equal(after.claim_code, null, 'a used code is not listed');
  t.equal(after.claimed_by.user_id, claimer.userId);
  t.equal(after.messages, 0);

  // Bob claims with his data package (the import allows it): the id in Account/user.json.
  const bobber = await signUp(server.url);
  const noPackage = await bobber.post('/api/account/claims/discord-package', await zipForm('package', { 'README.txt': Buffer.from('x') }));
  t.equal(noPackage.status, 400);
  t.match(noPackage.text, /no Account\/user\.json/);
  const wrongId = await bobber.post('/api/account/claims/discord-package', await zipForm('package', { 'account/user.json': { id: '123' } }));
  t.equal(wrongId.status, 404);
  const byPackage = await must(
    bobber.post('/api/account/claims/discord-package', await zipForm('package', { 'package/Account/user.json': { id: BOB.id, username: 'bob' } })),
    200,
  );
  t.same(
    byPackage.body.servers.map((s: { server_id: string }) => s.server_id),
    [serverId],
    'the servers it could claim in, listed (issue 45: nothing joined yet)',
  );
  const chosen = await must(bobber.post('/api/account/claims/discord-package/choose', { server_ids: [serverId] }), 200);
  t.same(
    chosen.body.claimed.map((c: { discord_name: string }) => c.discord_name),
    ['bob'],
  );
  const mention = (await bobber.get(`/api/servers/${serverId}/channels/${general.id}/messages`)).body.reverse()[0];
  t.equal(mention.content, `welcome @${bobber.username}`, 'a mention of the placeholder names the claimer');
  t.same(mention.mentions, [bobber.userId]);
  t.equal(mention.author_id, claimer.userId);

  // Hide: Alice's imported messages go back to a nameless placeholder; erase: Bob's are gone.
  const hidden = await must(claimer.post('/api/account/imported-messages', { server_id: serverId, action: 'hide' }), 200);
  t.same(hidden.body, { action: 'hide', messages: 3 });
  const first = (await owner.get(`/api/servers/${serverId}/channels/${general.id}/messages`)).body.reverse()[0];
  t.not(first.author_id, claimer.userId);
  t.equal(first.author.display_name, 'Former member');
  const before = server.app.db.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
  const erased = await must(bobber.post('/api/account/imported-messages', { server_id: serverId, action: 'erase' }), 200);
  t.equal(erased.body.messages, 7);
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), before - 7);
  t.equal((await stranger.post('/api/account/imported-messages', { server_id: serverId, action: 'erase' })).status, 404, 'nothing claimed, nothing to erase');
  t.equal((await bobber.post('/api/account/imported-messages', { server_id: serverId, action: 'burn' })).status, 400);
  t.equal((server.app.db.pragma('foreign_key_check') as unknown[]).length, 0);

  // The server deleted: its placeholders go with it; the claimers stay.
  const placeholders = () => server.app.db.prepare('SELECT COUNT(*) FROM users WHERE imported = 1').pluck().get();
  t.equal(placeholders(), 2);
  await must(owner.delete(`/api/servers/${serverId}`), 204);
  t.equal(placeholders(), 0, 'no placeholder outlives its server');
  t.equal((await bobber.get('/api/users/me')).status, 200);
  t.equal((server.app.db.pragma('foreign_key_check') as unknown[]).length, 0);
  void ALICE;
});

t.test('data-package claims are refused unless the import allowed them', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  await imported(server, owner);
  const bob = await signUp(server.url);
  const res = await bob.post('/api/account/claims/discord-package', await zipForm('package', { 'Account/user.json': { id: BOB.id } }));
  t.equal(res.status, 404);
  t.match(res.text, /open to data-package claims/);
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
    forum: 'channel',
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
  const names = (await owner.get(`/api/servers/${record.server_id}/channels`)).body.map((c: { name: string }) => c.name).sort();
  t.same(names, ['forum', 'news', 'stage', 'text', 'text › newsthread', 'text › private', 'text › public', 'voice']);
});
