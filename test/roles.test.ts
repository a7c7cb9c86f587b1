// Several roles per member, and what a role looks like: colour, position, hoist, mentionable
// (issue 30, first part). Real server, real HTTP and WebSocket.
import t from 'tap';
import { community, must } from './helpers/community';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

t.test('a member holds several roles, in position order, given and taken one at a time', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, clients, newMember } = await community(server);
  const { owner, admin, member } = clients;
  const artists = (await must(owner.post(`${base}/roles`, { name: 'artists', color: 0x3ba55d, hoist: true, mentionable: true }), 201)).body;
  t.match(
    artists,
    { name: 'artists', color: 0x3ba55d, hoist: true, mentionable: true, position: 2, full_server_admin: false },
    'a new role is placed last, with what it was given',
  );
  const roles = (await must(owner.get(`${base}/roles`), 200)).body;
  t.same(
    roles.map((r: any) => [r.name, r.position]),
    [
      ['mods', 0],
      ['regulars', 1],
      ['artists', 2],
    ],
    'roles are listed in position order',
  );

  const giver = await newMember();
  let record = (await must(owner.put(`${base}/members/${giver.userId}/role`, { role: 'ARTISTS' }), 200)).body;
  t.same(record.roles, ['artists']);
  record = (await must(owner.put(`${base}/members/${giver.userId}/role`, { role: 'regulars' }), 200)).body;
  t.same(record.roles, ['regulars', 'artists'], 'a second role is added beside the first, in position order');
  t.equal(record.role, 'regulars', '`role` is the first of them');
  t.same(record.role_ids, [roles[1].id, artists.id]);
  t.same(
    (await must(owner.put(`${base}/members/${giver.userId}/role`, { role: 'regulars' }), 200)).body.roles,
    ['regulars', 'artists'],
    'giving a held role again changes nothing',
  );

  // Moving a role moves it in every member record.
  await must(owner.request('PATCH', `${base}/roles/${artists.id}`, { position: 0 }), 200);
  t.same(
    (await must(owner.get(`${base}/roles`), 200)).body.map((r: any) => [r.name, r.position]),
    [
      ['artists', 0],
      ['mods', 1],
      ['regulars', 2],
    ],
    'positions stay 0..n-1',
  );
  const listed = (await must(owner.get(`${base}/members`), 200)).body.find((m: any) => m.user_id === giver.userId);
  t.same(listed.roles, ['artists', 'regulars']);

  // Taking one.
  record = (await must(owner.delete(`${base}/members/${giver.userId}/roles/${artists.id}`), 200)).body;
  t.same(record.roles, ['regulars'], 'DELETE takes one role');
  t.equal((await owner.delete(`${base}/members/${giver.userId}/roles/${artists.id}`)).status, 404, 'a role not held: 404');
  t.equal((await owner.delete(`${base}/members/${giver.userId}/roles/00000000-0000-4000-8000-000000000000`)).status, 404, 'no such role: 404');
  t.equal((await admin.delete(`${base}/members/${giver.userId}/roles/${roles[1].id}`)).status, 403, 'a full server admin may not');
  t.equal((await member.delete(`${base}/members/${giver.userId}/roles/${roles[1].id}`)).status, 403, 'a member may not');
  t.equal((await clients.outsider.delete(`${base}/members/${giver.userId}/roles/${roles[1].id}`)).status, 404, 'an outsider sees nothing');
  // `role: null` takes them all.
  await must(owner.put(`${base}/members/${giver.userId}/role`, { role: 'artists' }), 200);
  record = (await must(owner.put(`${base}/members/${giver.userId}/role`, { role: null }), 200)).body;
  t.same([record.role, record.roles, record.role_ids], [null, [], []], 'role: null takes every role');

  const audit = (await must(owner.get(`${base}/audit-log`), 200)).body;
  const taken = audit.find((e: any) => e.action === 'role_unassign');
  t.match(
    taken,
    { target_id: giver.userId, changes: { role: 'artists', role_id: artists.id, roles: { from: ['artists', 'regulars'], to: ['regulars'] } } },
    'taking a role is audited with before and after',
  );
});

t.test('administrator rights come from any role that has them', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, clients, newMember } = await community(server);
  const both = await newMember('regulars');
  t.equal((await both.post(`${base}/channels`, { name: 'nope' })).status, 403, 'a plain role gives no rights');
  await must(clients.owner.put(`${base}/members/${both.userId}/role`, { role: 'mods' }), 200);
  t.equal((await both.post(`${base}/channels`, { name: 'yes' })).status, 201, 'a second role with full_server_admin makes them an administrator');
  const mods = (await must(clients.owner.get(`${base}/roles`), 200)).body.find((r: any) => r.name === 'mods');
  await must(clients.owner.delete(`${base}/members/${both.userId}/roles/${mods.id}`), 200);
  t.equal((await both.post(`${base}/channels`, { name: 'again' })).status, 403, 'and taking it takes the rights');
});

