import crypto from 'node:crypto';
import t from 'tap';
import { startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';
import { befriend } from './helpers/community';

const ADMIN = 'mod_admin';

/** A server with an admin, an owner with a server + channel, and helpers to build scenes. */
async function setup(t: tap.Test) {
  const server = await startServer({ env: { ADMIN_USERS: ADMIN } });
  t.teardown(server.close);
  const admin = await signUp(server.url, ADMIN);
  const owner = await signUp(server.url);
  const srv = (await owner.post('/api/servers', { name: 'Town' })).body;
  const channel = (await owner.get(`/api/servers/${srv.id}/channels`)).body[0];
  const channelMessages = `/api/servers/${srv.id}/channels/${channel.id}/messages`;
  const invite = async () => (await owner.post(`/api/servers/${srv.id}/invites`)).body.token as string;
  const join = async (c: Client) => {
    const res = await c.post(`/api/invites/${await invite()}/accept`);
    if (res.status !== 200) throw new Error(`join failed ${res.status}`);
  };
  const setStanding = (c: Client, standing: number) => admin.put(`/api/admin/users/${c.userId}/standing`, { standing });
  return { server, admin, owner, srv, channel, channelMessages, invite, join, befriend, setStanding };
}

t.test('every administrator endpoint answers 401 without a session and 403 to a non-administrator', async (t) => {
  const { server, admin } = await setup(t);
  const someone = await signUp(server.url);
  const anon = new Client(server.url);
  const warning = (await admin.post(`/api/admin/users/${someone.userId}/warnings`, { reason: 'spam' })).body;
  const report = (await someone.post('/api/reports', { type: 'user', target: admin.userId, reason: 'rude' })).body;
  const endpoints: [string, string, unknown?][] = [
    ['GET', '/api/admin/me'],
    ['GET', '/api/admin/reports'],
    ['PUT', `/api/admin/reports/${report.id}`, { status: 'resolved' }],
    ['GET', '/api/admin/users'],
    ['GET', '/api/admin/warnings'],
    ['POST', `/api/admin/users/${someone.userId}/warnings`, { reason: 'x' }],
    ['DELETE', `/api/admin/warnings/${warning.id}`],
    ['PUT', `/api/admin/users/${someone.userId}/standing`, { standing: 0 }],
  ];
  for (const [method, path, body] of endpoints) {
    t.equal((await anon.request(method, path, body)).status, 401, `${method} ${path} without a session`);
    t.equal((await someone.request(method, path, body)).status, 403, `${method} ${path} as a plain user`);
  }
  t.equal((await admin.get('/api/admin/me')).status, 200, 'the administrator passes');
  t.equal((await admin.get(`/api/admin/warnings`)).body.length, 1, 'nothing changed through the refused calls');
});

t.test('warnings raise and lower standing by min(count, 4) and show in GET /api/account', async (t) => {
  const { server, admin } = await setup(t);
  const user = await signUp(server.url);
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) {
    const res = await admin.post(`/api/admin/users/${user.userId}/warnings`, { reason: `warning ${n}` });
    t.equal(res.status, 201);
    t.equal(res.body.issued_by, ADMIN, 'issued_by is the administrator username');
    t.equal(res.body.account_standing, Math.min(n, 4));
    t.match(res.body, { id: String, reason: `warning ${n}`, created_at: /^\d{4}-\d\d-\d\dT/ });
    ids.push(res.body.id);
  }
  const account = (await user.get('/api/account')).body;
  t.equal(account.account_standing, 4, 'five warnings suspend');
  t.equal(account.warnings.length, 5, 'the suspended user still sees every warning');
  t.match(account.warnings[0], { id: String, issued_by: ADMIN, reason: String, created_at: String });

  for (const [i, expected] of [4, 3, 2, 1, 0].entries()) {
    const res = await admin.delete(`/api/admin/warnings/${ids[i]}`);
    t.equal(res.status, 200);
    t.equal(res.body.account_standing, expected, `after removing ${i + 1} warnings`);
  }
  t.equal((await user.get('/api/account')).body.account_standing, 0);
  t.equal((await admin.delete(`/api/admin/warnings/${ids[0]}`)).status, 404, 'a removed warning is gone');
  t.equal((await admin.post(`/api/admin/users/00000000-0000-4000-8000-000000000000/warnings`, { reason: 'x' })).status, 404);
  t.equal((await admin.post(`/api/admin/users/${user.userId}/warnings`, { reason: '' })).status, 400, 'empty reason');
  t.equal((await admin.post(`/api/admin/users/${user.userId}/warnings`, {})).status, 400, 'missing reason');
});

