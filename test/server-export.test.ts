// Exporting a whole server in DiscordChatExporter's JSON shape (the way out of the importer):
// the zip as the owner downloads it, every channel file held against the importer's schema, and
// the importer's own dry run reading it back. Real server, real HTTP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { Client, signUp } from './helpers/client';
import { must } from './helpers/community';
import { unzip } from './helpers/export';
import { type TestServer, startServer } from './helpers/server';
import { channelFileError } from '../src/parts/import/discord-format';
import { planDiscordImport } from '../src/parts/import/discord-plan';
import { openExport } from '../src/parts/import/export-files';
import { PARTITION_MESSAGES } from '../src/parts/import/discord-export';

/** The export as the owner downloads it: the answer, and its entries by name. */
async function download(server: TestServer, serverId: string, client: Client) {
  const res = await fetch(`${server.url}/api/servers/${serverId}/export`, { headers: { cookie: client.cookie! } });
  const zip = Buffer.from(await res.arrayBuffer());
  return { res, zip, entries: res.status === 200 ? await unzip(zip) : new Map<string, Buffer>() };
}

/** The channel files of an export (JSON outside the `_Files` folders), parsed, by entry name. */
function channelFiles(entries: Map<string, Buffer>): Map<string, any> {
  const files = new Map<string, any>();
  for (const [name, data] of entries) if (name.endsWith('.json') && !name.includes('_Files/')) files.set(name, JSON.parse(data.toString('utf8')));
  return files;
}

