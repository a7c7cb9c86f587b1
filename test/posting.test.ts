// Posting (src/parts/messages/posting.ts): who may write what, where, for members, bots and
// webhooks, new messages and edits, and the message store's two ways to write one. Other files
// reach the same rules through their own features (channel permissions, timeouts, blocks,
// webhooks); these are the rules themselves.
import t from 'tap';
import { Client, type Res } from './helpers/client';
import { community, crowd, messageCommunity, must, setStanding } from './helpers/community';
import { FakeClock, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

t.test('standing restrictions on messages', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { inGeneral, legacy, memberWithStanding, post } = await messageCommunity(server);

  for (const standing of [0, 1, 2]) {
    t.test(`standing ${standing} can still post in channels and on the legacy route`, async (t) => {
      const user = await memberWithStanding(standing);
      t.equal((await user.post(inGeneral, { content: 'hi' })).status, 201, 'channel');
      t.equal((await user.post(legacy, { content: 'hi' })).status, 201, 'legacy');
    });
  }

  t.test('standing 3 (at risk) cannot post or edit, but still reads, reacts and deletes', async (t) => {
    const user = await memberWithStanding(0);
    const earlier = await post(user, inGeneral, 'before the warning');
    const doomed = await post(user, inGeneral, 'to delete');
    setStanding(server, user.userId, 3);
    for (const [what, res] of [
      ['channel post', await user.post(inGeneral, { content: 'hi' })],
      ['legacy post', await user.post(legacy, { content: 'hi' })],
      ['edit', await user.put(`${inGeneral}/${earlier.id}`, { content: 'rewritten' })],
    ] as const) {
      t.equal(res.status, 403, what);
      t.match(res.text, /standing/, `${what}: the reason names the standing`);
    }
    t.equal((await user.get(inGeneral)).status, 200, 'reads the channel');
    t.equal((await user.get(legacy)).status, 200, 'reads the legacy route');
    t.equal((await user.put(`${inGeneral}/${earlier.id}/reactions`, { emoji: '👍' })).status, 200, 'reacts');
    t.equal((await user.delete(`${inGeneral}/${doomed.id}`)).status, 204, 'deletes their own message');
  });

  t.test('standing 4 (suspended) gets 403 on every message route', async (t) => {
    const user = await memberWithStanding(0);
    const mine = await post(user, inGeneral, 'mine');
    setStanding(server, user.userId, 4);
    const calls: [string, Promise<Res>][] = [
      ['GET channel', user.get(inGeneral)],
      ['POST channel', user.post(inGeneral, { content: 'x' })],
      ['PUT message', user.put(`${inGeneral}/${mine.id}`, { content: 'x' })],
      ['DELETE message', user.delete(`${inGeneral}/${mine.id}`)],
      ['PUT reaction', user.put(`${inGeneral}/${mine.id}/reactions`, { emoji: '👍' })],
      ['DELETE reaction', user.delete(`${inGeneral}/${mine.id}/reactions`, { emoji: '👍' })],
      ['GET legacy', user.get(legacy)],
      ['POST legacy', user.post(legacy, { content: 'x' })],
    ];
    for (const [what, call] of calls) {
      const res = await call;
      t.equal(res.status, 403, what);
      t.match(res.text, /suspended/, `${what}: the reason says suspended`);
    }
  });
});

t.test('slow mode', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const scene = await community(server);
  const { owner, admin, member } = scene.clients;
  const c = (await must(owner.post(`${scene.base}/channels`, { name: 'c' }), 201)).body as { id: string };

  t.test('slow mode: one message per N seconds for members; owners and admins exempt', async (t) => {
    await must(owner.request('PATCH', `${scene.base}/channels/${c.id}`, { slowmode_seconds: 30 }), 200);
    const messages = `${scene.base}/channels/${c.id}/messages`;
    await must(member.post(messages, { content: 'one' }), 201);
    const slow = await member.post(messages, { content: 'two' });
    t.equal(slow.status, 429);
    t.equal(slow.headers.get('retry-after'), '30');
    t.match(slow.text, 'slow mode');
    clock.advance(29_000);
    t.equal((await member.post(messages, { content: 'still too soon' })).status, 429);
    clock.advance(1_000);
    t.equal((await member.post(messages, { content: 'now' })).status, 201);
    for (let i = 0; i < 3; i++) t.equal((await admin.post(messages, { content: `admin ${i}` })).status, 201, 'an admin is not slowed');
  });
});

t.test('slow mode holds for messages racing each other', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const [member] = c.members;
  await must(c.owner.request('PATCH', `/api/servers/${c.serverId}/channels/${c.general}`, { slowmode_seconds: 60 }), 200);
  const url = `/api/servers/${c.serverId}/channels/${c.general}/messages`;
  const statuses = (await Promise.all([member.post(url, { content: 'one' }), member.post(url, { content: 'two' })])).map((a) => a.status).sort();
  t.same(statuses, [201, 429], 'one is sent, the other waits');
  // A refused message gives its slot back.
  const other = await crowd(server, 1);
  await must(other.owner.request('PATCH', `/api/servers/${other.serverId}/channels/${other.general}`, { slowmode_seconds: 60 }), 200);
  const otherUrl = `/api/servers/${other.serverId}/channels/${other.general}/messages`;
  t.equal((await other.members[0].post(otherUrl, { content: '   ' })).status, 400);
  t.equal((await other.members[0].post(otherUrl, { content: 'now a real one' })).status, 201, 'the empty one did not use the slot');
});

