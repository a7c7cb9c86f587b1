// Pins, edit history, administrators acting on reports, blocking and group chat management.
import t from 'tap';
import { MAX_PINS } from '../src/parts/messages/message-store';
import { type Client, signUp } from './helpers/client';
import { befriend, community, must, ref, users } from './helpers/community';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

t.test('pins: moderators pin in channels, anyone in conversations; at most 50; pinned shows on the record', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin, member } = scene.clients;
  const channel = (await owner.get(`${scene.base}/channels`)).body[0].id;
  const C = `${scene.base}/channels/${channel}`;
  const message = (await must(member.post(`${C}/messages`, { content: 'pin me' }), 201)).body;
  t.equal(message.pinned, false);

  t.equal((await member.put(`${C}/pins/${message.id}`)).status, 403, 'a member cannot pin in a channel');
  t.equal((await scene.clients.outsider.put(`${C}/pins/${message.id}`)).status, 404);
  const stream = await openSocket(server.url, '/api/ws', { client: member });
  t.teardown(() => stream.close());
  await stream.next();
  const pinned = await must(admin.put(`${C}/pins/${message.id}`), 200);
  t.equal(pinned.body.pinned, true);
  t.match(await stream.event('message_pinned'), { message: { id: message.id, pinned: true } });
  t.same(
    (await must(member.get(`${C}/pins`), 200)).body.map((m: { id: string }) => m.id),
    [message.id],
    'members list the pins',
  );
  t.equal((await must(member.get(`${C}/messages`), 200)).body[0].pinned, true, 'the history shows it pinned');
  await must(admin.put(`${C}/pins/${message.id}`), 200);
  t.pass('pinning twice is harmless');
  const audit = (await must(owner.get(`${scene.base}/audit-log`), 200)).body;
  t.match(audit[0], { action: 'message_pin', target_id: message.id, target_kind: 'message' });
  await must(owner.delete(`${C}/pins/${message.id}`), 200);
  t.same((await must(member.get(`${C}/pins`), 200)).body, []);

  const ids: string[] = [];
  const insert = server.app.db.prepare("UPDATE messages SET pinned_at = '2026-01-01T00:00:00.000Z' WHERE id = ?");
  for (let i = 0; i < MAX_PINS; i++) ids.push((await must(owner.post(`${C}/messages`, { content: `p${i}` }), 201)).body.id);
  for (const id of ids) insert.run(id);
  const extra = (await must(owner.post(`${C}/messages`, { content: 'one more' }), 201)).body.id;
  const over = await owner.put(`${C}/pins/${extra}`);
  t.equal(over.status, 400, 'past the cap: 400 (issue 18)');
  t.match(over.text, `at most ${MAX_PINS}`);

  const [alice, bob] = await users(server, 2);
  await befriend(alice, bob);
  const dm = (await must(alice.post('/api/conversations/dm', { usernames: [bob.username] }), 201)).body;
  const said = (await must(alice.post(`/api/conversations/${dm.id}/messages`, { content: 'remember this' }), 201)).body;
  t.equal((await bob.put(`/api/conversations/${dm.id}/pins/${said.id}`)).status, 200, 'any member pins in a conversation');
  t.equal((await must(alice.get(`/api/conversations/${dm.id}/pins`), 200)).body.length, 1);
});

