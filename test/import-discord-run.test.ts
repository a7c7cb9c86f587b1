// Importing from Discord (issue 31): the import itself on the CLI, against a running server's data
// directory, read back through the API as the new server's owner sees it; a second run adds
// nothing, a newer export appends, and a run killed (-9) midway resumes. Synthetic exports only
// (test/helpers/discord-export.ts).
import fs from 'node:fs';
import t from 'tap';
import { startServer } from './helpers/server';
import { cli, startCli } from './helpers/cli';
import { Client, signUp } from './helpers/client';
import { ALICE, BOB, GUILD, channelFile, message, standardExport, writeExport } from './helpers/discord-export';

const GENERAL = { id: '810000000000000001', type: 'GuildTextChat', name: 'general', category: 'Text', categoryId: '820000000000000001', topic: 'say hi' };

t.test('an export comes across whole: channels, people, roles, messages, replies, pins, reactions, mentions, files', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const folder = writeExport(standardExport());
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));

  const run = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /Imported into a new server [0-9a-f-]{36} \(owned by/);
  t.match(run.stdout, /10 messages, 2 files, 2 new placeholder accounts/);
  t.match(run.stdout, /1 messages left out/, 'the empty message of an unknown type');

  const [imported] = (await owner.get('/api/servers')).body;
  t.equal(imported.name, 'Hobby Club');
  t.equal(imported.owner_id, (await owner.get('/api/users/me')).body.user_id);
  t.equal(imported.unread, false, 'imported history is read');
  const serverId = imported.id;
  const channels = (await owner.get(`/api/servers/${serverId}/channels`)).body as { id: string; name: string; topic: string; category_id: string | null }[];
  const by = Object.fromEntries(channels.map((c) => [c.name, c]));
  t.same(Object.keys(by).sort(), ['general', 'general › plans', 'lounge', 'news'], 'a thread is named after its parent');
  t.equal(by.general.topic, 'say hi');
  t.match(by.lounge.topic, /Text chat of the voice channel lounge/, "a voice channel's text is marked");
  const categories = (await owner.get(`/api/servers/${serverId}/categories`)).body as { id: string; name: string }[];
  t.same(categories.map((c) => c.name), ['Text', 'Voice']);
  const text = categories.find((c) => c.name === 'Text')!.id;
  t.equal(by.general.category_id, text);
  t.equal(by['general › plans'].category_id, text, "a thread goes under its parent's category");

  const members = (await owner.get(`/api/servers/${serverId}/members`)).body as { user_id: string; username: string; display_name: string | null; roles: string[] }[];
  const alice = members.find((m) => m.username === 'alice-discord')!;
  const bob = members.find((m) => m.username === 'bob-discord')!;
  t.ok(alice && bob, 'a placeholder per person, named after them');
  t.equal(alice.display_name, 'alice');
  t.same(alice.roles, ['Mods'], 'with their roles');
  const roles = (await owner.get(`/api/servers/${serverId}/roles`)).body as { name: string; color: number | null }[];
  t.same(roles.map((r) => [r.name, r.color]), [['Mods', 0x3ba55d]]);
  const login = await new Client(server.url).post('/api/login', { username: 'alice-discord', password: 'correct horse' });
  t.equal(login.status, 401, 'a placeholder cannot sign in');

  const page = (await owner.get(`/api/servers/${serverId}/channels/${by.general.id}/messages?limit=50`)).body.reverse() as any[];
  t.same(
    page.map((m) => m.content),
    ['welcome @bob-discord', 'thanks!', 'a photo and a lost file\n📎 lost.txt (not in the export)', 'from a Windows export', '*Pinned a message.*', '*Joined the server.*'],
    'in snowflake order across partitions; raw mentions become names; a file not in the export is named; system lines in italics',
  );
  t.same(page.map((m) => m.created_at), ['2024-01-01T10:00:00.000Z', '2024-01-01T10:01:00.000Z', '2024-01-02T09:00:00.000Z', '2024-01-03T09:00:00.000Z', '2024-01-03T10:00:00.000Z', '2024-01-03T11:00:00.000Z'], 'original timestamps');
  t.equal(page[0].author_id, alice.user_id);
  t.same(page[0].mentions, [bob.user_id], 'the mention is a mention');
  t.equal(page[0].pinned, true);
  t.equal(page[1].reply_to, page[0].id, 'a reply answers its message');
  t.equal(page[1].reply_preview.content, 'welcome @bob-discord');
  t.same(page[2].reactions, [{ emoji: '👍', count: 2, reacted: false }, { emoji: '🎉', count: 3, reacted: false }], 'reactions: named ones by their people, the rest counted');
  t.same(page[2].attachments.map((a: { name: string; size: number }) => [a.name, a.size]), [['photo.png', 4]]);
  const file = await fetch(new URL(page[2].attachments[0].url, server.url), { headers: { cookie: owner.cookie! } });
  t.same(Buffer.from(await file.arrayBuffer()), Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'the file is the one in the export');
  t.same(page[3].attachments.map((a: { name: string }) => a.name), ['notes.txt'], 'a Windows path is found');
  const reactors = server.app.db.prepare("SELECT user_id FROM reactions WHERE emoji = '👍' ORDER BY user_id").pluck().all();
  t.same(reactors, [alice.user_id, bob.user_id].sort());

  const news = (await owner.get(`/api/servers/${serverId}/channels/${by.news.id}/messages`)).body;
  t.equal(news[0].mention_everyone, true, '@everyone stays a mention of everyone');
  const found = await owner.get(`/api/search?q=${encodeURIComponent('windows')}`);
  t.same(found.body.results.map((m: { content: string }) => m.content), ['from a Windows export'], 'the search index holds the history');
  t.equal(server.app.db.prepare("SELECT status FROM imports").pluck().get(), 'done');
  t.equal(server.app.db.pragma('foreign_key_check').length, 0);
});

