// Importing from Discord (issue 31): the import itself on the CLI, against a running server's data
// directory, read back through the API as the new server's owner sees it; a second run adds
// nothing, a newer export appends, and a run killed (-9) midway resumes. Synthetic exports only
// (test/helpers/discord-export.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { type TestServer, startServer } from './helpers/server';
import { cli, startCli } from './helpers/cli';
import { Client, signUp } from './helpers/client';
import { ALICE, BOB, GUILD, channelFile, forumExport, message, standardExport, writeExport } from './helpers/discord-export';
import { must } from './helpers/community';

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
  const channels = (await owner.get(`/api/servers/${serverId}/channels`)).body as {
    id: string;
    name: string;
    type: string;
    topic: string;
    category_id: string | null;
  }[];
  const by = Object.fromEntries(channels.map((c) => [c.name, c]));
  t.same(Object.keys(by).sort(), ['general', 'lounge', 'news'], 'a thread is in no channel list');
  t.equal(by.general.topic, 'say hi');
  t.match(by.lounge.topic, /Text chat of the voice channel lounge/, "a voice channel's text is marked");
  const categories = (await owner.get(`/api/servers/${serverId}/categories`)).body as { id: string; name: string }[];
  t.same(
    categories.map((c) => c.name),
    ['Text', 'Voice'],
  );
  const text = categories.find((c) => c.name === 'Text')!.id;
  t.equal(by.general.category_id, text);
  // A thread comes as a thread of its channel (issue 49), archived: its last message is long past its auto-archive time.
  t.same((await owner.get(`/api/servers/${serverId}/channels/${by.general.id}/threads`)).body, [], 'no active thread');
  const [plans] = (await owner.get(`/api/servers/${serverId}/channels/${by.general.id}/threads?archived=true`)).body;
  t.match(plans, { name: 'plans', type: 'thread', parent_id: by.general.id, archived: true, private: false, message_count: 2, starter_message_id: null });
  t.equal(Date.parse(plans.archived_at) - Date.parse(plans.last_message_at), 24 * 3600 * 1000, 'archived a day after its last message, as it would have');
  t.same(
    (await owner.get(`/api/servers/${serverId}/channels/${plans.id}/messages`)).body.map((m: { content: string }) => m.content),
    ['*Started a thread.*', 'thread talk'],
  );

  const members = (await owner.get(`/api/servers/${serverId}/members`)).body as {
    user_id: string;
    username: string;
    display_name: string | null;
    roles: string[];
  }[];
  const alice = members.find((m) => m.username === 'alice-discord')!;
  const bob = members.find((m) => m.username === 'bob-discord')!;
  t.ok(alice && bob, 'a placeholder per person, named after them');
  t.equal(alice.display_name, 'alice');
  t.same(alice.roles, ['Mods'], 'with their roles');
  const roles = (await owner.get(`/api/servers/${serverId}/roles`)).body as { name: string; color: number | null }[];
  t.same(
    roles.map((r) => [r.name, r.color]),
    [['Mods', 0x3ba55d]],
  );
  const login = await new Client(server.url).post('/api/login', { username: 'alice-discord', password: 'correct horse' });
  t.equal(login.status, 401, 'a placeholder cannot sign in');

  const page = (await owner.get(`/api/servers/${serverId}/channels/${by.general.id}/messages?limit=50`)).body.reverse() as any[];
  t.same(
    page.map((m) => m.content),
    [
      'welcome @bob-discord',
      'thanks!',
      'a photo and a lost file\n📎 lost.txt (not in the export)',
      'from a Windows export',
      '*Pinned a message.*',
      '*Joined the server.*',
    ],
    'in snowflake order across partitions; raw mentions become names; a file not in the export is named; system lines in italics',
  );
  t.same(
    page.map((m) => m.created_at),
    [
      '2024-01-01T10:00:00.000Z',
      '2024-01-01T10:01:00.000Z',
      '2024-01-02T09:00:00.000Z',
      '2024-01-03T09:00:00.000Z',
      '2024-01-03T10:00:00.000Z',
      '2024-01-03T11:00:00.000Z',
    ],
    'original timestamps',
  );
  t.equal(page[0].author_id, alice.user_id);
  t.same(page[0].mentions, [bob.user_id], 'the mention is a mention');
  t.equal(page[0].pinned, true);
  t.equal(page[1].reply_to, page[0].id, 'a reply answers its message');
  t.equal(page[1].reply_preview.content, 'welcome @bob-discord');
  t.same(
    page[2].reactions,
    [
      { emoji: '👍', count: 2, reacted: false },
      { emoji: '🎉', count: 3, reacted: false },
    ],
    'reactions: named ones by their people, the rest counted',
  );
  t.same(
    page[2].attachments.map((a: { name: string; size: number }) => [a.name, a.size]),
    [['photo.png', 4]],
  );
  const file = await fetch(new URL(page[2].attachments[0].url, server.url), { headers: { cookie: owner.cookie! } });
  t.same(Buffer.from(await file.arrayBuffer()), Buffer.from([0x89, 0x50, 0x4e, 0x47]), 'the file is the one in the export');
  t.same(
    page[3].attachments.map((a: { name: string }) => a.name),
    ['notes.txt'],
    'a Windows path is found',
  );
  const reactors = server.app.db.prepare("SELECT user_id FROM reactions WHERE emoji = '👍' ORDER BY user_id").pluck().all();
  t.same(reactors, [alice.user_id, bob.user_id].sort());

  const news = (await owner.get(`/api/servers/${serverId}/channels/${by.news.id}/messages`)).body;
  t.equal(news[0].mention_everyone, true, '@everyone stays a mention of everyone');
  const found = await owner.get(`/api/search?q=${encodeURIComponent('windows')}`);
  t.same(
    found.body.results.map((m: { content: string }) => m.content),
    ['from a Windows export'],
    'the search index holds the history',
  );
  t.equal(server.app.db.prepare('SELECT status FROM imports').pluck().get(), 'done');
  t.equal((server.app.db.pragma('foreign_key_check') as unknown[]).length, 0);
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
  const tables = [
    'servers',
    'channels',
    'categories',
    'roles',
    'users',
    'members',
    'messages',
    'attachments',
    'reactions',
    'reaction_extras',
    'imported_people',
  ];
  const counts = () => Object.fromEntries(tables.map((name) => [name, db.prepare(`SELECT COUNT(*) FROM ${name}`).pluck().get() as number]));
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
    message({
      id: String(950000000000000000n + BigInt(i)),
      content: `line ${i}`,
      author: i % 2 ? ALICE : BOB,
      timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
    }),
  );
  const parts: Record<string, unknown> = {};
  for (let p = 0; p < 6; p++)
    parts[`Hobby Club - general [810000000000000001] [part ${p + 1}].json`] = channelFile({ ...GENERAL, messages: messages.slice(p * 1000, (p + 1) * 1000) });
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
  t.same(
    order,
    messages.map((m) => m.content),
    'in snowflake order, across the stop',
  );
  t.equal(db.prepare('SELECT COUNT(*) FROM servers').pluck().get(), 1, 'one server');
});

