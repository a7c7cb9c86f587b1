// Custom emoji (issue 50): uploads of each image kind and their refusals, names, slots, who may
// manage them, the audit log, the live list, the images served from our origin, backups.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { backup } from '../src/parts/backup';
import { type Client, signUp } from './helpers/client';
import { befriend, community, crowd, must } from './helpers/community';
import { startServer } from './helpers/server';
import { multipart } from './helpers/multipart';
import { openSocket } from './helpers/ws';

const frame = (r: number, width = 64, height = 48) =>
  sharp({ create: { width, height, channels: 4, background: { r, g: 90, b: 40, alpha: 1 } } })
    .png()
    .toBuffer();
const animated = async (format: 'gif' | 'webp') => {
  const frames = [await frame(255), await frame(0), await frame(128)];
  const joined = sharp(frames, { join: { animated: true } });
  return format === 'gif' ? joined.gif({ delay: [100, 100, 100], loop: 0 }).toBuffer() : joined.webp().toBuffer();
};
/** Frames of noise: small as a GIF of few colours, far past 256 KiB as a 128 × 128 WebP of every frame. */
const noisy = async () => {
  const frames = await Promise.all(
    Array.from({ length: 30 }, () =>
      sharp(crypto.randomBytes(128 * 128 * 3), { raw: { width: 128, height: 128, channels: 3 } })
        .png()
        .toBuffer(),
    ),
  );
  return sharp(frames, { join: { animated: true } })
    .gif({ colours: 256, dither: 0 })
    .toBuffer();
};

function emojiForm(name: string | null, data: Buffer, filename: string, type: string, field = 'image'): FormData {
  const form = new FormData();
  if (name !== null) form.append('name', name);
  form.append(field, new Blob([data], { type }), filename);
  return form;
}

