import crypto from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
// The user stream (GET /api/ws), read state, mentions, typing and presence, with real ws clients.
import t from 'tap';
import { TAIL_LENGTH } from '../src/parts/messages/channel-tails';
import { type Client, signUp } from './helpers/client';
import { befriend, crowd, must, ref, setStanding, users } from './helpers/community';
import { FakeClock, startServer, type TestServer } from './helpers/server';
import { type LiveSocket, openSocket, refusedUpgrade } from './helpers/ws';

/** A short presence grace for every server of this file. */
const settings = { presenceGraceMs: 200 };

async function stream(server: TestServer, client: Client): Promise<LiveSocket & { ready: any }> {
  const socket = await openSocket(server.url, '/api/ws', { client });
  const ready = await socket.next();
  return Object.assign(socket, { ready });
}

const channelMessages = (c: { serverId: string }, channelId: string) => `/api/servers/${c.serverId}/channels/${channelId}/messages`;

t.test('the upgrade follows the rules of the room sockets', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const [user, suspended] = await users(server, 2);
  setStanding(server, suspended.userId, 4);
  t.equal((await refusedUpgrade(server.url, '/api/ws')).status, 401, 'no session');
  t.equal((await refusedUpgrade(server.url, '/api/ws', { client: suspended })).status, 403, 'suspended');
  t.equal((await refusedUpgrade(server.url, '/api/ws', { client: user, origin: 'https://evil.example' })).status, 403, 'a foreign Origin');
  const ok = await stream(server, user);
  t.teardown(() => ok.close());
  t.equal(ok.ready.event, 'ready');
});

t.test('ready has everything a sidebar needs, read states included', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [alice, bob] = c.members;
  const stranger = await signUp(server.url);
  await befriend(alice, bob);
  await must(stranger.post('/api/friends/requests', { username: alice.username }), 201);
  const dm = (await must(bob.post('/api/conversations/dm', { usernames: [alice.username] }), 201)).body;
  await must(bob.post(`/api/conversations/${dm.id}/messages`, { content: 'hello alice' }), 201);
  const posted = (await must(c.owner.post(channelMessages(c, c.random), { content: 'news' }), 201)).body;

  const s = await stream(server, alice);
  t.teardown(() => s.close());
  const { ready } = s;
  t.same(ready.user, { ...ref(alice), status: 'online' });
  t.equal(ready.servers.length, 1);
  const srv = ready.servers[0];
  t.match(srv, { id: c.serverId, unread: true, mention_count: 0 });
  t.same(
    srv.channels.map((ch: { name: string }) => ch.name),
    ['general', 'random'],
  );
  const random = srv.channels.find((ch: { id: string }) => ch.id === c.random);
  t.match(random, { last_message_id: posted.id, unread_count: 1, mention_count: 0 });
  const general = srv.channels.find((ch: { id: string }) => ch.id === c.general);
  t.match(general, { last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0 });
  t.equal(ready.conversations.length, 1);
  t.match(ready.conversations[0], { id: dm.id, unread_count: 1, mention_count: 1, last_read_id: null });
  t.same(ready.friends, [{ ...ref(bob), since: String(ready.friends[0].since), presence: 'offline' }]);
  t.equal(ready.incoming_friend_requests, 1);
});