t.test('standing is set directly to an integer from 0 to 4 and nothing else', async (t) => {
  const { server, admin } = await setup(t);
  const user = await signUp(server.url);
  for (const bad of [-1, 5, 2.5, '2', null, true, [2]]) {
    const res = await admin.put(`/api/admin/users/${user.userId}/standing`, { standing: bad });
    t.equal(res.status, 400, `standing ${JSON.stringify(bad)} is refused`);
  }
  t.equal((await admin.put(`/api/admin/users/${user.userId}/standing`, {})).status, 400, 'missing standing');
  t.equal((await user.get('/api/account')).body.account_standing, 0, 'the refused values changed nothing');
  for (const standing of [0, 1, 2, 3, 4]) {
    const res = await admin.put(`/api/admin/users/${user.userId}/standing`, { standing });
    t.equal(res.status, 200);
    t.equal(res.body.account_standing, standing);
    t.equal((await user.get('/api/account')).body.account_standing, standing, 'visible to the user at once');
  }
  const unknown = '00000000-0000-4000-8000-000000000000';
  t.equal((await admin.put(`/api/admin/users/${unknown}/standing`, { standing: 1 })).status, 404);
});

t.test('a standing set by hand stays: warnings raise it, and neither a warning nor its removal lowers it', async (t) => {
  const { server, admin } = await setup(t);
  const user = await signUp(server.url);
  const standing = async () => (await user.get('/api/account')).body.account_standing;
  await admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 4 });
  const warning = (await admin.post(`/api/admin/users/${user.userId}/warnings`, { reason: 'spam' })).body;
  t.equal(warning.account_standing, 4, 'a warning does not lift a suspension set by hand');
  t.equal((await admin.delete(`/api/admin/warnings/${warning.id}`)).body.account_standing, 4, 'nor does removing it');
  t.equal(await standing(), 4);
  await admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 1 });
  const first = (await admin.post(`/api/admin/users/${user.userId}/warnings`, { reason: 'one' })).body;
  t.equal(first.account_standing, 1, 'one warning: still the 1 set by hand');
  const second = (await admin.post(`/api/admin/users/${user.userId}/warnings`, { reason: 'two' })).body;
  t.equal(second.account_standing, 2, 'two warnings raise it');
  await admin.delete(`/api/admin/warnings/${second.id}`);
  await admin.delete(`/api/admin/warnings/${first.id}`);
  t.equal(await standing(), 1, 'their removal goes back to the standing set by hand, not below');
  await admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 0 });
  t.equal(await standing(), 0, 'until an administrator changes it');
});

t.test('each standing level blocks exactly its restrictions and keeps the rest', async (t) => {
  const scene = await setup(t);
  const { server, owner, channelMessages, srv, join, befriend, setStanding, invite } = scene;
  // One subject per level, each a member of the server with a friend to DM.
  const friend = await signUp(server.url);
  await join(friend);
  for (const level of [0, 1, 2, 3, 4]) {
    const subject = await signUp(server.url, uniqueName(`lvl${level}_`));
    await join(subject);
    await befriend(subject, friend);
    const dm = (await subject.post('/api/conversations/dm', { usernames: [friend.username] })).body;
    t.ok(dm.id, 'a DM exists before the standing changes');
    const ownDm = (await subject.post(`/api/conversations/${dm.id}/messages`, { content: 'before' })).body;
    const ownChannel = (await subject.post(channelMessages, { content: 'before' })).body;
    t.equal((await setStanding(subject, level)).status, 200);

    const outcomes = {
      'accept an invite': (await subject.post(`/api/invites/${await invite()}/accept`)).status,
      'create a group chat': (await subject.post('/api/conversations/group', { name: 'g', usernames: [friend.username] })).status,
      'send a DM message': (await subject.post(`/api/conversations/${dm.id}/messages`, { content: 'hi' })).status,
      'send a channel message': (await subject.post(channelMessages, { content: 'hi' })).status,
      'send a legacy server message': (await subject.post(`/api/servers/${srv.id}/messages`, { content: 'hi' })).status,
      'edit own DM message': (await subject.put(`/api/conversations/${dm.id}/messages/${ownDm.id}`, { content: 'x' })).status,
      'edit own channel message': (await subject.put(`${channelMessages}/${ownChannel.id}`, { content: 'x' })).status,
      'react in the DM': (await subject.put(`/api/conversations/${dm.id}/messages/${ownDm.id}/reactions`, { emoji: '👍' })).status,
      'list servers': (await subject.get('/api/servers')).status,
      'read channel messages': (await subject.get(channelMessages)).status,
      'read the account': (await subject.get('/api/account')).status,
    };
    const blocked = (minLevel: number) => (level >= minLevel ? 403 : undefined);
    const expected: Record<keyof typeof outcomes, number> = {
      'accept an invite': blocked(1) ?? 200,
      'create a group chat': blocked(2) ?? 201,
      'send a DM message': blocked(2) ?? 201,
      'send a channel message': blocked(3) ?? 201,
      'send a legacy server message': blocked(3) ?? 201,
      'edit own DM message': blocked(2) ?? 200,
      'edit own channel message': blocked(3) ?? 200,
      'react in the DM': blocked(4) ?? 200,
      'list servers': blocked(4) ?? 200,
      'read channel messages': blocked(4) ?? 200,
      'read the account': 200,
    };
    t.same(outcomes, expected, `standing ${level}`);
  }
  // A blocked action answers with a reason naming the restriction, and changed nothing.
  const limited = await signUp(server.url);
  await setStanding(limited, 1);
  const res = await limited.post(`/api/invites/${await invite()}/accept`);
  t.equal(res.status, 403);
  t.match(res.text, /limited/);
  t.notOk((await owner.get(`/api/servers/${srv.id}/members`)).body.some((m: { user_id: string }) => m.user_id === limited.userId));
});

