// Messages of one event-loop turn commit together (src/core/group-commit.ts): each still stands alone.
import t from 'tap';
import { HttpError } from '../src/core/http/errors';
import { crowd, must } from './helpers/community';
import { startServer } from './helpers/server';

t.test('a burst of messages: all committed, in order, a bad one refused alone', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const url = `/api/servers/${c.serverId}/channels/${c.general}/messages`;
  const unknown = '00000000-0000-4000-8000-000000000000';
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => c.owner.post(url, i === 13 ? { content: 'bad reply', reply_to: unknown } : { content: `burst ${i}` })),
  );
  t.equal(answers[13].status, 400, 'the one with a bad reply_to is refused');
  t.match(answers[13].text, /reply_to must name a message in this channel/);
  t.ok(
    answers.every((a, i) => i === 13 || a.status === 201),
    'the 29 others are created',
  );
  const history = (await must(c.owner.get(`${url}?limit=100`), 200)).body;
  t.equal(history.length, 29, 'nothing of the refused one was written');
  t.same(
    history.map((m: { id: string }) => m.id).sort(),
    answers
      .filter((_, i) => i !== 13)
      .map((a) => a.body.id)
      .sort(),
    'each answer is a committed message',
  );
  const bySeq = history.map((m: { content: string }) => m.content).reverse();
  t.same(
    bySeq,
    [...bySeq].sort((a: string, b: string) => Number(a.split(' ')[1]) - Number(b.split(' ')[1])),
    'stored in arrival order',
  );
});

t.test('a room deleted before its batch commits: 404, not 500', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 0);
  const { messages, users, db } = server.app;
  const owner = users.byId(c.owner.userId)!;
  const container = { kind: 'channel' as const, id: c.random, serverId: c.serverId };
  const pending = messages.create(container, owner, { content: 'too late', replyTo: null, files: [] }, { mayMentionEveryone: false });
  // The batch runs on the next turn: the channel goes first.
  db.prepare('DELETE FROM channels WHERE id = ?').run(c.random);
  const err = await pending.then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof HttpError, 'an HttpError');
  t.equal((err as HttpError).status, 404);
  t.match((err as HttpError).message, /channel not found/);
});