t.test('forums, every message type, rendered mentions', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const folder = writeExport(forumExport());
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  const run = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
  t.equal(run.code, 0, run.stderr);
  const serverId = (await owner.get('/api/servers')).body[0].id;
  const channels = (await owner.get(`/api/servers/${serverId}/channels`)).body as { id: string; name: string; type: string; category_id: string | null }[];
  const by = Object.fromEntries(channels.map((c) => [c.name, c]));
  t.equal(by.ideas.type, 'forum', 'a forum is a forum');
  t.same(Object.keys(by).sort(), ['ideas', 'types'], 'its post is in no channel list');
  const [darkMode] = (await owner.get(`/api/servers/${serverId}/channels/${by.ideas.id}/threads?archived=true`)).body;
  t.match(darkMode, { name: 'dark mode', parent_id: by.ideas.id, archived: true, message_count: 1 }, 'a post of the forum');
  const [post] = (await owner.get(`/api/servers/${serverId}/channels/${darkMode.id}/messages`)).body;
  t.equal(darkMode.starter_message_id, post.id, 'which starts from its first message');
  t.equal(post.content, 'please @bob, dark mode', 'a rendered mention stays as written');
  const bob = (await owner.get(`/api/servers/${serverId}/members`)).body.find((m: { username: string }) => m.username === 'bob-discord');
  t.same(post.mentions, [bob.user_id], 'and still mentions who the export says');
  const lines = (await owner.get(`/api/servers/${serverId}/channels/${by.types.id}/messages`)).body.reverse().map((m: { content: string }) => m.content);
  t.same(
    lines,
    [
      'Default line',
      'Reply line',
      '*ChannelPinnedMessage line*',
      '*GuildMemberJoin line*',
      '*ThreadCreated line*',
      '*RecipientAdd line*',
      '*RecipientRemove line*',
      '*ChannelNameChange line*',
      '*ChannelIconChange line*',
      '*Call line*',
      'StageStart line',
    ],
    'words as words, system lines in italics, an unknown type with text as a plain line',
  );
});