/** The importer's dry run of a zip written to disk. */
async function planOf(zip: Buffer) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-export-'));
  const file = path.join(dir, 'export.zip');
  fs.writeFileSync(file, zip);
  const files = await openExport(file);
  try {
    return await planDiscordImport(files);
  } finally {
    files.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

t.test('the owner exports the server as DiscordChatExporter JSON with its files, and the importer reads it back', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [owner, member, fan, leaver] = await Promise.all([signUp(server.url), signUp(server.url), signUp(server.url), signUp(server.url)]);
  const serverId: string = (await must(owner.post('/api/servers', { name: 'Hobby/Club' }), 201)).body.id;
  const base = `/api/servers/${serverId}`;
  const token: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  for (const client of [member, fan, leaver]) await must(client.post(`/api/invites/${token}/accept`), 200);
  const general = (await must(owner.get(`${base}/channels`), 200)).body[0];
  await must(owner.request('PATCH', `${base}/channels/${general.id}`, { topic: 'all things' }), 200);
  const random = (await must(owner.post(`${base}/channels`, { name: 'random' }), 201)).body;
  const text = (await must(owner.post(`${base}/categories`, { name: 'Text' }), 201)).body;
  await must(owner.request('PATCH', `${base}/channels/${random.id}`, { category_id: text.id }), 200);
  await must(owner.post(`${base}/roles`, { name: 'mods', full_server_admin: false, color: 0x3ba55d, mentionable: true }), 201);
  await must(owner.put(`${base}/members/${member.userId}/role`, { role: 'mods' }), 200);
  const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 40, b: 90 } } })
    .png()
    .toBuffer();
  const avatarForm = new FormData();
  avatarForm.append('avatar', new Blob([png], { type: 'image/png' }), 'me.png');
  await must(member.put('/api/account/avatar', avatarForm), 200);

  const inGeneral = `${base}/channels/${general.id}/messages`;
  const inRandom = `${base}/channels/${random.id}/messages`;
  const hello = (await must(owner.post(inGeneral, { content: `hi @${member.username} and @mods, and @everyone` }), 201)).body;
  const row = server.app.db.prepare('SELECT seq, mentions, mention_roles FROM messages WHERE id = ?').get(hello.id) as {
    seq: number;
    mentions: string;
    mention_roles: string;
  };
  t.same(JSON.parse(row.mentions), [member.userId], 'set-up: the message mentions the member');
  t.equal(JSON.parse(row.mention_roles).length, 1, 'set-up: and the role');
  await must(member.post(inGeneral, { content: 'hello back', reply_to: hello.id }), 201);
  await must(owner.put(`${inGeneral}/${hello.id}`, { content: `hi @${member.username} and @mods, and @everyone!` }), 200);
  await must(owner.put(`${base}/channels/${general.id}/pins/${hello.id}`), 200);
  await must(member.put(`${inGeneral}/${hello.id}/reactions`, { emoji: '👍' }), 200);
  await must(fan.put(`${inGeneral}/${hello.id}/reactions`, { emoji: '👍' }), 200);
  // Reactions an import counted without knowing who.
  server.app.db.prepare("INSERT INTO reaction_extras (message_seq, emoji, extra) VALUES (?, '👍', 3)").run(row.seq);
  const notes = Buffer.from('the minutes of the meeting\n');
  const upload = new FormData();
  upload.append('content', 'the notes');
  upload.append('attachments', new Blob([notes], { type: 'text/plain' }), 'notes 100%.txt');
  const withFile = (await must(member.post(inRandom, upload), 201)).body;
  await must(leaver.post(inRandom, { content: 'bye all' }), 201);
  await must(leaver.delete('/api/account', { password: 'correct horse' }), 204);

  const { res, zip, entries } = await download(server, serverId, owner);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/zip');
  t.match(res.headers.get('content-disposition'), /^attachment; filename="Hobby_Club\.zip"/, 'the file is named after the server, without its slash');

  const files = channelFiles(entries);
  t.equal(files.size, 2, 'one file per channel');
  for (const [name, data] of files) t.equal(channelFileError(data), null, `${name} fits the importer's schema`);
  const [generalName, generalFile] = [...files].find(([, f]) => f.channel.name === 'general')!;
  const [randomName, randomFile] = [...files].find(([, f]) => f.channel.name === 'random')!;
  t.equal(generalName, `Hobby_Club - general [${generalFile.channel.id}].json`, 'named as DiscordChatExporter names a channel file');
  t.match(generalFile, {
    guild: { name: 'Hobby/Club', iconUrl: null },
    channel: { type: 'GuildTextChat', categoryId: null, category: null, name: 'general', topic: 'all things' },
    dateRange: { after: null, before: null },
    messageCount: 2,
  });
  t.match(generalFile.guild.id, /^[0-9]{1,20}$/, 'the server has a snowflake');
  t.ok(Number.isFinite(Date.parse(generalFile.exportedAt)), 'exportedAt is a time');
  t.match(randomFile.channel, { name: 'random', category: 'Text', categoryId: /^[0-9]{1,20}$/, topic: null }, 'a channel in a category names it');
  t.equal(randomFile.guild.id, generalFile.guild.id, 'one server, one id');

  const [first, answer] = generalFile.messages;
  const memberSf = first.mentions[0].id;
  const modsSf = first.mentions[0].roles[0].id;
  t.match(
    first,
    {
      type: 'Default',
      timestamp: hello.created_at,
      timestampEdited: /^\d{4}-/,
      callEndedTimestamp: null,
      isPinned: true,
      content: `hi <@${memberSf}> and <@&${modsSf}>, and @everyone!`,
      author: { name: owner.username, discriminator: '0000', nickname: owner.username, color: null, isBot: false, roles: [], avatarUrl: null },
      attachments: [],
      embeds: [],
      stickers: [],
      reference: null,
      inlineEmojis: [],
    },
    'raw mentions, the edit, the pin',
  );
  t.match(first.mentions, [{ name: member.username, roles: [{ name: 'mods', color: '#3ba55d' }] }], 'the mentioned member, with their role');
  t.equal(first.reactions.length, 1);
  t.match(
    first.reactions[0],
    { emoji: { id: null, name: '👍', code: '', isAnimated: false, imageUrl: null }, count: 5 },
    'two people and three counted by an import',
  );
  t.same(first.reactions[0].users.map((u: any) => u.name).sort(), [member.username, fan.username].sort(), 'who reacted');
  t.notOk('roles' in first.reactions[0].users[0], 'reaction users go without roles');
  t.match(answer, {
    type: 'Reply',
    timestampEdited: null,
    isPinned: false,
    content: 'hello back',
    reference: { messageId: first.id, channelId: generalFile.channel.id, guildId: generalFile.guild.id },
  });
  t.match(
    answer.author,
    { id: memberSf, name: member.username, color: '#3ba55d', roles: [{ id: modsSf, name: 'mods', color: '#3ba55d', position: 1 }] },
    'the author with their coloured role',
  );
  t.equal(answer.author.avatarUrl, `avatars_Files/${memberSf}.webp`, 'the avatar, relative to the channel file');
  t.same(entries.get(answer.author.avatarUrl), fs.readFileSync(path.join(server.dataDir, 'avatars', `${member.userId}.webp`)), 'the avatar file is in the zip');

  const [notesMessage, farewell] = randomFile.messages;
  t.equal(notesMessage.attachments.length, 1);
  const attachment = notesMessage.attachments[0];
  t.match(attachment, { id: /^[0-9]{1,20}$/, fileName: withFile.attachments[0].name, fileSizeBytes: notes.length });
  t.equal(attachment.url, `${randomName}_Files/${attachment.id}-notes 100_.txt`, 'the file beside its channel file, as --media lays it out (no % in the path)');
  t.same(entries.get(attachment.url), notes, 'the file is in the zip, byte for byte');
  t.match(farewell.author, { name: 'deleted-user', nickname: 'Deleted user', avatarUrl: null }, 'a deleted account');

  const plan = await planOf(zip);
  t.equal(plan.guild.id, generalFile.guild.id);
  t.same(
    plan.channels.map((c) => [c.name, c.messages, c.attachments, c.parent]),
    [
      ['general', 2, { found: 0, missing: 0 }, null],
      ['random', 2, { found: 1, missing: 0 }, 'Text'],
    ],
    'the importer reads every channel, with its file found',
  );
  t.same(plan.categories, ['Text']);
  t.equal(plan.roles, 1, 'the role comes across');
  t.equal(plan.people, 4, 'everyone named: the owner, the member, the fan and the deleted account');

  const again = await download(server, serverId, owner);
  t.equal(channelFiles(again.entries).get(generalName)?.messages[0].id, first.id, 'the same ids in every export');
});

