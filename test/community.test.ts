// Community tools: server management, invites, bans, timeouts, slow mode and the audit log.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { type Client, signUp } from './helpers/client';
import { ACTORS, type Actor, type Expect, community, must, setStanding } from './helpers/community';
import { FakeClock, startServer, type TestServer } from './helpers/server';
import { openSocket } from './helpers/ws';

const ADMIN_ONLY: Expect = { owner: 200, admin: 200, roleMember: 403, member: 403, outsider: 404, anon: 401, suspended: 403 };
const OWNER_ONLY: Expect = { ...ADMIN_ONLY, admin: 403 };

type Scene = Awaited<ReturnType<typeof community>>;

/** Runs one call per kind of caller and checks each status. */
async function matrix(t: tap.Test, scene: Scene, expect: Expect, call: (c: Client, who: Actor) => Promise<{ status: number; text: string }>) {
  for (const who of ACTORS) {
    const res = await call(scene.clients[who], who);
    t.equal(res.status, expect[who], `${who}: ${res.status} ${res.text.trim()}`);
  }
}

const auditOf = async (scene: Scene) => (await must(scene.clients.owner.get(`${scene.base}/audit-log`), 200)).body;

t.test('servers: update, transfer, delete', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin, member } = scene.clients;

  t.test('PATCH: the owner and full server admins rename and describe; audited with the reason header', async (t) => {
    await matrix(t, scene, ADMIN_ONLY, (c, who) => c.request('PATCH', scene.base, { description: `by ${who}` }));
    const watcher = await openSocket(server.url, '/api/ws', { client: member });
    t.teardown(() => watcher.close());
    await watcher.next();
    const res = await must(owner.request('PATCH', scene.base, { name: 'Renamed', description: 'A place' }, { 'x-audit-log-reason': 'tidy%20up' }), 200);
    t.match(res.body, { name: 'Renamed', description: 'A place' });
    t.match(await watcher.event('server_updated'), { server_id: scene.serverId, server: { name: 'Renamed' } });
    const [entry] = await auditOf(scene);
    t.match(entry, { action: 'server_update', actor: { user_id: owner.userId }, target_id: scene.serverId, target_kind: 'server', reason: 'tidy up' });
    t.match(entry.changes, { name: { to: 'Renamed' }, description: { from: 'by admin', to: 'A place' } });
    t.equal((await owner.request('PATCH', scene.base, { name: '' })).status, 400);
    t.equal(
      (await owner.request('PATCH', scene.base, { name: 'x' }, { 'x-audit-log-reason': 'é'.repeat(3) })).status,
      400,
      'a reason that is not ASCII (not encoded)',
    );
  });

  t.test('PUT owner: only the owner, to a member; the new owner holds every permission', async (t) => {
    const scene2 = await community(server);
    await matrix(t, scene2, { ...OWNER_ONLY, owner: 409 }, (c) => c.put(`${scene2.base}/owner`, { user_id: scene2.clients.owner.userId }));
    const stranger = await signUp(server.url);
    t.equal((await scene2.clients.owner.put(`${scene2.base}/owner`, { user_id: stranger.userId })).status, 404, 'not a member');
    const heir = scene2.clients.member;
    const res = await must(scene2.clients.owner.put(`${scene2.base}/owner`, { user_id: heir.userId }), 200);
    t.equal(res.body.owner_id, heir.userId);
    t.equal((await heir.post(`${scene2.base}/roles`, { name: 'heirs' })).status, 201, 'the new owner creates roles');
    t.equal((await scene2.clients.owner.post(`${scene2.base}/roles`, { name: 'old' })).status, 403, 'the old owner is a member now');
    t.match((await auditOf({ ...scene2, clients: { ...scene2.clients, owner: heir } }))[1], { action: 'owner_transfer', target_id: heir.userId });
  });

  t.test('DELETE: the owner only; everything goes, files too; members are told', async (t) => {
    const doomed = await community(server);
    const channel = (await doomed.clients.owner.get(`${doomed.base}/channels`)).body[0].id;
    const form = new FormData();
    form.append('attachments', new Blob(['bytes']), 'f.txt');
    const file = (await must(doomed.clients.member.post(`${doomed.base}/channels/${channel}/messages`, form), 201)).body.attachments[0];
    const watcher = await openSocket(server.url, '/api/ws', { client: doomed.clients.member });
    t.teardown(() => watcher.close());
    await watcher.next();
    for (const who of ['admin', 'member', 'outsider'] as const) t.not((await doomed.clients[who].delete(doomed.base)).status, 204, who);
    await must(doomed.clients.owner.delete(doomed.base), 204);
    t.same(await watcher.event('server_left'), { event: 'server_left', server_id: doomed.serverId, reason: 'deleted' });
    t.equal((await doomed.clients.owner.get(doomed.base)).status, 404);
    // The files go after the commit, without holding up the answer: wait for it, bounded.
    const stored = path.join(server.dataDir, 'uploads', file.id);
    for (let i = 0; i < 100 && fs.existsSync(stored); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    t.notOk(fs.existsSync(stored), 'the attachment file is gone');
    t.equal((await doomed.clients.member.get(file.url)).status, 404);
  });
  void admin;
});

