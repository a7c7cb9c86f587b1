// Account export (a zip checked by unzipping it) and account deletion (history stays readable).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import t from 'tap';
import { Client, signUp } from './helpers/client';
import { befriend, crowd, must, setStanding } from './helpers/community';
import { FakeClock, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';
import { unzip, waitForExport } from './helpers/export';

const PASSWORD = 'correct horse';

t.test('export: one zip of JSON files and the uploaded files; one at a time; gone after 7 days', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-23T12:00:00Z'));
  const server = await startServer({ clock });
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const [friend] = members;
  await befriend(owner, friend);
  await must(owner.put('/api/account/email', { email: 'owner@example.com' }), 200);
  const C = `/api/servers/${serverId}/channels/${general}/messages`;
  const dm = (await must(owner.post('/api/conversations/dm', { usernames: [friend.username] }), 201)).body.id;
  const mine: string[] = [];
  for (let i = 0; i < 1200; i++) mine.push((await must(owner.post(C, { content: `note ${i}` }), 201)).body.id);
  await must(friend.post(C, { content: 'not the exporter' }), 201);
  await must(owner.post(`/api/conversations/${dm}/messages`, { content: 'private words' }), 201);
  const fileBytes = crypto.randomBytes(300_000);
  const form = new FormData();
  form.append('content', 'a file');
  form.append('attachments', new Blob([fileBytes], { type: 'application/octet-stream' }), 'data "1".bin');
  const withFile = (await must(owner.post(C, form), 201)).body;

  t.same((await must(owner.get('/api/account/export'), 200)).body, { status: 'none' });
  t.equal((await owner.get('/api/account/export/file')).status, 404, 'nothing to download yet');
  // Two at once: the first starts, the second finds it running.
  const [first, second] = await Promise.all([owner.post('/api/account/export'), owner.post('/api/account/export')]);
  t.same([first.status, second.status].sort(), [202, 409]);
  t.match([first, second].find((r) => r.status === 409)!.text, /already being made/);
  const ready = await waitForExport(owner);
  t.match(ready, { status: 'ready', url: '/api/account/export/file' });

  const download = await fetch(server.url + ready.url!, { headers: { cookie: owner.cookie! } });
  t.equal(download.status, 200);
  t.equal(download.headers.get('content-type'), 'application/zip');
  t.match(download.headers.get('content-disposition'), /attachment; filename="chat-export-/);
  const entries = await unzip(Buffer.from(await download.arrayBuffer()));
  t.same([...entries.keys()].filter((n) => n.endsWith('.json')).sort(), [
    'account.json',
    'conversations.json',
    'friends.json',
    'messages.json',
    'servers.json',
  ]);
  const read = (name: string) => JSON.parse(entries.get(name)!.toString('utf8'));
  t.match(read('account.json'), { user_id: owner.userId, username: owner.username, email: 'owner@example.com' });
  t.match(read('servers.json'), [{ id: serverId, owner: 1 }]);
  t.match(read('friends.json').friends, [{ user_id: friend.userId, username: friend.username }]);
  t.match(read('conversations.json'), [{ id: dm, kind: 'dm' }]);
  const messages = read('messages.json') as {
    id: string;
    content: string;
    channel_name: string | null;
    server_name: string | null;
    conversation_id: string | null;
    attachments: { file: string }[];
  }[];
  t.equal(messages.length, 1202, 'every message the user wrote, and none of anyone else');
  t.same(
    messages.slice(0, 1200).map((m) => m.id),
    mine,
    'in the order written',
  );
  t.notOk(messages.some((m) => m.content === 'not the exporter'));
  t.match(messages[0], { channel_name: 'general', server_name: String });
  t.match(
    messages.find((m) => m.content === 'private words'),
    { conversation_id: dm },
  );
  const filed = messages.find((m) => m.id === withFile.id)!;
  t.equal(filed.attachments.length, 1);
  t.same(entries.get(filed.attachments[0].file), fileBytes, 'the uploaded file, byte for byte');
  t.equal(filed.attachments[0].file, `files/${withFile.attachments[0].id}-${withFile.attachments[0].name}`);

  // After seven days it is gone.
  const zip = path.join(server.dataDir, 'exports', `${owner.userId}.zip`);
  const eightDaysAgo = new Date(clock.ms - 8 * 24 * 60 * 60_000);
  fs.utimesSync(zip, eightDaysAgo, eightDaysAgo);
  t.same((await must(owner.get('/api/account/export'), 200)).body, { status: 'none' });
  t.notOk(fs.existsSync(zip), 'the file is deleted');
  t.equal((await owner.get('/api/account/export/file')).status, 404);
  t.same((await must(friend.get('/api/account/export'), 200)).body, { status: 'none' }, 'exports are per user');
  t.equal((await friend.get('/api/account/export/file')).status, 404, "nobody downloads another's export");

  // Suspended accounts may still take their data with them.
  setStanding(server, friend.userId, 4);
  t.equal((await friend.post('/api/account/export')).status, 202);
  t.equal((await waitForExport(friend)).status, 'ready');
  t.equal((await new Client(server.url).post('/api/account/export')).status, 401);
});

t.test('exports are rate limited per user', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const user = await signUp(server.url);
  for (let i = 0; i < 3; i++) {
    t.equal((await user.post('/api/account/export')).status, 202);
    await waitForExport(user);
  }
  const refused = await user.post('/api/account/export');
  t.equal(refused.status, 429);
  t.match(refused.text, /too many exports/);
});

