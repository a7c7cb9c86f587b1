// Threads and forum channels (issue 49): threads from a message and alone, forum posts with their
// tags, archiving (by hand, by itself, unarchived by a message), locking, private threads and
// their members, the four thread permissions, inheritance of the parent's overwrites, live events,
// read state, notifications and search.
import t from 'tap';
import type { Client } from './helpers/client';
import { community, must } from './helpers/community';
import { FakeClock, type TestServer, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';
import { startPushService } from './helpers/push-service';
import { MINUTE } from '../src/core/clock';
import { VIEW } from '../src/rules/channel-permissions';

/** One transparent pixel. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** A server with its owner, a full admin, a plain member and a member holding a plain role; #general and a forum. */
async function scene(server: TestServer) {
  const c = await community(server);
  const { owner } = c.clients;
  const general: string = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const forum = (
    await must(
      owner.post(`${c.base}/channels`, {
        name: 'help',
        type: 'forum',
        topic: 'Ask one question per post.',
        available_tags: [{ name: 'bug', emoji: '🐛' }, { name: 'idea' }, { name: 'solved', moderated: true }],
        default_reaction: '👍',
      }),
      201,
    )
  ).body;
  const tag = (name: string) => forum.available_tags.find((x: any) => x.name === name).id as string;
  const C = (id: string) => `${c.base}/channels/${id}`;
  return { ...c, general, forum, tag, C };
}

t.test('a thread from a message: its record, the starter shows it, its messages live in the one messages table', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, outsider } = s.clients;
  const starter = (await must(member.post(`${s.C(s.general)}/messages`, { content: 'shall we read Dune?' }), 201)).body;
  const thread = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'Dune club', message_id: starter.id }), 201)).body;
  t.match(thread, {
    type: 'thread',
    parent_id: s.general,
    server_id: s.serverId,
    name: 'Dune club',
    owner_id: member.userId,
    archived: false,
    locked: false,
    private: false,
    auto_archive_minutes: 1440,
    message_count: 0,
    member_count: 1,
    applied_tags: [],
    starter_message_id: starter.id,
  });
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'again', message_id: starter.id })).status, 409, 'one thread a message');
  t.equal((await member.post(`${s.C(thread.id)}/threads`, { name: 'nested' })).status, 400, 'a thread has no threads');
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x', applied_tags: ['not an id'] })).status, 400, "tags are a forum post's");
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x', content: 'hello' })).status, 400, 'a thread of a text channel starts empty');
  t.equal((await outsider.post(`${s.C(s.general)}/threads`, { name: 'x' })).status, 404, 'an outsider: 404');
  const other = (await must(owner.post(`${s.base}/channels`, { name: 'other' }), 201)).body;
  const elsewhere = (await must(owner.post(`${s.C(other.id)}/messages`, { content: 'elsewhere' }), 201)).body;
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x', message_id: elsewhere.id })).status, 404, 'a message of another channel');

  // Replies in the thread: the starter message counts them.
  await must(owner.post(`${s.C(thread.id)}/messages`, { content: 'yes!' }), 201);
  const reply = (await must(member.post(`${s.C(thread.id)}/messages`, { content: 'chapter one by Friday' }), 201)).body;
  t.equal(reply.channel_id, thread.id, 'a thread message is placed in the thread');
  const history = (await must(member.get(`${s.C(s.general)}/messages`), 200)).body;
  const shown = history.find((m: any) => m.id === starter.id);
  t.match(shown.thread, { id: thread.id, name: 'Dune club', message_count: 2, last_message_at: reply.created_at, archived: false, locked: false });
  t.notOk(
    history.some((m: any) => m.id === reply.id),
    "the channel's history does not hold its threads' messages",
  );
  t.same(
    (await must(member.get(`${s.C(thread.id)}/messages`), 200)).body.map((m: any) => m.content),
    ['chapter one by Friday', 'yes!'],
  );
  // Pins, reactions and edits work in a thread as in a channel.
  await must(member.put(`${s.C(thread.id)}/messages/${reply.id}/reactions`, { emoji: '👍' }), 200);
  await must(owner.put(`${s.C(thread.id)}/pins/${reply.id}`), 200);
  t.equal((await must(member.get(`${s.C(thread.id)}/pins`), 200)).body.length, 1);
  await must(member.put(`${s.C(thread.id)}/messages/${reply.id}`, { content: 'chapter two by Friday' }), 200);
  // Owner replying joined them: members are who posted.
  const members = (await must(member.get(`${s.C(thread.id)}/members`), 200)).body.map((m: any) => m.user_id);
  t.same(members.sort(), [owner.userId, member.userId].sort(), 'posting joins');
  const after = (await must(member.get(`${s.C(s.general)}/threads`), 200)).body.find((x: any) => x.id === thread.id);
  t.equal(after.member_count, 2);
  t.equal(after.message_count, 2);

  // The channel list is the listed channels only; a thread's name is not a channel's.
  const channels = (await must(member.get(`${s.base}/channels`), 200)).body.map((x: any) => x.name);
  t.notOk(channels.includes('Dune club'), 'threads are not in the channel list');
  await must(member.post(`${s.C(s.general)}/threads`, { name: 'general' }), 201);
  await must(member.post(`${s.C(s.general)}/threads`, { name: 'general' }), 201);
  t.pass('a thread may share a name with a channel and with another thread');
  await must(owner.post(`${s.base}/channels`, { name: 'Dune club' }), 201);
  t.pass('and a new channel may take a thread’s name');
});