t.test('edit history: every version kept, for the author, moderators and site administrators', async (t) => {
  const server = await startServer({ env: { ADMIN_USERS: 'history_admin' } });
  t.teardown(server.close);
  const siteAdmin = await signUp(server.url, 'history_admin');
  const scene = await community(server);
  const { owner, admin, member, roleMember } = scene.clients;
  const channel = (await owner.get(`${scene.base}/channels`)).body[0].id;
  const M = `${scene.base}/channels/${channel}/messages`;
  const message = (await must(member.post(M, { content: 'v1' }), 201)).body;
  await must(member.put(`${M}/${message.id}`, { content: 'v2' }), 200);
  const last = (await must(member.put(`${M}/${message.id}`, { content: 'v3' }), 200)).body;
  const history = await must(member.get(`${M}/${message.id}/history`), 200);
  t.same(
    history.body.versions.map((v: { content: string }) => v.content),
    ['v1', 'v2', 'v3'],
    'oldest first, the current one last',
  );
  t.equal(history.body.versions[0].edited_at, null, 'the original was not an edit');
  t.equal(history.body.versions[2].edited_at, last.edited_at);
  for (const who of [owner, admin]) t.equal((await who.get(`${M}/${message.id}/history`)).status, 200);
  t.equal((await roleMember.get(`${M}/${message.id}/history`)).status, 403, 'another member may not');
  t.equal((await scene.clients.outsider.get(`${M}/${message.id}/history`)).status, 404);
  const direct = await siteAdmin.get(`${M}/${message.id}/history`);
  t.equal(direct.status, 200, 'a site administrator reads it directly, not being a member');
  t.same(
    direct.body.versions.map((v: { content: string }) => v.content),
    ['v1', 'v2', 'v3'],
  );
  t.equal((await siteAdmin.get(`${scene.base}/channels/${channel}/messages`)).status, 404, 'but not the channel itself');
  const elsewhere = (await must(owner.post(`${scene.base}/channels`, { name: 'elsewhere' }), 201)).body.id;
  t.equal((await siteAdmin.get(`${scene.base}/channels/${elsewhere}/messages/${message.id}/history`)).status, 404, 'only under its own channel');

  // A site administrator reads it through a report, whose snapshot keeps every version; the
  // reporter's answer carries only what they may read (issue 45, 9).
  const report = (await must(roleMember.post('/api/reports', { type: 'server_message', target: message.id, reason: 'edited away' }), 201)).body;
  t.same(
    report.snapshot.versions.map((v: { content: string }) => v.content),
    ['v3'],
    "the reporter's answer: the version they see",
  );
  const stored = await must(siteAdmin.get(`/api/admin/reports/${report.id}`), 200);
  t.same(
    stored.body.snapshot.versions.map((v: { content: string }) => v.content),
    ['v1', 'v2', 'v3'],
    'the administrator: every version',
  );
});

t.test('administrators act on reports: context, deleting any message, merged duplicates', async (t) => {
  const server = await startServer({ env: { ADMIN_USERS: 'report_admin' } });
  t.teardown(server.close);
  const siteAdmin = await signUp(server.url, 'report_admin');
  const scene = await community(server);
  const { owner, member, roleMember } = scene.clients;
  const channel = (await owner.get(`${scene.base}/channels`)).body[0].id;
  const M = `${scene.base}/channels/${channel}/messages`;
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await must((i === 6 ? member : owner).post(M, { content: `m${i}` }), 201)).body.id);

  const first = await must(roleMember.post('/api/reports', { type: 'server_message', target: ids[6], reason: 'rude' }), 201);
  const again = await roleMember.post('/api/reports', { type: 'server_message', target: ids[6], reason: 'still rude' });
  t.equal(again.status, 200, 'a second report of the same target while pending is merged');
  t.equal(again.body.id, first.body.id, 'into the existing one');
  t.equal((await must(siteAdmin.get('/api/admin/reports?status=pending'), 200)).body.length, 1, 'the queue holds one entry');

  const detail = (await must(siteAdmin.get(`/api/admin/reports/${first.body.id}`), 200)).body;
  t.same(
    detail.context.messages.map((m: { content: string }) => m.content),
    ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9', 'm10', 'm11'],
  );
  t.same(detail.context.reporter, { user_id: roleMember.userId, username: roleMember.username });
  t.same(detail.context.target, ref(member));
  t.equal(detail.target_deleted, false);
  t.equal((await member.get(`/api/admin/reports/${first.body.id}`)).status, 403);

  const userReport = (await must(member.post('/api/reports', { type: 'user', target: owner.userId, reason: 'x' }), 201)).body;
  t.same((await must(siteAdmin.get(`/api/admin/reports/${userReport.id}`), 200)).body.context.target, { user_id: owner.userId, username: owner.username });

  t.equal((await owner.delete(`/api/admin/messages/${ids[6]}`)).status, 403, 'only site administrators');
  await must(siteAdmin.delete(`/api/admin/messages/${ids[6]}`), 204);
  t.equal((await siteAdmin.delete(`/api/admin/messages/${ids[6]}`)).status, 404);
  t.notOk(
    (await must(owner.get(M), 200)).body.some((m: { id: string }) => m.id === ids[6]),
    'the message is gone',
  );
  const listed = (await must(siteAdmin.get('/api/admin/reports'), 200)).body.find((r: { id: string }) => r.id === first.body.id);
  t.equal(listed.target_deleted, true, 'its reports show target_deleted');
  t.equal(listed.snapshot.content, 'm6', 'the snapshot keeps what was said');
  t.match((await must(owner.get(`${scene.base}/audit-log`), 200)).body[0], {
    action: 'message_delete',
    actor: { user_id: siteAdmin.userId },
    target_id: ids[6],
  });
});