t.test('custom emoji: each image kind, the refusals, names, slots, permissions, audit, live list, served and backed up', async (t) => {
  const server = await startServer({ settings: { emojiSlots: { static: 3, animated: 3 } } });
  t.teardown(server.close);
  const { serverId, base, clients, newMember } = await community(server);
  const { owner, admin, member, outsider } = clients;
  const upload = (client: Client, form: FormData) => client.request('POST', `${base}/emojis`, form);
  const stream = await openSocket(server.url, '/api/ws', { client: member });
  await stream.event('ready');

  // A static PNG: drawn at 128 × 128 (the whole image, padded), as a WebP, from our origin, cached for a year.
  const png = await frame(200, 300, 150);
  const party = (await must(upload(owner, emojiForm('party_blob', png, 'party.png', 'image/png')), 201)).body;
  t.match(party, { name: 'party_blob', animated: false, creator_id: owner.userId, url: `/emojis/${party.id}` });
  const listed = await stream.event('emojis_updated');
  t.same(listed.emojis, [party], 'every member hears of the new list');
  const image = await fetch(server.url + party.url);
  t.equal(image.status, 200);
  t.equal(image.headers.get('content-type'), 'image/webp');
  t.match(image.headers.get('cache-control'), /max-age=31536000, immutable/);
  const drawn = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
  t.match(drawn, { format: 'webp', width: 128, height: 128 });

  // Animated GIF and WebP stay animated; a JPEG is static.
  for (const format of ['gif', 'webp'] as const) {
    const made = (await must(upload(owner, emojiForm(`dance_${format}`, await animated(format), `dance.${format}`, `image/${format}`)), 201)).body;
    t.equal(made.animated, true, `an animated ${format} is animated`);
    const bytes = Buffer.from(await (await fetch(server.url + made.url)).arrayBuffer());
    const meta = await sharp(bytes, { animated: true }).metadata();
    t.match(meta, { format: 'webp', width: 128, pages: 3, pageHeight: 128 }, `its frames are kept (${format})`);
  }
  const jpeg = await sharp(png).jpeg().toBuffer();
  t.match((await must(upload(admin, emojiForm('photo', jpeg, 'photo.jpg', 'image/jpeg')), 201)).body, { animated: false, creator_id: admin.userId });

  // Refusals: each a clear 4xx, none a row or a file.
  const refusals: [string, FormData, number, RegExp][] = [
    ['oversized', emojiForm('big', Buffer.alloc(1024 * 1024 + 1), 'big.png', 'image/png'), 413, /at most 1 MiB/],
    ['corrupt', emojiForm('broken', Buffer.concat([png.subarray(0, 40), Buffer.alloc(200)]), 'broken.png', 'image/png'), 400, /not an image/],
    ['a lying content type (text)', emojiForm('liar', Buffer.from('just text, not an image\n'), 'liar.png', 'image/png'), 400, /not an image/],
    [
      'a lying content type (SVG)',
      emojiForm(
        'vector',
        Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'),
        'v.png',
        'image/png',
      ),
      400,
      /PNG, JPEG, GIF or WebP/,
    ],
    [
      'a pixel flood',
      emojiForm(
        'flood',
        await sharp({ create: { width: 3000, height: 2000, channels: 3, background: '#fff' } })
          .png()
          .toBuffer(),
        'f.png',
        'image/png',
      ),
      400,
      /may hold at most 4000000 pixels/,
    ],
    ['past 256 KiB once drawn', emojiForm('noise', await noisy(), 'noise.gif', 'image/gif'), 413, /at most 262144/],
    ['a name too short', emojiForm('x', png, 'x.png', 'image/png'), 400, /2 to 32 letters/],
    ['a name too long', emojiForm('x'.repeat(33), png, 'x.png', 'image/png'), 400, /2 to 32 letters/],
    ['a name with a hyphen', emojiForm('party-blob', png, 'x.png', 'image/png'), 400, /2 to 32 letters/],
    ['no name', emojiForm(null, png, 'x.png', 'image/png'), 400, /2 to 32 letters/],
    ['a name taken, whatever its case', emojiForm('PARTY_BLOB', png, 'x.png', 'image/png'), 409, /already has an emoji named/],
    ['the file in another field', emojiForm('other', png, 'x.png', 'image/png', 'avatar'), 400, /unexpected file field/],
  ];
  for (const [what, form, status, reason] of refusals) {
    const res = await upload(owner, form);
    t.equal(res.status, status, what);
    t.match(res.text, reason, what);
  }
  t.equal((await owner.post(`${base}/emojis`, { name: 'json' })).status, 415, 'multipart only');
  t.equal((await must(owner.get(`${base}/emojis`), 200)).body.length, 4, 'no refusal made an emoji');
  t.same(
    fs.readdirSync(path.join(server.dataDir, 'emojis')).sort(),
    (await owner.get(`${base}/emojis`)).body.map((e: { id: string }) => `${e.id}.webp`).sort(),
    'nor left a file',
  );

  // Slots (3 static and 3 animated here): the last static one, then no more static but an animated one; both full: said before the file is read.
  await must(upload(owner, emojiForm('one_more', png, 'x.png', 'image/png')), 201);
  const full = await upload(owner, emojiForm('two_more', png, 'x.png', 'image/png'));
  t.equal(full.status, 409, 'the static slots are full');
  t.match(full.text, /no static emoji slot left \(3\)/);
  await must(upload(owner, emojiForm('two_more', await animated('gif'), 'x.gif', 'image/gif')), 201);
  const bothFull = await upload(owner, emojiForm('three_more', await animated('gif'), 'x.gif', 'image/gif'));
  t.equal(bothFull.status, 409);
  t.match(bothFull.text, /no emoji slot left \(3 static and 3 animated\)/, 'both full: said before the file is read');

  // Permissions: members read the list; manage_emojis (server-wide, from roles) manages; outsiders see nothing.
  t.equal((await must(member.get(`${base}/emojis`), 200)).body.length, 6);
  t.equal((await outsider.get(`${base}/emojis`)).status, 404);
  const refused = await member.request('PATCH', `${base}/emojis/${party.id}`, { name: 'mine_now' });
  t.equal(refused.status, 403);
  t.match(refused.text, /permission to manage the emoji and stickers of this server/);
  t.equal((await member.delete(`${base}/emojis/${party.id}`)).status, 403);
  t.equal((await outsider.delete(`${base}/emojis/${party.id}`)).status, 404);
  await must(owner.post(`${base}/roles`, { name: 'emoji keepers', permissions: ['manage_emojis'] }), 201);
  const keeper = await newMember('emoji keepers');
  const renamed = (await must(keeper.request('PATCH', `${base}/emojis/${party.id}`, { name: 'Party_Time' }), 200)).body;
  t.match(renamed, { id: party.id, name: 'Party_Time' }, 'a role with manage_emojis renames');
  t.equal((await keeper.request('PATCH', `${base}/emojis/${party.id}`, { name: 'photo' })).status, 409, 'to a name taken');
  t.equal((await keeper.request('PATCH', `${base}/emojis/${party.id}`, { name: 'party_time' })).status, 200, 'its own name in another case');
  t.equal((await keeper.request('PATCH', `${base}/emojis/${party.id}`, { name: 'a b' })).status, 400);
  // An overwrite of a channel does not touch a server-wide flag.
  const channelId = (await owner.get(`${base}/channels`)).body[0].id;
  await must(owner.put(`${base}/channels/${channelId}/overwrites/${serverId}`, { allow: ['manage_emojis'] }), 200);
  t.equal((await member.delete(`${base}/emojis/${party.id}`)).status, 403, 'a channel overwrite allowing manage_emojis gives nothing');

  // Deletion: the image goes, a slot frees.
  const photo = (await owner.get(`${base}/emojis`)).body.find((e: { name: string }) => e.name === 'photo');
  await must(keeper.delete(`${base}/emojis/${photo.id}`), 204);
  t.equal((await fetch(server.url + photo.url)).status, 404, 'its image is gone');
  t.equal((await keeper.delete(`${base}/emojis/${photo.id}`)).status, 404);
  t.equal((await fetch(`${server.url}/emojis/not-a-uuid`)).status, 400);
  await must(upload(keeper, emojiForm('photo', jpeg, 'photo.jpg', 'image/jpeg')), 201);

  // Audited: who added, renamed and deleted what.
  const log = (await must(owner.get(`${base}/audit-log`), 200)).body as { action: string; actor: { user_id: string }; target_id: string; changes: unknown }[];
  t.match(
    log.filter((e) => e.action.startsWith('emoji_') && e.actor.user_id !== owner.userId).map((e) => [e.action, e.actor.user_id, e.changes]),
    [
      ['emoji_create', keeper.userId, { name: 'photo', animated: false }],
      ['emoji_delete', keeper.userId, { name: 'photo' }],
      ['emoji_update', keeper.userId, { name: { from: 'Party_Time', to: 'party_time' } }],
      ['emoji_update', keeper.userId, { name: { from: 'party_blob', to: 'Party_Time' } }],
      ['emoji_create', admin.userId, { name: 'photo', animated: false }],
    ],
  );

  // Backups carry the images.
  const target = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-emoji-backup-'));
  t.teardown(() => fs.rmSync(target, { recursive: true, force: true }));
  fs.rmSync(target, { recursive: true });
  await backup(server.app.db, server.dataDir, target);
  t.same(fs.readdirSync(path.join(target, 'emojis')).sort(), fs.readdirSync(path.join(server.dataDir, 'emojis')).sort(), 'every emoji image is in the backup');
  stream.close();
});