t.test('role colours, hoist and mentionable are checked, changed and announced', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, serverId, clients } = await community(server);
  const { owner, member } = clients;
  const roles = (await must(owner.get(`${base}/roles`), 200)).body;
  for (const color of [-1, 0x1000000, 1.5, '#fff', true]) {
    t.equal((await owner.request('PATCH', `${base}/roles/${roles[0].id}`, { color })).status, 400, `color ${JSON.stringify(color)}: 400`);
  }
  t.equal((await owner.request('PATCH', `${base}/roles/${roles[0].id}`, { hoist: 'yes' })).status, 400, 'hoist must be a boolean');
  const socket = await openSocket(server.url, '/api/ws', { client: member });
  t.teardown(() => socket.close());
  await socket.event('ready');
  const changed = (await must(owner.request('PATCH', `${base}/roles/${roles[0].id}`, { color: 0xff0000, hoist: false, mentionable: true }), 200)).body;
  t.match(changed, { color: 0xff0000, hoist: false, mentionable: true });
  const event = await socket.event('roles_updated');
  t.equal(event.server_id, serverId);
  t.same(
    event.roles.map((r: any) => [r.name, r.color, r.hoist]),
    [
      ['mods', 0xff0000, false],
      ['regulars', null, false],
    ],
    'every role of the server, in position order',
  );
  t.same((await must(owner.request('PATCH', `${base}/roles/${roles[0].id}`, { color: null }), 200)).body.color, null, 'color: null takes the colour away');
  const entry = (await must(owner.get(`${base}/audit-log`), 200)).body.find((e: any) => e.action === 'role_update');
  t.match(entry.changes, { color: { from: 0xff0000, to: null } }, 'changes are audited with before and after');
});

t.test('@rolename mentions every holder of a mentionable role, from who may use @everyone', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, clients, newMember } = await community(server);
  const { owner, member } = clients;
  const artists = (await must(owner.post(`${base}/roles`, { name: 'artists', mentionable: true }), 201)).body;
  await must(owner.post(`${base}/roles`, { name: 'quiet', mentionable: false }), 201);
  const painter = await newMember('artists');
  const hushed = await newMember('quiet');
  const channelId = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  const messages = `${base}/channels/${channelId}/messages`;
  const mentionsOf = async (client: typeof owner) => (await must(client.get(`${base}/channels`), 200)).body[0].mention_count;

  const sent = (await must(owner.post(messages, { content: 'hey @Artists and @quiet, look' }), 201)).body;
  t.same(sent.mention_roles, [artists.id], 'the record names the mentionable role only');
  t.equal(await mentionsOf(painter), 1, 'a holder counts it as a mention');
  t.equal(await mentionsOf(hushed), 0, 'a role that is not mentionable mentions no one');
  t.equal(await mentionsOf(member), 0, 'someone without the role is not mentioned');
  const plain = (await must(member.post(messages, { content: '@artists from a plain member' }), 201)).body;
  t.same(plain.mention_roles, [], 'from a plain member it stays text');
  t.equal(await mentionsOf(painter), 1);
  // A holder who reads the message has no mention left; an edit that drops the name takes it back.
  const second = (await must(owner.post(messages, { content: 'again @artists' }), 201)).body;
  t.equal(await mentionsOf(painter), 2);
  await must(owner.put(`${messages}/${second.id}`, { content: 'again, for nobody' }), 200);
  t.equal(await mentionsOf(painter), 1, 'the edit took the mention back');
  t.same((await must(owner.get(`${messages}/${sent.id}/history`), 200)).body.versions.length, 1);
});

t.test('the user stream says which roles the user holds in each server, so role mentions count live (issue 47 #3)', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, serverId, clients, newMember } = await community(server);
  const { owner } = clients;
  const helpers = (await must(owner.post(`${base}/roles`, { name: 'helpers', mentionable: true }), 201)).body;
  const helper = await newMember('helpers');
  const socket = await openSocket(server.url, '/api/ws', { client: helper });
  t.teardown(() => socket.close());
  const ready = await socket.event('ready');
  t.same(ready.servers.find((s: any) => s.id === serverId).role_ids, [helpers.id], "ready: the server's entry names the roles the user holds there");
  const other = (await must(owner.post('/api/servers', { name: 'another' }), 201)).body;
  const token = (await must(owner.post(`/api/servers/${other.id}/invites`), 201)).body.token;
  await must(helper.post(`/api/invites/${token}/accept`), 200);
  const joined = await socket.event('server_joined');
  t.same(joined.server.role_ids, [], 'server_joined: none yet in a server just joined');
  await must(owner.request('DELETE', `${base}/members/${helper.userId}/roles/${helpers.id}`), 200);
  t.same((await socket.until((f: any) => f.event === 'member_updated' && f.member.user_id === helper.userId)).member.role_ids, [], 'member_updated follows');
});