t.test('live events reach the user streams of everyone who can see them, and nobody else', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [alice, bob] = c.members;
  const outsider = await signUp(server.url);
  const [sa, sb, so] = await Promise.all([stream(server, alice), stream(server, bob), stream(server, outsider)]);
  t.teardown(() => [sa, sb, so].forEach((s) => s.close()));

  t.test('message, message_edited, reaction, message_deleted', async (t) => {
    const message = (await must(bob.post(channelMessages(c, c.random), { content: 'in random' }), 201)).body;
    const got = await sa.event('message');
    t.same(got.message, message, 'the message record, as REST answered it');
    t.equal(got.message.channel_id, c.random, 'a channel other than the one open');
    await sb.event('message');

    const edited = (await must(bob.put(`${channelMessages(c, c.random)}/${message.id}`, { content: 'edited' }), 200)).body;
    t.same((await sa.event('message_edited')).message, edited);

    await must(alice.put(`${channelMessages(c, c.random)}/${message.id}/reactions`, { emoji: '🎉' }), 200);
    const reaction = await sb.event('reaction');
    t.same(reaction, {
      event: 'reaction',
      message_id: message.id,
      server_id: c.serverId,
      channel_id: c.random,
      emoji: '🎉',
      user_id: alice.userId,
      added: true,
      count: 1,
    });
    await sa.event('reaction');

    await must(bob.delete(`${channelMessages(c, c.random)}/${message.id}`), 204);
    t.same(await sa.event('message_deleted'), { event: 'message_deleted', message_id: message.id, server_id: c.serverId, channel_id: c.random });
    await sb.event('message_deleted');
    t.same(await so.drain(100), [], 'the outsider saw none of it');
  });

  t.test('channel_created, member_joined, member_updated, member_left, server_joined, server_left', async (t) => {
    const channel = (await must(c.owner.post(`/api/servers/${c.serverId}/channels`, { name: 'new-one' }), 201)).body;
    t.match(await sa.event('channel_created'), { server_id: c.serverId, channel_id: channel.id, channel: { ...channel, unread_count: 0 } });
    await must(c.owner.request('PATCH', `/api/servers/${c.serverId}/channels/${channel.id}`, { name: 'renamed-one', topic: 'now with a topic' }), 200);
    t.match(await sa.event('channel_updated'), {
      server_id: c.serverId,
      channel_id: channel.id,
      channel: { id: channel.id, name: 'renamed-one', topic: 'now with a topic' },
    });
    // Moved to the top: it and every channel it pushed down are announced with their new positions.
    await must(c.owner.request('PATCH', `/api/servers/${c.serverId}/channels/${channel.id}`, { position: 0 }), 200);
    const listed = (await must(alice.get(`/api/servers/${c.serverId}/channels`), 200)).body as { id: string; position: number }[];
    const announced = new Map<string, number>();
    while (announced.size < listed.length) {
      const moved = await sa.event('channel_updated');
      announced.set(moved.channel_id, moved.channel.position);
    }
    t.same(Object.fromEntries(announced), Object.fromEntries(listed.map((ch) => [ch.id, ch.position])), 'each channel with the position the list shows');
    t.equal(announced.get(channel.id), 0);

    const token = (await must(c.owner.post(`/api/servers/${c.serverId}/invites`), 201)).body.token;
    await must(outsider.post(`/api/invites/${token}/accept`), 200);
    const joined = await so.event('server_joined');
    t.match(joined.server, { id: c.serverId, unread: false, mention_count: 0 });
    t.ok(joined.server.channels.length >= 3, 'with its channels and their read state');
    t.match(await sa.event('member_joined'), { server_id: c.serverId, member: { user_id: outsider.userId, role: null } });

    await must(c.owner.post(`/api/servers/${c.serverId}/roles`, { name: 'helpers' }), 201);
    await must(c.owner.put(`/api/servers/${c.serverId}/members/${outsider.userId}/role`, { role: 'helpers' }), 200);
    t.match(await sa.event('member_updated'), { server_id: c.serverId, member: { user_id: outsider.userId, role: 'helpers' } });

    await must(c.owner.delete(`/api/servers/${c.serverId}/members/${outsider.userId}`), 204);
    t.same(await so.event('server_left'), { event: 'server_left', server_id: c.serverId, reason: 'kicked' });
    t.same(await sa.event('member_left'), { event: 'member_left', server_id: c.serverId, user_id: outsider.userId });
    t.equal(so.ws.readyState, so.ws.OPEN, 'the stream stays open: only the server is gone');
    await must(bob.delete(`/api/servers/${c.serverId}/members/${bob.userId}`), 204);
    t.same(await sb.event('server_left'), { event: 'server_left', server_id: c.serverId, reason: 'left' });
  });

  t.test('friend_request, friend_added, conversation_created, friend_removed', async (t) => {
    const request = (await must(outsider.post('/api/friends/requests', { username: alice.username }), 201)).body;
    t.same(await sa.event('friend_request'), { event: 'friend_request', request });
    await must(alice.post(`/api/friends/requests/${request.id}/accept`), 200);
    t.match(await so.event('friend_added'), { friend: { user_id: alice.userId, username: alice.username, presence: 'online' } });
    t.match(await sa.event('friend_added'), { friend: { user_id: outsider.userId, presence: 'online' } });

    const dm = (await must(outsider.post('/api/conversations/dm', { usernames: [alice.username] }), 201)).body;
    const created = await sa.event('conversation_created');
    t.match(created.conversation, { ...dm, unread_count: 0, mention_count: 0 });
    await so.event('conversation_created');

    await must(alice.delete(`/api/friends/${outsider.userId}`), 204);
    t.same(await so.event('friend_removed'), { event: 'friend_removed', user_id: alice.userId });
    t.same(await sa.event('friend_removed'), { event: 'friend_removed', user_id: outsider.userId });
  });
});

