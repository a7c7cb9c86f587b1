import t from 'tap';
import { startServer } from './helpers/server';
import { type Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { openSocket } from './helpers/ws';

/**
 * Membership screening (issue 53): a server's rules and questions, set by manage_server holders;
 * whoever joins while it is on reads but does not write or react until they accept; the answers
 * give roles (and so open channels); turning it off lets everyone in. One server for the file.
 */
let owner: Client;
let manager: Client;
let plain: Client;
let outsider: Client;
let serverId: string;
let base: string;
let general: string;
let hidden: string;
let gamer: string;
let artist: string;
let mods: string;
let above: string;
let join: () => Promise<Client>;
let url: string;
let app: Awaited<ReturnType<typeof startServer>>['app'];

t.before(async () => {
  const server = await startServer();
  t.teardown(server.close);
  url = server.url;
  app = server.app;
  owner = await signUp(server.url);
  outsider = await signUp(server.url);
  serverId = (await must(owner.post('/api/servers', { name: uniqueName('screen') }), 201)).body.id;
  base = `/api/servers/${serverId}`;
  general = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  const token: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  join = async () => {
    const client = await signUp(server.url);
    await must(client.post(`/api/invites/${token}/accept`), 200);
    return client;
  };
  // Placed in this order (0 the top): above, managers, mods, gamer, artist, then below-mods-no-more.
  above = (await must(owner.post(`${base}/roles`, { name: 'above' }), 201)).body.id;
  const managers = (await must(owner.post(`${base}/roles`, { name: 'managers', permissions: ['manage_server', 'manage_roles'] }), 201)).body.id;
  mods = (await must(owner.post(`${base}/roles`, { name: 'mods', permissions: ['manage_messages'] }), 201)).body.id;
  gamer = (await must(owner.post(`${base}/roles`, { name: 'gamer' }), 201)).body.id;
  artist = (await must(owner.post(`${base}/roles`, { name: 'artist' }), 201)).body.id;
  manager = await join();
  await must(owner.put(`${base}/members/${manager.userId}/role`, { role: 'managers' }), 200);
  plain = await join();
  // A channel only gamers (and managers) see.
  hidden = (await must(owner.post(`${base}/channels`, { name: 'games' }), 201)).body.id;
  await must(owner.put(`${base}/channels/${hidden}/overwrites/${serverId}`, { deny: ['view_channel'] }), 200);
  await must(owner.put(`${base}/channels/${hidden}/overwrites/${gamer}`, { allow: ['view_channel'] }), 200);
  await must(owner.put(`${base}/channels/${hidden}/overwrites/${managers}`, { allow: ['view_channel'] }), 200);
});

const screening = (roleIds = [gamer]) => ({
  enabled: true,
  rules: ['Be kind.', 'No spam.'],
  questions: [
    {
      id: 'games',
      title: 'Which games do you play?',
      required: true,
      single_select: true,
      answers: [
        { id: 'yes', title: 'Video games', role_ids: roleIds, channel_ids: [hidden] },
        { id: 'no', title: 'None', role_ids: [], channel_ids: [] },
      ],
    },
    { id: 'art', title: 'Do you draw?', answers: [{ id: 'draw', title: 'I draw', role_ids: [artist] }] },
  ],
  default_channel_ids: [general],
});
const pendingIn = async (client: Client) =>
  (await must(owner.get(`${base}/members`), 200)).body.find((m: { user_id: string }) => m.user_id === client.userId).pending as boolean;

t.test('before anything is set, the onboarding is off and nobody is pending', async (t) => {
  const got = (await must(plain.get(`${base}/onboarding`), 200)).body;
  t.same(got, { server_id: serverId, enabled: false, rules: [], questions: [], default_channel_ids: [], pending: false });
  await must(outsider.get(`${base}/onboarding`), 404);
});

t.test('PUT …/onboarding: manage_server holders only, every field checked', async (t) => {
  t.equal((await plain.put(`${base}/onboarding`, screening())).status, 403, 'a member without manage_server: 403');
  t.equal((await outsider.put(`${base}/onboarding`, screening())).status, 404, 'an outsider: 404');
  const bad: [string, unknown, number, RegExp][] = [
    ['no enabled', { rules: ['x'] }, 400, /enabled/],
    ['21 rules', { enabled: true, rules: Array.from({ length: 21 }, () => 'rule') }, 400, /rules must hold at most 20/],
    ['a rule of 301 characters', { enabled: true, rules: ['x'.repeat(301)] }, 400, /rules\[0\] must be at most 300/],
    ['a blank rule', { enabled: true, rules: ['  '] }, 400, /rules\[0\] must not be empty/],
    ['on with nothing to accept', { enabled: true }, 400, /needs at least one rule or question/],
    ['a question without answers', { enabled: false, questions: [{ title: 'Q', answers: [] }] }, 400, /at least one answer/],
    ['two questions with one id', { enabled: false, questions: [0, 1].map(() => ({ id: 'q', title: 'Q', answers: [{ title: 'A' }] })) }, 400, /share one id/],
    [
      'a role of no server',
      { enabled: false, questions: [{ title: 'Q', answers: [{ title: 'A', role_ids: [crypto.randomUUID()] }] }] },
      400,
      /role_ids: no role/,
    ],
    ['a channel of no server', { enabled: false, default_channel_ids: [crypto.randomUUID()] }, 400, /default_channel_ids: no channel/],
    ['a role with a moderator flag', screening([mods]), 403, /moderator/],
    ["a role above the setter's highest", screening([above]), 403, /not below your highest role/],
  ];
  for (const [what, body, status, reason] of bad) {
    const res = await manager.put(`${base}/onboarding`, body);
    t.equal(res.status, status, `${what}: ${status}`);
    t.match(res.text, reason, what);
  }
  t.equal((await owner.put(`${base}/onboarding`, screening([mods]))).status, 403, 'not even the owner hands a moderator role to strangers');
  // Any power, not only a moderator's flag; and no role above a moderator role (its holders would
  // stand out of the moderators' reach): the rule of roles members take themselves.
  const shouter = (await must(owner.post(`${base}/roles`, { name: 'shouter', permissions: ['mention_everyone'] }), 201)).body.id;
  t.equal((await owner.put(`${base}/onboarding`, screening([shouter]))).status, 403, 'a role that may mention everyone is a power too');
  await must(owner.request('DELETE', `${base}/roles/${shouter}`), 204);
  const high = await owner.put(`${base}/onboarding`, screening([above]));
  t.equal(high.status, 403, 'a role above a moderator role: 403, even from the owner');
  t.match(high.text, /above a moderator role/);
  // Handing roles out is manage_roles' power too: manage_server alone sets rules, not roles.
  const rulesOnly = (await must(owner.post(`${base}/roles`, { name: 'rules-only', permissions: ['manage_server'] }), 201)).body.id;
  const editor = await join();
  await must(owner.put(`${base}/members/${editor.userId}/role`, { role: 'rules-only' }), 200);
  t.equal((await editor.put(`${base}/onboarding`, screening())).status, 403, 'manage_server without manage_roles: no answer that gives a role');
  await must(editor.put(`${base}/onboarding`, { enabled: false, rules: ['Be kind.'] }), 200);
  await must(owner.request('DELETE', `${base}/roles/${rulesOnly}`), 204);
  const set = (await must(manager.put(`${base}/onboarding`, screening(), { 'X-Audit-Log-Reason': 'opening day' }), 200)).body;
  t.equal(set.enabled, true);
  t.same(set.rules, ['Be kind.', 'No spam.']);
  t.same(
    set.questions.map((q: { id: string; required: boolean; single_select: boolean }) => [q.id, q.required, q.single_select]),
    [
      ['games', true, true],
      ['art', false, false],
    ],
  );
  t.match(set.questions[1].answers[0], { id: 'draw', role_ids: [artist], channel_ids: [] }, 'left-out lists are empty');
  const entry = (await must(owner.get(`${base}/audit-log`), 200)).body[0];
  t.match(entry, { action: 'onboarding_update', actor: { user_id: manager.userId }, reason: 'opening day', changes: { enabled: { from: false, to: true } } });
  t.equal(await pendingIn(plain), false, 'who was in before screening began is not pending');
});

t.test('a new member is pending: reads, does not post, react or type, until they accept', async (t) => {
  const message = (await must(owner.post(`${base}/channels/${general}/messages`, { content: 'welcome' }), 201)).body.id;
  const newcomer = await join();
  t.equal(await pendingIn(newcomer), true, 'the member list marks them');
  const got = (await must(newcomer.get(`${base}/onboarding`), 200)).body;
  t.equal(got.pending, true);
  t.same(got.questions[0].answers[0].channel_ids, [], 'a channel they do not see is not named to them');
  t.same(got.default_channel_ids, [general]);
  await must(newcomer.get(`${base}/channels/${general}/messages`), 200);
  const post = await newcomer.post(`${base}/channels/${general}/messages`, { content: 'hi' });
  t.equal(post.status, 403);
  t.match(post.text, /accept the server's rules first/);
  t.equal((await newcomer.put(`${base}/channels/${general}/messages/${message}/reactions/${encodeURIComponent('👍')}`)).status, 403, 'no reaction');
  t.equal((await newcomer.post(`${base}/channels/${general}/typing`)).status, 403, 'no typing');
  t.equal((await newcomer.post(`${base}/invites`)).status, 403, 'no invite: a newcomer held back does not bring others in');

  const accept = (answers: unknown) => newcomer.post(`${base}/onboarding/accept`, { answers });
  const refusals: [string, unknown, RegExp][] = [
    ['a required question unanswered', {}, /needs an answer/],
    ['two answers to a single-select question', { games: ['yes', 'no'] }, /takes one answer/],
    ['an unknown question', { games: ['yes'], nope: ['x'] }, /no question/],
    ['an unknown answer', { games: ['maybe'] }, /no answer/],
  ];
  for (const [what, answers, reason] of refusals) {
    const res = await accept(answers);
    t.equal(res.status, 400, what);
    t.match(res.text, reason, what);
  }
  t.equal((await newcomer.get(`${base}/channels/${hidden}/messages`)).status, 404, 'the gamers’ channel is hidden before');
  const done = (await must(accept({ games: ['yes'], art: ['draw'] }), 200)).body;
  t.same(done.role_ids.sort(), [gamer, artist].sort(), "the answers' roles are given");
  t.same(done.channel_ids, [general, hidden], 'the default channel, then the one the answer opened');
  t.equal(done.member.pending, false);
  t.same(done.member.roles.sort(), ['artist', 'gamer']);
  await must(newcomer.get(`${base}/channels/${hidden}/messages`), 200);
  await must(newcomer.post(`${base}/channels/${hidden}/messages`, { content: 'gg' }), 201);
  t.equal(await pendingIn(newcomer), false);
  t.match((await accept({ games: ['yes'] })).text, /not waiting/, 'accepting twice: 400');
  const entry = (await must(owner.get(`${base}/audit-log`), 200)).body[0];
  t.match(entry, {
    action: 'onboarding_accept',
    actor: { user_id: newcomer.userId },
    target_id: newcomer.userId,
    changes: { answers: ['Video games', 'I draw'] },
  });
});

t.test('powers are never pending; turning screening off lets every pending member in', async (t) => {
  const promoted = await join();
  t.equal(await pendingIn(promoted), true);
  await must(owner.put(`${base}/members/${promoted.userId}/role`, { role: 'mods' }), 200);
  t.equal(await pendingIn(promoted), false, "a moderator's role ends the wait");
  await must(promoted.post(`${base}/channels/${general}/messages`, { content: 'on duty' }), 201);
  const botName = uniqueName('bot');
  await must(owner.post('/api/bots', { name: botName }), 201);
  await must(owner.post(`${base}/bots`, { username: botName }), 200);
  const botRecord = (await must(owner.get(`${base}/members`), 200)).body.find((m: { username: string }) => m.username === botName);
  t.equal(botRecord.pending, false, 'a bot, added by a manager, is never pending');

  const waiting = await join();
  t.equal((await waiting.post(`${base}/channels/${general}/messages`, { content: 'hi' })).status, 403);
  const socket = await openSocket(url, '/api/ws', { client: plain });
  t.teardown(() => socket.close());
  await socket.event('ready');
  const off = (await must(owner.put(`${base}/onboarding`, { ...screening(), enabled: false }), 200)).body;
  t.equal(off.enabled, false);
  t.equal(await pendingIn(waiting), false);
  t.same(await socket.event('onboarding_updated'), { event: 'onboarding_updated', server_id: serverId, enabled: false }, 'the members hear of it');
  t.match(await socket.until((f) => f.event === 'member_updated' && f.member.user_id === waiting.userId), { member: { pending: false } }, 'and who was let in');
  await must(waiting.post(`${base}/channels/${general}/messages`, { content: 'in at last' }), 201);
  t.match((await must(owner.get(`${base}/audit-log`), 200)).body[0], {
    action: 'onboarding_update',
    changes: { enabled: { from: true, to: false }, let_in: 1 },
  });
  const later = await join();
  t.equal(await pendingIn(later), false, 'who joins while it is off is not pending');
});

t.test('join-rate protection puts a member in screening with markPending, even with screening off; the stored questions still apply', async (t) => {
  const held = await join();
  app.db.transaction(() => app.onboarding.markPending(serverId, held.userId))();
  t.equal(await pendingIn(held), true);
  t.equal((await must(held.get(`${base}/onboarding`), 200)).body.pending, true, 'their onboarding view says so');
  t.equal((await held.post(`${base}/channels/${general}/messages`, { content: 'hi' })).status, 403);
  t.match((await held.post(`${base}/onboarding/accept`, {})).text, /needs an answer/, 'the required question is still asked');
  const done = (await must(held.post(`${base}/onboarding/accept`, { answers: { games: ['no'] } }), 200)).body;
  t.same(done.role_ids, [], 'an answer that gives no role');
  await must(held.post(`${base}/channels/${general}/messages`, { content: 'in' }), 201);
});