t.test('free-standing and private threads: who sees them, their members, and adding by mention or by PUT', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, admin, member, roleMember } = s.clients;
  const open = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'open talk' }), 201)).body;
  t.equal(open.starter_message_id, null, 'free-standing: no starter');
  const secret = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'secret plans', private: true }), 201)).body;
  t.equal(secret.private, true);
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x', private: true, message_id: open.id })).status, 400, 'a private thread starts alone');

  const sees = async (client: Client, id: string) => (await client.get(`${s.C(id)}/messages`)).status === 200;
  t.ok(await sees(roleMember, open.id), 'a public thread: everyone who sees the channel');
  t.notOk(await sees(roleMember, secret.id), 'a private thread: not a plain member');
  t.ok(await sees(owner, secret.id), 'the owner (manage_threads)');
  t.ok(await sees(admin, secret.id), 'a full admin (manage_threads)');
  const listed = async (client: Client) => (await must(client.get(`${s.C(s.general)}/threads`), 200)).body.map((x: any) => x.id);
  t.notOk((await listed(roleMember)).includes(secret.id), 'nor in its list');
  t.ok((await listed(owner)).includes(secret.id));

  // A mention adds who sees the channel.
  await must(member.post(`${s.C(secret.id)}/messages`, { content: `@${roleMember.username} come in` }), 201);
  t.ok(await sees(roleMember, secret.id), 'mentioned: now a member, and sees it');
  // Leaving a private thread: gone for them.
  await must(roleMember.delete(`${s.C(secret.id)}/members/@me`), 204);
  t.notOk(await sees(roleMember, secret.id), 'left: gone');
  // PUT …/members/{user_id} adds them back; a stranger to the server is not added.
  await must(member.put(`${s.C(secret.id)}/members/${roleMember.userId}`), 204);
  t.ok(await sees(roleMember, secret.id));
  t.equal((await member.put(`${s.C(secret.id)}/members/${s.clients.outsider.userId}`)).status, 404, 'not a member of the server');
  // Removing others: the owner of a private thread, or manage_threads.
  t.equal((await roleMember.delete(`${s.C(secret.id)}/members/${member.userId}`)).status, 403);
  await must(member.delete(`${s.C(secret.id)}/members/${roleMember.userId}`), 204);
  t.equal((await member.delete(`${s.C(secret.id)}/members/${roleMember.userId}`)).status, 404, 'not a member any more');
  // Following a public thread.
  await must(roleMember.put(`${s.C(open.id)}/members/@me`), 204);
  await must(roleMember.put(`${s.C(open.id)}/members/@me`), 204);
  t.same((await must(roleMember.get(`${s.C(open.id)}/members`), 200)).body.map((m: any) => m.user_id).sort(), [member.userId, roleMember.userId].sort());
  t.equal((await roleMember.put(`${s.C(s.general)}/members/@me`)).status, 404, 'a channel has no members of its own');
});

