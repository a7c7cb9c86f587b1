// Polls (issue 50): limits, votes (one answer or several), voters, live counts (throttled), the
// author ending one early, expiry, frozen results and the results message, send_polls; in
// channels, threads, DMs and group chats.
import t from 'tap';
import { befriend, crowd, must } from './helpers/community';
import { FakeClock, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

const HOUR = 60 * 60 * 1000;
const poll = (extra: Record<string, unknown> = {}) => ({
  question: 'Where do we meet?',
  answers: [{ text: 'the park', emoji: ':deciduous_tree:' }, { text: 'the library' }, { text: 'online' }],
  duration_hours: 24,
  ...extra,
});

t.test('polls: limits, votes, live counts, voters, ending early and at expiry, frozen results, send_polls, in every kind of room', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock, settings: { pollSweepMs: 50 } });
  t.teardown(server.close);
  const { owner, members, serverId, general, random } = await crowd(server, 3);
  const [ada, bob, cy] = members;
  const base = `/api/servers/${serverId}/channels/${general}/messages`;
  const stream = await openSocket(server.url, '/api/ws', { client: owner });
  await stream.event('ready');

  // Limits: each a clear 400; a poll may stand without text.
  const refusals: [unknown, RegExp][] = [
    [poll({ answers: [{ text: 'only one' }] }), /answers must be a list of 2 to 10/],
    [poll({ answers: Array.from({ length: 11 }, (_, i) => ({ text: `a${i}` })) }), /answers must be a list of 2 to 10/],
    [poll({ duration_hours: 0 }), /duration_hours must be an integer from 1 to 768/],
    [poll({ duration_hours: 769 }), /duration_hours must be an integer from 1 to 768/],
    [poll({ question: 'x'.repeat(301) }), /question must be at most 300/],
    [poll({ answers: [{ text: 'x'.repeat(56) }, { text: 'b' }] }), /text must be at most 55/],
    [poll({ answers: [{ text: 'a', emoji: 'not an emoji' }, { text: 'b' }] }), /single emoji/],
    ['yes', /poll must be an object/],
  ];
  for (const [body, reason] of refusals) {
    const res = await ada.post(base, { content: '', poll: body });
    t.equal(res.status, 400, String(reason));
    t.match(res.text, reason);
  }
  // Other keys are ignored, as in every request body (the document says so; the fuzzer holds it).
  const extra = poll({ colour: 'red', answers: [{ text: 'a', shade: 'blue' }, { text: 'b' }] });
  t.notOk('colour' in (await must(ada.post(base, { content: '', poll: extra }), 201)).body.poll, 'an unknown key of a poll is ignored');
  const made = (await must(ada.post(base, { content: '', poll: poll() }), 201)).body;
  t.match(made.poll, { question: 'Where do we meet?', allow_multiselect: false, ended: false, expires_at: '2026-01-02T00:00:00.000Z' });
  t.same(
    made.poll.answers.map((a: { text: string; emoji: string | null }) => [a.text, a.emoji]),
    [
      ['the park', '🌳'],
      ['the library', null],
      ['online', null],
    ],
  );
  const [park, library, online] = made.poll.answers.map((a: { answer_id: string }) => a.answer_id);
  const counts = (m: { poll: { results: { count: number }[] } }) => m.poll.results.map((r) => r.count);
  t.same(counts(made), [0, 0, 0]);
  const vote = (who: typeof ada, answer: string, method = 'PUT', messageId = made.id, at = base) =>
    who.request(method, `${at}/${messageId}/poll/answers/${answer}/votes/@me`);

  // One answer: a vote for another moves it; votes are idempotent; taking one back.
  t.same(counts((await must(vote(bob, park), 200)).body), [1, 0, 0]);
  t.same(counts((await must(vote(bob, park), 200)).body), [1, 0, 0], 'twice is once');
  t.same(counts((await must(vote(bob, library), 200)).body), [0, 1, 0], 'single choice: the vote moves');
  t.same(counts((await must(vote(bob, library, 'DELETE'), 200)).body), [0, 0, 0]);
  t.equal((await vote(bob, '00000000-0000-4000-8000-000000000000')).status, 404, 'no such answer');
  t.equal((await bob.request('PUT', `${base}/${made.id}/poll/answers/nope/votes/@me`)).status, 400);

  // Live, throttled: a burst of votes gives at most two events a second, the last with the counts as they stand.
  await Promise.all([vote(ada, park), vote(bob, park), vote(cy, online), vote(owner, library)]);
  const seen: { poll: { results: { count: number }[] } }[] = [];
  seen.push(await stream.event('poll_vote'));
  const more = await stream.drain(1500);
  for (const frame of more) if (frame && (frame as { event: string }).event === 'poll_vote') seen.push(frame as (typeof seen)[number]);
  t.ok(seen.length <= 2, `${seen.length} events for 4 votes`);
  t.same(counts(seen[seen.length - 1]), [2, 1, 1], 'the last event holds every vote');

  // Voters, paged by user id.
  const voters = (await must(owner.get(`${base}/${made.id}/poll/answers/${park}/voters`), 200)).body;
  t.same(voters.map((u: { user_id: string }) => u.user_id).sort(), [ada.userId, bob.userId].sort());
  const first = (await must(owner.get(`${base}/${made.id}/poll/answers/${park}/voters?limit=1`), 200)).body;
  const rest = (await must(owner.get(`${base}/${made.id}/poll/answers/${park}/voters?limit=1&after=${first[0].user_id}`), 200)).body;
  t.equal(first.length + rest.length, 2);
  t.not(first[0].user_id, rest[0].user_id);
  t.equal((await owner.get(`${base}/${made.id}/poll/answers/${park}/voters?limit=0`)).status, 400);

  // Multiselect: several answers at once.
  const multi = (await must(ada.post(base, { content: 'pick any', poll: poll({ allow_multiselect: true }) }), 201)).body;
  const [m1, m2] = multi.poll.answers.map((a: { answer_id: string }) => a.answer_id);
  await must(vote(bob, m1, 'PUT', multi.id), 200);
  t.same(counts((await must(vote(bob, m2, 'PUT', multi.id), 200)).body), [1, 1, 0], 'both stand');

  // Ending early: the author only; frozen; announced by a message replying to it.
  const refused = await bob.post(`${base}/${made.id}/poll/end`);
  t.equal(refused.status, 403);
  t.match(refused.text, /only its author/);
  const ended = (await must(ada.post(`${base}/${made.id}/poll/end`), 200)).body;
  t.match(ended.poll, { ended: true });
  t.same(counts(ended), [2, 1, 1]);
  const results = await stream.until((f) => f.event === 'message' && f.message.reply_to === made.id);
  t.match(results.message, { author_id: ada.userId, content: /“Where do we meet\?” has ended: “the park” won with 2 of 4 votes/ });
  t.equal((await vote(cy, park)).status, 409, 'no vote after the end');
  t.equal((await vote(ada, park, 'DELETE')).status, 409, 'nor taking one back');
  t.equal((await ada.post(`${base}/${made.id}/poll/end`)).status, 409);
  t.same(counts((await must(owner.get(`${base}?around=${made.id}&limit=1`), 200)).body[0]), [2, 1, 1], 'the results are frozen');

  // Expiry: the sweeper ends it when the clock passes its time.
  const short = (await must(ada.post(base, { content: '', poll: poll({ duration_hours: 1 }) }), 201)).body;
  await must(vote(bob, short.poll.answers[1].answer_id, 'PUT', short.id), 200);
  clock.advance(HOUR + 1);
  const over = await stream.until((f) => f.event === 'poll_vote' && f.message_id === short.id && f.poll.ended);
  t.same(counts(over), [0, 1, 0], 'the final counts');
  await stream.until((f) => f.event === 'message' && f.message.reply_to === short.id);
  t.equal((await vote(cy, short.poll.answers[0].answer_id, 'PUT', short.id)).status, 409);

  // send_polls: everyone's by default; a channel may take it away (a plain message still goes).
  await must(owner.put(`/api/servers/${serverId}/channels/${random}/overwrites/${serverId}`, { deny: ['send_polls'] }), 200);
  const denied = await ada.post(`/api/servers/${serverId}/channels/${random}/messages`, { content: 'vote!', poll: poll() });
  t.equal(denied.status, 403);
  t.match(denied.text, /permission to send polls in this channel/);
  await must(ada.post(`/api/servers/${serverId}/channels/${random}/messages`, { content: 'no poll' }), 201);
  const multipartPoll = new FormData();
  multipartPoll.append('content', 'x');
  multipartPoll.append('poll', JSON.stringify(poll()));
  t.equal((await ada.request('POST', base, multipartPoll)).status, 400, 'JSON only');

  // A thread, a DM and a group chat.
  const thread = (await must(ada.post(`/api/servers/${serverId}/channels/${general}/threads`, { name: 'plans' }), 201)).body;
  const inThread = `/api/servers/${serverId}/channels/${thread.id}/messages`;
  const threadPoll = (await must(ada.post(inThread, { content: '', poll: poll() }), 201)).body;
  await must(vote(bob, threadPoll.poll.answers[0].answer_id, 'PUT', threadPoll.id, inThread), 200);
  await befriend(ada, bob);
  await befriend(ada, cy);
  const dm = (await must(ada.post('/api/conversations/dm', { usernames: [bob.username] }), 201)).body.id;
  const group = (await must(ada.post('/api/conversations/group', { name: 'trip', usernames: [bob.username, cy.username] }), 201)).body.id;
  for (const id of [dm, group]) {
    const at = `/api/conversations/${id}/messages`;
    const p = (await must(ada.post(at, { content: 'where?', poll: poll() }), 201)).body;
    t.same(counts((await must(vote(bob, p.poll.answers[2].answer_id, 'PUT', p.id, at), 200)).body), [0, 0, 1], `a poll in a ${id === dm ? 'DM' : 'group'}`);
  }
  t.equal((await vote(owner, made.poll.answers[0].answer_id, 'PUT', made.id, `/api/conversations/${dm}/messages`)).status, 404, 'outsiders see nothing');
  stream.close();
});