t.test('a suspended user logs in with suspended true, keeps the account page and logout, and nothing else', async (t) => {
  const { server, admin } = await setup(t);
  const user = await signUp(server.url, uniqueName('susp'), 'password one');
  await admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 4 });
  const fresh = new Client(server.url);
  const login = await fresh.post('/api/login', { username: user.username, password: 'password one' });
  t.equal(login.status, 200);
  t.equal(login.body.suspended, true);
  const form = await new Client(server.url).post('/api/login', new URLSearchParams({ username: user.username, password: 'password one' }).toString(), {
    'content-type': 'application/x-www-form-urlencoded',
  });
  t.equal(form.status, 303);
  t.equal(form.headers.get('location'), '/account/warnings', 'a browser is sent to the warnings page');
  t.equal((await fresh.get('/api/account')).status, 200);
  t.equal((await fresh.get('/api/users/me')).status, 403);
  t.equal((await fresh.post('/api/servers', { name: 'x' })).status, 403);
  t.equal((await fresh.post('/api/reports', { type: 'user', target: admin.userId, reason: 'x' })).status, 403);
  t.equal((await fresh.get('/account/warnings')).status, 200, 'the account page is served');
  t.equal((await fresh.post('/api/logout')).status, 204, 'logout works');
  t.equal((await fresh.get('/api/account')).status, 401, 'and ends the session');
  // Restored: everything works again without logging in anew.
  await admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 0 });
  t.equal((await user.get('/api/users/me')).status, 200, 'a restored user is back at once');
});

t.test('reports of each type need a real target and, for messages, membership', async (t) => {
  const { server, owner, srv, channelMessages, join, befriend } = await setup(t);
  const member = await signUp(server.url);
  const outsider = await signUp(server.url);
  await join(member);
  const message = (await owner.post(channelMessages, { content: 'something nasty' })).body;
  await befriend(owner, member);
  const dm = (await owner.post('/api/conversations/dm', { usernames: [member.username] })).body;
  const dmMessage = (await owner.post(`/api/conversations/${dm.id}/messages`, { content: 'private nasty' })).body;
  const unknown = '00000000-0000-4000-8000-000000000000';

  const cases: [string, Client, unknown, number][] = [
    ['user report', outsider, { type: 'user', target: owner.userId, reason: 'abuse' }, 201],
    ['server report by a non-member', outsider, { type: 'server', target: srv.id, reason: 'bad place' }, 201],
    ['server message report by a member', member, { type: 'server_message', target: message.id, reason: 'nasty' }, 201],
    ['server message report by a non-member', outsider, { type: 'server_message', target: message.id, reason: 'x' }, 404],
    ['conversation message report by a member', member, { type: 'conversation_message', target: dmMessage.id, reason: 'x' }, 201],
    ['conversation message report by an outsider', outsider, { type: 'conversation_message', target: dmMessage.id, reason: 'x' }, 404],
    ['server message id given as a conversation message', member, { type: 'conversation_message', target: message.id, reason: 'x' }, 404],
    ['unknown user', outsider, { type: 'user', target: unknown, reason: 'x' }, 404],
    ['unknown server', outsider, { type: 'server', target: unknown, reason: 'x' }, 404],
    ['unknown message', member, { type: 'server_message', target: unknown, reason: 'x' }, 404],
    ['unknown type', member, { type: 'channel', target: srv.id, reason: 'x' }, 400],
    ['target not a UUID', member, { type: 'user', target: 'bob', reason: 'x' }, 400],
    ['empty reason', member, { type: 'user', target: owner.userId, reason: ' ' }, 400],
    ['reason too long', member, { type: 'user', target: owner.userId, reason: 'x'.repeat(1001) }, 400],
    ['reporting oneself', member, { type: 'user', target: member.userId, reason: 'x' }, 400],
  ];
  for (const [name, who, body, status] of cases) {
    const res = await who.post('/api/reports', body);
    t.equal(res.status, status, name);
    if (status === 201) t.equal(res.body.status, 'pending', `${name} starts pending`);
  }
  t.equal((await new Client(server.url).post('/api/reports', cases[0][2])).status, 401, 'anonymous reports are refused');
});