t.test('archiving: by the owner, by itself after auto_archive_minutes, undone by a message; locking is manage_threads', async (t) => {
  const clock = new FakeClock();
  const app = await startServer({ clock, settings: { threadSweepMs: 20 } });
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, roleMember } = s.clients;
  const stream = await openSocket(app.url, '/api/ws', { client: roleMember });
  t.teardown(() => stream.close());
  await stream.event('ready');
  const thread = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'short lived', auto_archive_minutes: 60 }), 201)).body;
  t.equal((await stream.event('thread_created')).thread.id, thread.id, 'thread_created reaches who sees the channel');
  t.equal((await member.request('PATCH', s.C(thread.id), { auto_archive_minutes: 30 })).status, 400, 'one of Discord’s four durations');
  t.equal((await member.request('PATCH', s.C(thread.id), { topic: 'x' })).status, 400, "a channel's fields are not a thread's");
  t.equal((await owner.request('PATCH', s.C(s.general), { archived: true })).status, 400, "nor a thread's a channel's");

  // By itself: an hour without a message.
  clock.advance(59 * MINUTE);
  t.same(
    (await stream.drain(150)).filter((f) => f.event === 'thread_updated'),
    [],
    'not before its time',
  );
  clock.advance(2 * MINUTE);
  const archived = await stream.event('thread_updated');
  t.equal(archived.thread.archived, true, 'archived by itself, told as thread_updated');
  t.notOk(
    (await must(member.get(`${s.C(s.general)}/threads`), 200)).body.some((x: any) => x.id === thread.id),
    'no longer active',
  );
  const page = (await must(member.get(`${s.C(s.general)}/threads?archived=true`), 200)).body;
  t.same(
    page.map((x: any) => x.id),
    [thread.id],
    'listed as archived',
  );

  // A message unarchives it.
  await must(roleMember.post(`${s.C(thread.id)}/messages`, { content: 'still here' }), 201);
  t.equal((await stream.event('thread_updated')).thread.archived, false, 'a message unarchives it');
  // The owner archives it by hand; a plain member may not.
  t.equal((await roleMember.request('PATCH', s.C(thread.id), { archived: true })).status, 403, 'not the owner');
  t.equal((await must(member.request('PATCH', s.C(thread.id), { archived: true, name: 'renamed' }), 200)).body.archived, true);
  // Locked (manage_threads only): only manage_threads writes, and a message does not unarchive it.
  t.equal((await member.request('PATCH', s.C(thread.id), { locked: true })).status, 403, 'the owner may not lock');
  await must(owner.request('PATCH', s.C(thread.id), { locked: true }), 200);
  t.equal((await roleMember.post(`${s.C(thread.id)}/messages`, { content: 'let me in' })).status, 403, 'locked: refused');
  t.equal((await member.request('PATCH', s.C(thread.id), { archived: false })).status, 403, 'locked: the owner may not unarchive');
  await must(owner.post(`${s.C(thread.id)}/messages`, { content: 'closing words' }), 201);
  t.equal((await must(owner.get(`${s.C(s.general)}/threads?archived=true`), 200)).body[0].archived, true, 'a locked thread stays archived');
  const log = (await must(owner.get(`${s.base}/audit-log`), 200)).body;
  t.ok(
    log.some((e: any) => e.action === 'thread_update' && e.changes.locked?.to === true),
    'locking is audited',
  );
  // Deleting: manage_threads.
  t.equal((await member.delete(s.C(thread.id))).status, 403, 'the owner may not delete');
  await must(owner.delete(s.C(thread.id)), 204);
  t.equal((await stream.event('thread_deleted')).thread_id, thread.id, 'thread_deleted');
  t.equal((await member.get(`${s.C(thread.id)}/messages`)).status, 404, 'gone with its messages');
});

t.test('archived threads page newest first with before=', async (t) => {
  const clock = new FakeClock();
  const app = await startServer({ clock });
  t.teardown(app.close);
  const s = await scene(app);
  const { member } = s.clients;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const thread = (await must(member.post(`${s.C(s.general)}/threads`, { name: `t${i}` }), 201)).body;
    await must(member.request('PATCH', s.C(thread.id), { archived: true }), 200);
    clock.advance(1000);
    ids.push(thread.id);
  }
  const first = (await must(member.get(`${s.C(s.general)}/threads?archived=true&limit=2`), 200)).body.map((x: any) => x.id);
  t.same(first, [ids[4], ids[3]]);
  const next = (await must(member.get(`${s.C(s.general)}/threads?archived=true&limit=2&before=${first[1]}`), 200)).body.map((x: any) => x.id);
  t.same(next, [ids[2], ids[1]]);
  t.equal((await member.get(`${s.C(s.general)}/threads?before=${first[1]}`)).status, 400, 'before pages archived threads only');
  t.equal((await member.get(`${s.C(s.general)}/threads?limit=many`)).status, 400, 'a bad limit is refused on the active list too');
  t.equal((await member.get(`${s.C(s.general)}/threads?archived=true&before=${s.general}`)).status, 404, 'before must be an archived thread here');

  // Private archived threads among them: a page holds what its reader sees, full, in one go.
  const { owner, roleMember } = s.clients;
  const secrets: string[] = [];
  for (let i = 0; i < 3; i++) {
    const secret = (await must(member.post(`${s.C(s.general)}/threads`, { name: `secret ${i}`, private: true }), 201)).body;
    await must(member.request('PATCH', s.C(secret.id), { archived: true }), 200);
    clock.advance(1000);
    secrets.push(secret.id);
  }
  const pageOf = async (who: typeof member, query: string) =>
    (await must(who.get(`${s.C(s.general)}/threads?archived=true&${query}`), 200)).body.map((x: any) => x.id);
  t.same(await pageOf(roleMember, 'limit=3'), [ids[4], ids[3], ids[2]], 'a non-member reads past the private ones to a full page');
  t.same(await pageOf(member, 'limit=3'), [secrets[2], secrets[1], secrets[0]], 'their member sees them');
  t.same(await pageOf(owner, 'limit=4'), [secrets[2], secrets[1], secrets[0], ids[4]], 'so does a moderator');
  t.same(await pageOf(roleMember, `limit=2&before=${ids[3]}`), [ids[2], ids[1]], 'and pages on by before');
  t.equal((await roleMember.get(`${s.C(s.general)}/threads?archived=true&before=${secrets[0]}`)).status, 404, 'a private one unseen is no cursor');
});