t.test('channels: rename, topic, dense reordering, slow mode, delete', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin, member } = scene.clients;
  const channels = async () => (await must(owner.get(`${scene.base}/channels`), 200)).body as { id: string; name: string; position: number }[];
  for (const name of ['b', 'c', 'd']) await must(owner.post(`${scene.base}/channels`, { name }), 201);
  const [general, b, c, d] = await channels();

  await matrix(t, scene, ADMIN_ONLY, (cl) => cl.request('PATCH', `${scene.base}/channels/${b.id}`, { topic: 'about b' }));
  const moved = await must(admin.request('PATCH', `${scene.base}/channels/${d.id}`, { position: 0, name: 'dee' }), 200);
  t.match(moved.body, { name: 'dee', position: 0, topic: '' });
  t.same(
    (await channels()).map((ch) => [ch.name, ch.position]),
    [
      ['dee', 0],
      ['general', 1],
      ['b', 2],
      ['c', 3],
    ],
    'positions stay 0..n-1',
  );
  t.equal((await owner.request('PATCH', `${scene.base}/channels/${c.id}`, { name: 'GENERAL' })).status, 409, 'a name in use');
  t.equal((await owner.request('PATCH', `${scene.base}/channels/${c.id}`, { slowmode_seconds: -1 })).status, 400);
  t.equal((await owner.request('PATCH', `${scene.base}/channels/${general.id}`, { position: 'first' })).status, 400);

  t.test('DELETE: messages go, positions close up, room sockets close, members are told; audited', async (t) => {
    const room = await openSocket(server.url, `/api/channels/${b.id}/ws`, { client: member });
    const stream = await openSocket(server.url, '/api/ws', { client: member });
    t.teardown(() => stream.close());
    await stream.next();
    // Deleted by the owner first: a channel that no longer exists is 404 to every member (manage_channels is asked in it).
    await matrix(t, scene, { ...ADMIN_ONLY, owner: 204, admin: 404, roleMember: 404, member: 404 }, (cl) => cl.delete(`${scene.base}/channels/${b.id}`));
    t.equal((await room.closed()).code, 4003);
    t.same(await stream.event('channel_deleted'), { event: 'channel_deleted', server_id: scene.serverId, channel_id: b.id });
    t.same(
      (await channels()).map((ch) => ch.position),
      [0, 1, 2],
    );
    const actions = (await auditOf(scene)).map((e: { action: string }) => e.action);
    t.ok(actions.includes('channel_delete') && actions.includes('channel_update') && actions.includes('channel_create'), actions.join(', '));
  });
});