t.test('a report of a message says where it is, named as it is now; other reports have no place', async (t) => {
  const { server, admin, owner, srv, channel, channelMessages, join, befriend } = await setup(t);
  const member = await signUp(server.url);
  await join(member);
  const message = (await owner.post(channelMessages, { content: 'here' })).body;
  await befriend(owner, member);
  const dm = (await owner.post('/api/conversations/dm', { usernames: [member.username] })).body;
  const dmMessage = (await owner.post(`/api/conversations/${dm.id}/messages`, { content: 'there' })).body;
  const inServer = (await member.post('/api/reports', { type: 'server_message', target: message.id, reason: 'x' })).body;
  const inDm = (await member.post('/api/reports', { type: 'conversation_message', target: dmMessage.id, reason: 'x' })).body;
  const ofUser = (await member.post('/api/reports', { type: 'user', target: owner.userId, reason: 'x' })).body;
  await owner.request('PATCH', `/api/servers/${srv.id}`, { name: 'Renamed place' });
  const byId = async (id: string) => (await admin.get(`/api/admin/reports/${id}`)).body;
  t.same(
    (await byId(inServer.id)).place,
    { server_id: srv.id, server_name: 'Renamed place', channel_id: channel.id, channel_name: channel.name },
    'server and channel, by their names now',
  );
  const dmPlace = (await byId(inDm.id)).place;
  t.equal(dmPlace.conversation_id, dm.id, 'a conversation');
  t.same(dmPlace.conversation_name.split(', ').sort(), [owner.username, member.username].sort(), 'a DM is named by its members');
  t.equal((await byId(ofUser.id)).place, null, 'a user report has no place');
  t.equal(
    (await admin.get('/api/admin/reports')).body.find((r: { id: string }) => r.id === inServer.id).place.server_name,
    'Renamed place',
    'the queue carries it too',
  );
});

t.test('a report keeps its snapshot after the message is edited and deleted', async (t) => {
  const { server, admin, owner, channelMessages, join } = await setup(t);
  const member = await signUp(server.url);
  await join(member);
  const message = (await owner.post(channelMessages, { content: 'original words' })).body;
  const report = (await member.post('/api/reports', { type: 'server_message', target: message.id, reason: 'rude' })).body;
  await owner.put(`${channelMessages}/${message.id}`, { content: 'innocent words' });
  t.equal((await owner.delete(`${channelMessages}/${message.id}`)).status, 204);
  const queue = (await admin.get('/api/admin/reports')).body;
  const stored = queue.find((r: { id: string }) => r.id === report.id);
  t.match(stored, {
    type: 'server_message',
    target: message.id,
    reason: 'rude',
    status: 'pending',
    reporter: { user_id: member.userId, username: member.username },
    snapshot: { message_id: message.id, content: 'original words', author: { user_id: owner.userId, username: owner.username } },
  });
});

t.test('the report queue lists pending first, newest first, and records who resolved what', async (t) => {
  const { server, admin, owner } = await setup(t);
  const reporter = await signUp(server.url);
  // Four different targets: a second pending report of the same target by the same reporter is merged.
  const targets = [owner, ...(await Promise.all([signUp(server.url), signUp(server.url), signUp(server.url)]))];
  const ids: string[] = [];
  for (let i = 0; i < 4; i++) {
    ids.push((await reporter.post('/api/reports', { type: 'user', target: targets[i].userId, reason: `r${i}` })).body.id);
  }
  const resolved = await admin.put(`/api/admin/reports/${ids[3]}`, { status: 'resolved' });
  t.equal(resolved.status, 200);
  t.match(resolved.body, { status: 'resolved', updated_by: { user_id: admin.userId, username: ADMIN }, updated_at: String });
  const queue = (await admin.get('/api/admin/reports')).body.map((r: { reason: string; status: string }) => `${r.status}:${r.reason}`);
  t.same(queue, ['pending:r2', 'pending:r1', 'pending:r0', 'resolved:r3']);
  t.same((await admin.get('/api/admin/reports?status=resolved')).body.length, 1);
  t.same((await admin.get('/api/admin/reports?limit=2&offset=1')).body.length, 2);
  t.equal((await admin.put(`/api/admin/reports/${ids[3]}`, { status: 'pending' })).body.status, 'pending', 'reopened');
  t.equal((await admin.put(`/api/admin/reports/${ids[0]}`, { status: 'closed' })).status, 400);
  t.equal((await admin.put(`/api/admin/reports/00000000-0000-4000-8000-000000000000`, { status: 'resolved' })).status, 404);
  t.equal((await admin.get('/api/admin/reports?status=open')).status, 400);
  t.equal((await admin.get('/api/admin/reports?offset=-1')).status, 400);
});