t.test('the way out and back: a server exported and imported again keeps what the format carries', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const folder = writeExport(standardExport());
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  t.equal((await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)).code, 0);
  const [first] = (await owner.get('/api/servers')).body;
  // Live additions after the import: an edit and a new message with a file, by the owner.
  const general = (await owner.get(`/api/servers/${first.id}/channels`)).body.find((c: { name: string }) => c.name === 'general');
  const form = new FormData();
  form.append('content', 'live, after the import');
  form.append('attachments', new Blob([Buffer.from('live file')]), 'live.txt');
  const live = (await must(owner.post(`/api/servers/${first.id}/channels/${general.id}/messages`, form), 201)).body;
  // Threads made here: one from that message, a private one, and a forum with a post (issue 49).
  const C = `/api/servers/${first.id}/channels`;
  const about = (await must(owner.post(`${C}/${general.id}/threads`, { name: 'about that', message_id: live.id }), 201)).body;
  await must(owner.post(`${C}/${about.id}/messages`, { content: 'a reply in the thread' }), 201);
  const side = (await must(owner.post(`${C}/${general.id}/threads`, { name: 'side talk', private: true }), 201)).body;
  await must(owner.post(`${C}/${side.id}/messages`, { content: 'between us' }), 201);
  const forum = (await must(owner.post(C, { name: 'questions', type: 'forum' }), 201)).body;
  await must(owner.post(`${C}/${forum.id}/threads`, { name: 'a question', content: 'how does it work?' }), 201);

  const res = await fetch(`${server.url}/api/servers/${first.id}/export`, { headers: { cookie: owner.cookie! } });
  t.equal(res.status, 200);
  const zip = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'round-trip-')), 'server.zip');
  fs.writeFileSync(zip, Buffer.from(await res.arrayBuffer()));
  t.teardown(() => fs.rmSync(path.dirname(zip), { recursive: true, force: true }));
  // Taken to another instance (here, the same export again would add nothing: it is the same Discord server).
  const elsewhere = await startServer();
  t.teardown(elsewhere.close);
  const newOwner = await signUp(elsewhere.url);
  const again = await cli(['import', 'discord', zip, '--owner', newOwner.username, '--server', 'Round trip'], elsewhere.dataDir);
  t.equal(again.code, 0, again.stderr);
  const [second] = (await newOwner.get('/api/servers')).body;
  t.equal(second.name, 'Round trip', 'a new server');
  const home = await cli(['import', 'discord', zip, '--owner', owner.username, '--server', 'Copy'], server.dataDir);
  t.match(home.stdout, /Imported into a new server/, 'at home too, a copy: an export of a server here is a server of its own');
  t.match(
    (await cli(['import', 'discord', zip, '--owner', owner.username], server.dataDir)).stdout,
    /Appended to the server .*\n {2}0 messages/,
    'and the same export again adds nothing',
  );

  /** Everything a server shows that the format carries, with names as the people are shown. */
  const snapshot = async (server: TestServer, owner: Client, serverId: string) => {
    const channels = (await owner.get(`/api/servers/${serverId}/channels`)).body as {
      id: string;
      name: string;
      type: string;
      topic: string;
      category_id: string | null;
    }[];
    const categories = new Map((await owner.get(`/api/servers/${serverId}/categories`)).body.map((c: { id: string; name: string }) => [c.id, c.name]));
    const out: Record<string, unknown> = {};
    for (const c of channels) {
      const messages = (await owner.get(`/api/servers/${serverId}/channels/${c.id}/messages?limit=100`)).body.reverse();
      out[c.name] = {
        topic: c.topic,
        category: c.category_id ? categories.get(c.category_id) : null,
        messages: await Promise.all(
          messages.map(async (m: any) => ({
            author: m.author.display_name ?? m.author.username,
            // Mentions are written with each server's usernames: compare who is mentioned.
            content: m.content.replace(/@[A-Za-z0-9_-]+/g, (name: string) => (name === '@everyone' ? name : '@someone')),
            mentions: m.mentions.length,
            everyone: m.mention_everyone,
            created_at: m.created_at,
            edited_at: m.edited_at,
            pinned: m.pinned,
            reply: m.reply_preview ? m.reply_preview.content.replace(/@[A-Za-z0-9_-]+/g, '@someone') : null,
            reactions: m.reactions.map((r: { emoji: string; count: number }) => [r.emoji, r.count]),
            files: await Promise.all(
              m.attachments.map(async (a: { name: string; url: string }) => [
                a.name,
                Buffer.from(await (await fetch(new URL(a.url, server.url), { headers: { cookie: owner.cookie! } })).arrayBuffer()).toString('base64'),
              ]),
            ),
          })),
        ),
      };
    }
    // Threads and forum posts (issue 49): under their channel, as they were, with their messages and starter.
    const threads: Record<string, unknown> = {};
    for (const c of channels) {
      const listed = [
        ...(await owner.get(`/api/servers/${serverId}/channels/${c.id}/threads`)).body,
        ...(await owner.get(`/api/servers/${serverId}/channels/${c.id}/threads?archived=true`)).body,
      ];
      for (const x of listed) {
        const messages = (await owner.get(`/api/servers/${serverId}/channels/${x.id}/messages?limit=100`)).body.reverse();
        const starter = x.starter_message_id
          ? [...messages, ...(await owner.get(`/api/servers/${serverId}/channels/${c.id}/messages?limit=100`)).body].find(
              (m: any) => m.id === x.starter_message_id,
            )
          : null;
        threads[x.name] = {
          parent: c.name,
          type: c.type,
          archived: x.archived,
          private: x.private,
          starter: starter ? starter.content : null,
          messages: messages.map((m: any) => [m.author.display_name ?? m.author.username, m.content, m.created_at]),
        };
      }
    }
    const roles = (await owner.get(`/api/servers/${serverId}/roles`)).body.map((r: { name: string; color: number | null }) => [r.name, r.color]);
    return { channels: out, threads, roles };
  };
  const before = await snapshot(server, owner, first.id);
  const after = await snapshot(elsewhere, newOwner, second.id);
  t.same(Object.keys(before.threads).sort(), ['a question', 'about that', 'plans', 'side talk'], 'every thread and post is in the snapshot');
  t.same(after, before, 'channels, topics, categories, authors, text, mentions, times, edits, pins, replies, reactions, files, threads and posts, and roles');
});