t.test('roles: rename, toggle admin, delete', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin } = scene.clients;
  const roles = (await must(owner.get(`${scene.base}/roles`), 200)).body;
  const mods = roles.find((r: { name: string }) => r.name === 'mods');
  await matrix(t, scene, OWNER_ONLY, (c) => c.request('PATCH', `${scene.base}/roles/${mods.id}`, { name: 'moderators' }));
  const demoted = await must(owner.request('PATCH', `${scene.base}/roles/${mods.id}`, { full_server_admin: false }), 200);
  t.equal(demoted.body.full_server_admin, false);
  t.equal((await admin.post(`${scene.base}/channels`, { name: 'nope' })).status, 403, 'the role no longer grants admin');
  t.equal((await owner.request('PATCH', `${scene.base}/roles/${mods.id}`, { name: 'REGULARS' })).status, 409);
  await must(owner.delete(`${scene.base}/roles/${mods.id}`), 204);
  const members = (await must(owner.get(`${scene.base}/members`), 200)).body;
  t.equal(members.find((m: { user_id: string }) => m.user_id === admin.userId).role, null, 'its holders lose it');
  t.equal((await owner.delete(`${scene.base}/roles/${mods.id}`)).status, 404);
  const actions = (await auditOf(scene)).map((e: { action: string }) => e.action);
  for (const action of ['role_delete', 'role_update', 'role_assign', 'role_create']) t.ok(actions.includes(action), action);
});

t.test('invites: listing, revoking, max uses, expiry', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin, member, roleMember } = scene.clients;
  const mine = (await must(member.post(`${scene.base}/invites`), 201)).body;
  t.match(mine, { created_by: { user_id: member.userId }, uses: 0, max_uses: null });

  const all = (await must(admin.get(`${scene.base}/invites`), 200)).body.map((i: { token: string }) => i.token);
  t.ok(all.includes(mine.token) && all.includes(scene.token), 'owners and admins see every invite');
  const own = (await must(member.get(`${scene.base}/invites`), 200)).body.map((i: { token: string }) => i.token);
  t.same(own, [mine.token], 'a member sees their own');

  t.equal((await roleMember.delete(`/api/invites/${mine.token}`)).status, 403, 'another member cannot revoke it');
  await must(member.delete(`/api/invites/${mine.token}`), 204);
  t.equal((await new (await import('./helpers/client')).Client(server.url).get(`/api/invites/${mine.token}`)).status, 404, 'a revoked invite is gone');
  const byOwner = (await must(owner.post(`${scene.base}/invites`), 201)).body;
  await must(admin.delete(`/api/invites/${byOwner.token}`), 204);
  t.match((await auditOf(scene))[0], { action: 'invite_revoke', target_id: byOwner.token, target_kind: 'invite' });

  const twice = (await must(owner.post(`${scene.base}/invites`, { max_uses: 2, expires_in_seconds: 600 }), 201)).body;
  t.match(twice, { max_uses: 2, uses: 0, expires_at: new Date(clock.now() + 600_000).toISOString() });
  const [a, b, c] = await Promise.all([signUp(server.url), signUp(server.url), signUp(server.url)]);
  await must(a.post(`/api/invites/${twice.token}/accept`), 200);
  await must(b.post(`/api/invites/${twice.token}/accept`), 200);
  t.equal((await c.post(`/api/invites/${twice.token}/accept`)).status, 404, 'used up: 404 like an expired one');
  const soon = (await must(owner.post(`${scene.base}/invites`, { expires_in_seconds: 300 }), 201)).body;
  clock.advance(300_000);
  t.equal((await c.post(`/api/invites/${soon.token}/accept`)).status, 404, 'expired');
  for (const bad of [{ max_uses: 0 }, { max_uses: 1001 }, { expires_in_seconds: 299 }, { expires_in_seconds: 604801 }, { max_uses: '2' }]) {
    t.equal((await owner.post(`${scene.base}/invites`, bad)).status, 400, JSON.stringify(bad));
  }
});

