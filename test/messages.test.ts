import crypto from 'node:crypto';
import t from 'tap';
import { iso } from '../src/core/clock';
import { MAX_CONTENT_CHARS, REPLY_PREVIEW_CHARS } from '../src/core/message-record';
import { Client, type Res } from './helpers/client';
import { FakeClock, startServer } from './helpers/server';
import { ACTORS, type Actor, type ChannelMessage as Message, type Expect, messageCommunity as community, must, ref } from './helpers/community';

const MEMBERS_READ: Expect = { owner: 200, admin: 200, roleMember: 200, member: 200, outsider: 404, anon: 401, suspended: 403 };
const MEMBERS_POST: Expect = { ...MEMBERS_READ, owner: 201, admin: 201, roleMember: 201, member: 201 };
const AUTHOR_EDITS: Expect = { ...MEMBERS_READ, owner: 403, admin: 403, roleMember: 403, member: 200 };
const AUTHOR_OR_ADMIN_DELETES: Expect = { ...MEMBERS_READ, owner: 204, admin: 204, roleMember: 403, member: 204 };

t.test('who may do what with channel and legacy messages', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { base, clients, inGeneral, inRandom, legacy, post } = await community(server);
  const byMember = await post(clients.member, inGeneral, 'written by the member');

  const matrix: { name: string; call: (c: Client) => Promise<Res>; expect: Expect }[] = [
    { name: 'GET channel messages', call: (c) => c.get(inGeneral), expect: MEMBERS_READ },
    { name: 'POST channel message', call: (c) => c.post(inGeneral, { content: 'hello' }), expect: MEMBERS_POST },
    {
      name: 'PUT channel message (edit), on a message the member wrote',
      call: (c) => c.put(`${inGeneral}/${byMember.id}`, { content: 'edited' }),
      expect: AUTHOR_EDITS,
    },
    {
      name: 'DELETE channel message, on a fresh message the member wrote',
      call: async (c) => c.delete(`${inGeneral}/${(await post(clients.member, inGeneral, 'doomed')).id}`),
      expect: AUTHOR_OR_ADMIN_DELETES,
    },
    {
      name: 'PUT reaction',
      call: (c) => c.put(`${inGeneral}/${byMember.id}/reactions`, { emoji: '👍' }),
      expect: MEMBERS_READ,
    },
    {
      name: 'DELETE reaction',
      call: (c) => c.delete(`${inGeneral}/${byMember.id}/reactions`, { emoji: '👍' }),
      expect: MEMBERS_READ,
    },
    { name: 'GET legacy server messages', call: (c) => c.get(legacy), expect: MEMBERS_READ },
    { name: 'POST legacy server message', call: (c) => c.post(legacy, { content: 'legacy hello' }), expect: MEMBERS_POST },
  ];

  for (const row of matrix) {
    t.test(row.name, async (t) => {
      for (const actor of ACTORS) {
        const res = await row.call(clients[actor]);
        t.equal(res.status, row.expect[actor], `${actor}: ${res.status} ${res.status >= 400 ? res.text.trim() : ''}`);
      }
    });
  }

  t.test('a channel of another server, or of no server, is 404 even to members', async (t) => {
    const elsewhere = (await must(clients.outsider.post('/api/servers', { name: 'elsewhere' }), 201)).body.id;
    const foreignChannel = (await must(clients.outsider.get(`/api/servers/${elsewhere}/channels`), 200)).body[0].id;
    const paths = [`${base}/channels/${foreignChannel}/messages`, `${base}/channels/${crypto.randomUUID()}/messages`];
    for (const path of paths) {
      t.equal((await clients.owner.get(path)).status, 404, `GET ${path}`);
      t.equal((await clients.owner.post(path, { content: 'x' })).status, 404, `POST ${path}`);
    }
    // The outsider owns the foreign channel's server, yet reaches nothing through a server it is not in.
    t.equal((await clients.outsider.get(`${base}/channels/${foreignChannel}/messages`)).status, 404);
    // A member of both servers cannot reach a channel through the wrong server either.
    const invite = (await must(clients.outsider.post(`/api/servers/${elsewhere}/invites`), 201)).body.token;
    await must(clients.member.post(`/api/invites/${invite}/accept`), 200);
    t.equal((await clients.member.get(`/api/servers/${elsewhere}/channels/${foreignChannel}/messages`)).status, 200, 'the right path works');
    const crossed = await clients.member.get(`${base}/channels/${foreignChannel}/messages`);
    t.equal(crossed.status, 404, 'the wrong server in the path is 404');
    t.match(crossed.text, /channel not found/);
    t.equal((await clients.member.post(`${base}/channels/${foreignChannel}/messages`, { content: 'x' })).status, 404);
  });

  t.test('a message id that is not in this channel is 404 for edit, delete and reactions', async (t) => {
    const elsewhere = await post(clients.member, inRandom, 'in random');
    for (const id of [elsewhere.id, crypto.randomUUID()]) {
      t.equal((await clients.member.put(`${inGeneral}/${id}`, { content: 'x' })).status, 404, 'edit');
      t.equal((await clients.member.delete(`${inGeneral}/${id}`)).status, 404, 'delete');
      t.equal((await clients.member.put(`${inGeneral}/${id}/reactions`, { emoji: '👍' })).status, 404, 'react');
      t.equal((await clients.member.delete(`${inGeneral}/${id}/reactions`, { emoji: '👍' })).status, 404, 'unreact');
    }
    t.equal((await clients.member.put(`${inGeneral}/not-a-uuid`, { content: 'x' })).status, 400, 'a malformed id is 400');
  });
});