t.test('a second run adds nothing; a newer export appends only what is newer', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const files = standardExport();
  const folder = writeExport(files);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  t.equal((await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)).code, 0);
  const db = server.app.db;
  const tables = ['servers', 'channels', 'categories', 'roles', 'users', 'members', 'messages', 'attachments', 'reactions', 'reaction_extras', 'imported_people'];
  const counts = () => Object.fromEntries(tables.map((name) => [name, db.prepare(`SELECT COUNT(*) FROM ${name}`).pluck().get()]));
  const before = counts();
  const again = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  t.equal(again.code, 0, again.stderr);
  t.match(again.stdout, /Appended to the server .*\n {2}0 messages, 0 files, 0 new placeholder accounts\n {2}11 messages were already there/);
  t.same(counts(), before, 'no duplicates of anything');

  // A newer export of the same channels: the old messages and one newer, by someone new.
  const carol = { ...BOB, id: '700000000000000003', name: 'carol', nickname: 'Carol' };
  const newer = JSON.parse(JSON.stringify(files['Hobby Club - general [810000000000000001] [part 2].json'])) as ReturnType<typeof channelFile>;
  newer.messages.push(message({ id: '990000000000000001', content: 'I am new here', author: carol, timestamp: '2024-05-01T10:00:00.000+00:00' }));
  const delta = writeExport({ ...files, 'Hobby Club - general [810000000000000001] [part 2].json': newer });
  t.teardown(() => fs.rmSync(delta, { recursive: true, force: true }));
  const appended = await cli(['import', 'discord', delta, '--owner', owner.username], server.dataDir);
  t.equal(appended.code, 0, appended.stderr);
  t.match(appended.stdout, /1 messages, 0 files, 1 new placeholder accounts/);
  const after = counts();
  t.equal(after.messages, before.messages + 1, 'one message more');
  t.equal(after.servers, before.servers, 'into the same server');
  const serverId = (await owner.get('/api/servers')).body[0].id;
  const general = (await owner.get(`/api/servers/${serverId}/channels`)).body.find((c: { name: string }) => c.name === 'general');
  const [last] = (await owner.get(`/api/servers/${serverId}/channels/${general.id}/messages?limit=1`)).body;
  t.equal(last.content, 'I am new here');
  t.equal(last.author.display_name, 'Carol');

  // Someone else importing the same Discord server gets a server of their own.
  const other = await signUp(server.url);
  t.equal((await cli(['import', 'discord', folder, '--owner', other.username], server.dataDir)).code, 0);
  t.equal((await other.get('/api/servers')).body.length, 1);
  t.equal(counts().servers, before.servers + 1);
  void GUILD;
  void ALICE;
});

t.test('an import killed with -9 midway resumes where it stopped, with nothing twice', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const total = 6000;
  const messages = Array.from({ length: total }, (_, i) =>
    message({ id: String(950000000000000000n + BigInt(i)), content: `line ${i}`, author: i % 2 ? ALICE : BOB, timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString() }),
  );
  const parts: Record<string, unknown> = {};
  for (let p = 0; p < 6; p++) parts[`Hobby Club - general [810000000000000001] [part ${p + 1}].json`] = channelFile({ ...GENERAL, messages: messages.slice(p * 1000, (p + 1) * 1000) });
  const folder = writeExport(parts);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));

  const db = server.app.db;
  const run = startCli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  const done = () => (db.prepare('SELECT COALESCE(MAX(done), 0) FROM imports').pluck().get() as number) ?? 0;
  for (let i = 0; i < 2000 && done() < 400; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  run.child.kill('SIGKILL');
  const killed = await run.done;
  t.equal(killed.signal, 'SIGKILL');
  const brought = db.prepare('SELECT COUNT(*) FROM messages').pluck().get() as number;
  t.ok(brought > 0 && brought < total, `stopped midway (${brought} of ${total})`);
  t.equal(brought % 200, 0, 'whole batches only: a batch commits or does not');

  const resumed = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  t.equal(resumed.code, 0, resumed.stderr);
  t.match(resumed.stdout, new RegExp(`${total - brought} messages`));
  t.equal(db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), total, 'every message once');
  t.equal(db.prepare('SELECT COUNT(DISTINCT discord_id) FROM imported_messages').pluck().get(), total);
  const order = db.prepare('SELECT m.content FROM messages m ORDER BY m.seq').pluck().all();
  t.same(order, messages.map((m) => m.content), 'in snowflake order, across the stop');
  t.equal(db.prepare('SELECT COUNT(*) FROM servers').pluck().get(), 1, 'one server');
});