t.test('read markers: forward only, per container, and the counts follow', async (t) => {
  const server = await startServer({ clock: new FakeClock(), settings });
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [alice, bob] = c.members;
  const inRandom = channelMessages(c, c.random);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await must(bob.post(inRandom, { content: `m${i}` }), 201)).body.id);
  const generalMessage = (await must(bob.post(channelMessages(c, c.general), { content: 'elsewhere' }), 201)).body.id;
  const channelState = async (who: Client) =>
    (await must(who.get(`/api/servers/${c.serverId}/channels`), 200)).body.find((ch: { id: string }) => ch.id === c.random);

  t.match(await channelState(alice), { last_message_id: ids[2], last_read_id: null, unread_count: 3 });
  t.match((await must(alice.get('/api/servers'), 200)).body[0], { id: c.serverId, unread: true, mention_count: 0 });

  const sa = await stream(server, alice);
  t.teardown(() => sa.close());
  const read = `/api/servers/${c.serverId}/channels/${c.random}/read`;
  const marked = await must(alice.put(read, { message_id: ids[1] }), 200);
  t.match(marked.body, { server_id: c.serverId, channel_id: c.random, last_read_id: ids[1], unread_count: 1 });
  t.match(await sa.event('read'), { server_id: c.serverId, channel_id: c.random, last_read_id: ids[1], unread_count: 1, mention_count: 0 });
  const older = await must(alice.put(read, { message_id: ids[0] }), 200);
  t.equal(older.body.last_read_id, ids[1], 'an older id leaves the marker where it is');
  t.same(await sa.drain(100), [], 'and tells no stream anything');
  t.equal((await alice.put(read, { message_id: generalMessage })).status, 400, 'a message of another channel (issue 16)');
  t.equal((await alice.put(read, { message_id: 'not-a-uuid' })).status, 400);
  const outsider = await signUp(server.url);
  t.equal((await outsider.put(read, { message_id: ids[2] })).status, 404, 'a non-member');

  await must(alice.post(inRandom, { content: 'my reply' }), 201);
  t.match(await channelState(alice), { unread_count: 0 }, 'sending marks the channel read up to it');
  t.match(await channelState(bob), { unread_count: 1 }, "one's own messages are never unread, others' are");

  const token = (await must(c.owner.post(`/api/servers/${c.serverId}/invites`), 201)).body.token;
  const newcomer = await signUp(server.url);
  await must(newcomer.post(`/api/invites/${token}/accept`), 200);
  t.match(await channelState(newcomer), { unread_count: 0, last_read_id: String }, 'a new member starts with everything read');
  await must(bob.post(inRandom, { content: 'after they joined' }), 201);
  t.match(await channelState(newcomer), { unread_count: 1 });
});

t.test('counts are capped at 100 ("99+" needs 100), also when another process wrote the messages', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const random = async () => (await must(c.members[0].get(`/api/servers/${c.serverId}/channels`), 200)).body.find((ch: { id: string }) => ch.id === c.random);
  t.match(await random(), { unread_count: 0, last_message_id: null }, 'read once: the channel is in memory now');
  // A second connection, as the CLI or a script would write: the server's kept messages are dropped.
  const other = new Database(path.join(server.dataDir, 'chat.db'));
  t.teardown(() => other.close());
  const insert = other.prepare("INSERT INTO messages (id, channel_id, author_id, content, created_at) VALUES (?, ?, ?, 'x', '2026-01-01T00:00:00.000Z')");
  const ids = Array.from({ length: 150 }, () => crypto.randomUUID());
  other.transaction(() => {
    for (const id of ids) insert.run(id, c.random, c.owner.userId);
  })();
  t.match(await random(), { unread_count: 100, last_message_id: ids[149] });
});

