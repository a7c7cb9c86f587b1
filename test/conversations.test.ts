import crypto from 'node:crypto';
import t from 'tap';
import { FakeClock, startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';
import { befriend, ref, setStanding, users } from './helpers/community';

/** A server on a fake clock, and alice, who is friends with bob and with carol. */
async function aliceWithTwoFriends(t: tap.Test) {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const [alice, bob, carol] = await users(server, 3);
  await befriend(alice, bob);
  await befriend(alice, carol);
  return { clock, server, alice, bob, carol };
}

const member = ref;
const byName = (a: { username: string }, b: { username: string }) => (a.username.toLowerCase() < b.username.toLowerCase() ? -1 : 1);

t.test('a DM is created once and reused from either side', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const [alice, bob] = await users(server, 2);
  await befriend(alice, bob);

  const first = await alice.post('/api/conversations/dm', { usernames: [bob.username] });
  t.equal(first.status, 201);
  t.same(first.body, {
    id: first.body.id,
    kind: 'dm',
    name: null,
    created_by: alice.userId,
    members: [member(alice), member(bob)].sort(byName),
    created_at: '2026-01-01T00:00:00.000Z',
    last_message_at: null,
  });
  t.match(first.body.id, /^[0-9a-f-]{36}$/);

  clock.advance(1000);
  const fromBob = await bob.post('/api/conversations/dm', { usernames: [alice.username.toUpperCase()] });
  t.equal(fromBob.status, 200, 'the other side gets the existing DM');
  t.same(fromBob.body, first.body, 'the same record, same id');
  const again = await alice.post('/api/conversations/dm', { usernames: [bob.username] });
  t.equal(again.status, 200);
  t.equal(again.body.id, first.body.id);
  t.equal((await alice.get('/api/conversations')).body.length, 1, 'one conversation only');
  const nothingRead = { last_message_id: null, last_read_id: null, unread_count: 0, mention_count: 0 };
  t.same((await bob.get('/api/conversations')).body, [{ ...first.body, ...nothingRead }], 'listed with its read state');
  t.same((await bob.get(`/api/conversations/${first.body.id}`)).body, first.body, 'readable by id');
});

t.test('DM validation', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [alice, friend, stranger, asked] = await users(server, 4);
  await befriend(alice, friend);
  t.equal((await alice.post('/api/friends/requests', { username: asked.username })).status, 201);

  const cases: [string, unknown, number, RegExp][] = [
    ['a user who is not a friend', { usernames: [stranger.username] }, 400, /not your friend/],
    ['a user with only a pending request', { usernames: [asked.username] }, 400, /not your friend/],
    ['oneself', { usernames: [alice.username] }, 400, /yourself/],
    ['two names', { usernames: [friend.username, stranger.username] }, 400, /usernames must hold exactly 1/],
    ['the same friend twice', { usernames: [friend.username, friend.username] }, 400, /exactly 1/],
    ['no names', { usernames: [] }, 400, /exactly 1/],
    ['no usernames field', {}, 400, /usernames must be an array/],
    ['a single string', { usernames: friend.username }, 400, /usernames must be an array/],
    ['a non-string entry', { usernames: [7] }, 400, /usernames must be an array of strings/],
    ['a malformed name', { usernames: ['no spaces allowed'] }, 400, /valid usernames/],
    ['an unknown user', { usernames: [uniqueName('ghost')] }, 404, /no user named/],
  ];
  for (const [what, body, status, reason] of cases) {
    const res = await alice.post('/api/conversations/dm', body);
    t.equal(res.status, status, what);
    t.match(res.text, reason, what);
  }
  t.same((await alice.get('/api/conversations')).body, [], 'nothing was created');
});

t.test('after unfriending, the DM and its history stay, but no new DM can be opened', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [alice, bob, carol] = await users(server, 3);
  await befriend(alice, bob);
  await befriend(alice, carol);
  const dm = (await alice.post('/api/conversations/dm', { usernames: [bob.username] })).body;
  t.equal((await bob.post(`/api/conversations/${dm.id}/messages`, { content: 'before' })).status, 201);

  t.equal((await alice.delete(`/api/friends/${bob.userId}`)).status, 204);
  t.equal((await alice.delete(`/api/friends/${carol.userId}`)).status, 204);
  const reopened = await bob.post('/api/conversations/dm', { usernames: [alice.username] });
  t.equal(reopened.status, 200, 'the existing DM is still returned');
  t.equal(reopened.body.id, dm.id);
  const history = await alice.get(`/api/conversations/${dm.id}/messages`);
  t.same(
    history.body.map((m: { content: string }) => m.content),
    ['before'],
  );
  const fresh = await alice.post('/api/conversations/dm', { usernames: [carol.username] });
  t.equal(fresh.status, 400, 'a DM that never existed needs friendship');
  t.match(fresh.text, /not your friend/);
});