t.test('creating, reading and editing messages', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const { serverId, clients, general, inGeneral, inRandom, post } = await community(server);
  const { member, owner } = clients;

  t.test('a new message answers 201 with the full record and heads the channel history', async (t) => {
    const res = await member.post<Message>(inGeneral, { content: 'first words' });
    t.equal(res.status, 201);
    const message = res.body;
    t.same(message, {
      id: message.id,
      server_id: serverId,
      channel_id: general,
      author_id: member.userId,
      author: ref(member),
      content: 'first words',
      mentions: [],
      mention_everyone: false,
      mention_roles: [],
      reply_to: null,
      reply_preview: null,
      pinned: false,
      attachments: [],
      reactions: [],
      created_at: iso(clock.now()),
      edited_at: null,
    });
    t.match(message.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const list = await owner.get<Message[]>(inGeneral);
    t.same(list.body[0], message, 'the list shows the same record');
  });

  t.test('content rules', async (t) => {
    const cases: [string, unknown, number][] = [
      ['empty content without attachments', { content: '' }, 400],
      ['whitespace-only content', { content: ' \n\t ' }, 400],
      ['missing content', {}, 400],
      ['null content', { content: null }, 400],
      ['numeric content', { content: 42 }, 400],
      ['an array as content', { content: ['hi'] }, 400],
      ['a control character', { content: 'bell\u0007' }, 400],
      [`${MAX_CONTENT_CHARS} characters`, { content: 'x'.repeat(MAX_CONTENT_CHARS) }, 201],
      [`${MAX_CONTENT_CHARS + 1} characters`, { content: 'x'.repeat(MAX_CONTENT_CHARS + 1) }, 400],
      [`${MAX_CONTENT_CHARS} emoji (counted as characters, not UTF-16 units)`, { content: '😀'.repeat(MAX_CONTENT_CHARS) }, 201],
      ['several lines and tabs', { content: 'line one\n\tline two\r\n' }, 201],
      ['a JSON array body', ['hi'], 400],
    ];
    for (const [what, body, status] of cases) {
      const res = await member.post(inGeneral, body);
      t.equal(res.status, status, `${what}: ${res.status === 201 ? '' : res.text.trim()}`);
      if (status === 400) t.match(res.headers.get('content-type'), /^text\/plain/);
    }
    const wrongType = await member.post(inGeneral, 'hello', { 'content-type': 'text/plain' });
    t.equal(wrongType.status, 415, 'neither JSON nor multipart is 415');
  });

  t.test('content is stored as sent, surrounding whitespace included', async (t) => {
    const message = await post(member, inGeneral, '  indented\n');
    t.equal(message.content, '  indented\n');
  });

  t.test('reply_to rules', async (t) => {
    const target = await post(owner, inGeneral, 'the question');
    const otherChannel = await post(owner, inRandom, 'somewhere else');

    const reply = await member.post<Message>(inGeneral, { content: 'the answer', reply_to: target.id });
    t.equal(reply.status, 201, 'a message of the same channel');
    t.equal(reply.body.reply_to, target.id);
    t.same(reply.body.reply_preview, {
      id: target.id,
      author: ref(owner),
      content: 'the question',
    });

    const upper = await member.post<Message>(inGeneral, { content: 'shouting', reply_to: target.id.toUpperCase() });
    t.equal(upper.status, 201, 'an upper-case UUID names the same message');
    t.equal(upper.body.reply_to, target.id);

    for (const none of [null, '']) {
      const res = await member.post<Message>(inGeneral, { content: 'no reply', reply_to: none });
      t.equal(res.status, 201, `reply_to ${JSON.stringify(none)} means no reply`);
      t.equal(res.body.reply_to, null);
    }

    const refused: [string, unknown][] = [
      ['a message of another channel', otherChannel.id],
      ['a UUID that names no message', crypto.randomUUID()],
      ['not a UUID', 'abc'],
      ['a number', 12],
      ['an object', { id: target.id }],
    ];
    for (const [what, replyTo] of refused) {
      const res = await member.post(inGeneral, { content: 'x', reply_to: replyTo });
      t.equal(res.status, 400, `${what}: ${res.text.trim()}`);
      t.match(res.text, /reply_to/, 'the reason names the field');
    }
  });

  t.test('the reply preview is cut to a short excerpt', async (t) => {
    const long = await post(owner, inGeneral, 'é'.repeat(REPLY_PREVIEW_CHARS + 50));
    const reply = await post(member, inGeneral, 'tl;dr', { reply_to: long.id });
    t.equal(reply.reply_preview?.content, 'é'.repeat(REPLY_PREVIEW_CHARS));
    t.equal(long.content.length, REPLY_PREVIEW_CHARS + 50, 'the message itself is whole');
  });

  t.test('the author edits a message: content changes, edited_at is set, created_at stays', async (t) => {
    const original = await post(member, inGeneral, 'tpyo');
    clock.advance(60_000);
    const res = await member.put<Message>(`${inGeneral}/${original.id}`, { content: 'typo' });
    t.equal(res.status, 200);
    t.same(res.body, { ...original, content: 'typo', edited_at: iso(clock.now()) });
    const listed = (await owner.get<Message[]>(inGeneral)).body.find((m) => m.id === original.id);
    t.same(listed, res.body, 'the list shows the edit');
  });

  t.test('nobody but the author may edit, not even the owner or an administrator', async (t) => {
    const original = await post(member, inGeneral, 'mine');
    for (const actor of ['owner', 'admin', 'roleMember'] as const) {
      const res = await clients[actor].put(`${inGeneral}/${original.id}`, { content: 'theirs' });
      t.equal(res.status, 403, actor);
    }
    const listed = (await member.get<Message[]>(inGeneral)).body.find((m) => m.id === original.id);
    t.equal(listed?.content, 'mine');
    t.equal(listed?.edited_at, null);
  });

  t.test('an edit follows the content rules', async (t) => {
    const original = await post(member, inGeneral, 'to be edited');
    const cases: [string, unknown, number][] = [
      ['empty', { content: '' }, 400],
      ['whitespace only', { content: '   ' }, 400],
      ['missing', {}, 400],
      ['numeric', { content: 1 }, 400],
      [`${MAX_CONTENT_CHARS + 1} characters`, { content: 'y'.repeat(MAX_CONTENT_CHARS + 1) }, 400],
      [`${MAX_CONTENT_CHARS} characters`, { content: 'y'.repeat(MAX_CONTENT_CHARS) }, 200],
    ];
    for (const [what, body, status] of cases) {
      t.equal((await member.put(`${inGeneral}/${original.id}`, body)).status, status, what);
    }
  });
});