t.test('read state past the newest messages kept in memory, after edits and deletes', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const [alice] = c.members;
  const inRandom = channelMessages(c, c.random);
  const state = async () => (await must(alice.get(`/api/servers/${c.serverId}/channels`), 200)).body.find((ch: { id: string }) => ch.id === c.random);
  t.match(await state(), { unread_count: 0 });
  // More than TAIL_LENGTH, every tenth naming alice: her marker ends up older than what is kept.
  const ids: string[] = [];
  for (let i = 1; i <= TAIL_LENGTH + 8; i++) {
    ids.push((await must(c.owner.post(inRandom, { content: i % 10 === 0 ? `${i} @${alice.username}` : `${i}` }), 201)).body.id);
  }
  const mentions = Math.floor(ids.length / 10);
  t.match(await state(), { last_message_id: ids.at(-1), last_read_id: null, unread_count: ids.length, mention_count: mentions });

  await must(alice.put(`/api/servers/${c.serverId}/channels/${c.random}/read`, { message_id: ids[34] }), 200);
  t.match(await state(), { last_message_id: ids[39], last_read_id: ids[34], unread_count: 5, mention_count: 1 }, 'only message 40 names her after 35');
  await must(c.owner.delete(`${inRandom}/${ids[39]}`), 204);
  t.match(await state(), { last_message_id: ids[38], unread_count: 4, mention_count: 0 }, 'a deleted message is neither the last nor unread');
  await must(c.owner.put(`${inRandom}/${ids[37]}`, { content: `now @${alice.username}` }), 200);
  t.match(await state(), { unread_count: 4, mention_count: 1 }, 'an edit that names her counts');
  await must(c.owner.delete(`${inRandom}/${ids[34]}`), 204);
  t.match(await state(), { last_read_id: ids[33], unread_count: 4 }, 'the marker stays; the message before it is the last read');
  const own = (await must(alice.post(inRandom, { content: 'mine' }), 201)).body.id;
  t.match(await state(), { last_message_id: own, last_read_id: own, unread_count: 0, mention_count: 0 });
});

t.test('mentions: @name of someone who can see it, @everyone from owners and admins, recomputed on edit', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [alice, bob] = c.members;
  const outsider = await signUp(server.url);
  const inRandom = channelMessages(c, c.random);
  const state = async (who: Client) => (await must(who.get(`/api/servers/${c.serverId}/channels`), 200)).body.find((ch: { id: string }) => ch.id === c.random);

  const named = (await must(bob.post(inRandom, { content: `hey @${alice.username.toUpperCase()} and @${outsider.username}, mail me at x@y.z` }), 201)).body;
  t.same(named.mentions, [alice.userId], 'alice, in any case; not the outsider, who cannot see it; not an email');
  t.equal(named.mention_everyone, false);
  t.match(await state(alice), { unread_count: 1, mention_count: 1 });
  t.match((await must(alice.get('/api/servers'), 200)).body[0], { mention_count: 1 });

  const fromMember = (await must(bob.post(inRandom, { content: '@everyone look' }), 201)).body;
  t.equal(fromMember.mention_everyone, false, 'from a plain member @everyone is text');
  const fromOwner = (await must(c.owner.post(inRandom, { content: '@everyone look' }), 201)).body;
  t.equal(fromOwner.mention_everyone, true);
  t.match(await state(alice), { unread_count: 3, mention_count: 2 });

  const edited = (await must(bob.put(`${inRandom}/${named.id}`, { content: 'no names any more' }), 200)).body;
  t.same(edited.mentions, [], 'an edit recomputes the mentions');
  t.match(await state(alice), { mention_count: 1 });
  const renamed = (await must(bob.put(`${inRandom}/${named.id}`, { content: `now @${c.owner.username}` }), 200)).body;
  t.same(renamed.mentions, [c.owner.userId]);

  await befriend(alice, bob);
  const dm = (await must(alice.post('/api/conversations/dm', { usernames: [bob.username] }), 201)).body;
  await must(alice.post(`/api/conversations/${dm.id}/messages`, { content: 'one' }), 201);
  await must(alice.post(`/api/conversations/${dm.id}/messages`, { content: 'two' }), 201);
  const inDm = (await must(bob.get('/api/conversations'), 200)).body.find((x: { id: string }) => x.id === dm.id);
  t.match(inDm, { unread_count: 2, mention_count: 2 }, 'in a DM every unread message counts as a mention');
});

t.test('typing: those who may send, once per few seconds, to the other members', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock, settings });
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [alice, bob] = c.members;
  const [sa, sb] = await Promise.all([stream(server, alice), stream(server, bob)]);
  t.teardown(() => [sa, sb].forEach((s) => s.close()));
  const typing = `/api/servers/${c.serverId}/channels/${c.general}/typing`;
  await must(alice.post(typing), 204);
  t.same(await sb.event('typing'), {
    event: 'typing',
    user_id: alice.userId,
    username: alice.username,
    display_name: null,
    server_id: c.serverId,
    channel_id: c.general,
  });
  await must(alice.post(typing), 204);
  t.same(
    (await sb.drain(100)).filter((f) => f.event === 'typing'),
    [],
    'again at once: no second event',
  );
  t.same(
    (await sa.drain(0)).filter((f) => f.event === 'typing'),
    [],
    'the typist is not told',
  );
  clock.advance(3_000);
  await must(alice.post(typing), 204);
  await sb.event('typing');
  setStanding(server, bob.userId, 3);
  t.equal((await bob.post(typing)).status, 403, 'a standing that may not send may not type');
  t.equal((await (await signUp(server.url)).post(typing)).status, 404, 'a non-member');
});