t.test('group chats', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  // The creator and 26 friends: one more than a group may list.
  const [creator, ...friends] = await users(server, 27);
  const requests = await Promise.all(friends.map((f) => creator.post('/api/friends/requests', { username: f.username })));
  await Promise.all(requests.map((r, i) => friends[i].post(`/api/friends/requests/${r.body.id}/accept`)));
  t.equal((await creator.get('/api/friends')).body.length, 26);
  const names = friends.map((f) => f.username);

  t.test('1 and 25 friends are accepted; the creator is a member too', async (t) => {
    for (const count of [1, 25]) {
      const res = await creator.post('/api/conversations/group', { name: `group of ${count}`, usernames: names.slice(0, count) });
      t.equal(res.status, 201, `${count} friends`);
      t.match(res.body, { kind: 'group', name: `group of ${count}`, last_message_at: null });
      t.equal(res.body.members.length, count + 1);
      t.same(res.body.members, [creator, ...friends.slice(0, count)].map(member).sort(byName), 'members sorted by username');
    }
    t.same(
      (await friends[24].get('/api/conversations')).body.map((c: { name: string }) => c.name),
      ['group of 25'],
      'a member sees the group',
    );
  });

  t.test('names listed more than once count once', async (t) => {
    const res = await creator.post('/api/conversations/group', {
      name: 'repeats',
      usernames: [names[0], names[0].toUpperCase(), names[1], names[0]],
    });
    t.equal(res.status, 201);
    t.same(res.body.members, [creator, friends[0], friends[1]].map(member).sort(byName));
  });

  t.test('invalid groups are refused and nothing is created', async (t) => {
    const before = (await creator.get('/api/conversations')).body.length;
    const stranger = await signUp(server.url);
    const cases: [string, unknown, number, RegExp][] = [
      ['no friends', { name: 'g', usernames: [] }, 400, /usernames must hold 1 to 25 entries/],
      ['26 friends', { name: 'g', usernames: names }, 400, /usernames must hold 1 to 25 entries/],
      [
        'a non-friend among friends',
        { name: 'g', usernames: [names[0], stranger.username, names[1]] },
        400,
        new RegExp(`${stranger.username} is not your friend`),
      ],
      ['an unknown user', { name: 'g', usernames: [names[0], uniqueName('ghost')] }, 404, /no user named/],
      ['the creator listed', { name: 'g', usernames: [names[0], creator.username] }, 400, /yourself/],
      ['a missing name', { usernames: [names[0]] }, 400, /name must be a string/],
      ['a blank name', { name: '   ', usernames: [names[0]] }, 400, /name must not be empty/],
      ['a name of 101 characters', { name: 'x'.repeat(101), usernames: [names[0]] }, 400, /at most 100/],
      ['usernames not an array', { name: 'g', usernames: names[0] }, 400, /usernames must be an array/],
    ];
    for (const [what, body, status, reason] of cases) {
      const res = await creator.post('/api/conversations/group', body);
      t.equal(res.status, status, what);
      t.match(res.text, reason, what);
    }
    t.equal((await creator.get('/api/conversations')).body.length, before);
    t.equal((await stranger.get('/api/conversations')).body.length, 0);
    const longest = await creator.post('/api/conversations/group', { name: 'x'.repeat(100), usernames: [names[0]] });
    t.equal(longest.status, 201, 'a name of 100 characters is fine');
  });

  t.test('a group is not a DM: a DM with the same friend is separate', async (t) => {
    const dm = await creator.post('/api/conversations/dm', { usernames: [names[0]] });
    t.equal(dm.status, 201);
    t.equal(dm.body.kind, 'dm');
  });
});