t.test('forum posts: a thread and its first message at once, with tags; a forum takes no other message', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, roleMember } = s.clients;
  t.match(s.forum, { type: 'forum', topic: 'Ask one question per post.', default_reaction: '👍', default_sort: 'latest_activity' });
  t.equal(s.forum.available_tags.length, 3);
  const stream = await openSocket(app.url, '/api/ws', { client: roleMember });
  t.teardown(() => stream.close());
  const ready = await stream.event('ready');
  t.match(
    ready.servers.find((x: any) => x.id === s.serverId).channels.find((x: any) => x.id === s.forum.id),
    { type: 'forum', available_tags: s.forum.available_tags },
  );

  const post = (await must(member.post(`${s.C(s.forum.id)}/threads`, { name: 'It crashes', content: 'on start', applied_tags: [s.tag('bug')] }), 201)).body;
  t.match(post, { type: 'thread', parent_id: s.forum.id, applied_tags: [s.tag('bug')], message_count: 1, member_count: 1 });
  t.equal(post.message.content, 'on start');
  t.equal(post.starter_message_id, post.message.id, "a post's first message is its starter");
  const created = await stream.event('thread_created');
  t.equal(created.thread.starter_message_id, post.message.id);
  t.equal((await stream.event('message')).message.channel_id, post.id, 'then its first message');

  t.equal((await member.post(`${s.C(s.forum.id)}/messages`, { content: 'hello?' })).status, 400, 'a forum takes no message of its own');
  t.equal((await member.post(`${s.C(s.forum.id)}/typing`)).status, 400);
  const bad = [
    [{ name: 'x', content: 'y', applied_tags: [s.general] }, 400, 'a tag of another forum'],
    [{ name: 'x', content: 'y', applied_tags: Array(2).fill(s.tag('bug')) }, 201, 'a tag named twice counts once'],
    [{ name: 'x', content: 'y', applied_tags: Array(6).fill(s.tag('bug')) }, 400, 'more than 5, as the documents say, even the same'],
    [{ name: 'x', content: '' }, 400, 'a post needs words or a file'],
    [{ name: 'x', content: 'y', applied_tags: [s.tag('solved')] }, 403, 'a moderated tag: manage_threads'],
    [{ name: 'x', content: 'y', message_id: '0000000c-ffe4-8fff-8000-001db49e7c2d0' }, 400, 'a forum post starts from no message'],
    [{ name: 'x', content: 'y', private: true }, 400, 'nor is it private'],
  ] as const;
  for (const [body, status, what] of bad) t.equal((await member.post(`${s.C(s.forum.id)}/threads`, body)).status, status, what);
  // Multipart with a file, tags as a list of ids.
  const form = new FormData();
  form.append('name', 'Screenshot');
  form.append('content', 'see attached');
  form.append('applied_tags', `${s.tag('bug')},${s.tag('idea')}`);
  form.append('attachments', new Blob([Buffer.from('not really a png')], { type: 'text/plain' }), 'shot.txt');
  const withFile = (await must(member.post(`${s.C(s.forum.id)}/threads`, form), 201)).body;
  t.same(withFile.applied_tags, [s.tag('bug'), s.tag('idea')]);
  t.equal(withFile.message.attachments.length, 1);

  // Retagging: the owner (not a moderated tag), manage_threads (any).
  t.equal((await member.request('PATCH', s.C(post.id), { applied_tags: [s.tag('solved')] })).status, 403);
  await must(member.request('PATCH', s.C(post.id), { applied_tags: [s.tag('idea')] }), 200);
  t.same((await must(owner.request('PATCH', s.C(post.id), { applied_tags: [s.tag('idea'), s.tag('solved')] }), 200)).body.applied_tags, [
    s.tag('idea'),
    s.tag('solved'),
  ]);
  t.equal((await member.request('PATCH', s.C(post.id), { applied_tags: [] })).status, 403, 'nor take a moderated tag off');
  // A thread of a text channel carries no tags.
  const plain = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'plain' }), 201)).body;
  t.equal((await member.request('PATCH', s.C(plain.id), { applied_tags: [] })).status, 400);
  // A tag removed from the forum comes off its posts, and those who see them are told (thread_updated).
  const watching = await openSocket(app.url, '/api/ws', { client: member });
  t.teardown(() => watching.close());
  await watching.event('ready');
  const kept = s.forum.available_tags.filter((x: any) => x.name !== 'idea');
  const changed = (await must(owner.request('PATCH', s.C(s.forum.id), { available_tags: kept, default_sort: 'creation' }), 200)).body;
  const retagged = await watching.until((f) => f.event === 'thread_updated' && f.thread_id === post.id);
  t.same(retagged.thread.applied_tags, [s.tag('solved')], 'thread_updated carries the tags left');
  t.same(
    (await watching.drain(200)).filter((f) => f.event === 'thread_updated' && f.thread_id === plain.id),
    [],
    'a post that lost no tag is not announced',
  );
  t.equal(changed.default_sort, 'creation');
  t.same(
    changed.available_tags.map((x: any) => x.name),
    ['bug', 'solved'],
  );
  t.same((await must(owner.get(`${s.C(s.forum.id)}/threads`), 200)).body.find((x: any) => x.id === post.id).applied_tags, [s.tag('solved')]);
  t.equal((await owner.request('PATCH', s.C(s.general), { available_tags: [] })).status, 400, 'only a forum has tags');
  t.equal((await owner.request('PATCH', s.C(s.forum.id), { available_tags: [{ name: 'a' }, { name: 'A' }] })).status, 400, 'tag names unique in any case');
  t.equal((await owner.request('PATCH', s.C(s.forum.id), { available_tags: Array.from({ length: 21 }, (_, i) => ({ name: `t${i}` })) })).status, 400);
});