t.test('presence: online with a socket, offline after a grace, chosen states, who sees it', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const friend = c.members[0];
  const alice = await signUp(server.url);
  await befriend(alice, friend);
  const watcher = await stream(server, friend);
  t.teardown(() => watcher.close());

  const first = await stream(server, alice);
  t.match(await watcher.until((f) => f.event === 'presence' && f.user_id === alice.userId), { presence: 'online' });
  const second = await stream(server, alice);
  first.close();
  t.same(
    (await watcher.drain(300)).filter((f) => f.event === 'presence'),
    [],
    'a second tab kept her online',
  );
  second.close();
  t.match(await watcher.until((f) => f.event === 'presence' && f.user_id === alice.userId), { presence: 'offline' }, 'offline after the grace');

  const back = await stream(server, alice);
  t.teardown(() => back.close());
  await watcher.until((f) => f.event === 'presence' && f.presence === 'online');
  t.same((await must(alice.put('/api/account/presence', { status: 'dnd' }), 200)).body, { status: 'dnd', presence: 'dnd' });
  t.match(await watcher.until((f) => f.event === 'presence'), { user_id: alice.userId, presence: 'dnd' });
  t.match(await back.until((f) => f.event === 'presence'), { presence: 'dnd', status: 'dnd' }, 'her own streams learn her choice');
  await must(alice.put('/api/account/presence', { status: 'invisible' }), 200);
  t.match(await watcher.until((f) => f.event === 'presence'), { presence: 'offline' }, 'invisible looks offline');
  t.equal((await alice.put('/api/account/presence', { status: 'away' })).status, 400);
  await must(alice.put('/api/account/presence', { status: 'idle' }), 200);
  const friends = (await must(friend.get('/api/friends'), 200)).body;
  t.equal(friends.find((f: { user_id: string }) => f.user_id === alice.userId).presence, 'idle', 'friend lists show it');

  // Shared servers: members see each other in the member list and, in small servers, live.
  const token = (await must(c.owner.post(`/api/servers/${c.serverId}/invites`), 201)).body.token;
  await must(alice.post(`/api/invites/${token}/accept`), 200);
  const members = (await must(c.owner.get(`/api/servers/${c.serverId}/members`), 200)).body;
  t.equal(members.find((m: { user_id: string }) => m.user_id === alice.userId).presence, 'idle');
  const ownerStream = await stream(server, c.owner);
  t.teardown(() => ownerStream.close());
  await must(alice.put('/api/account/presence', { status: 'online' }), 200);
  t.match(await ownerStream.until((f) => f.event === 'presence' && f.user_id === alice.userId), { presence: 'online' });

  server.settings.largeServerMembers = 2;
  await must(alice.put('/api/account/presence', { status: 'dnd' }), 200);
  t.same(
    (await ownerStream.drain(150)).filter((f) => f.event === 'presence'),
    [],
    'in a large server, members are not told',
  );
  await watcher.until((f) => f.event === 'presence' && f.presence === 'dnd');
  t.pass('friends still are');
});

t.test('a stream ends with 4001 when its session ends, 4003 on suspension, and says why on reconnect', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const [user, other] = await users(server, 2);
  const s = await stream(server, user);
  await must(user.post('/api/logout'), 204);
  t.equal((await s.closed()).code, 4001);
  t.equal((await refusedUpgrade(server.url, '/api/ws', { client: user })).status, 401, 'the dead cookie gets 401');

  const o = await stream(server, other);
  setStanding(server, other.userId, 4);
  const admin = await signUp(server.url, 'stream_admin');
  server.app.db.prepare('UPDATE users SET is_admin = 1 WHERE id = ?').run(admin.userId);
  await must(admin.put(`/api/admin/users/${other.userId}/standing`, { standing: 4 }), 200);
  t.same(await o.event('standing'), { event: 'standing', account_standing: 4 });
  t.equal((await o.closed()).code, 4003);
  t.equal((await refusedUpgrade(server.url, '/api/ws', { client: other })).status, 403, 'a suspended account gets 403');
});

