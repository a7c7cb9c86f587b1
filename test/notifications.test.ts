import t from 'tap';
import { type Client, signUp } from './helpers/client';
import { befriend, community, must } from './helpers/community';
import { startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

/**
 * Notification settings (issue 33): per server, channel and conversation, carried in `ready`,
 * changed live on the user's other devices; a muted channel does not make its server unread,
 * its mentions still count unless suppressed; marking a server, or everything, read.
 */
t.test('notification settings', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member, outsider } = c.clients;
  const general: string = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const random: string = (await must(owner.post(`${c.base}/channels`, { name: 'random' }), 201)).body.id;
  await befriend(member, owner);
  const dm: string = (await must(member.post('/api/conversations/dm', { usernames: [owner.username] }), 201)).body.id;
  const path = (id: string) => `/api/account/notifications/${id}`;

  await t.test('set, listed, carried in ready, told to the other devices, removed', async (t) => {
    const other = await openSocket(server.url, '/api/ws', { client: member });
    await other.event('ready');
    const setting = await must(member.put(path(c.serverId), { level: 'mentions', muted_until: null, suppress_everyone: true, suppress_roles: false }), 200);
    t.same(setting.body, {
      target_id: c.serverId,
      target_kind: 'server',
      level: 'mentions',
      muted_until: null,
      suppress_everyone: true,
      suppress_roles: false,
    });
    t.same((await other.event('notification_settings')).setting, setting.body, 'the other device hears of it');
    const muted = await must(member.put(path(random), { level: 'all', muted_until: '9999-12-31T23:59:59+00:00' }), 200);
    t.equal(muted.body.muted_until, '9999-12-31T23:59:59.000Z', 'kept as UTC: until turned off');
    t.match(muted.body, { target_kind: 'channel', suppress_everyone: false, suppress_roles: false }, 'the flags default to false');
    await must(member.put(path(dm), { level: 'nothing' }), 200);
    const listed = await must(member.get('/api/account/notifications'), 200);
    t.same(
      listed.body.map((s: { target_kind: string }) => s.target_kind),
      ['server', 'channel', 'conversation'],
      'servers, channels, conversations',
    );
    const stream = await openSocket(server.url, '/api/ws', { client: member });
    t.same((await stream.event('ready')).notification_settings, listed.body, 'ready carries them');
    await must(member.delete(path(dm)), 204);
    t.same(await other.until((f) => f.event === 'notification_settings' && f.target_id === dm && f.setting === null), {
      event: 'notification_settings',
      target_id: dm,
      setting: null,
    });
    await must(member.delete(path(dm)), 204);
    t.equal((await must(member.get('/api/account/notifications'), 200)).body.length, 2, 'back to inheriting');
    t.same(await other.drain(200), [], 'removing nothing tells nothing');
    other.close();
    stream.close();
  });

  await t.test('refused: what the caller does not see (404), bad input (400)', async (t) => {
    await must(outsider.put(path(c.serverId), { level: 'all' }), 404);
    await must(outsider.put(path(general), { level: 'all' }), 404);
    await must(outsider.put(path(dm), { level: 'all' }), 404);
    await must(member.put(path(crypto.randomUUID()), { level: 'all' }), 404);
    await must(outsider.delete(path(c.serverId)), 404);
    for (const body of [
      {},
      { level: 'loud' },
      { level: 'all', muted_until: 'tomorrow' },
      { level: 'all', muted_until: 1764000000 },
      { level: 'all', muted_until: '2026-11-28T10:00:00' },
      { level: 'all', suppress_roles: 'yes' },
    ]) {
      await must(member.put(path(c.serverId), body), 400);
    }
    const onChannel = await must(member.put(path(general), { level: 'all', suppress_everyone: true }), 400);
    t.match(onChannel.text, /suppress_everyone applies to a server, not a channel/);
    await must(member.put('/api/account/notifications/not-a-uuid', { level: 'all' }), 400);
  });

  await t.test('a muted channel does not make its server unread; its mentions count unless suppressed', async (t) => {
    const reader = await c.newMember();
    await must(reader.put(path(random), { level: 'all', muted_until: '9999-12-31T23:59:59Z' }), 200);
    const serverEntry = async (who: Client) => {
      const stream = await openSocket(server.url, '/api/ws', { client: who });
      const ready = await stream.event('ready');
      stream.close();
      return ready.servers.find((s: { id: string }) => s.id === c.serverId);
    };
    await must(owner.post(`${c.base}/channels/${random}/messages`, { content: 'in the muted channel' }), 201);
    t.match(await serverEntry(reader), { unread: false, mention_count: 0 }, 'only a muted channel is unread: the server is not');
    const listed = (await must(reader.get('/api/servers'), 200)).body.find((s: { id: string }) => s.id === c.serverId);
    t.match(listed, { unread: false }, 'GET /api/servers says the same');
    await must(owner.post(`${c.base}/channels/${random}/messages`, { content: `@${reader.username} look` }), 201);
    t.match(await serverEntry(reader), { unread: false, mention_count: 1 }, 'a mention in it still counts');
    await must(owner.post(`${c.base}/channels/${general}/messages`, { content: '@everyone hello' }), 201);
    t.match(await serverEntry(reader), { unread: true, mention_count: 2 }, 'an unmuted channel makes it unread; @everyone is a mention');
    await must(reader.put(path(c.serverId), { level: 'all', suppress_everyone: true }), 200);
    const suppressed = await serverEntry(reader);
    t.match(suppressed, { unread: true, mention_count: 1 }, '@everyone suppressed: no longer a mention');
    t.match(
      suppressed.channels.find((ch: { id: string }) => ch.id === general),
      { unread_count: 1, mention_count: 0 },
    );
    await must(reader.put(path(c.serverId), { level: 'all', muted_until: '9999-12-31T23:59:59Z' }), 200);
    t.match(await serverEntry(reader), { unread: false }, 'a muted server looks read');
    await must(reader.put(path(random), { level: 'all', muted_until: '2000-01-01T00:00:00Z' }), 200);
    await must(reader.delete(path(c.serverId)), 204);
    t.match(await serverEntry(reader), { unread: true, mention_count: 2 }, 'a mute that ended mutes nothing');
  });

  await t.test('mark a server read, and everything', async (t) => {
    const reader = await c.newMember();
    const stream = await openSocket(server.url, '/api/ws', { client: reader });
    await stream.event('ready');
    for (const channel of [general, random]) await must(owner.post(`${c.base}/channels/${channel}/messages`, { content: 'news' }), 201);
    await befriend(owner, reader);
    const dmWithReader = (await must(owner.post('/api/conversations/dm', { usernames: [reader.username] }), 201)).body.id;
    await must(owner.post(`/api/conversations/${dmWithReader}/messages`, { content: 'psst' }), 201);
    const states = await must(reader.post(`${c.base}/read`), 200);
    t.equal(states.body.length, 2, 'both channels');
    for (const state of states.body) t.match(state, { server_id: c.serverId, unread_count: 0, mention_count: 0 });
    const reads = [await stream.until((f) => f.event === 'read'), await stream.until((f) => f.event === 'read')];
    t.same(reads.map((f) => f.channel_id).sort(), [general, random].sort(), "the user's streams hear of each channel");
    t.same((await must(reader.post(`${c.base}/read`), 200)).body.length, 2, 'again: nothing moves');
    t.same(await stream.drain(200), [], 'and nothing is told');
    await must(outsider.post(`${c.base}/read`), 404);
    await must(reader.post('/api/account/read-all'), 204);
    t.match(await stream.until((f) => f.event === 'read'), { conversation_id: dmWithReader, unread_count: 0 }, 'read-all reads the conversations too');
    const after = await openSocket(server.url, '/api/ws', { client: reader });
    const ready = await after.event('ready');
    t.ok(
      ready.conversations.every((conv: { unread_count: number }) => conv.unread_count === 0),
      'nothing unread',
    );
    stream.close();
    after.close();
  });

  await t.test('a setting goes with its channel', async (t) => {
    const doomed = (await must(owner.post(`${c.base}/channels`, { name: 'doomed' }), 201)).body.id;
    await must(owner.put(path(doomed), { level: 'nothing' }), 200);
    await must(owner.delete(`${c.base}/channels/${doomed}`), 204);
    t.notOk((await must(owner.get('/api/account/notifications'), 200)).body.some((s: { target_id: string }) => s.target_id === doomed));
    const fresh = await signUp(server.url);
    t.same((await must(fresh.get('/api/account/notifications'), 200)).body, [], 'none set: an empty list');
  });
});

t.test('marking everything read is rate limited (20, then one every 3 s)', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const reader = await signUp(server.url);
  for (let i = 0; i < 20; i++) await must(reader.post('/api/account/read-all'), 204);
  const refused = await must(reader.post('/api/account/read-all'), 429);
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After');
});