t.test("the thread list carries a forum post's first lines and first image, in one statement; null elsewhere", async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, roleMember, outsider } = s.clients;
  // A text file, then two images: the first image is the second attachment. The content is cut at 200 characters.
  const long = `first line\nsecond line ${'é'.repeat(250)}`;
  const form = new FormData();
  form.append('name', 'With a picture');
  form.append('content', long);
  form.append('attachments', new Blob([Buffer.from('notes\n')], { type: 'text/plain' }), 'notes.txt');
  form.append('attachments', new Blob([PNG], { type: 'image/png' }), 'shot.png');
  form.append('attachments', new Blob([PNG], { type: 'image/png' }), 'second.png');
  const post = (await must(member.post(`${s.C(s.forum.id)}/threads`, form), 201)).body;
  const image = post.message.attachments[1];
  t.match(image, { name: 'shot.png', preview_kind: 'image' });
  const words = (await must(member.post(`${s.C(s.forum.id)}/threads`, { name: 'Words only', content: 'no picture here' }), 201)).body;

  const listed = (await must(roleMember.get(`${s.C(s.forum.id)}/threads`), 200)).body;
  const card = listed.find((x: any) => x.id === post.id);
  t.same(card.first_message, { content: [...long].slice(0, 200).join(''), image: image.url }, 'its first 200 characters and its first image');
  t.equal([...card.first_message.content].length, 200, 'a long content is cut');
  t.same(listed.find((x: any) => x.id === words.id).first_message, { content: 'no picture here', image: null });
  const download = await roleMember.get(card.first_message.image);
  t.equal(download.status, 200, 'the image downloads for a member');
  t.equal(download.headers.get('content-type'), 'image/png');
  t.equal((await outsider.get(card.first_message.image)).status, 404, 'and for no one else');

  // A thread of a text channel, from a message or alone: no first message of its own.
  const starter = (await must(member.post(`${s.C(s.general)}/messages`, { content: 'shall we read Dune?' }), 201)).body;
  await must(member.post(`${s.C(s.general)}/threads`, { name: 'Dune', message_id: starter.id }), 201);
  await must(member.post(`${s.C(s.general)}/threads`, { name: 'alone' }), 201);
  const plain = (await must(member.get(`${s.C(s.general)}/threads`), 200)).body;
  t.equal(plain.length, 2);
  t.same(
    plain.map((x: any) => x.first_message),
    [null, null],
    'null for the threads of a text channel',
  );

  // Archived posts carry it too; a post whose first message is gone has none.
  await must(member.request('PATCH', s.C(post.id), { archived: true }), 200);
  const archived = (await must(member.get(`${s.C(s.forum.id)}/threads?archived=true`), 200)).body;
  t.same(archived.find((x: any) => x.id === post.id).first_message.image, image.url, 'on the archived page too');
  await must(member.delete(`${s.C(words.id)}/messages/${words.message.id}`), 204);
  t.equal((await must(member.get(`${s.C(s.forum.id)}/threads`), 200)).body.find((x: any) => x.id === words.id).first_message, null, 'the first message gone');

  // Without read_history, a post from before one joined shows no first message (nor does its image download).
  await must(owner.put(`${s.C(s.forum.id)}/overwrites/${s.serverId}`, { deny: ['read_history'] }), 200);
  const late = await s.newMember();
  const seen = (await must(late.get(`${s.C(s.forum.id)}/threads?archived=true`), 200)).body.find((x: any) => x.id === post.id);
  t.equal(seen.first_message, null, 'a message they may not read');
  t.equal((await late.get(image.url)).status, 404);
  t.not(
    (await must(roleMember.get(`${s.C(s.forum.id)}/threads?archived=true`), 200)).body.find((x: any) => x.id === post.id).first_message,
    null,
    'those who joined before still read it',
  );
});