t.test('blocking: friendship ends, no requests, DMs or groups either way; servers stay shared', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [alice, bob, carol] = await users(server, 3);
  await befriend(alice, bob);
  await befriend(bob, carol);
  await befriend(alice, carol);
  const dm = (await must(alice.post('/api/conversations/dm', { usernames: [bob.username] }), 201)).body;
  const said = (await must(bob.post(`/api/conversations/${dm.id}/messages`, { content: 'before' }), 201)).body;
  const bobStream = await openSocket(server.url, '/api/ws', { client: bob });
  t.teardown(() => bobStream.close());
  await bobStream.next();

  await must(alice.put(`/api/users/${bob.userId}/block`), 204);
  t.same(await bobStream.event('friend_removed'), { event: 'friend_removed', user_id: alice.userId }, 'the blocked user sees an unfriend, nothing more');
  t.same(
    (await must(alice.get('/api/blocks'), 200)).body.map((b: { user_id: string }) => b.user_id),
    [bob.userId],
  );
  t.notOk((await must(bob.get('/api/friends'), 200)).body.some((f: { user_id: string }) => f.user_id === alice.userId));

  const asked = await bob.post('/api/friends/requests', { username: alice.username });
  t.equal(asked.status, 404, "the blocked user's request: as if the name did not exist");
  t.match(asked.text, `no user named ${alice.username}`);
  t.equal((await alice.post('/api/friends/requests', { username: bob.username })).status, 403, 'the blocker cannot ask either');
  t.equal((await bob.post('/api/conversations/dm', { usernames: [alice.username] })).status, 403, 'no DM, one way');
  t.equal((await alice.post('/api/conversations/dm', { usernames: [bob.username] })).status, 403, 'nor the other');
  t.equal((await bob.post(`/api/conversations/${dm.id}/messages`, { content: 'hello?' })).status, 403, 'the existing DM takes no new words');
  t.equal((await alice.post(`/api/conversations/${dm.id}/messages`, { content: 'hello?' })).status, 403, 'from either side');
  t.equal((await must(bob.get(`/api/conversations/${dm.id}/messages`), 200)).body[0].id, said.id, 'its history stays readable');
  const trio = await carol.post('/api/conversations/group', { name: 'trio', usernames: [alice.username, bob.username] });
  t.equal(trio.status, 403, 'a third person cannot group them either');
  t.equal(trio.text.trim(), 'a block between two of these people keeps them out of one group chat', 'naming no one');
  t.equal(
    (await alice.post('/api/conversations/group', { name: 'duo', usernames: [bob.username, carol.username] })).status,
    403,
    'nor can they group each other',
  );
  const group = (await must(bob.post('/api/conversations/group', { name: 'b-c', usernames: [carol.username] }), 201)).body;
  const added = await carol.put(`/api/conversations/${group.id}/members/${alice.userId}`);
  t.equal(added.status, 403, 'carol cannot add alice to a group with bob, who alice blocked');
  t.notMatch(added.text, alice.username, 'naming no one');
  t.same(
    (await must(carol.get(`/api/conversations/${group.id}`), 200)).body.members.map((m: { user_id: string }) => m.user_id).sort(),
    [bob.userId, carol.userId].sort(),
    'the group is unchanged',
  );
  const aliceGroup = (await must(alice.post('/api/conversations/group', { name: 'a-c', usernames: [carol.username] }), 201)).body;
  t.equal((await carol.put(`/api/conversations/${aliceGroup.id}/members/${bob.userId}`)).status, 403, "nor bob to alice's group");

  // Shared servers: both still see each other's messages.
  const srv = (await must(alice.post('/api/servers', { name: 'shared' }), 201)).body.id;
  const token = (await must(alice.post(`/api/servers/${srv}/invites`), 201)).body.token;
  await must(bob.post(`/api/invites/${token}/accept`), 200);
  const channel = (await alice.get(`/api/servers/${srv}/channels`)).body[0].id;
  await must(bob.post(`/api/servers/${srv}/channels/${channel}/messages`, { content: 'in the server' }), 201);
  t.equal((await must(alice.get(`/api/servers/${srv}/channels/${channel}/messages`), 200)).body[0].content, 'in the server');

  t.equal((await alice.put(`/api/users/${alice.userId}/block`)).status, 409, 'not oneself');
  await must(alice.delete(`/api/users/${bob.userId}/block`), 204);
  t.equal((await alice.delete(`/api/users/${bob.userId}/block`)).status, 404);
  t.equal((await bob.post(`/api/conversations/${dm.id}/messages`, { content: 'after' })).status, 201, 'unblocked, the DM works again');
  t.same(
    (await must(alice.get('/api/friends'), 200)).body.filter((f: { user_id: string }) => f.user_id === bob.userId),
    [],
    'the friendship does not come back by itself',
  );
});