t.test('standing restrictions in conversations', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [alice, bob] = await users(server, 2);
  await befriend(alice, bob);
  const dm = (await alice.post('/api/conversations/dm', { usernames: [bob.username] })).body;
  const posted = await bob.post(`/api/conversations/${dm.id}/messages`, { content: 'hello' });
  t.equal(posted.status, 201);
  const path = `/api/conversations/${dm.id}/messages`;

  t.test('standing 1 can still send and create groups', async (t) => {
    setStanding(server, alice.userId, 1);
    t.equal((await alice.post(path, { content: 'still here' })).status, 201);
    t.equal((await alice.post('/api/conversations/group', { name: 'ok', usernames: [bob.username] })).status, 201);
  });

  for (const standing of [2, 3]) {
    t.test(`standing ${standing} cannot send or create a group, but can read and open DMs`, async (t) => {
      setStanding(server, alice.userId, standing);
      const send = await alice.post(path, { content: 'blocked' });
      t.equal(send.status, 403);
      t.match(send.text, /standing/);
      const group = await alice.post('/api/conversations/group', { name: 'nope', usernames: [bob.username] });
      t.equal(group.status, 403);
      t.match(group.text, /group chats/);
      t.equal((await alice.get(path)).status, 200, 'reading is allowed');
      t.equal((await alice.get('/api/conversations')).status, 200);
      t.equal((await alice.post('/api/conversations/dm', { usernames: [bob.username] })).status, 200, 'opening the DM is allowed');
    });
  }

  t.test('standing 4 is suspended from the API altogether', async (t) => {
    setStanding(server, alice.userId, 4);
    t.equal((await alice.get(path)).status, 403);
    setStanding(server, alice.userId, 0);
  });

  t.test('only the allowed messages were stored', async (t) => {
    t.same(
      (await bob.get(path)).body.map((m: { content: string }) => m.content),
      ['still here', 'hello'],
    );
  });
});

t.test('only members reach a conversation and its messages', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [alice, bob, outsider] = await users(server, 3);
  await befriend(alice, bob);
  await befriend(alice, outsider);
  const dm = (await alice.post('/api/conversations/dm', { usernames: [bob.username] })).body;
  const group = (await alice.post('/api/conversations/group', { name: 'two', usernames: [bob.username] })).body;

  for (const conversation of [dm, group]) {
    const message = (await bob.post(`/api/conversations/${conversation.id}/messages`, { content: 'members only' })).body;
    const base = `/api/conversations/${conversation.id}`;
    const attempts: [string, string, unknown][] = [
      ['GET', base, undefined],
      ['GET', `${base}/messages`, undefined],
      ['POST', `${base}/messages`, { content: 'let me in' }],
      ['PUT', `${base}/messages/${message.id}`, { content: 'edited' }],
      ['DELETE', `${base}/messages/${message.id}`, undefined],
      ['PUT', `${base}/messages/${message.id}/reactions`, { emoji: '👍' }],
      ['DELETE', `${base}/messages/${message.id}/reactions`, { emoji: '👍' }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await outsider.request(method, path, body);
      t.equal(res.status, 404, `${conversation.kind}: ${method} ${path.replace(conversation.id, ':id')}`);
      t.match(res.text, /conversation not found/);
    }
    const unknown = await alice.get(`/api/conversations/${crypto.randomUUID()}/messages`);
    t.equal(unknown.status, 404, 'an unknown conversation looks the same');
    t.equal((await alice.get('/api/conversations/nope/messages')).status, 400);
    const after = await bob.get(`${base}/messages`);
    t.match(after.body, [{ id: message.id, content: 'members only', reactions: [] }], 'nothing changed');
  }
  t.same((await outsider.get('/api/conversations')).body, [], 'the outsider lists nothing');
});