t.test('the four thread permissions, and a thread inherits its parent’s overwrites', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member } = s.clients;
  const roles = (await must(owner.get(`${s.base}/roles`), 200)).body;
  const regulars = roles.find((r: any) => r.name === 'regulars').id;
  const helper = await s.newMember('regulars');
  const ow = (channel: string, target: string, body: object) => must(owner.put(`${s.C(channel)}/overwrites/${target}`, body), 200);
  const thread = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'talk' }), 201)).body;

  // By default everyone may start and talk in threads, and none manages them.
  const mine = (await must(member.get(`${s.base}/channels`), 200)).body.find((x: any) => x.id === s.general).permissions;
  t.ok(['create_public_threads', 'create_private_threads', 'send_messages_in_threads'].every((f) => mine.includes(f)));
  t.notOk(mine.includes('manage_threads'));

  // send_messages_in_threads, not send_messages, decides in a thread.
  await ow(s.general, s.serverId, { deny: ['send_messages'] });
  t.equal((await member.post(`${s.C(s.general)}/messages`, { content: 'x' })).status, 403, 'read-only channel');
  t.equal((await must(member.post(`${s.C(thread.id)}/messages`, { content: 'threads still open' }), 201)).status, 201, 'its threads still talk');
  await ow(s.general, s.serverId, { deny: ['send_messages_in_threads'] });
  t.equal((await member.post(`${s.C(thread.id)}/messages`, { content: 'x' })).status, 403, 'without send_messages_in_threads');
  t.equal((await must(member.post(`${s.C(s.general)}/messages`, { content: 'channel open' }), 201)).status, 201);
  await ow(s.general, s.serverId, {});

  // create_public_threads and create_private_threads.
  await ow(s.general, s.serverId, { deny: ['create_public_threads'] });
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x' })).status, 403, 'no public threads');
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x', private: true })).status, 201, 'private ones still');
  await ow(s.general, s.serverId, { deny: ['create_private_threads'] });
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'x', private: true })).status, 403, 'no private threads');
  await ow(s.general, s.serverId, {});

  // manage_threads for a role: locks, deletes, sees private threads.
  const hidden = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'hidden', private: true }), 201)).body;
  t.equal((await helper.get(`${s.C(hidden.id)}/messages`)).status, 404);
  t.equal((await helper.request('PATCH', s.C(thread.id), { locked: true })).status, 403);
  await ow(s.general, regulars, { allow: ['manage_threads'] });
  t.equal((await helper.get(`${s.C(hidden.id)}/messages`)).status, 200, 'manage_threads sees a private thread');
  await must(helper.request('PATCH', s.C(thread.id), { locked: true, name: 'renamed by a helper' }), 200);
  await must(helper.delete(s.C(hidden.id)), 204);

  // Inheritance: the parent hidden, its threads are gone, every route and the overwrite list.
  const overwrites = (await must(owner.get(`${s.C(thread.id)}/overwrites`), 200)).body;
  t.same(overwrites, (await must(owner.get(`${s.C(s.general)}/overwrites`), 200)).body, "a thread lists its parent's overwrites");
  t.equal((await owner.put(`${s.C(thread.id)}/overwrites/${s.serverId}`, { deny: ['view_channel'] })).status, 400, 'and takes none of its own');
  await ow(s.general, member.userId, { deny: ['view_channel'] });
  t.equal((await member.get(`${s.C(thread.id)}/messages`)).status, 404, 'the parent hidden: its thread too');
  t.equal((await member.put(`${s.C(thread.id)}/members/@me`)).status, 404);
});

t.test('live: thread events, ready with active threads and followed read state, unread toward the parent', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, roleMember } = s.clients;
  const followed = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'followed' }), 201)).body;
  const unfollowed = (await must(owner.post(`${s.C(s.general)}/threads`, { name: 'not followed' }), 201)).body;
  const secret = (await must(owner.post(`${s.C(s.general)}/threads`, { name: 'secret', private: true }), 201)).body;
  await must(owner.post(`${s.C(followed.id)}/messages`, { content: `hey @${member.username}` }), 201);
  await must(owner.post(`${s.C(followed.id)}/messages`, { content: 'and more' }), 201);
  await must(owner.post(`${s.C(unfollowed.id)}/messages`, { content: 'elsewhere' }), 201);

  const stream = await openSocket(app.url, '/api/ws', { client: member });
  t.teardown(() => stream.close());
  const ready = await stream.event('ready');
  const server = ready.servers.find((x: any) => x.id === s.serverId);
  const byId = new Map(server.threads.map((x: any) => [x.id, x]));
  t.notOk(byId.has(secret.id), 'a private thread one is not in is not in ready');
  t.match(byId.get(followed.id), { following: true, unread_count: 2, mention_count: 1 });
  t.match(byId.get(unfollowed.id), { following: false });
  t.notOk('unread_count' in (byId.get(unfollowed.id) as object), 'an unfollowed thread counts nothing');
  t.equal(server.unread, true, 'a followed thread counts toward its server');
  t.equal(server.mention_count, 1);
  t.equal((await must(member.get('/api/servers'), 200)).body.find((x: any) => x.id === s.serverId).mention_count, 1, 'GET /api/servers says the same');

  // Reading the thread: read event, and the state is read.
  const last = (await must(member.get(`${s.C(followed.id)}/messages?limit=1`), 200)).body[0];
  const read = (await must(member.put(`${s.C(followed.id)}/read`, { message_id: last.id }), 200)).body;
  t.match(read, { channel_id: followed.id, unread_count: 0, mention_count: 0 });
  await stream.event('read');

  // thread_members reaches who joins; a private thread comes to who is added.
  const other = await openSocket(app.url, '/api/ws', { client: roleMember });
  t.teardown(() => other.close());
  await other.event('ready');
  await must(owner.put(`${s.C(secret.id)}/members/${roleMember.userId}`), 204);
  const joined = await other.event('thread_members');
  t.match(joined, { thread_id: secret.id, added: [roleMember.userId], removed: [], thread: { private: true, member_count: 2 } });
  await must(owner.post(`${s.C(secret.id)}/messages`, { content: 'welcome' }), 201);
  t.equal((await other.event('message')).message.channel_id, secret.id, 'and its messages');
  t.same(
    (await stream.drain(200)).filter((f) => f.message?.channel_id === secret.id || f.thread_id === secret.id),
    [],
    'nothing of the private thread reaches a non-member',
  );
  // Marking the server read reads followed threads too.
  await must(owner.post(`${s.C(followed.id)}/messages`, { content: 'later' }), 201);
  await must(member.post(`/api/servers/${s.serverId}/read`), 200);
  const again = await openSocket(app.url, '/api/ws', { client: member });
  t.teardown(() => again.close());
  const fresh = (await again.event('ready')).servers.find((x: any) => x.id === s.serverId);
  t.equal(fresh.threads.find((x: any) => x.id === followed.id).unread_count, 0, 'read with its server');
});