t.test('custom emoji in messages and reactions: kept apart from a Unicode emoji of the same name, live, and shown as :name: once deleted', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const [member] = members;
  const stranger = await signUp(server.url);
  const base = `/api/servers/${serverId}`;
  const messages = `${base}/channels/${general}/messages`;
  const made = (await must(owner.request('POST', `${base}/emojis`, emojiForm('thumbsup', await frame(30), 't.png', 'image/png')), 201)).body;
  const stream = await openSocket(server.url, '/api/ws', { client: member });
  await stream.event('ready');

  // In a message: written as Discord writes it, kept as written (the browser draws it from /emojis/{id}).
  const text = `nice <:thumbsup:${made.id}> and <a:gone:00000000-0000-4000-8000-000000000000>`;
  const message = (await must(owner.post(messages, { content: text }), 201)).body;
  t.equal(message.content, text);

  // A Unicode 👍 (the spec's route, by shortcode) and the custom "thumbsup" (by name:id in the path) are two reactions.
  await must(member.request('PUT', `${messages}/${message.id}/reactions`, { emoji: ':thumbsup:' }), 200);
  const both = (await must(member.request('PUT', `${messages}/${message.id}/reactions/thumbsup:${made.id}`), 200)).body;
  t.same(
    both.reactions,
    [
      { emoji: '👍️', count: 1, reacted: true },
      { emoji: { id: made.id, name: 'thumbsup', animated: false, available: true }, count: 1, reacted: true },
    ],
    'a Unicode and a custom emoji of the same name never merge',
  );
  const live = await stream.until((f) => f.event === 'reaction' && typeof f.emoji === 'object');
  t.match(
    live,
    { emoji: { id: made.id, name: 'thumbsup', available: true }, user_id: member.userId, added: true, count: 1 },
    'the event names the custom emoji',
  );
  const unicodeAgain = (await must(owner.request('PUT', `${messages}/${message.id}/reactions/${encodeURIComponent(':+1:')}`), 200)).body;
  t.same(
    unicodeAgain.reactions.map((r: { count: number }) => r.count),
    [2, 1],
    'a Unicode emoji in the path joins the Unicode reaction',
  );
  const renamed = (await must(owner.request('PUT', `${messages}/${message.id}/reactions/oldname:${made.id}`), 200)).body;
  t.same(renamed.reactions[1].count, 2, 'the id decides, not the name given');

  // Who may use it: the members of its server, anywhere (a DM too); nobody else.
  await befriend(owner, stranger);
  const dm = (await must(owner.post('/api/conversations/dm', { usernames: [stranger.username] }), 201)).body.id;
  const dmMessage = (await must(stranger.post(`/api/conversations/${dm}/messages`, { content: 'hi' }), 201)).body;
  await must(owner.request('PUT', `/api/conversations/${dm}/messages/${dmMessage.id}/reactions/thumbsup:${made.id}`), 200);
  const refused = await stranger.request('PUT', `/api/conversations/${dm}/messages/${dmMessage.id}/reactions/thumbsup:${made.id}`);
  t.equal(refused.status, 403, 'not a member of its server');
  t.match(refused.text, /custom emoji of servers you are in/);
  t.equal((await member.request('PUT', `${messages}/${message.id}/reactions/nothing:00000000-0000-4000-8000-000000000000`)).status, 400);
  t.equal((await member.request('PUT', `${messages}/${message.id}/reactions/not%20an%20emoji`)).status, 400);

  // Deleted: its reactions stay, shown by name, with no image; they can be taken back, not added.
  await must(owner.delete(`${base}/emojis/${made.id}`), 204);
  const after = (await must(member.get(`${messages}?limit=1`), 200)).body[0];
  t.same(after.reactions[1], { emoji: { id: made.id, name: 'thumbsup', animated: false, available: false }, count: 2, reacted: true });
  t.equal((await fetch(`${server.url}/emojis/${made.id}`)).status, 404, 'its image is gone');
  t.equal((await member.request('PUT', `${messages}/${message.id}/reactions/thumbsup:${made.id}`)).status, 400, 'no new reaction with it');
  const taken = (await must(member.request('DELETE', `${messages}/${message.id}/reactions/thumbsup:${made.id}`), 200)).body;
  t.same(taken.reactions[1].count, 1, 'one taken back');
  t.equal(taken.content, text, 'the message text is unchanged');
  // Its name is free again: a new emoji of that name is another emoji.
  const again = (await must(owner.request('POST', `${base}/emojis`, emojiForm('thumbsup', await frame(60), 't.png', 'image/png')), 201)).body;
  t.not(again.id, made.id);
  stream.close();
});