t.test('a restart ends every session: streams close with 4001', async (t) => {
  const server = await startServer({ settings });
  const [user] = await users(server, 1);
  const s = await stream(server, user);
  const closing = server.close();
  t.equal((await s.closed()).code, 4001);
  await closing;
});

t.test('a busy outbox keeps the order: every stream gets every event in commit order, a close after its reason', async (t) => {
  // One socket write per event-loop turn: every event waits its turn in the outbox.
  const server = await startServer({ settings: { ...settings, sendsPerTurn: 1 } });
  t.teardown(server.close);
  const c = await crowd(server, 3);
  const sockets = await Promise.all(c.members.map((m) => stream(server, m)));
  t.teardown(() => sockets.forEach((s) => s.close()));
  const url = channelMessages(c, c.general);
  const posted = await Promise.all(Array.from({ length: 6 }, (_, i) => must(c.owner.post(url, { content: `burst ${i}` }), 201)));
  const inCommitOrder = (await must(c.owner.get(url), 200)).body.map((m: { id: string }) => m.id).reverse();
  t.same(new Set(inCommitOrder), new Set(posted.map((p) => p.body.id)));
  for (const socket of sockets) {
    const got: string[] = [];
    while (got.length < 6) got.push((await socket.event('message')).message.id);
    t.same(got, inCommitOrder, 'in the order they were committed');
  }

  // The suspension's event is still queued behind a message when the stream is closed: it arrives first.
  const [, , target] = c.members;
  const admin = await signUp(server.url, 'outbox_admin');
  server.app.db.prepare('UPDATE users SET is_admin = 1 WHERE id = ?').run(admin.userId);
  const frames: any[] = [];
  sockets[2].ws.on('message', (data) => frames.push(JSON.parse(data.toString())));
  await Promise.all([
    must(c.owner.post(url, { content: 'last words' }), 201),
    must(admin.put(`/api/admin/users/${target.userId}/standing`, { standing: 4 }), 200),
  ]);
  t.equal((await sockets[2].closed()).code, 4003);
  t.ok(
    frames.some((f) => f.event === 'standing' && f.account_standing === 4),
    'the standing event came before the close',
  );
});

t.test('?compress=gzip: a large ready comes as one binary frame of gzip, and nothing overtakes it', async (t) => {
  const server = await startServer({ settings });
  t.teardown(server.close);
  const [owner] = await users(server, 1);
  const guild = (await must(owner.post('/api/servers', { name: 'wide' }), 201)).body;
  for (let i = 0; i < 60; i++) await must(owner.post(`/api/servers/${guild.id}/channels`, { name: `room-${i}` }), 201);
  const general = (await owner.get(`/api/servers/${guild.id}/channels`)).body[0].id;

  const plain = await stream(server, owner);
  t.teardown(() => plain.close());
  const size = Buffer.byteLength(JSON.stringify(plain.ready));
  t.ok(size >= 16 * 1024, `this ready is ${size} bytes of JSON`);
  t.equal(plain.binaryFrames(), 0, 'without ?compress, every frame is text');

  const packed = await openSocket(server.url, '/api/ws?compress=gzip', { client: owner });
  t.teardown(() => packed.close());
  // Committed while the ready is being compressed: it must come after it, not before.
  await must(owner.post(channelMessages({ serverId: guild.id }, general), { content: 'right behind ready' }), 201);
  const ready = await packed.next();
  t.equal(ready.event, 'ready', 'ready first');
  t.equal(packed.binaryFrames(), 1, 'as one binary frame');
  t.same(
    ready.servers,
    plain.ready.servers.map((s: any) => s),
    'the same servers and channels as the text one',
  );
  const message = await packed.event('message');
  t.equal(message.message.content, 'right behind ready', 'the event committed meanwhile follows it');
  t.equal(packed.binaryFrames(), 1, 'other frames stay text');

  const [small] = await users(server, 1);
  const smallSocket = await openSocket(server.url, '/api/ws?compress=gzip', { client: small });
  t.teardown(() => smallSocket.close());
  t.equal((await smallSocket.next()).event, 'ready');
  t.equal(smallSocket.binaryFrames(), 0, 'a small ready goes as text even when asked for gzip');

  for (const query of ['?compress=deflate', '?compress=gzip&compress=gzip', '?compress=']) {
    t.equal((await refusedUpgrade(server.url, `/api/ws${query}`, { client: owner })).status, 400, query);
  }
});