t.test('notification settings take a thread; pushes of a thread go to who follows it', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { member, roleMember } = s.clients;
  const thread = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'quiet please' }), 201)).body;
  const setting = (await must(member.put(`/api/account/notifications/${thread.id}`, { level: 'mentions' }), 200)).body;
  t.match(setting, { target_id: thread.id, target_kind: 'channel', level: 'mentions' });
  t.ok(
    (await must(member.get('/api/account/notifications'), 200)).body.some((x: any) => x.target_id === thread.id),
    'listed',
  );
  const secret = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'private', private: true }), 201)).body;
  t.equal((await roleMember.put(`/api/account/notifications/${secret.id}`, { level: 'all' })).status, 404, 'not for a thread one cannot see');
});

t.test('search finds thread messages, says which thread and channel, and in: a thread', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { member, roleMember, owner } = s.clients;
  const thread = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'zebra talk' }), 201)).body;
  const secret = (await must(owner.post(`${s.C(s.general)}/threads`, { name: 'zebra secrets', private: true }), 201)).body;
  await must(member.post(`${s.C(s.general)}/messages`, { content: 'zebras in the channel' }), 201);
  const inThread = (await must(member.post(`${s.C(thread.id)}/messages`, { content: 'zebras in the thread' }), 201)).body;
  await must(owner.post(`${s.C(secret.id)}/messages`, { content: 'zebras in secret' }), 201);
  const found = (await must(roleMember.get('/api/search?q=zebras'), 200)).body.results;
  t.same(found.map((x: any) => x.content).sort(), ['zebras in the channel', 'zebras in the thread']);
  t.same(found.find((x: any) => x.id === inThread.id).in_thread, { id: thread.id, name: 'zebra talk', parent_id: s.general });
  t.same(
    (await must(roleMember.get(`/api/search?q=zebras&channel_id=${thread.id}`), 200)).body.results.map((x: any) => x.id),
    [inThread.id],
  );
  t.equal((await roleMember.get(`/api/search?q=zebras&channel_id=${secret.id}`)).status, 404);
  t.equal((await must(owner.get('/api/search?q=zebras'), 200)).body.results.length, 3, 'the owner sees the private one');
});

t.test('caps and rate: 1000 active threads a server, a thread of a text channel carries no files', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { member } = s.clients;
  const form = new FormData();
  form.append('name', 'with a file');
  form.append('attachments', new Blob([Buffer.from('x')]), 'x.txt');
  t.equal((await member.post(`${s.C(s.general)}/threads`, form)).status, 400, 'files come with a forum post');
  const first = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'first' }), 201)).body;
  // The cap, filled from a second connection as an import would (the route would take 1000 requests).
  const db = app.app.db;
  const insertChannel = db.prepare("INSERT INTO channels (id, server_id, type, parent_id, name, position, created_at) VALUES (?, ?, 'thread', ?, ?, 0, ?)");
  const insertThread = db.prepare('INSERT INTO threads (channel_id, server_id, parent_id, owner_id, archive_at) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 1; i < 1000; i++) {
      const id = crypto.randomUUID();
      insertChannel.run(id, s.serverId, s.general, `t${i}`, first.created_at);
      insertThread.run(id, s.serverId, s.general, member.userId, '2999-01-01T00:00:00.000Z');
    }
  })();
  t.equal((await member.post(`${s.C(s.general)}/threads`, { name: 'one too many' })).status, 400);
  await must(member.request('PATCH', s.C(first.id), { archived: true }), 200);
  const again = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'room again' }), 201)).body;
  // At the cap, an archived thread does not come back either: not by PATCH, not by a message.
  const refused = await member.request('PATCH', s.C(first.id), { archived: false });
  t.equal(refused.status, 400, 'unarchiving past the cap');
  t.match(refused.text, /at most 1000 active threads/);
  t.equal((await member.post(`${s.C(first.id)}/messages`, { content: 'wake up' })).status, 400, 'a message into an archived thread past the cap');
  t.equal((await must(member.get(`${s.C(first.id)}/messages`), 200)).body.length, 0, 'and nothing was written');
  await must(member.request('PATCH', s.C(again.id), { archived: true }), 200);
  await must(member.post(`${s.C(first.id)}/messages`, { content: 'wake up' }), 201);
  t.equal(
    (await must(member.get(`${s.C(s.general)}/threads`), 200)).body.some((x: any) => x.id === first.id),
    true,
    'room made: the message unarchives it',
  );
});

