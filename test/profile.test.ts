// Display names and avatars: validation, where they show, live updates, the images themselves.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { Client, signUp } from './helpers/client';
import { befriend, crowd, must, ref, setStanding } from './helpers/community';
import { multipart, postMultipart } from './helpers/multipart';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

const solid = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } });

function avatarForm(data: Buffer, name: string, type: string, field = 'avatar'): FormData {
  const form = new FormData();
  form.append(field, new Blob([data], { type }), name);
  return form;
}

t.test('display names: 1 to 32 characters of any script, shown wherever names are', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const [friend] = members;
  await befriend(owner, friend);
  const stream = await openSocket(server.url, '/api/ws', { client: friend });
  await stream.event('ready');

  const set = await must(owner.request('PATCH', '/api/account', { display_name: '  Zoë 山田 🌸  ' }), 200);
  t.equal(set.body.display_name, 'Zoë 山田 🌸', 'trimmed, any script, emoji too');
  t.equal(set.body.username, owner.username, 'the username stays');
  const updated = await stream.event('user_updated');
  t.same(updated.user, { ...ref(owner), display_name: 'Zoë 山田 🌸' }, 'people who see the name hear of it');

  const shown = { ...ref(owner), display_name: 'Zoë 山田 🌸' };
  t.same((await must(friend.get(`/api/users/${owner.userId}`), 200)).body, shown);
  const message = await must(owner.post(`/api/servers/${serverId}/channels/${general}/messages`, { content: 'hello' }), 201);
  t.same(message.body.author, shown, 'message authors');
  const members_ = (await must(friend.get(`/api/servers/${serverId}/members`), 200)).body;
  t.match(
    members_.find((m: { user_id: string }) => m.user_id === owner.userId),
    { display_name: 'Zoë 山田 🌸', username: owner.username },
  );
  t.match((await must(friend.get('/api/friends'), 200)).body, [{ display_name: 'Zoë 山田 🌸' }], 'friends');
  const mention = await must(friend.post(`/api/servers/${serverId}/channels/${general}/messages`, { content: `hi @${owner.username}` }), 201);
  t.same(mention.body.mentions, [owner.userId], 'mentions still go by username');

  for (const [value, reason] of [
    ['', /must not be empty/],
    ['   ', /must not be empty/],
    ['x'.repeat(33), /at most 32 characters/],
    ['a\u202Eb', /direction-changing/],
    ['a\u200Bb', /invisible/],
    ['line\nbreak', /control characters/],
    [42, /must be a string/],
  ] as const) {
    const res = await owner.request('PATCH', '/api/account', { display_name: value });
    t.equal(res.status, 400, JSON.stringify(value));
    t.match(res.text, reason);
  }
  t.equal((await owner.request('PATCH', '/api/account', {})).status, 400, 'nothing to change');
  t.equal((await owner.request('PATCH', '/api/account', { display_name: '😀'.repeat(32) })).status, 200, '32 characters, not UTF-16 units');
  t.equal((await owner.request('PATCH', '/api/account', { display_name: 'ناصر‌ی' })).status, 200, 'a zero-width non-joiner belongs to Persian');
  const cleared = await must(owner.request('PATCH', '/api/account', { display_name: null }), 200);
  t.equal(cleared.body.display_name, null, 'null clears it');

  const suspended = await signUp(server.url);
  setStanding(server, suspended.userId, 4);
  t.equal((await suspended.request('PATCH', '/api/account', { display_name: 'x' })).status, 403, 'suspended accounts keep their profile');
  t.equal((await new Client(server.url).request('PATCH', '/api/account', { display_name: 'x' })).status, 401);
  stream.close();
});