t.test('an import from before threads keeps its threads as the channels it made of them; a newer export appends to those', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const files = standardExport();
  const folder = writeExport(files);
  t.teardown(() => fs.rmSync(folder, { recursive: true, force: true }));
  t.equal((await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)).code, 0);
  const serverId = (await owner.get('/api/servers')).body[0].id;
  const C = `/api/servers/${serverId}/channels`;
  const general = (await owner.get(C)).body.find((c: { name: string }) => c.name === 'general');
  const [plans] = (await owner.get(`${C}/${general.id}/threads?archived=true`)).body;
  // As an import before issue 49 left it: the thread a channel named after its parent, mapped so.
  const flat = (await must(owner.post(C, { name: 'general › plans' }), 201)).body;
  const db = server.app.db;
  db.transaction(() => {
    db.prepare('UPDATE messages SET channel_id = ? WHERE channel_id = ?').run(flat.id, plans.id);
    db.prepare('DELETE FROM channels WHERE id = ?').run(plans.id);
    db.prepare("UPDATE import_map SET local_id = ? WHERE server_id = ? AND kind = 'channel' AND discord_id = '830000000000000001'").run(flat.id, serverId);
  })();

  const newer = JSON.parse(JSON.stringify(files['Hobby Club - plans [830000000000000001].json'])) as ReturnType<typeof channelFile>;
  newer.messages.push(message({ id: '990000000000000002', content: 'more plans', timestamp: '2024-05-02T10:00:00.000+00:00' }));
  const delta = writeExport({ ...files, 'Hobby Club - plans [830000000000000001].json': newer });
  t.teardown(() => fs.rmSync(delta, { recursive: true, force: true }));
  const run = await cli(['import', 'discord', delta, '--owner', owner.username], server.dataDir);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /1 messages, 0 files/);
  t.same(
    (await owner.get(`${C}/${flat.id}/messages`)).body.map((m: { content: string }) => m.content),
    ['more plans', '*Started a thread.*', 'thread talk'],
    'the newer message goes to the channel the thread was made',
  );
  t.same((await owner.get(`${C}/${general.id}/threads?archived=true`)).body, [], 'no thread is made beside it');
  t.equal(db.prepare('SELECT COUNT(*) FROM threads').pluck().get(), 0);
});