t.test('deletion: history stays readable as deleted-user, everything else goes', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 2);
  const [leaver, other] = members;
  await befriend(leaver, other);
  await befriend(owner, leaver);
  await befriend(other, owner);
  const C = `/api/servers/${serverId}/channels/${general}/messages`;
  const form = new FormData();
  form.append('content', 'my file');
  form.append('attachments', new Blob([Buffer.from('keep me\n')], { type: 'text/plain' }), 'keep.txt');
  const posted = (await must(leaver.post(C, form), 201)).body;
  await must(other.post(C, { content: 'a reply', reply_to: posted.id }), 201);
  const dm = (await must(other.post('/api/conversations/dm', { usernames: [leaver.username] }), 201)).body.id;
  await must(leaver.post(`/api/conversations/${dm}/messages`, { content: 'dm words' }), 201);
  const group = (await must(other.post('/api/conversations/group', { name: 'trio', usernames: [leaver.username, owner.username] }), 201)).body.id;
  await must(leaver.put('/api/account/email', { email: 'leaver@example.com' }), 200);
  await must(leaver.request('PATCH', '/api/account', { display_name: 'Leaving Soon' }), 200);
  const stream = await openSocket(server.url, '/api/ws', { client: leaver });
  await stream.event('ready');
  const watcher = await openSocket(server.url, '/api/ws', { client: other });
  await watcher.event('ready');

  t.equal((await leaver.delete('/api/account', {})).status, 400, 'the password is required');
  const wrong = await leaver.delete('/api/account', { password: 'not my password' });
  t.equal(wrong.status, 403);
  t.equal((await owner.delete('/api/account', { password: PASSWORD })).status, 409, 'an owner must hand over first');
  t.match((await owner.delete('/api/account', { password: PASSWORD })).text, /transfer or delete the servers you own first: srv/);

  const deleted = await leaver.delete('/api/account', { password: PASSWORD });
  t.equal(deleted.status, 204);
  t.match(deleted.headers.get('set-cookie'), /app_session=;/);
  t.equal((await stream.closed()).code, 4001, 'their streams close');
  t.equal((await leaver.get('/api/users/me')).status, 401, 'their sessions end');
  t.equal((await new Client(server.url).post('/api/login', { username: leaver.username, password: PASSWORD })).status, 401);
  t.match(await watcher.event('friend_removed'), { user_id: leaver.userId });

  // The history stays, under the deleted-user name, author id kept.
  const history = (await must(other.get(C), 200)).body;
  const theirs = history.find((m: { id: string }) => m.id === posted.id);
  t.same(theirs.author, { user_id: leaver.userId, username: 'deleted-user', display_name: 'Deleted user', avatar_url: null });
  t.equal(theirs.author_id, leaver.userId);
  t.equal(history.find((m: { content: string }) => m.content === 'a reply').reply_preview.author.username, 'deleted-user');
  const download = await fetch(server.url + theirs.attachments[0].url, { headers: { cookie: other.cookie! } });
  t.equal(await download.text(), 'keep me\n', 'uploads stay with their messages');
  t.same((await must(other.get(`/api/users/${leaver.userId}`), 200)).body, {
    user_id: leaver.userId,
    username: 'deleted-user',
    display_name: 'Deleted user',
    avatar_url: null,
  });

  // Memberships, friendships, groups go; the DM stays readable, not writable.
  t.notOk((await must(other.get(`/api/servers/${serverId}/members`), 200)).body.some((m: { user_id: string }) => m.user_id === leaver.userId));
  t.same(
    (await must(other.get('/api/friends'), 200)).body.map((f: { user_id: string }) => f.user_id),
    [owner.userId],
    'the friendship is gone',
  );
  t.notOk((await must(other.get(`/api/conversations/${group}`), 200)).body.members.some((m: { user_id: string }) => m.user_id === leaver.userId));
  const dmHistory = (await must(other.get(`/api/conversations/${dm}/messages`), 200)).body;
  t.equal(dmHistory[0].author.username, 'deleted-user');
  const toDeleted = await other.post(`/api/conversations/${dm}/messages`, { content: 'hello?' });
  t.equal(toDeleted.status, 403);
  t.match(toDeleted.text, /account was deleted/);
  const row = server.app.db.prepare('SELECT username, email, password_hash, display_name FROM users WHERE id = ?').get(leaver.userId);
  t.same(row, { username: `deleted-${leaver.userId}`, email: null, password_hash: '', display_name: null }, 'name, email and password are gone');

  // The name is free again, but nobody may be called deleted-user.
  const again = await new Client(server.url).post('/api/register', { username: leaver.username, password: PASSWORD });
  t.equal(again.status, 201, 'the username can be registered again');
  t.equal((await new Client(server.url).post('/api/register', { username: 'Deleted-User', password: PASSWORD })).status, 409);
  watcher.close();
});

t.test('deletion with two-factor sign-in on needs a code', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-23T12:00:00Z'));
  const server = await startServer({ clock });
  t.teardown(server.close);
  const user = await signUp(server.url);
  const { secret } = (await must(user.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200)).body;
  const totp = new TOTP({ secret: Secret.fromBase32(secret) });
  await must(user.post('/api/account/2fa/enable', { code: totp.generate({ timestamp: clock.ms }), current_password: PASSWORD }), 200);
  const bare = await user.delete('/api/account', { password: PASSWORD });
  t.equal(bare.status, 403);
  t.match(bare.text, /two-factor code required/);
  t.equal((await user.delete('/api/account', { password: PASSWORD, code: '000000' })).status, 403);
  clock.advance(30_000);
  await must(user.delete('/api/account', { password: PASSWORD, code: totp.generate({ timestamp: clock.ms }) }), 204);
  const codes = server.app.db.prepare('SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = ?').get(user.userId) as { n: number };
  t.equal(codes.n, 0, 'recovery codes are gone');
});