t.test('an avatar upload cut off, malformed or without a boundary is 400 and leaves no file', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const avatarsDir = path.join(server.dataDir, 'avatars');
  /** Files in the avatars directory, waiting (bounded) for a refused upload's cleanup. */
  const left = async () => {
    for (let i = 0; i < 100 && fs.readdirSync(avatarsDir).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return fs.readdirSync(avatarsDir);
  };

  const noBoundary = await owner.put('/api/account/avatar', 'x', { 'content-type': 'multipart/form-data' });
  t.equal(noBoundary.status, 400);
  t.match(noBoundary.text, /boundary/);
  const truncated = await owner.put('/api/account/avatar', '--b\r\nContent-Disposition: form-data; name="avatar"; filename="a.png"\r\n\r\nnot all', {
    'content-type': 'multipart/form-data; boundary=b',
  });
  t.equal(truncated.status, 400);
  t.match(truncated.text, /malformed/);
  t.same(await left(), [], 'the part written before the body broke off is removed');

  const big = multipart([{ file: 'avatar', filename: 'big.png', contentType: 'image/png', size: 4 * 1024 * 1024 }]);
  const cut = await postMultipart(server.url, '/api/account/avatar', big, { method: 'PUT', cookie: owner.cookie, abortAfter: 1024 * 1024 });
  t.equal(cut.status, 0, 'the client went away before any answer');
  t.same(await left(), [], 'nothing of the cut-off upload stays');
  t.equal((await owner.get('/api/account')).body.avatar_url, null, 'no avatar came of any of it');
  t.same(
    server.logs.filter((line) => / 5\d\d /.test(line) || line.includes('unexpected')),
    [],
    'no server error',
  );
});

t.test('avatars: PNG, JPEG and GIF become 256x256 WebP without metadata; anything else is refused', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const [viewer] = members;
  await befriend(owner, viewer);
  const stream = await openSocket(server.url, '/api/ws', { client: viewer });
  await stream.event('ready');

  const png = await solid(300, 200).png().toBuffer();
  const jpeg = await solid(640, 480)
    .jpeg()
    .withExif({ IFD0: { Copyright: 'secret studio', ImageDescription: 'taken at home' } })
    .toBuffer();
  t.ok((await sharp(jpeg).metadata()).exif, 'the JPEG carries EXIF');
  const gif = await solid(64, 64).gif().toBuffer();

  let version = 0;
  for (const [name, data, type] of [
    ['me.png', png, 'image/png'],
    ['me.jpg', jpeg, 'image/jpeg'],
    ['me.gif', gif, 'image/gif'],
  ] as const) {
    const res = await must(owner.put('/api/account/avatar', avatarForm(data, name, type)), 200);
    version++;
    t.equal(res.body.avatar_url, `/avatars/${owner.userId}?v=${version}`, `${name}: a new URL each time`);
    const image = await fetch(server.url + res.body.avatar_url);
    t.equal(image.status, 200);
    t.equal(image.headers.get('content-type'), 'image/webp');
    t.match(image.headers.get('cache-control'), /max-age=31536000/);
    t.match(image.headers.get('cache-control'), /immutable/);
    t.equal(image.headers.get('x-content-type-options'), 'nosniff');
    const meta = await sharp(Buffer.from(await image.arrayBuffer())).metadata();
    t.equal(meta.format, 'webp');
    t.equal(meta.width, 256);
    t.equal(meta.height, 256);
    t.notOk(meta.exif, 'no EXIF survives');
    t.notOk(meta.xmp, 'no XMP');
    const event = await stream.event('user_updated');
    t.equal(event.user.avatar_url, res.body.avatar_url, 'friends hear of the new picture');
  }
  const url = `/avatars/${owner.userId}?v=3`;
  t.equal((await must(viewer.get(`/api/users/${owner.userId}`), 200)).body.avatar_url, url);
  const message = await must(owner.post(`/api/servers/${serverId}/channels/${general}/messages`, { content: 'with a face' }), 201);
  t.equal(message.body.author.avatar_url, url, 'on messages');
  t.equal((await owner.get('/api/account')).body.avatar_url, url);

  const refusals: [string, Buffer, string, number, RegExp][] = [
    ['notes.txt', Buffer.from('just text, not an image\n'), 'text/plain', 400, /not an image/],
    ['fake.png', Buffer.concat([png.subarray(0, 40), Buffer.alloc(200)]), 'image/png', 400, /not an image/],
    [
      'vector.svg',
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'),
      'image/svg+xml',
      400,
      /PNG, JPEG, GIF or WebP/,
    ],
    ['huge.bin', Buffer.alloc(8 * 1024 * 1024 + 1), 'image/png', 413, /at most 8 MiB/],
  ];
  for (const [name, data, type, status, reason] of refusals) {
    const res = await owner.put('/api/account/avatar', avatarForm(data, name, type));
    t.equal(res.status, status, name);
    t.match(res.text, reason);
  }
  const bomb = await solid(9000, 5000).png({ compressionLevel: 9 }).toBuffer();
  const refusedBomb = await owner.put('/api/account/avatar', avatarForm(bomb, 'bomb.png', 'image/png'));
  t.equal(refusedBomb.status, 400, `a ${bomb.length}-byte PNG of 45 megapixels is refused before decoding`);
  t.match(refusedBomb.text, /pixels/);
  t.equal((await owner.put('/api/account/avatar', avatarForm(png, 'me.png', 'image/png', 'picture'))).status, 400, 'the field is avatar');
  t.equal((await owner.put('/api/account/avatar', { avatar: 'x' })).status, 415, 'multipart only');
  t.equal((await owner.get('/api/account')).body.avatar_url, url, 'refusals change nothing');

  await must(owner.delete('/api/account/avatar'), 204);
  t.equal((await owner.get('/api/account')).body.avatar_url, null);
  t.equal((await fetch(server.url + url)).status, 404);
  t.equal((await fetch(`${server.url}/avatars/not-a-uuid`)).status, 400);
  t.equal((await fetch(`${server.url}/avatars/00000000-0000-4000-8000-000000000000`)).status, 404);
  await must(owner.delete('/api/account/avatar'), 204);
  stream.close();
});

