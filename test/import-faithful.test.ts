// The Discord import, faithful to the exports people have (issue 52): a reference within the
// channel is a reply whatever the message type (older exports write replies as Default), one to
// another channel or server (a forward) a quote with a link; a DM-only export is refused and
// writes nothing; older exports without exportedAt, roles or reaction users come across; the dry
// run's time range is the earliest and the latest message; and a newer export of messages already
// brought applies their later edits, pins, unpins and reaction counts, and says so.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { unzip } from './helpers/export';
import { cli } from './helpers/cli';
import { signUp } from './helpers/client';
import { ALICE, BOB, GUILD, channelFile, message, writeExport } from './helpers/discord-export';
import { startServer } from './helpers/server';

const GENERAL = { id: '810000000000000501', type: 'GuildTextChat', name: 'general' };
const id = (n: number) => String(910_000_000_000_000_000n + BigInt(n));

t.test('the import, faithful', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const folders: string[] = [];
  t.teardown(() => folders.forEach((folder) => fs.rmSync(folder, { recursive: true, force: true })));
  const exportOf = (files: Record<string, unknown>) => {
    const folder = writeExport(files);
    folders.push(folder);
    return folder;
  };
  const db = server.app.db;
  const count = (table: string) => db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;

  await t.test('a same-channel reference is a reply whatever the type; another channel’s is a quote with a link', async (t) => {
    const owner = await signUp(server.url);
    const first = message({ id: id(1), content: 'the question', author: ALICE, timestamp: '2024-02-01T10:00:00.000+00:00' });
    const oldStyle = message({
      id: id(2),
      type: 'Default',
      content: 'an answer, written as Default',
      reference: { messageId: id(1), channelId: GENERAL.id, guildId: GUILD.id },
      timestamp: '2024-02-01T10:05:00.000+00:00',
    });
    const noChannel = message({
      id: id(3),
      type: 'Reply',
      content: 'a reply naming no channel',
      reference: { messageId: id(1) },
      timestamp: '2024-02-01T10:06:00.000+00:00',
    });
    const forward = message({
      id: id(4),
      type: 'Default',
      content: '',
      reference: { messageId: '930000000000000001', channelId: '810000000000000999', guildId: '800000000000000777' },
      timestamp: '2024-02-01T10:07:00.000+00:00',
    });
    const crossReply = message({
      id: id(5),
      type: 'Reply',
      content: 'see over there',
      reference: { messageId: '930000000000000002', channelId: '810000000000000998', guildId: GUILD.id },
      timestamp: '2024-02-01T10:08:00.000+00:00',
    });
    const folder = exportOf({ 'general.json': channelFile({ ...GENERAL, messages: [first, oldStyle, noChannel, forward, crossReply] }) });
    const dry = await cli(['import', 'discord', folder, '--owner', owner.username, '--dry-run'], server.dataDir);
    t.equal(dry.code, 0, dry.stderr);
    t.match(dry.stdout, /forwarded from other channels or servers: brought as a quote with a link/, 'the dry run says what forwards become');
    t.match(dry.stdout, /2024-02-01T10:00:00\.000\+00:00 to 2024-02-01T10:08:00\.000\+00:00/);
    const run = await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir);
    t.equal(run.code, 0, run.stderr);
    t.match(run.stdout, /5 messages/, 'nothing refused, nothing left out');
    const serverId = (await owner.get('/api/servers')).body[0].id;
    const general = (await owner.get(`/api/servers/${serverId}/channels`)).body[0].id;
    const [cross, fwd, reply2, reply1, question] = (await owner.get(`/api/servers/${serverId}/channels/${general}/messages`)).body;
    t.equal(reply1.reply_to, question.id, 'a Default message naming one of its channel is a reply');
    t.equal(reply1.reply_preview.content, 'the question');
    t.equal(reply2.reply_to, question.id, 'a reference without a channel is of this one');
    t.equal(fwd.reply_to, null);
    t.equal(
      fwd.content,
      '> ↪ forwarded: https://discord.com/channels/800000000000000777/810000000000000999/930000000000000001',
      'a forward: a quote with a link',
    );
    t.equal(cross.reply_to, null);
    t.equal(cross.content, `> ↪ forwarded: https://discord.com/channels/${GUILD.id}/810000000000000998/930000000000000002\nsee over there`);
  });

  await t.test('a DM or group-DM export is refused and writes nothing', async (t) => {
    const owner = await signUp(server.url);
    const dms = { id: '0', name: 'Direct Messages', iconUrl: null };
    for (const type of ['DirectTextChat', 'DirectGroupTextChat']) {
      const folder = exportOf({ 'dm.json': channelFile({ id: '810000000000000601', type, name: 'bob', messages: [message({ content: 'psst' })] }, dms) });
      const before = { servers: count('servers'), users: count('users'), imports: count('imports') };
      for (const dryRun of [true, false]) {
        const run = await cli(['import', 'discord', folder, '--owner', owner.username, ...(dryRun ? ['--dry-run'] : [])], server.dataDir);
        t.equal(run.code, 1, `${type}${dryRun ? ', dry run' : ''}`);
        t.equal(run.stderr, 'cannot import: this export holds only direct messages: nothing to import\n', 'the refusal, ending with a newline');
      }
      t.same({ servers: count('servers'), users: count('users'), imports: count('imports') }, before, 'nothing written');
    }
  });

  await t.test('an older export without exportedAt, roles or reaction users comes across', async (t) => {
    const owner = await signUp(server.url);
    const { roles: _roles, ...oldBob } = { ...BOB, id: '700000000000000701', name: 'oldbob', nickname: 'oldbob' };
    const file = channelFile({
      ...GENERAL,
      id: '810000000000000701',
      messages: [message({ id: id(101), author: oldBob, content: 'from 2021', reactions: [{ emoji: { id: null, name: '👍', isAnimated: false }, count: 3 }] })],
    }) as Record<string, unknown>;
    delete file.exportedAt;
    const run = await cli(['import', 'discord', exportOf({ 'old.json': file }), '--owner', owner.username], server.dataDir);
    t.equal(run.code, 0, run.stderr);
    const serverId = (await owner.get('/api/servers')).body[0].id;
    const channel = (await owner.get(`/api/servers/${serverId}/channels`)).body[0].id;
    const [only] = (await owner.get(`/api/servers/${serverId}/channels/${channel}/messages`)).body;
    t.match(only, { content: 'from 2021', author: { display_name: 'oldbob' }, reactions: [{ emoji: '👍', count: 3, reacted: false }] });
  });

  await t.test('a newer export applies later edits, pins, unpins and reaction counts, and says so', async (t) => {
    const owner = await signUp(server.url);
    const CH = { ...GENERAL, id: '810000000000000801' };
    const thumbs = (count: number, users: object[] = []) => [{ emoji: { id: null, name: '👍', isAnimated: false }, count, users }];
    const a = message({ id: id(201), content: 'first words', author: ALICE, timestamp: '2024-03-01T10:00:00.000+00:00', reactions: thumbs(1, [ALICE]) });
    const b = message({ id: id(202), content: 'pin me later', timestamp: '2024-03-01T10:01:00.000+00:00', isPinned: true });
    const c = message({ id: id(203), content: 'to unpin', timestamp: '2024-03-01T10:02:00.000+00:00', isPinned: false });
    const first = exportOf({ 'general.json': channelFile({ ...CH, messages: [a, b, c] }) });
    t.equal((await cli(['import', 'discord', first, '--owner', owner.username], server.dataDir)).code, 0);

    const later = [
      { ...a, content: 'first words, edited', timestampEdited: '2024-03-05T09:00:00.000+00:00', reactions: thumbs(4, [ALICE, BOB]) },
      { ...b, isPinned: false },
      { ...c, isPinned: true },
    ] as unknown as (typeof a)[];
    const second = exportOf({ 'general.json': channelFile({ ...CH, messages: later }) });
    const run = await cli(['import', 'discord', second, '--owner', owner.username], server.dataDir);
    t.equal(run.code, 0, run.stderr);
    t.match(run.stdout, /3 messages were already there/);
    t.match(run.stdout, /refreshed from this export: 1 edited, 1 pinned, 1 unpinned, 1 with new reaction counts/);
    const serverId = (await owner.get('/api/servers')).body[0].id;
    const channel = (await owner.get(`/api/servers/${serverId}/channels`)).body[0].id;
    const [mc, mb, ma] = (await owner.get(`/api/servers/${serverId}/channels/${channel}/messages`)).body;
    t.match(ma, { content: 'first words, edited', edited_at: '2024-03-05T09:00:00.000Z', reactions: [{ emoji: '👍', count: 4 }] });
    t.equal(mb.pinned, false, 'unpinned');
    t.equal(mc.pinned, true, 'pinned');
    const history = (await owner.get(`/api/servers/${serverId}/channels/${channel}/messages/${ma.id}/history`)).body;
    t.same(
      history.versions.map((v: { content: string }) => v.content),
      ['first words', 'first words, edited'],
      'the earlier text is kept in its history',
    );

    const again = await cli(['import', 'discord', second, '--owner', owner.username], server.dataDir);
    t.notMatch(again.stdout, /refreshed/, 'the same export again changes nothing');
  });

  await t.test('a round trip keeps Discord names and tags, system message types and custom emoji ids; a new author gets ours', async (t) => {
    const owner = await signUp(server.url);
    const tagged = { ...ALICE, id: '700000000000000901', name: 'Alice.W', discriminator: '1234', nickname: 'Alice' };
    const CH = { ...GENERAL, id: '810000000000000901' };
    const party = { id: '955555555555555555', name: 'PartyBlob', isAnimated: true };
    const messages = [
      message({ id: id(301), author: tagged, content: 'hi <:PartyBlob:955555555555555555>', reactions: [{ emoji: party, count: 2, users: [tagged] }] }),
      message({ id: id(302), type: 'GuildMemberJoin', content: 'Joined the server.', author: tagged }),
      message({ id: id(303), type: 'ChannelPinnedMessage', content: '', author: tagged, reference: { messageId: id(301), channelId: CH.id } }),
    ];
    const folder = exportOf({ 'general.json': channelFile({ ...CH, messages }) });
    t.equal((await cli(['import', 'discord', folder, '--owner', owner.username], server.dataDir)).code, 0);
    const serverId = (await owner.get('/api/servers')).body[0].id;
    const channel = (await owner.get(`/api/servers/${serverId}/channels`)).body[0].id;
    await owner.post(`/api/servers/${serverId}/channels/${channel}/messages`, { content: 'posted here' });

    const exported = async (client: typeof owner, sid: string) => {
      const res = await fetch(`${server.url}/api/servers/${sid}/export`, { headers: { cookie: client.cookie! } });
      const zip = Buffer.from(await res.arrayBuffer());
      const entries = await unzip(zip);
      const [name] = [...entries.keys()].filter((n) => n.endsWith('.json') && !n.includes('_Files/'));
      return { zip, file: JSON.parse(entries.get(name)!.toString('utf8')) };
    };
    const check = (t: Test, file: any, ownerName: string) => {
      const [hi, join, pin, here] = file.messages;
      t.match(hi.author, { id: tagged.id, name: 'Alice.W', discriminator: '1234' }, 'the Discord name and tag, as they came');
      t.equal(hi.content, 'hi <:PartyBlob:955555555555555555>', 'a custom emoji keeps its id in the text');
      t.match(hi.reactions, [{ emoji: { id: party.id, name: 'PartyBlob', isAnimated: true }, count: 2 }], 'and in a reaction');
      t.match(join, { type: 'GuildMemberJoin', content: 'Joined the server.' }, 'a system line keeps its type');
      t.match(pin, { type: 'ChannelPinnedMessage', content: '' });
      t.match(here.author, { name: ownerName, discriminator: '0000' }, 'a new author gets ours');
    };
    const first = await exported(owner, serverId);
    check(t, first.file, owner.username);

    // The export imported again elsewhere, and exported again: the same.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'round-trip-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'export.zip'), first.zip);
    const other = await signUp(server.url);
    const back = await cli(['import', 'discord', path.join(dir, 'export.zip'), '--owner', other.username], server.dataDir);
    t.equal(back.code, 0, back.stderr);
    const again = await exported(other, (await other.get('/api/servers')).body[0].id);
    check(t, again.file, owner.username);
  });
});