t.test('emoji uploads hold under the avatars’ bounded decoder pool: one at a time per user, refused (not queued) past it', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, serverId } = await crowd(server, 0);
  const png = await frame(80);
  // One at a time: a second upload while the first is still arriving is 429, as for avatars.
  const body = multipart([
    { field: 'name', value: 'slow_one' },
    { file: 'image', filename: 'slow.png', contentType: 'image/png', data: png },
  ]);
  const slow = http.request(`${server.url}/api/servers/${serverId}/emojis`, {
    method: 'POST',
    headers: { cookie: owner.cookie!, 'content-type': body.contentType, 'content-length': String(body.length) },
  });
  slow.on('error', () => {});
  slow.write(body.chunks().next().value as Buffer);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = await owner.request('POST', `/api/servers/${serverId}/emojis`, emojiForm('second', png, 's.png', 'image/png'));
  t.equal(second.status, 429, 'one upload at a time per user');
  t.match(second.text, /one emoji at a time/);
  slow.destroy();
  // The pool is the avatars' own: held full (2 decoding, 8 waiting), an emoji upload is refused at once with 503.
  const release: (() => void)[] = [];
  const held = Array.from({ length: 10 }, () => server.app.decoders.run(() => new Promise<void>((resolve) => release.push(resolve))).catch(() => {}));
  await new Promise((resolve) => setImmediate(resolve));
  const busy = await owner.request('POST', `/api/servers/${serverId}/emojis`, emojiForm('busy', png, 'b.png', 'image/png'));
  t.equal(busy.status, 503, 'the shared pool is full: refused, not queued');
  t.ok(Number(busy.headers.get('retry-after')) > 0, 'with Retry-After');
  const avatar = new FormData();
  avatar.append('avatar', new Blob([png], { type: 'image/png' }), 'a.png');
  t.equal((await owner.put('/api/account/avatar', avatar)).status, 503, 'and avatars meet the same full pool');
  for (let released = 0; released < 10;) {
    if (release.length > released) release[released++]();
    else await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(held);
  t.equal((await owner.request('POST', `/api/servers/${serverId}/emojis`, emojiForm('after', png, 'a.png', 'image/png'))).status, 201, 'free again');
});