t.test('the user list filters by username prefix, pages, and shows standing, admin flag and warnings', async (t) => {
  const { server, admin } = await setup(t);
  const names = ['zed_a1', 'zed_a2', 'zed_b1', 'Zed_A3'];
  const clients = await Promise.all(names.map((n) => signUp(server.url, n)));
  await admin.post(`/api/admin/users/${clients[0].userId}/warnings`, { reason: 'first' });
  const page = (await admin.get('/api/admin/users?prefix=zed_a')).body;
  t.same(
    page.map((u: { username: string }) => u.username),
    ['zed_a1', 'zed_a2', 'Zed_A3'],
    'case-insensitive prefix, by name',
  );
  t.match(page[0], { user_id: clients[0].userId, account_standing: 1, is_admin: false, warnings: [{ reason: 'first', issued_by: ADMIN }] });
  t.same((await admin.get('/api/admin/users?prefix=zed_&limit=2')).body.length, 2);
  t.same((await admin.get('/api/admin/users?prefix=zed_&limit=2&offset=2')).body.length, 2);
  t.same((await admin.get('/api/admin/users?prefix=%25')).body, [], 'a % in the prefix is literal, not a wildcard');
  const me = (await admin.get(`/api/admin/users?prefix=${ADMIN}`)).body[0];
  t.equal(me.is_admin, true);
  const warnings = (await admin.get('/api/admin/warnings')).body;
  t.match(warnings, [{ user_id: clients[0].userId, username: 'zed_a1', issued_by: ADMIN, reason: 'first' }]);
});

t.test('administrator lists are whole without a limit, and paged with X-Total-Count and Link with one', async (t) => {
  const { server, admin } = await setup(t);
  // More rows than one streamed page (500) and more than the old default page (50).
  const insert = server.app.db.prepare('INSERT INTO users (id, username, password_hash, created_at) VALUES (?, ?, ?, ?)');
  const warn = server.app.db.prepare('INSERT INTO warnings (id, user_id, issued_by, reason, created_at) VALUES (?, ?, ?, ?, ?)');
  server.app.db.transaction(() => {
    for (let i = 0; i < 1200; i++) {
      const id = crypto.randomUUID();
      insert.run(id, `bulk_${String(i).padStart(4, '0')}`, 'x', '2026-01-01T00:00:00.000Z');
      warn.run(crypto.randomUUID(), id, admin.userId, `w${i}`, `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`);
    }
  })();

  const all = await admin.get('/api/admin/users?prefix=bulk_');
  t.equal(all.status, 200);
  t.equal(all.body.length, 1200, 'every matching user, in one answer');
  t.equal(all.body[1199].username, 'bulk_1199', 'in order');
  t.equal(all.headers.get('x-total-count'), null, 'a whole list needs no count');
  t.equal((await admin.get('/api/admin/warnings')).body.length, 1200, 'every warning');

  const first = await admin.get('/api/admin/users?prefix=bulk_&limit=100');
  t.equal(first.body.length, 100);
  t.equal(first.headers.get('x-total-count'), '1200');
  t.equal(first.headers.get('link'), '</api/admin/users?prefix=bulk_&limit=100&offset=100>; rel="next"');
  const next = await admin.get(first.headers.get('link')!.slice(1, first.headers.get('link')!.indexOf('>')));
  t.equal(next.body[0].username, 'bulk_0100', 'the next link leads to the next page');
  const last = await admin.get('/api/admin/users?prefix=bulk_&limit=100&offset=1100');
  t.equal(last.body.length, 100);
  t.equal(last.headers.get('link'), null, 'no next link on the last page');
  const paged = await admin.get('/api/admin/warnings?offset=1190');
  t.equal(paged.body.length, 10, 'offset alone pages too (limit 50)');
  t.equal(paged.headers.get('x-total-count'), '1200');
});