t.test("a bot's embeds are posted as a webhook's are; a person's message carries none", async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const [member] = c.members;
  const made = (await must(c.owner.post('/api/bots', { name: `cards${process.pid % 1000}` }), 201)).body;
  const auth = { authorization: `Bot ${made.token}` };
  await must(c.owner.post(`/api/servers/${c.serverId}/bots`, { username: made.username }), 200);
  const bot = new Client(server.url);
  const url = `/api/servers/${c.serverId}/channels/${c.general}/messages`;
  const stream = await openSocket(server.url, '/api/ws', { client: member });
  t.teardown(() => stream.close());
  await stream.event('ready');

  const card = {
    title: 'Build passed',
    description: 'every test is green',
    url: 'https://ci.example/run/7',
    color: 0x3ba55d,
    fields: [{ name: 'branch', value: 'main', inline: true }],
  };
  const posted = (await must(bot.post(url, { content: '', embeds: [card] }, auth), 201)).body;
  // Records say each embed's type (issue 51): a bot's own is `rich`.
  const shown = { type: 'rich', ...card };
  t.same(posted.embeds, [shown], 'the answer carries the card');
  t.same((await must(member.get(url), 200)).body.find((m: any) => m.id === posted.id)?.embeds, [shown], 'and so does the history');
  t.same((await stream.until((f) => f.event === 'message' && f.message.id === posted.id)).message.embeds, [shown], 'and the live event');
  const found = (await must(member.get(`/api/search?q=green&channel_id=${c.general}`), 200)).body.results;
  t.same(
    found.map((m: any) => m.id),
    [posted.id],
    "search finds the card's text",
  );

  const bad = await bot.post(url, { content: 'x', embeds: [{ title: 'x', url: 'javascript:alert(1)' }] }, auth);
  t.equal(bad.status, 400, "a card is checked as a webhook's is");
  const person = await member.post(url, { content: 'look', embeds: [card] });
  t.equal(person.status, 400, "a person's embeds are refused, not dropped");
  t.match(person.text, 'embeds are sent by bots and webhooks');
  t.equal((await member.post(url, { content: 'plain', embeds: null })).status, 201, 'null reads as absent');
  const contents = (await must(member.get(url), 200)).body.map((m: any) => m.content);
  t.notOk(contents.includes('look') || contents.includes('x'), 'nothing refused was written');
});

t.test("a message written inside the caller's transaction: all or nothing with it, and told only once it committed", async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const { db, messages, users } = server.app;
  const owner = users.byId(c.owner.userId)!;
  const stream = await openSocket(server.url, '/api/ws', { client: c.members[0] });
  t.teardown(() => stream.close());
  await stream.event('ready');
  const general = { kind: 'channel' as const, id: c.general, serverId: c.serverId };
  const input = (content: string) => ({ content, replyTo: null, files: [] });
  const rights = { mayMentionEveryone: false };
  const topic = db.prepare<[string], string>('SELECT topic FROM channels WHERE id = ?').pluck();
  const setTopic = db.prepare('UPDATE channels SET topic = ? WHERE id = ?');

  t.throws(() => messages.insert(general, owner, input('outside any transaction'), rights), /inside the caller's transaction/, 'never outside one');
  t.throws(
    () =>
      db.transaction(() => {
        setTopic.run('a post that failed', c.random);
        messages.insert(general, owner, input('rolled back'), rights);
        throw new Error('the rest of the write failed');
      })(),
    /the rest of the write failed/,
  );
  t.equal(topic.get(c.random), '', "the caller's other write is undone");
  const written = db.transaction(() => {
    setTopic.run('a post', c.random);
    return messages.insert(general, owner, input('first words of a post'), rights);
  })();
  t.equal(topic.get(c.random), 'a post', 'both committed');
  t.same(
    (await stream.drain(150)).filter((f) => f.event === 'message'),
    [],
    'nothing told before announce',
  );
  const record = messages.announce(written);
  t.equal((await stream.event('message')).message.id, record.id, 'then told');
  const history = (await must(c.owner.get(`/api/servers/${c.serverId}/channels/${c.general}/messages`), 200)).body;
  t.same(
    history.map((m: any) => m.content),
    ['first words of a post'],
    'the rolled-back message was never written',
  );
  t.equal(history[0].id, record.id);
  const state = (await must(c.owner.get(`/api/servers/${c.serverId}/channels`), 200)).body.find((ch: any) => ch.id === c.general);
  t.equal(state.last_read_id, record.id, "the author's read marker moved with it");
});