t.test('conversation messages share the channel message model', async (t) => {
  const { clock, alice, bob, carol } = await aliceWithTwoFriends(t);
  const dm = (await alice.post('/api/conversations/dm', { usernames: [bob.username] })).body;
  const group = (await alice.post('/api/conversations/group', { name: 'three', usernames: [bob.username, carol.username] })).body;
  const dmPath = `/api/conversations/${dm.id}/messages`;

  const first = await alice.post(dmPath, { content: 'hi bob' });
  t.equal(first.status, 201);
  t.same(first.body, {
    id: first.body.id,
    conversation_id: dm.id,
    author_id: alice.userId,
    author: member(alice),
    content: 'hi bob',
    mentions: [],
    mention_everyone: false,
    mention_roles: [],
    pinned: false,
    reply_to: null,
    reply_preview: null,
    attachments: [],
    reactions: [],
    created_at: '2026-01-01T00:00:00.000Z',
    edited_at: null,
  });

  t.test('replies stay within the conversation', async (t) => {
    const reply = await bob.post(dmPath, { content: 'hi alice', reply_to: first.body.id });
    t.equal(reply.status, 201);
    t.same(reply.body.reply_preview, { id: first.body.id, author: member(alice), content: 'hi bob' });
    const elsewhere = (await carol.post(`/api/conversations/${group.id}/messages`, { content: 'in the group' })).body;
    const cross = await bob.post(dmPath, { content: 'wrong place', reply_to: elsewhere.id });
    t.equal(cross.status, 400);
    t.match(cross.text, /reply_to must name a message in this conversation/);
    t.equal((await bob.post(dmPath, { content: 'x', reply_to: crypto.randomUUID() })).status, 400, 'unknown reply_to');
    t.equal((await bob.post(dmPath, { content: 'x', reply_to: 'nope' })).status, 400, 'malformed reply_to');
  });

  t.test('empty content is refused', async (t) => {
    const res = await bob.post(dmPath, { content: '  ' });
    t.equal(res.status, 400);
    t.match(res.text, /content must not be empty/);
  });

  t.test('reactions are added and removed, with reacted per caller', async (t) => {
    const path = `${dmPath}/${first.body.id}/reactions`;
    const added = await alice.put(path, { emoji: '👍' });
    t.equal(added.status, 200);
    t.same(added.body.reactions, [{ emoji: '👍', count: 1, reacted: true }]);
    t.equal((await alice.put(path, { emoji: '👍' })).body.reactions[0].count, 1, 'adding twice counts once');
    const seenByBob = (await bob.get(dmPath)).body.find((m: { id: string }) => m.id === first.body.id);
    t.same(seenByBob.reactions, [{ emoji: '👍', count: 1, reacted: false }]);
    const both = await bob.put(path, { emoji: '👍' });
    t.same(both.body.reactions, [{ emoji: '👍', count: 2, reacted: true }]);
    const removed = await alice.delete(path, { emoji: '👍' });
    t.equal(removed.status, 200);
    t.same(removed.body.reactions, [{ emoji: '👍', count: 1, reacted: false }]);
    t.same((await bob.delete(path, { emoji: '👍' })).body.reactions, []);
    t.equal((await bob.put(path, { emoji: 'thumbs up' })).status, 400, 'not an emoji');
    t.equal((await bob.put(`${dmPath}/${crypto.randomUUID()}/reactions`, { emoji: '👍' })).status, 404, 'unknown message');
  });

  t.test('only the author edits or deletes a conversation message', async (t) => {
    clock.advance(5000);
    const message = (await bob.post(dmPath, { content: 'typo' })).body;
    const path = `${dmPath}/${message.id}`;
    const foreignEdit = await alice.put(path, { content: 'not yours' });
    t.equal(foreignEdit.status, 403);
    const foreignDelete = await alice.delete(path);
    t.equal(foreignDelete.status, 403, 'the DM creator is no moderator');
    t.match(foreignDelete.text, /only the author/);
    clock.advance(1000);
    const edited = await bob.put(path, { content: 'fixed' });
    t.equal(edited.status, 200);
    t.match(edited.body, { id: message.id, content: 'fixed', edited_at: '2026-01-01T00:00:06.000Z', conversation_id: dm.id });
    t.equal((await bob.delete(path)).status, 204);
    t.notOk(
      (await alice.get(dmPath)).body.some((m: { id: string }) => m.id === message.id),
      'gone from the list',
    );
    t.equal((await bob.delete(path)).status, 404, 'deleting twice');
  });

  t.test('history pages like channel history', async (t) => {
    const all = (await alice.get(dmPath)).body;
    t.ok(all.length >= 2);
    const page = await alice.get(`${dmPath}?limit=1`);
    t.same(
      page.body.map((m: { id: string }) => m.id),
      [all[0].id],
      'newest first',
    );
    const older = await alice.get(`${dmPath}?limit=1&before=${all[0].id}`);
    t.same(
      older.body.map((m: { id: string }) => m.id),
      [all[1].id],
    );
    const newer = await alice.get(`${dmPath}?after=${all[1].id}`);
    t.same(
      newer.body.map((m: { id: string }) => m.id),
      [all[0].id],
    );
    const groupMessage = (await alice.get(`/api/conversations/${group.id}/messages`)).body[0];
    t.equal((await alice.get(`${dmPath}?before=${groupMessage.id}`)).status, 404, 'a cursor from another conversation');
    t.equal((await alice.get(`${dmPath}?limit=101`)).status, 400);
  });
});