t.test('only the owner may export: 403 to members, 404 to outsiders, 401 signed out; 429 past three an hour', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const [owner, member, outsider] = await Promise.all([signUp(server.url), signUp(server.url), signUp(server.url)]);
  const serverId: string = (await must(owner.post('/api/servers', { name: 'Quiet' }), 201)).body.id;
  const token: string = (await must(owner.post(`/api/servers/${serverId}/invites`), 201)).body.token;
  await must(member.post(`/api/invites/${token}/accept`), 200);
  const path = `/api/servers/${serverId}/export`;

  const refused = await member.get(path);
  t.same([refused.status, refused.text.trim()], [403, 'only the owner can export a server']);
  const hidden = await outsider.get(path);
  t.same([hidden.status, hidden.text.trim()], [404, 'server not found']);
  t.equal((await new Client(server.url).get(path)).status, 401);
  t.equal((await owner.get('/api/servers/00000000-0000-4000-8000-000000000000/export')).status, 404, 'an unknown server');
  for (let i = 0; i < 3; i++) t.equal((await owner.get(path)).status, 200, `export ${i + 1}`);
  const limited = await owner.get(path);
  t.equal(limited.status, 429, 'the fourth within the hour');
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'with Retry-After');
});

t.test(
  `a channel of more than ${PARTITION_MESSAGES} messages is split as --partition ${PARTITION_MESSAGES} splits it, and joined again by the importer`,
  async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const owner = await signUp(server.url);
    const serverId: string = (await must(owner.post('/api/servers', { name: 'Busy' }), 201)).body.id;
    const general = (await must(owner.get(`/api/servers/${serverId}/channels`), 200)).body[0];
    const total = PARTITION_MESSAGES + 1;
    const insert = server.app.db.prepare('INSERT INTO messages (id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?)');
    server.app.db.transaction(() => {
      for (let i = 0; i < total; i++) {
        const at = new Date(Date.parse('2026-01-01T00:00:00Z') + i * 1000).toISOString();
        insert.run(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, general.id, owner.userId, `message ${i}`, at);
      }
    })();

    const { zip, entries } = await download(server, serverId, owner);
    const files = [...channelFiles(entries)];
    const base = `Busy - general [${files[0][1].channel.id}]`;
    t.same(
      files.map(([name, f]) => [name, f.messageCount, f.messages.length]).sort(),
      [
        [`${base} [part 2].json`, 1, 1],
        [`${base}.json`, PARTITION_MESSAGES, PARTITION_MESSAGES],
      ],
      'the first file keeps the name, the next is [part 2]',
    );
    for (const [name, data] of files) t.equal(channelFileError(data), null, `${name} fits`);
    const plan = await planOf(zip);
    t.match(plan.channels, [{ name: 'general', files: 2, messages: total }], 'the importer joins the parts');

    // A download left halfway stops the export, quietly; the server carries on.
    const leaving = new AbortController();
    const left = await fetch(`${server.url}/api/servers/${serverId}/export`, { headers: { cookie: owner.cookie! }, signal: leaving.signal });
    await left.body!.getReader().read();
    leaving.abort();
    for (let i = 0; i < 100 && !server.logs.some((line) => line.includes('/export 200 aborted')); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    t.ok(
      server.logs.some((line) => line.includes('/export 200 aborted')),
      'the download is logged as left',
    );
    t.equal((await fetch(`${server.url}/healthz`)).status, 200, 'the server still answers');
    t.notOk(
      server.logs.some((line) => /export of server .* failed|unexpected error/.test(line)),
      'a client leaving is no failure',
    );
  },
);