t.test("a thread's pushes go to who follows it, and a mute of its channel silences it", async (t) => {
  const service = await startPushService({ tls: false });
  t.teardown(() => service.close());
  const app = await startServer({ env: { PUSH_INSECURE_HOSTS: '127.0.0.1' } });
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member } = s.clients;
  const key = (await must(member.get('/api/push/key'), 200)).body.key as string;
  await must(member.post('/api/account/push-subscriptions', service.subscribe('member', key)), 201);
  const nothingNew = async (before: number) => {
    await new Promise((resolve) => setTimeout(resolve, 600));
    return service.received.length === before;
  };
  // The first push starts the delivery worker (seconds on a busy machine): one through, first.
  await must(owner.post(`${s.C(s.general)}/messages`, { content: `@${member.username} hello` }), 201);
  await service.waitFor(1, 15_000);
  const thread = (await must(owner.post(`${s.C(s.general)}/threads`, { name: 'owners only' }), 201)).body;
  let before = service.received.length;
  await must(owner.post(`${s.C(thread.id)}/messages`, { content: 'a word nobody follows' }), 201);
  t.ok(await nothingNew(before), 'not a member of the thread: no push, though they see it');
  await must(member.put(`${s.C(thread.id)}/members/@me`), 204);
  before = service.received.length;
  await must(owner.post(`${s.C(thread.id)}/messages`, { content: 'now you follow' }), 201);
  const [push] = (await service.waitFor(before + 1, 15_000)).slice(before);
  t.match(push.payload, { tag: thread.id }, 'a member of the thread: pushed, tagged with the thread');
  await must(member.put(`/api/account/notifications/${s.general}`, { level: 'all', muted_until: '9999-12-31T23:59:59Z' }), 200);
  before = service.received.length;
  await must(owner.post(`${s.C(thread.id)}/messages`, { content: 'in a muted channel' }), 201);
  t.ok(await nothingNew(before), 'its channel muted: nothing');
});

t.test('thread_members reaches only who sees the thread: a follower who lost its parent hears nothing more', async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, roleMember } = s.clients;
  const thread = (await must(owner.post(`${s.C(s.general)}/threads`, { name: 'staff talk' }), 201)).body;
  await must(member.put(`${s.C(thread.id)}/members/@me`), 204);
  const stream = await openSocket(app.url, '/api/ws', { client: member });
  t.teardown(() => stream.close());
  await stream.event('ready');
  // The parent hidden from the follower: their thread_members row stays, the thread is no longer theirs to see.
  await must(owner.put(`${s.C(s.general)}/overwrites/${member.userId}`, { deny: ['view_channel'] }), 200);
  await must(roleMember.put(`${s.C(thread.id)}/members/@me`), 204);
  await must(owner.post(`${s.C(thread.id)}/messages`, { content: 'a secret plan' }), 201);
  t.same(
    (await stream.drain(300)).filter((f) => f.thread_id === thread.id || f.thread?.id === thread.id || f.message?.channel_id === thread.id),
    [],
    'no thread_members (nor anything else of the thread) reaches who cannot see it',
  );
});

t.test("a thread's viewers (who its events reach) agree with the access rule for every member", async (t) => {
  const app = await startServer();
  t.teardown(app.close);
  const s = await scene(app);
  const { owner, member, roleMember } = s.clients;
  const roles = (await must(owner.get(`${s.base}/roles`), 200)).body;
  const regulars = roles.find((r: any) => r.name === 'regulars').id;
  const open = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'open' }), 201)).body;
  const secret = (await must(member.post(`${s.C(s.general)}/threads`, { name: 'secret', private: true }), 201)).body;
  await must(member.put(`${s.C(secret.id)}/members/${roleMember.userId}`), 204);
  const check = (when: string) => {
    const rules = app.app.perms.channelRules(s.serverId)!;
    const everyone = Object.values(s.clients).flatMap((c: any) => (c?.userId ? [c.userId as string] : []));
    for (const id of [s.general, open.id, secret.id]) {
      const expected = everyone.filter((u) => rules.flags(u, id) & VIEW).sort();
      t.same(
        [...rules.viewers(id)].filter((u) => everyone.includes(u)).sort(),
        expected,
        `${when}: ${id === s.general ? 'the parent' : id === open.id ? 'a public thread' : 'a private thread'}`,
      );
    }
    return rules;
  };
  t.ok(check('at first').viewers(secret.id).includes(roleMember.userId), 'a member of the private thread sees it');
  // The parent hidden from a role: its threads go with it for that role's holder.
  await must(owner.put(`${s.C(s.general)}/overwrites/${regulars}`, { deny: ['view_channel'] }), 200);
  t.notOk(check('the parent hidden from a role').viewers(open.id).includes(roleMember.userId), 'nor does its public thread show to them');
  await must(owner.put(`${s.C(s.general)}/overwrites/${regulars}`, { allow: ['manage_threads'] }), 200);
  check('manage_threads for a role');
});