t.test('deleting messages', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { clients, inGeneral, post, newMember } = await community(server);
  const { member, owner } = clients;
  const reactionsOf = (messageId: string) =>
    (server.app.db.prepare('SELECT COUNT(*) AS n FROM reactions r JOIN messages m ON m.seq = r.message_seq WHERE m.id = ?').get(messageId) as { n: number }).n;
  const seqOf = (messageId: string) => (server.app.db.prepare('SELECT seq FROM messages WHERE id = ?').get(messageId) as { seq: number }).seq;

  const rows: [string, Actor, number][] = [
    ['the author deletes their message', 'member', 204],
    ['the owner deletes a member message', 'owner', 204],
    ['a full server administrator deletes a member message', 'admin', 204],
    ['a member with a plain role cannot', 'roleMember', 403],
  ];
  for (const [name, actor, status] of rows) {
    t.test(name, async (t) => {
      const message = await post(member, inGeneral, `target for ${actor}`);
      const res = await clients[actor].delete(`${inGeneral}/${message.id}`);
      t.equal(res.status, status, res.text.trim());
      const present = (await member.get<Message[]>(inGeneral)).body.some((m) => m.id === message.id);
      t.equal(present, status !== 204, status === 204 ? 'gone from the history' : 'still there');
      if (status === 204) t.equal(res.text, '', '204 has no body');
    });
  }

  t.test('a plain member cannot delete another member message', async (t) => {
    const other = await newMember();
    const message = await post(other, inGeneral, 'not yours');
    t.equal((await member.delete(`${inGeneral}/${message.id}`)).status, 403);
  });

  t.test('deleting removes the reactions; replies keep working with reply_preview null', async (t) => {
    const target = await post(owner, inGeneral, 'to be deleted');
    const reply = await post(member, inGeneral, 'a reply', { reply_to: target.id });
    t.equal(reply.reply_preview?.id, target.id);
    await must(member.put(`${inGeneral}/${target.id}/reactions`, { emoji: '👍' }), 200);
    await must(owner.put(`${inGeneral}/${target.id}/reactions`, { emoji: '🎉' }), 200);
    const seq = seqOf(target.id);
    t.equal(reactionsOf(target.id), 2);

    t.equal((await owner.delete(`${inGeneral}/${target.id}`)).status, 204);
    const left = server.app.db.prepare('SELECT COUNT(*) AS n FROM reactions WHERE message_seq = ?').get(seq) as { n: number };
    t.equal(left.n, 0, 'its reactions are gone');

    const listed = (await member.get<Message[]>(inGeneral)).body.find((m) => m.id === reply.id);
    t.ok(listed, 'the reply is still listed');
    t.equal(listed?.reply_to, target.id, 'reply_to still names the deleted message');
    t.equal(listed?.reply_preview, null, 'the preview says it is gone');

    const edited = await member.put<Message>(`${inGeneral}/${reply.id}`, { content: 'a reply, edited' });
    t.equal(edited.status, 200, 'the reply can still be edited');
    t.equal(edited.body.reply_preview, null);
    const reacted = await owner.put<Message>(`${inGeneral}/${reply.id}/reactions`, { emoji: '👀' });
    t.equal(reacted.status, 200, 'and reacted to');

    t.equal((await owner.delete(`${inGeneral}/${target.id}`)).status, 404, 'deleting again is 404');
    t.equal((await member.put(`${inGeneral}/${target.id}/reactions`, { emoji: '👍' })).status, 404, 'reacting to it is 404');
    t.equal((await member.post(inGeneral, { content: 'late', reply_to: target.id })).status, 400, 'replying to it is 400');
  });
});