t.test('conversations are listed by most recent activity', async (t) => {
  const { clock, alice, bob, carol } = await aliceWithTwoFriends(t);
  const dm = (await alice.post('/api/conversations/dm', { usernames: [bob.username] })).body;
  clock.advance(1000);
  const group = (await alice.post('/api/conversations/group', { name: 'later', usernames: [bob.username, carol.username] })).body;
  clock.advance(1000);
  const dmCarol = (await carol.post('/api/conversations/dm', { usernames: [alice.username] })).body;
  const order = async (client: Client) => (await client.get('/api/conversations')).body.map((c: { id: string }) => c.id);

  t.same(await order(alice), [dmCarol.id, group.id, dm.id], 'without messages: newest created first');
  clock.advance(1000);
  t.equal((await bob.post(`/api/conversations/${dm.id}/messages`, { content: 'bump' })).status, 201);
  t.same(await order(alice), [dm.id, dmCarol.id, group.id], 'a new message moves the DM to the top');
  t.same(await order(bob), [dm.id, group.id], 'each caller sees only their own');
  clock.advance(1000);
  await carol.post(`/api/conversations/${group.id}/messages`, { content: 'group bump' });
  t.same(await order(alice), [group.id, dm.id, dmCarol.id]);
  const listed = (await alice.get('/api/conversations')).body;
  t.match(listed[0], { ...group, last_message_at: '2026-01-01T00:00:04.000Z', unread_count: 1, mention_count: 1 });
  t.equal(listed[1].last_message_at, '2026-01-01T00:00:03.000Z');
  t.equal(listed[2].last_message_at, null);
});

t.test('conversation endpoints need a session', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anon = new Client(server.url);
  const id = crypto.randomUUID();
  for (const [method, path] of [
    ['GET', '/api/conversations'],
    ['POST', '/api/conversations/dm'],
    ['POST', '/api/conversations/group'],
    ['GET', `/api/conversations/${id}`],
    ['GET', `/api/conversations/${id}/messages`],
    ['POST', `/api/conversations/${id}/messages`],
  ]) {
    t.equal((await anon.request(method, path)).status, 401, `${method} ${path}`);
  }
});

t.test('multipart messages follow the conversation rules', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const [alice, bob, outsider] = await users(server, 3);
  await befriend(alice, bob);
  const group = (await alice.post('/api/conversations/group', { name: 'files', usernames: [bob.username] })).body;
  const dm = (await alice.post('/api/conversations/dm', { usernames: [bob.username] })).body;
  const path = `/api/conversations/${group.id}/messages`;
  const form = (fields: Record<string, string>) => {
    const data = new FormData();
    for (const [key, value] of Object.entries(fields)) data.append(key, value);
    data.append('attachments', new Blob(['hello world\n'], { type: 'text/plain' }), 'note.txt');
    return data;
  };

  const sent = await bob.post(path, form({ content: '' }));
  t.equal(sent.status, 201, 'an attachment-only message');
  t.match(sent.body, { conversation_id: group.id, content: '', attachments: [{ name: 'note.txt' }] });
  const reply = await alice.post(path, form({ content: 'got it', reply_to: sent.body.id }));
  t.equal(reply.status, 201);
  t.equal(reply.body.reply_preview.id, sent.body.id);

  const elsewhere = (await alice.post(`/api/conversations/${dm.id}/messages`, { content: 'in the DM' })).body;
  const cross = await alice.post(path, form({ content: 'x', reply_to: elsewhere.id }));
  t.equal(cross.status, 400, 'reply_to from another conversation');
  t.equal((await outsider.post(path, form({ content: 'x' }))).status, 404, 'an outsider');
  setStanding(server, bob.userId, 2);
  t.equal((await bob.post(path, form({ content: 'x' }))).status, 403, 'standing 2');
  t.same(
    (await alice.get(path)).body.map((m: { content: string }) => m.content),
    ['got it', ''],
    'only the accepted messages were stored',
  );
});