t.test('avatar uploads: a pixel budget by file size, a rate limit, one at a time per user', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const user = await signUp(server.url);

  // A few KiB of flat PNG that claims 6 megapixels: more than the floor, far more than its bytes allow.
  const flat = await solid(3000, 2000).png({ compressionLevel: 9 }).toBuffer();
  const refused = await user.put('/api/account/avatar', avatarForm(flat, 'flat.png', 'image/png'));
  t.equal(refused.status, 400, `a ${flat.length}-byte PNG of 6 megapixels is refused before decoding`);
  t.match(refused.text, /may hold at most 4000000 pixels/);
  const deep = await sharp({ create: { width: 1500, height: 1500, channels: 3, background: { r: 9, g: 9, b: 9 } } })
    .toColourspace('rgb16')
    .png()
    .toBuffer();
  t.equal((await sharp(deep).metadata()).depth, 'ushort', 'a 16-bit PNG');
  t.equal((await user.put('/api/account/avatar', avatarForm(deep, 'deep.png', 'image/png'))).status, 400, '2.25 megapixels at 16 bits count as 4.5');
  const logo = await solid(1900, 1900).png({ compressionLevel: 9 }).toBuffer();
  t.equal((await user.put('/api/account/avatar', avatarForm(logo, 'logo.png', 'image/png'))).status, 200, 'a flat image under the floor is fine');

  // One at a time: a second upload while the first is still arriving is 429.
  const body = multipart([{ file: 'avatar', filename: 'slow.png', contentType: 'image/png', data: logo }]);
  const slow = http.request(`${server.url}/api/account/avatar`, {
    method: 'PUT',
    headers: { cookie: user.cookie!, 'content-type': body.contentType, 'content-length': String(body.length) },
  });
  slow.on('error', () => {});
  slow.write(body.chunks().next().value as Buffer);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const second = await user.put('/api/account/avatar', avatarForm(logo, 'logo.png', 'image/png'));
  t.equal(second.status, 429, 'one upload at a time per user');
  t.match(second.text, /one avatar at a time/);
  slow.destroy();
  await new Promise((resolve) => setTimeout(resolve, 100));

  // The rate limit: five in a burst (all five used above, the refused ones too), then one every 20 seconds.
  const limited = await user.put('/api/account/avatar', avatarForm(logo, 'logo.png', 'image/png'));
  t.equal(limited.status, 429, 'past the burst');
  t.notMatch(limited.text, /one avatar at a time/, 'the aborted upload no longer counts as in progress');
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'with Retry-After');
});