t.test('stickers: upload, refusals, 30 per server, manage_emojis, in messages (at most 3), deleted ones shown by name', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const [member] = members;
  const stranger = await signUp(server.url);
  const base = `/api/servers/${serverId}/stickers`;
  const form = (fields: Record<string, string>, data: Buffer, filename = 's.gif', type = 'image/gif') => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append('image', new Blob([data], { type }), filename);
    return f;
  };
  const gif = await animated('gif');
  const made = (await must(owner.request('POST', base, form({ name: 'Happy dance', description: 'dances', tags: ':tada:' }, gif)), 201)).body;
  t.match(made, { name: 'Happy dance', description: 'dances', tags: '🎉', animated: true, url: `/stickers/${made.id}`, creator_id: owner.userId });
  const bytes = Buffer.from(await (await fetch(server.url + made.url)).arrayBuffer());
  t.match(await sharp(bytes, { animated: true }).metadata(), { format: 'webp', width: 320, pageHeight: 320, pages: 3 }, 'drawn at 320 × 320, still animated');
  const png = await frame(10, 200, 200);
  for (const [what, f, status, reason] of [
    ['oversized', form({ name: 'big', tags: '🙂' }, Buffer.alloc(512 * 1024 + 1), 'b.png', 'image/png'), 413, /at most 512 KiB/],
    ['corrupt', form({ name: 'broken', tags: '🙂' }, Buffer.concat([png.subarray(0, 40), Buffer.alloc(99)]), 'b.png', 'image/png'), 400, /not an image/],
    ['a lying content type', form({ name: 'liar', tags: '🙂' }, Buffer.from('<html>'), 'l.png', 'image/png'), 400, /not an image/],
    ['no related emoji', form({ name: 'plain' }, png, 'p.png', 'image/png'), 400, /tags must be/],
    ['a name too short', form({ name: 'x', tags: '🙂' }, png, 'p.png', 'image/png'), 400, /name must be 2 to 30/],
  ] as const) {
    const res = await owner.request('POST', base, f);
    t.equal(res.status, status, what);
    t.match(res.text, reason, what);
  }
  t.equal((await member.request('POST', base, form({ name: 'mine', tags: '🙂' }, png, 'p.png', 'image/png'))).status, 403, 'manage_emojis covers stickers');
  t.equal((await must(member.get(base), 200)).body.length, 1, 'members see them');
  t.match((await must(owner.request('PATCH', `${base}/${made.id}`, { description: 'a happy dance' }), 200)).body, {
    name: 'Happy dance',
    description: 'a happy dance',
  });

  // 30 per server.
  const insert = server.app.db.prepare(
    "INSERT INTO stickers (id, server_id, name, description, tags, animated, creator_id, created_at) VALUES (?, ?, 'filler', '', '🙂', 0, ?, 'now')",
  );
  for (let i = 0; i < 28; i++) insert.run(crypto.randomUUID(), serverId, owner.userId);
  const last = (await must(owner.request('POST', base, form({ name: 'the 30th', tags: '🙂' }, png, 'p.png', 'image/png')), 201)).body;
  const full = await owner.request('POST', base, form({ name: 'the 31st', tags: '🙂' }, png, 'p.png', 'image/png'));
  t.equal(full.status, 409);
  t.match(full.text, /no sticker slot left \(30\)/);

  // In a message: beside content or alone, at most 3, of servers the sender is in.
  const messages = `/api/servers/${serverId}/channels/${general}/messages`;
  const sent = (await must(member.post(messages, { content: '', sticker_ids: [made.id, last.id] }), 201)).body;
  t.same(
    sent.stickers.map((s: { id: string; available: boolean }) => [s.id, s.available]),
    [
      [made.id, true],
      [last.id, true],
    ],
  );
  t.same(sent.attachments, [], 'not attachments');
  t.equal((await member.post(messages, { content: 'x', sticker_ids: [made.id, last.id, made.id] })).status, 400, 'twice');
  const four = Array.from({ length: 4 }, () => crypto.randomUUID());
  t.equal((await member.post(messages, { content: 'x', sticker_ids: four })).status, 400, 'at most 3');
  t.equal((await member.post(messages, { content: 'x', sticker_ids: [crypto.randomUUID()] })).status, 400, 'one that does not exist');
  await befriend(member, stranger);
  const dm = (await must(member.post('/api/conversations/dm', { usernames: [stranger.username] }), 201)).body.id;
  await must(member.post(`/api/conversations/${dm}/messages`, { content: '', sticker_ids: [made.id] }), 201);
  const refused = await stranger.post(`/api/conversations/${dm}/messages`, { content: 'mine too', sticker_ids: [made.id] });
  t.equal(refused.status, 403, 'a sticker of a server one is not in');

  // Deleted: the message shows its name; its image is gone.
  await must(owner.delete(`${base}/${made.id}`), 204);
  const after = (await must(member.get(`${messages}?limit=1`), 200)).body[0];
  t.same(after.stickers[0], { id: made.id, name: 'Happy dance', animated: true, url: `/stickers/${made.id}`, available: false });
  t.equal((await fetch(server.url + made.url)).status, 404);
  t.equal((await member.post(messages, { content: 'x', sticker_ids: [made.id] })).status, 400, 'no longer sent');
});