t.test('bans: who may ban whom, what a ban does, and lifting it', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin, member } = scene.clients;
  const secondAdmin = await scene.newMember('mods');
  const target = await scene.newMember();

  t.equal((await member.put(`${scene.base}/bans/${target.userId}`)).status, 403, 'a member cannot ban');
  t.equal((await admin.put(`${scene.base}/bans/${owner.userId}`)).status, 403, 'never the owner');
  t.equal((await admin.put(`${scene.base}/bans/${secondAdmin.userId}`)).status, 403, 'an admin cannot ban an admin');
  t.equal((await admin.put(`${scene.base}/bans/${admin.userId}`)).status, 409, 'nor themselves');
  t.equal((await scene.clients.outsider.put(`${scene.base}/bans/${target.userId}`)).status, 404);

  const channel = (await owner.get(`${scene.base}/channels`)).body[0].id;
  const room = await openSocket(server.url, `/api/channels/${channel}/ws`, { client: target });
  const stream = await openSocket(server.url, '/api/ws', { client: target });
  t.teardown(() => stream.close());
  await stream.next();
  await must(admin.put(`${scene.base}/bans/${target.userId}`, { reason: 'spam' }), 204);
  t.equal((await room.closed()).code, 4003, 'their room sockets close');
  t.same(await stream.event('server_left'), { event: 'server_left', server_id: scene.serverId, reason: 'banned' });
  t.equal((await target.get(scene.base)).status, 404, 'removed');
  const fresh = (await must(owner.post(`${scene.base}/invites`), 201)).body.token;
  const refused = await target.post(`/api/invites/${fresh}/accept`);
  t.equal(refused.status, 403, 'invites refuse them');
  t.match(refused.text, 'banned');
  const bans = (await must(admin.get(`${scene.base}/bans`), 200)).body;
  t.match(bans, [{ user_id: target.userId, username: target.username, reason: 'spam', banned_by: admin.userId, created_at: String }]);
  t.equal((await member.get(`${scene.base}/bans`)).status, 403);

  await must(owner.put(`${scene.base}/bans/${secondAdmin.userId}`), 204);
  t.pass('the owner may ban an admin');
  await must(owner.delete(`${scene.base}/bans/${target.userId}`), 204);
  t.equal((await owner.delete(`${scene.base}/bans/${target.userId}`)).status, 404, 'not banned any more');
  await must(target.post(`/api/invites/${fresh}/accept`), 200);
  const actions = (await auditOf(scene)).map((e: { action: string; reason: string | null }) => e.action);
  t.ok(actions.includes('member_ban') && actions.includes('member_unban'));
  const stranger = await signUp(server.url);
  await must(owner.put(`${scene.base}/bans/${stranger.userId}`), 204);
  t.equal((await stranger.post(`/api/invites/${fresh}/accept`)).status, 403, 'someone never in the server can be banned ahead');
});

/** The community on a test clock, with its first channel's messages path: where timeouts are tried. */
async function timeoutScene(t: tap.Test) {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const scene = await community(server);
  const channel = (await scene.clients.owner.get(`${scene.base}/channels`)).body[0].id;
  return { clock, scene, channel, messages: `${scene.base}/channels/${channel}/messages`, ...scene.clients };
}

t.test('timeouts: read but not write, until the end or until lifted', async (t) => {
  const { clock, scene, channel, messages, owner, admin, member } = await timeoutScene(t);
  const earlier = (await must(member.post(messages, { content: 'before' }), 201)).body;

  t.equal((await member.put(`${scene.base}/members/${admin.userId}/timeout`, { seconds: 60 })).status, 403);
  t.equal((await admin.put(`${scene.base}/members/${owner.userId}/timeout`, { seconds: 60 })).status, 403, 'never the owner');
  t.equal((await owner.put(`${scene.base}/members/${member.userId}/timeout`, { seconds: 59 })).status, 400);
  t.equal((await owner.put(`${scene.base}/members/${member.userId}/timeout`, { seconds: 2419201 })).status, 400);
  const timed = await must(admin.put(`${scene.base}/members/${member.userId}/timeout`, { seconds: 600 }), 200);
  const until = new Date(clock.now() + 600_000).toISOString();
  t.equal(timed.body.timeout_until, until, 'the member record shows the end');

  t.equal((await member.get(messages)).status, 200, 'they can read');
  const refused = await member.post(messages, { content: 'hello' });
  t.equal(refused.status, 403);
  t.match(refused.text, until, 'the refusal names the end');
  t.equal((await member.put(`${messages}/${earlier.id}`, { content: 'edit' })).status, 403, 'no edit');
  t.equal((await member.put(`${messages}/${earlier.id}/reactions`, { emoji: '👍' })).status, 403, 'no reaction');
  t.equal((await member.post(`${scene.base}/channels/${channel}/typing`)).status, 403, 'no typing');
  t.equal((await member.post(`${scene.base}/messages`, { content: 'legacy' })).status, 403, 'not through the legacy route either');

  clock.advance(600_000);
  t.equal((await member.post(messages, { content: 'free again' })).status, 201, 'the timeout ends by itself');
  await must(owner.put(`${scene.base}/members/${member.userId}/timeout`, { seconds: 60 }), 200);
  const lifted = await must(owner.delete(`${scene.base}/members/${member.userId}/timeout`), 200);
  t.equal(lifted.body.timeout_until, null);
  t.equal((await member.post(messages, { content: 'lifted' })).status, 201);
  const actions = (await auditOf(scene)).map((e: { action: string }) => e.action);
  t.same(actions.slice(0, 3), ['member_timeout_remove', 'member_timeout', 'member_timeout']);
});