t.test('group chats: rename, add, remove, leave; DMs cannot be changed', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const people = await users(server, 4);
  const [alice, bob, carol, dave] = people;
  for (const other of [bob, carol, dave]) await befriend(alice, other);
  const group = (await must(alice.post('/api/conversations/group', { name: 'friends', usernames: [bob.username] }), 201)).body;
  const G = `/api/conversations/${group.id}`;
  t.equal(group.created_by, alice.userId);
  const [bobStream, carolStream] = await Promise.all([
    openSocket(server.url, '/api/ws', { client: bob }),
    openSocket(server.url, '/api/ws', { client: carol }),
  ]);
  t.teardown(() => [bobStream, carolStream].forEach((s) => s.close()));
  await Promise.all([bobStream.next(), carolStream.next()]);

  const renamed = await must(bob.request('PATCH', G, { name: 'best friends' }), 200);
  t.equal(renamed.body.name, 'best friends', 'any member renames');
  t.match(await bobStream.event('conversation_updated'), { conversation_id: group.id, conversation: { name: 'best friends' } });
  t.equal((await carol.request('PATCH', G, { name: 'x' })).status, 404, 'an outsider cannot');

  t.equal((await bob.put(`${G}/members/${carol.userId}`)).status, 403, 'bob is not friends with carol');
  await must(alice.put(`${G}/members/${carol.userId}`), 200);
  t.match(await carolStream.event('conversation_created'), { conversation: { id: group.id, unread_count: 0 } });
  t.match(await bobStream.event('conversation_updated'), { conversation: { members: [{}, {}, {}] } });

  t.equal((await bob.delete(`${G}/members/${carol.userId}`)).status, 403, 'only the creator removes others');
  await must(alice.delete(`${G}/members/${carol.userId}`), 204);
  t.same(await carolStream.event('conversation_left'), { event: 'conversation_left', conversation_id: group.id });
  t.equal((await carol.get(G)).status, 404);
  await must(bob.delete(`${G}/members/${bob.userId}`), 204);
  t.pass('anyone may leave');

  const dm = (await must(alice.post('/api/conversations/dm', { usernames: [dave.username] }), 201)).body;
  // A DM cannot be changed: 400 (issue 18).
  t.equal((await alice.request('PATCH', `/api/conversations/${dm.id}`, { name: 'no' })).status, 400);
  t.equal((await alice.put(`/api/conversations/${dm.id}/members/${bob.userId}`)).status, 400);
  t.equal((await alice.delete(`/api/conversations/${dm.id}/members/${dave.userId}`)).status, 400);

  // 26 people at most: the creator and 25.
  const crowd: Client[] = [];
  for (let i = 0; i < 25; i++) {
    const friend = await signUp(server.url);
    await befriend(alice, friend);
    crowd.push(friend);
  }
  const big = (await must(alice.post('/api/conversations/group', { name: 'big', usernames: crowd.map((c) => c.username) }), 201)).body;
  t.equal(big.members.length, 26);
  const over = await alice.put(`/api/conversations/${big.id}/members/${dave.userId}`);
  t.equal(over.status, 409);
  t.match(over.text, 'at most 26');
});
