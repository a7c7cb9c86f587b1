// Categories: named groups a server's channels are listed under (issue 30). Real server, real
// HTTP and WebSocket.
import t from 'tap';
import { community, must } from './helpers/community';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

t.test('categories are made, renamed, moved and deleted by the owner and full server admins; channels join and leave them', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, serverId, clients } = await community(server);
  const { owner, admin, member, outsider } = clients;
  const socket = await openSocket(server.url, '/api/ws', { client: member });
  t.teardown(() => socket.close());
  t.same((await socket.event('ready')).servers.find((s: any) => s.id === serverId).categories, [], "ready lists a server's categories: none yet");

  const text = (await must(owner.post(`${base}/categories`, { name: 'Text' }), 201)).body;
  t.match(text, { name: 'Text', position: 0, server_id: serverId });
  t.same(
    (await socket.event('categories_updated')).categories.map((c: any) => c.name),
    ['Text'],
    'members hear of it',
  );
  const staff = (await must(admin.post(`${base}/categories`, { name: 'Staff' }), 201)).body;
  t.equal(staff.position, 1, 'a full server admin may make one too; placed last');
  t.equal((await member.post(`${base}/categories`, { name: 'Mine' })).status, 403, 'a member may not');
  t.equal((await outsider.get(`${base}/categories`)).status, 404, 'an outsider sees nothing');
  t.equal((await owner.post(`${base}/categories`, { name: '' })).status, 400, 'a name is needed');

  await must(owner.request('PATCH', `${base}/categories/${staff.id}`, { position: 0, name: 'Staff room' }), 200);
  t.same(
    (await must(member.get(`${base}/categories`), 200)).body.map((c: any) => [c.name, c.position]),
    [
      ['Staff room', 0],
      ['Text', 1],
    ],
    'moved and renamed; positions stay dense',
  );

  const general = (await must(owner.get(`${base}/channels`), 200)).body[0];
  t.equal(general.category_id, null, 'a channel starts under no category');
  const moved = (await must(owner.request('PATCH', `${base}/channels/${general.id}`, { category_id: text.id }), 200)).body;
  t.equal(moved.category_id, text.id, 'a channel joins a category');
  t.equal((await socket.until((f) => f.event === 'channel_updated' && f.channel.category_id === text.id)).channel_id, general.id, 'members hear of the move');
  t.equal((await owner.request('PATCH', `${base}/channels/${general.id}`, { category_id: 'nope' })).status, 400, 'not a UUID: 400');
  const elsewhere = (await must(outsider.post('/api/servers', { name: 'elsewhere' }), 201)).body;
  const foreign = (await must(outsider.post(`/api/servers/${elsewhere.id}/categories`, { name: 'Theirs' }), 201)).body;
  t.equal((await owner.request('PATCH', `${base}/channels/${general.id}`, { category_id: foreign.id })).status, 404, 'a category of another server: 404');
  t.equal((await member.request('PATCH', `${base}/channels/${general.id}`, { category_id: null })).status, 403, 'a member may not move channels');

  // Deleting a category keeps its channels, under none.
  t.equal((await member.delete(`${base}/categories/${text.id}`)).status, 403);
  await must(owner.delete(`${base}/categories/${text.id}`), 204);
  t.equal((await must(owner.get(`${base}/channels`), 200)).body[0].category_id, null, 'its channel stays, under no category');
  t.equal(
    (await socket.until((f) => f.event === 'channel_updated' && f.channel_id === general.id && f.channel.category_id === null)).channel_id,
    general.id,
    'the channel is announced as moved out',
  );
  t.same(
    (await must(owner.get(`${base}/categories`), 200)).body.map((c: any) => [c.name, c.position]),
    [['Staff room', 0]],
  );
  t.equal((await owner.delete(`${base}/categories/${text.id}`)).status, 404, 'gone');

  const actions = (await must(owner.get(`${base}/audit-log`), 200)).body.map((e: any) => e.action);
  for (const action of ['category_create', 'category_update', 'category_delete']) t.ok(actions.includes(action), `${action} is in the audit log`);
  const update = (await must(owner.get(`${base}/audit-log`), 200)).body.find((e: any) => e.action === 'channel_update' && e.changes?.category_id);
  t.same(update.changes.category_id, { from: null, to: text.id }, "a channel's category change is audited with before and after");
});