t.test('a timed-out full server administrator acts as a timed-out plain member', async (t) => {
  const { clock, scene, channel, messages, owner, admin, member } = await timeoutScene(t);
  const posted = (await must(member.post(messages, { content: 'a member wrote this' }), 201)).body;
  await must(owner.put(`${scene.base}/members/${admin.userId}/timeout`, { seconds: 600 }), 200);

  t.equal((await admin.get(messages)).status, 200, 'they still read');
  t.equal((await admin.post(`${scene.base}/channels`, { name: 'sneaky' })).status, 403, 'no channel creation');
  t.equal((await admin.delete(`${messages}/${posted.id}`)).status, 403, "no deleting another's message");
  t.equal((await admin.put(`${scene.base}/channels/${channel}/pins/${posted.id}`)).status, 403, 'no pinning');
  t.equal((await admin.delete(`${scene.base}/members/${member.userId}`)).status, 403, 'no kick');
  t.equal((await admin.put(`${scene.base}/bans/${member.userId}`, {})).status, 403, 'no ban');
  t.equal((await admin.put(`${scene.base}/members/${member.userId}/timeout`, { seconds: 60 })).status, 403, 'no timeout of others');
  t.equal((await admin.get(`${scene.base}/audit-log`)).status, 403, 'no audit log');
  t.equal((await admin.post(messages, { content: 'hi' })).status, 403, 'and no writing, like any timed-out member');

  clock.advance(600_000);
  t.equal((await admin.post(`${scene.base}/channels`, { name: 'after' })).status, 201, 'the powers come back with the end of the timeout');
});

t.test('the audit log: owners and admins, newest first, paged by entry id', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const scene = await community(server);
  const { owner } = scene.clients;
  for (let i = 0; i < 5; i++) await must(owner.post(`${scene.base}/channels`, { name: `c${i}` }, { 'x-audit-log-reason': `because ${i}` }), 201);
  await matrix(t, scene, ADMIN_ONLY, (c) => c.get(`${scene.base}/audit-log`));
  const page = (await must(owner.get(`${scene.base}/audit-log?limit=2`), 200)).body;
  t.same(
    page.map((e: { reason: string }) => e.reason),
    ['because 4', 'because 3'],
  );
  t.match(page[0], { action: 'channel_create', actor: { user_id: owner.userId, username: owner.username }, target_kind: 'channel', changes: { name: 'c4' } });
  const next = (await must(owner.get(`${scene.base}/audit-log?limit=2&before=${page[1].id}`), 200)).body;
  t.same(
    next.map((e: { reason: string }) => e.reason),
    ['because 2', 'because 1'],
  );
  t.equal((await owner.get(`${scene.base}/audit-log?before=00000000-0000-4000-8000-000000000000`)).status, 404, 'a cursor that is no entry of this log');
  t.equal((await owner.get(`${scene.base}/audit-log?limit=101`)).status, 400);
});

t.test('suspended and timed-out callers, every management route', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const scene = await community(server);
  const suspendedOwner = await signUp(server.url);
  const own = (await must(suspendedOwner.post('/api/servers', { name: 'mine' }), 201)).body.id;
  setStanding(server, suspendedOwner.userId, 4);
  for (const [method, route, body] of [
    ['PATCH', `/api/servers/${own}`, { name: 'x' }],
    ['DELETE', `/api/servers/${own}`, undefined],
    ['GET', `/api/servers/${own}/audit-log`, undefined],
    ['GET', `/api/servers/${own}/bans`, undefined],
  ] as const) {
    t.equal((await suspendedOwner.request(method, route, body)).status, 403, `${method} ${route} suspended`);
  }
  void scene;
});

void ((_: TestServer) => _);