t.test('reactions', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const { clients, inGeneral, post } = await community(server);
  const { member, owner, admin } = clients;

  t.test('PUT adds the caller reaction once and returns the updated message', async (t) => {
    const message = await post(owner, inGeneral, 'react to me');
    const first = await member.put<Message>(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' });
    t.equal(first.status, 200);
    t.same(first.body, { ...message, reactions: [{ emoji: '👍', count: 1, reacted: true }] });
    const second = await member.put<Message>(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' });
    t.equal(second.status, 200);
    t.same(second.body.reactions, [{ emoji: '👍', count: 1, reacted: true }], 'a second PUT changes nothing');
  });

  t.test('reacted is per caller', async (t) => {
    const message = await post(owner, inGeneral, 'whose reaction?');
    await must(member.put(`${inGeneral}/${message.id}/reactions`, { emoji: '🔥' }), 200);
    const asOwner = (await owner.get<Message[]>(inGeneral)).body.find((m) => m.id === message.id);
    t.same(asOwner?.reactions, [{ emoji: '🔥', count: 1, reacted: false }], 'another member sees it, not as theirs');
    const asMember = (await member.get<Message[]>(inGeneral)).body.find((m) => m.id === message.id);
    t.same(asMember?.reactions, [{ emoji: '🔥', count: 1, reacted: true }], 'the reactor sees it as theirs');

    const both = await admin.put<Message>(`${inGeneral}/${message.id}/reactions`, { emoji: '🔥' });
    t.same(both.body.reactions, [{ emoji: '🔥', count: 2, reacted: true }], 'a second user adds to the count');
    const ownerAgain = (await owner.get<Message[]>(inGeneral)).body.find((m) => m.id === message.id);
    t.same(ownerAgain?.reactions, [{ emoji: '🔥', count: 2, reacted: false }]);
  });

  t.test('DELETE removes only the caller reaction; removing one never made changes nothing', async (t) => {
    const message = await post(owner, inGeneral, 'fickle');
    await must(member.put(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' }), 200);
    await must(admin.put(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' }), 200);
    const removed = await member.delete<Message>(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' });
    t.equal(removed.status, 200);
    t.same(removed.body.reactions, [{ emoji: '👍', count: 1, reacted: false }]);
    const again = await member.delete<Message>(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' });
    t.equal(again.status, 200);
    t.same(again.body.reactions, [{ emoji: '👍', count: 1, reacted: false }]);
    const last = await admin.delete<Message>(`${inGeneral}/${message.id}/reactions`, { emoji: '👍' });
    t.same(last.body.reactions, [], 'the last one removed leaves no summary');
  });

  t.test('reactions are listed in the order they were first added, ties in code point order', async (t) => {
    const message = await post(owner, inGeneral, 'many');
    for (const emoji of ['🐢', '🐇', '🦊']) {
      clock.advance(1);
      await must(member.put(`${inGeneral}/${message.id}/reactions`, { emoji }), 200);
    }
    clock.advance(1);
    await must(admin.put(`${inGeneral}/${message.id}/reactions`, { emoji: '🦊' }), 200);
    const listed = (await owner.get<Message[]>(inGeneral)).body.find((m) => m.id === message.id);
    t.same(
      listed?.reactions.map((r) => r.emoji),
      ['🐢', '🐇', '🦊'],
      'a later reaction with the same emoji does not move it',
    );

    const tied = await post(owner, inGeneral, 'same instant');
    for (const emoji of ['🦊', '🐢', '🐇']) await must(member.put(`${inGeneral}/${tied.id}/reactions`, { emoji }), 200);
    const tiedListed = (await owner.get<Message[]>(inGeneral)).body.find((m) => m.id === tied.id);
    t.same(
      tiedListed?.reactions.map((r) => r.emoji),
      ['🐇', '🐢', '🦊'],
    );
  });

  t.test('valid emoji of every shape are accepted', async (t) => {
    const message = await post(owner, inGeneral, 'shapes');
    for (const emoji of ['👍', '🇫🇷', '👨‍👩‍👧‍👦', '1️⃣']) {
      const res = await member.put<Message>(`${inGeneral}/${message.id}/reactions`, { emoji });
      t.equal(res.status, 200, emoji);
      t.ok(
        res.body.reactions.some((r) => r.emoji === emoji),
        `${emoji} is listed`,
      );
    }
  });

  t.test('anything but one emoji is 400, for PUT and DELETE alike', async (t) => {
    const message = await post(owner, inGeneral, 'strict');
    const invalid: [string, unknown][] = [
      ['a word', 'hello'],
      ['the empty string', ''],
      ['two emoji', '👍👍'],
      ['a 40-character string', 'a'.repeat(40)],
      ['a number', 1],
      ['null', null],
    ];
    for (const [what, emoji] of invalid) {
      for (const method of ['put', 'delete'] as const) {
        const res = await member[method](`${inGeneral}/${message.id}/reactions`, { emoji });
        t.equal(res.status, 400, `${method.toUpperCase()} ${what}: ${res.text.trim()}`);
      }
    }
    t.equal((await member.put(`${inGeneral}/${message.id}/reactions`, {})).status, 400, 'a missing emoji');
    t.equal((await member.put(`${inGeneral}/${message.id}/reactions`)).status, 415, 'no body at all');
    const listed = (await owner.get<Message[]>(inGeneral)).body.find((m) => m.id === message.id);
    t.same(listed?.reactions, [], 'nothing was stored');
  });
});

t.test('paging through history', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { clients, newChannel, inGeneral, post } = await community(server);
  const { member } = clients;
  const channel = await newChannel();
  const TOTAL = 120;
  const seeded: Message[] = [];
  for (let i = 0; i < TOTAL; i++) seeded.push(await post(member, channel, `m${i}`));
  const contents = (page: Res<Message[]>) => page.body.map((m) => m.content);
  const range = (from: number, to: number) => {
    // m<from> down (or up) to m<to>, inclusive.
    const step = from <= to ? 1 : -1;
    return Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => `m${from + i * step}`);
  };

  t.test('the first page is the 50 newest, newest first', async (t) => {
    const page = await member.get<Message[]>(channel);
    t.equal(page.status, 200);
    t.same(contents(page), range(119, 70));
  });

  t.test('limit sets the page size, up to 100', async (t) => {
    t.same(contents(await member.get(`${channel}?limit=1`)), ['m119']);
    t.same(contents(await member.get(`${channel}?limit=100`)), range(119, 20));
    for (const limit of ['101', '0', '-1', 'abc', '1.5', '', '1e2', ' 5']) {
      const res = await member.get(`${channel}?limit=${encodeURIComponent(limit)}`);
      t.equal(res.status, 400, `limit=${JSON.stringify(limit)}: ${res.text.trim()}`);
    }
  });

  t.test('before=<id> pages back, newest first, and the start of history gives a short then empty page', async (t) => {
    const second = await member.get<Message[]>(`${channel}?before=${seeded[70].id}`);
    t.equal(second.status, 200);
    t.same(contents(second), range(69, 20));
    const third = await member.get<Message[]>(`${channel}?before=${seeded[20].id}`);
    t.same(contents(third), range(19, 0), 'the last page is shorter');
    const beyond = await member.get<Message[]>(`${channel}?before=${seeded[0].id}`);
    t.equal(beyond.status, 200);
    t.same(beyond.body, [], 'before the first message there is nothing');
    t.same(contents(await member.get(`${channel}?before=${seeded[5].id}&limit=3`)), ['m4', 'm3', 'm2']);
  });

  t.test('walking back page by page visits every message once', async (t) => {
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const page = await member.get<Message[]>(`${channel}?limit=33${cursor ? `&before=${cursor}` : ''}`);
      if (page.body.length === 0) break;
      seen.push(...contents(page));
      cursor = page.body[page.body.length - 1].id;
    }
    t.same(seen, range(119, 0));
  });

  t.test('after=<id> catches up on newer messages, oldest first', async (t) => {
    t.same(contents(await member.get(`${channel}?after=${seeded[0].id}&limit=5`)), range(1, 5));
    t.same(contents(await member.get(`${channel}?after=${seeded[100].id}`)), range(101, 119));
    t.same((await member.get(`${channel}?after=${seeded[119].id}`)).body, [], 'nothing after the newest');
    t.same(contents(await member.get(`${channel}?after=${seeded[9].id.toUpperCase()}&limit=2`)), ['m10', 'm11'], 'ids in any case');
  });

  t.test('bad cursors: 400 when malformed or combined, 404 when this channel has no such message', async (t) => {
    const elsewhere = await post(member, inGeneral, 'in general');
    const cases: [string, string, number][] = [
      ['before and after together', `before=${seeded[50].id}&after=${seeded[10].id}`, 400],
      ['before an id from another channel', `before=${elsewhere.id}`, 404],
      ['after an id from another channel', `after=${elsewhere.id}`, 404],
      ['before an id of no message', `before=${crypto.randomUUID()}`, 404],
      ['before a non-UUID', 'before=abc', 400],
      ['after a non-UUID', 'after=123', 400],
      ['an empty before', 'before=', 400],
    ];
    for (const [what, query, status] of cases) {
      const res = await member.get(`${channel}?${query}`);
      t.equal(res.status, status, `${what}: ${res.text.trim()}`);
    }
  });

  t.test('an empty channel lists an empty array', async (t) => {
    const empty = await newChannel();
    const res = await member.get(empty);
    t.equal(res.status, 200);
    t.same(res.body, []);
  });
});

t.test('legacy server messages use the first channel', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { clients, general, inGeneral, inRandom, legacy, post } = await community(server);
  const { member, owner } = clients;

  t.test('POST lands in the first channel and GET reads it', async (t) => {
    const res = await member.post<Message>(legacy, { content: 'old client' });
    t.equal(res.status, 201);
    t.equal(res.body.channel_id, general);
    t.same((await owner.get<Message[]>(inGeneral)).body[0], res.body, 'it is in the channel history');
    const channelMessage = await post(owner, inGeneral, 'new client');
    const viaLegacy = await member.get<Message[]>(legacy);
    t.equal(viaLegacy.status, 200);
    t.same(viaLegacy.body, (await member.get<Message[]>(inGeneral)).body, 'the same history as the channel');
    t.equal(viaLegacy.body[0].id, channelMessage.id);
    t.notOk(
      (await owner.get<Message[]>(inRandom)).body.some((m) => m.id === res.body.id),
      'not in other channels',
    );
  });

  t.test('the same body rules as channel messages', async (t) => {
    const inOtherChannel = await post(owner, inRandom, 'elsewhere');
    const inFirst = await post(owner, inGeneral, 'here');
    const cases: [string, unknown, number][] = [
      ['empty content', { content: '' }, 400],
      ['whitespace-only content', { content: '  ' }, 400],
      ['missing content', {}, 400],
      ['numeric content', { content: 3 }, 400],
      [`${MAX_CONTENT_CHARS + 1} characters`, { content: 'z'.repeat(MAX_CONTENT_CHARS + 1) }, 400],
      [`${MAX_CONTENT_CHARS} characters`, { content: 'z'.repeat(MAX_CONTENT_CHARS) }, 201],
      ['reply_to another channel', { content: 'x', reply_to: inOtherChannel.id }, 400],
      ['reply_to non-UUID', { content: 'x', reply_to: 'abc' }, 400],
      ['reply_to the first channel', { content: 'x', reply_to: inFirst.id }, 201],
    ];
    for (const [what, body, status] of cases) {
      t.equal((await member.post(legacy, body)).status, status, what);
    }
  });

  t.test('the same paging rules', async (t) => {
    t.equal((await member.get(`${legacy}?limit=101`)).status, 400);
    t.equal((await member.get(`${legacy}?limit=1`)).body.length, 1);
  });
});
