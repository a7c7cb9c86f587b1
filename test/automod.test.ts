import crypto from 'node:crypto';
import t from 'tap';
import { FakeClock, startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * AutoMod (issue 53): a server's rules, who may set them, what each trigger catches and each
 * action does, for members, bots and webhooks, on edits too; exemptions; the audit log. One
 * server for the whole file, on a clock the test moves (the spam trigger and timeouts count time).
 */
const clock = new FakeClock();
let owner: Client;
let mod: Client;
let trusted: Client;
let member: Client;
let outsider: Client;
let bot: Client;
let botAuth: Record<string, string>;
let base: string;
let rules: string;
let general: string;
let alerts: string;
let free: string;
let third: string;
let trustedRole: string;
let hookPath: string;
let discordHook: string;
let fresh: () => Promise<Client>;

const messagesIn = (channel: string) => `${base}/channels/${channel}/messages`;
const say = (client: Client, content: string, channel = general, headers?: Record<string, string>) => client.post(messagesIn(channel), { content }, headers);
const patch = (client: Client, path: string, body: unknown) => client.request('PATCH', path, body);
const contents = async (channel: string) =>
  ((await must(owner.get(`${messagesIn(channel)}?limit=100`), 200)).body as { content: string }[]).map((m) => m.content);
/** The alerts in the alert channel, newest first (they are written just after the answer to the message they judge). */
async function alertsNow(count: number): Promise<any[]> {
  for (let i = 0; i < 200; i++) {
    const list = (await must(owner.get(`${messagesIn(alerts)}?limit=100`), 200)).body as any[];
    if (list.length >= count) return list;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`fewer than ${count} alerts`);
}
const audit = async () => (await must(owner.get(`${base}/audit-log?limit=100`), 200)).body as any[];

t.before(async () => {
  const server = await startServer({ clock });
  t.teardown(server.close);
  [owner, mod, trusted, member, outsider] = await Promise.all(Array.from({ length: 5 }, () => signUp(server.url)));
  const serverId = (await must(owner.post('/api/servers', { name: uniqueName('automod') }), 201)).body.id as string;
  base = `/api/servers/${serverId}`;
  rules = `${base}/automod/rules`;
  general = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  alerts = (await must(owner.post(`${base}/channels`, { name: 'mod-alerts' }), 201)).body.id;
  free = (await must(owner.post(`${base}/channels`, { name: 'free' }), 201)).body.id;
  third = (await must(owner.post(`${base}/channels`, { name: 'third' }), 201)).body.id;
  // The alert channel is for moderators: everyone else does not see it.
  await must(owner.put(`${base}/channels/${alerts}/overwrites/${serverId}`, { deny: ['view_channel'] }), 200);
  const token: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const join = (c: Client) => must(c.post(`/api/invites/${token}/accept`), 200);
  await Promise.all([mod, trusted, member].map(join));
  fresh = async () => {
    const c = await signUp(server.url);
    await join(c);
    return c;
  };
  const mods = (await must(owner.post(`${base}/roles`, { name: 'mods', permissions: ['manage_server'] }), 201)).body.id;
  await must(owner.put(`${base}/channels/${alerts}/overwrites/${mods}`, { allow: ['view_channel'] }), 200);
  trustedRole = (await must(owner.post(`${base}/roles`, { name: 'trusted' }), 201)).body.id;
  await must(owner.put(`${base}/members/${mod.userId}/role`, { role: 'mods' }), 200);
  await must(owner.put(`${base}/members/${trusted.userId}/role`, { role: 'trusted' }), 200);
  const maker = await signUp(server.url);
  const made = (await must(maker.post('/api/bots', { name: `modbot${process.pid % 1000}` }), 201)).body;
  await must(owner.post(`${base}/bots`, { username: made.username }), 200);
  bot = new Client(server.url);
  botAuth = { authorization: `Bot ${made.token}` };
  const hook = (await must(owner.post(`${base}/channels/${general}/webhooks`, { name: 'CI' }), 201)).body;
  hookPath = (hook.url as string).slice(server.url.length);
  discordHook = `/api/v10/webhooks/${hook.id}/${hook.token}`;
});

const keywordRule = () => ({
  name: 'No slurs',
  trigger: { type: 'keyword', keyword_filter: ['badword', 'scam*', '*coin', 'two words'], allow_list: ['scampi'] },
  actions: [
    { type: 'block_message', custom_message: 'Please keep it civil here.' },
    { type: 'send_alert_message', channel_id: alerts },
  ],
  exempt_role_ids: [] as string[],
  exempt_channel_ids: [] as string[],
});

t.test('rules are set by holders of manage_server, the owner and full administrators; others are refused', async (t) => {
  t.equal((await member.get(rules)).status, 403, 'a plain member may not list them');
  t.equal((await member.post(rules, keywordRule())).status, 403, 'nor make one');
  t.equal((await outsider.get(rules)).status, 404, 'someone outside the server: 404');
  t.equal((await new Client(owner.base).get(rules)).status, 401, 'signed out: 401');
  const made = (await must(mod.post(rules, { ...keywordRule(), name: 'by mod' }), 201)).body;
  t.match(made, { name: 'by mod', enabled: true, creator_id: mod.userId, trigger: { type: 'keyword', allow_list: ['scampi'] } });
  t.same(
    (await must(mod.get(rules), 200)).body.map((r: any) => r.id),
    [made.id],
    'a manage_server holder lists them',
  );
  t.equal((await member.request('PATCH', `${rules}/${made.id}`, { enabled: false })).status, 403, 'a member may not change one');
  t.equal((await member.delete(`${rules}/${made.id}`)).status, 403, 'nor delete one');
  await must(mod.delete(`${rules}/${made.id}`), 204);
  t.equal((await mod.delete(`${rules}/${made.id}`)).status, 404, 'a deleted rule is gone');
  const entries = await audit();
  t.ok(
    entries.some((e) => e.action === 'automod_rule_create' && e.target_id === made.id && e.actor.user_id === mod.userId),
    'the creation is audited',
  );
  t.ok(
    entries.some((e) => e.action === 'automod_rule_delete' && e.target_id === made.id),
    'so is the deletion',
  );
});

t.test('bad rules get a clear 400', async (t) => {
  const cases: [string, unknown][] = [
    ['no trigger', { name: 'x', actions: [{ type: 'block_message' }] }],
    ['an unknown trigger', { name: 'x', trigger: { type: 'regex', regex_patterns: ['(a+)+$'] }, actions: [{ type: 'block_message' }] }],
    ['no keywords', { name: 'x', trigger: { type: 'keyword', keyword_filter: [] }, actions: [{ type: 'block_message' }] }],
    ['a keyword of 61 characters', { name: 'x', trigger: { type: 'keyword', keyword_filter: ['a'.repeat(61)] }, actions: [{ type: 'block_message' }] }],
    [
      '1 001 keywords',
      { name: 'x', trigger: { type: 'keyword', keyword_filter: Array.from({ length: 1001 }, (_, i) => `w${i}`) }, actions: [{ type: 'block_message' }] },
    ],
    ['a star inside a keyword', { name: 'x', trigger: { type: 'keyword', keyword_filter: ['ba*d'] }, actions: [{ type: 'block_message' }] }],
    ['a keyword of stars', { name: 'x', trigger: { type: 'keyword', keyword_filter: ['**'] }, actions: [{ type: 'block_message' }] }],
    ['a mention limit of 51', { name: 'x', trigger: { type: 'mention_spam', mention_total_limit: 51 }, actions: [{ type: 'block_message' }] }],
    ['a domain that is none', { name: 'x', trigger: { type: 'links', allow_list: ['not a domain'] }, actions: [{ type: 'block_message' }] }],
    ['no actions', { name: 'x', trigger: { type: 'spam' }, actions: [] }],
    ['an unknown action', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'ban' }] }],
    ['one action twice', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'block_message' }, { type: 'block_message' }] }],
    ['a timeout over 28 days', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'timeout', duration_seconds: 2419201 }] }],
    ['an alert channel of no server', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'send_alert_message', channel_id: crypto.randomUUID() }] }],
    ['a reason over 150 characters', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'block_message', custom_message: 'r'.repeat(151) }] }],
    ['an unknown exempt role', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'block_message' }], exempt_role_ids: [crypto.randomUUID()] }],
    ['an unknown exempt channel', { name: 'x', trigger: { type: 'spam' }, actions: [{ type: 'block_message' }], exempt_channel_ids: ['general'] }],
    ['no name', { name: '', trigger: { type: 'spam' }, actions: [{ type: 'block_message' }] }],
  ];
  for (const [why, body] of cases) {
    const res = await owner.post(rules, body);
    t.equal(res.status, 400, `${why}: 400 (${res.text})`);
  }
  const spam = (await must(owner.post(rules, { name: 'spam', trigger: { type: 'spam' }, actions: [{ type: 'block_message' }], enabled: false }), 201)).body;
  const again = await owner.post(rules, { name: 'spam 2', trigger: { type: 'spam' }, actions: [{ type: 'block_message' }] });
  t.equal(again.status, 400, 'a second spam rule: 400');
  t.match(again.text, /at most 1 spam rule/);
  const change = await patch(owner, `${rules}/${spam.id}`, { trigger: { type: 'links' } });
  t.equal(change.status, 400, "a rule's trigger type does not change");
  await must(owner.delete(`${rules}/${spam.id}`), 204);
});

t.test('a keyword rule: whole words in any case, wildcards, the allow list; blocked with its reason, alerted, audited', async (t) => {
  const rule = (await must(owner.post(rules, { ...keywordRule(), exempt_role_ids: [trustedRole], exempt_channel_ids: [free] }), 201)).body;
  const blocked = await say(member, 'you are a BadWord!');
  t.equal(blocked.status, 403, 'the word, in another case, is blocked');
  t.equal(blocked.text.trim(), 'Please keep it civil here.', "the author's answer is the rule's reason");
  t.notOk((await contents(general)).includes('you are a BadWord!'), 'nothing was written');
  for (const text of ['badwords are words', 'scampi tonight', 'subscam']) await must(say(member, text), 201);
  for (const text of ['a scammer', 'bitcoin now', 'say two  words', 'say Two Words!']) {
    const res = await say(member, text);
    t.equal(res.status, text === 'say two  words' ? 201 : 403, `${JSON.stringify(text)}: ${res.status}`);
  }
  const [alert] = await alertsNow(1);
  t.equal(alert.author.display_name, 'AutoMod', 'the alert is written by AutoMod');
  t.equal(alert.embeds[0].description, 'say Two Words!', 'it shows what was said');
  t.match(JSON.stringify(alert.embeds[0].fields), new RegExp(`@${member.username}.*#general.*No slurs`), 'who, where, which rule');
  t.match(alert.embeds[0].footer.text, new RegExp(`user:${member.userId} channel:${general}`), 'and the ids its quick actions use');
  t.equal((await member.get(`${messagesIn(alerts)}`)).status, 404, 'a member does not see the alert channel');

  t.equal((await say(trusted, 'badword')).status, 201, 'a role the rule exempts');
  t.equal((await say(member, 'badword', free)).status, 201, 'a channel the rule exempts');
  const thread = (await must(member.post(`${base}/channels/${free}/threads`, { name: 'side talk' }), 201)).body.id;
  t.equal((await say(member, 'badword', thread)).status, 201, 'and its threads');
  t.equal((await say(owner, 'badword')).status, 201, 'the owner');
  t.equal((await say(mod, 'badword')).status, 201, 'a holder of manage_server');

  const fine = (await must(say(member, 'all fine'), 201)).body;
  const edit = await member.put(`${messagesIn(general)}/${fine.id}`, { content: 'all badword' });
  t.equal(edit.status, 403, 'an edit is judged too');
  t.equal(edit.text.trim(), 'Please keep it civil here.');
  t.ok((await contents(general)).includes('all fine') && !(await contents(general)).includes('all badword'), 'the message stays as it was');
  const audited = async () => (await audit()).filter((e) => e.action === 'automod_block').length;
  const blocksBefore = await audited();
  const notTheirs = await bot.put(`${messagesIn(general)}/${fine.id}`, { content: 'all badword' }, botAuth);
  t.equal(notTheirs.status, 403);
  t.match(notTheirs.text, /only the author/, "someone else's edit is refused as not theirs, not judged");
  t.equal(await audited(), blocksBefore, 'and AutoMod does not act on it');

  const byBot = await say(bot, 'badword from a bot', general, botAuth);
  t.equal(byBot.status, 403, "a bot's message is judged as a member's");
  const byHook = await new Client(owner.base).post(hookPath, { content: 'badword from CI' });
  t.equal(byHook.status, 403, "so is a webhook's");
  t.equal(byHook.text.trim(), 'Please keep it civil here.');
  t.equal((await new Client(owner.base).post(hookPath, { content: 'build passed' })).status, 204, 'a clean one passes');
  const anyone = new Client(owner.base);
  const hooked = (await must(anyone.post(`${discordHook}?wait=true`, { content: 'deployed' }), 200)).body;
  t.equal(
    (await anyone.request('PATCH', `${discordHook}/messages/${hooked.id}`, { content: 'deployed badword' })).status,
    403,
    "a webhook's edit is judged too",
  );
  t.ok((await contents(general)).includes('deployed'), 'and its message stays as it was');
  const forum = (await must(owner.post(`${base}/channels`, { name: 'questions', type: 'forum' }), 201)).body.id;
  t.equal((await member.post(`${base}/channels/${forum}/threads`, { name: 'help', content: 'a badword question' })).status, 403, 'a forum post is judged');
  t.same((await must(owner.get(`${base}/channels/${forum}/threads`), 200)).body, [], 'and no post was made');

  const entries = (await audit()).filter((e) => e.action === 'automod_block');
  t.ok(entries.length >= 7, `each block is audited (${entries.length})`);
  t.match(
    entries.find((e) => e.target_id === member.userId && e.changes.channel_id === general),
    { target_kind: 'user', changes: { rule_id: rule.id, channel_id: general } },
  );
  t.ok(
    entries.every((e) => !JSON.stringify(e).includes('BadWord')),
    'the audit log keeps no content (its readers may not see the channel)',
  );
  t.ok(
    (await audit()).some((e) => e.action === 'automod_alert'),
    'each alert too',
  );

  await must(patch(owner, `${rules}/${rule.id}`, { enabled: false }), 200);
  t.equal((await say(member, 'badword')).status, 201, 'a disabled rule judges nothing (the change is seen at once)');
  await must(owner.delete(`${rules}/${rule.id}`), 204);
});

t.test('mention spam: more than the limit of distinct mentions; an alert alone lets the message through, with its id', async (t) => {
  const rule = (
    await must(
      owner.post(rules, {
        name: 'mentions',
        trigger: { type: 'mention_spam', mention_total_limit: 2 },
        actions: [{ type: 'send_alert_message', channel_id: alerts }],
      }),
      201,
    )
  ).body;
  const before = (await alertsNow(0)).length;
  await must(say(member, '@anna @bert @anna'), 201);
  t.equal((await alertsNow(0)).length, before, 'two distinct mentions are within the limit');
  const sent = (await must(say(member, '@anna @bert @carl'), 201)).body;
  const [alert] = await alertsNow(before + 1);
  t.match(alert.embeds[0].footer.text, `message:${sent.id}`, 'the alert names the message (for its delete button)');
  t.match(alert.embeds[0].title, /flagged/);
  await must(owner.delete(`${rules}/${rule.id}`), 204);
});

t.test('links: any link outside the allowed domains (subdomains included); invite links to other servers', async (t) => {
  const links = (
    await must(owner.post(rules, { name: 'links', trigger: { type: 'links', allow_list: ['example.com'] }, actions: [{ type: 'block_message' }] }), 201)
  ).body;
  await must(say(member, 'see https://docs.example.com/page'), 201);
  await must(say(member, 'no link at all: example.org is a name'), 201);
  for (const text of ['https://evil.test/x', 'look: www.evil.test', 'http://example.com.evil.test/']) {
    const res = await say(member, text);
    t.equal(res.status, 403, `${text}: blocked`);
    t.match(res.text, /AutoMod rule “links”/, 'the default reason names the rule');
  }
  await must(owner.delete(`${rules}/${links.id}`), 204);

  await must(owner.post(rules, { name: 'invites', trigger: { type: 'invite_links' }, actions: [{ type: 'block_message' }] }), 201);
  const ours: string = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const elsewhere = (await must(outsider.post('/api/servers', { name: uniqueName('other') }), 201)).body.id;
  const theirs: string = (await must(outsider.post(`/api/servers/${elsewhere}/invites`), 201)).body.token;
  await must(say(member, `bring a friend: ${owner.base}/invites/${ours}`), 201);
  t.equal((await say(member, `come over: ${owner.base}/invites/${theirs}`)).status, 403, "another server's invite link");
  t.equal((await say(member, `code ${theirs}`)).status, 403, "another server's invite token alone");
  t.equal((await say(member, 'join discord.gg/abcdef')).status, 403, 'a Discord invite');
  t.equal((await say(member, 'https://discord.com/invite/abc')).status, 403, 'in its other form');
  for (const r of (await must(owner.get(rules), 200)).body) await must(owner.delete(`${rules}/${r.id}`), 204);
});

t.test('timeout: the author is timed out through the moderators’ path, audited, and may write again after it', async (t) => {
  const victim = await fresh();
  await must(
    owner.post(rules, {
      name: 'timeouts',
      trigger: { type: 'keyword', keyword_filter: ['timeoutword'] },
      actions: [{ type: 'block_message' }, { type: 'timeout', duration_seconds: 60 }],
    }),
    201,
  );
  t.equal((await say(victim, 'timeoutword')).status, 403);
  const refused = await say(victim, 'hello');
  t.equal(refused.status, 403, 'timed out: even a clean message waits');
  t.match(refused.text, /timed out/);
  const member = (await must(owner.get(`${base}/members`), 200)).body.find((m: any) => m.user_id === victim.userId);
  t.ok(member.timeout_until, 'the member shows a timeout');
  const entry = (await audit()).find((e) => e.action === 'member_timeout' && e.target_id === victim.userId);
  t.match(entry, { actor: { username: /^automod\./ }, reason: 'AutoMod: timeouts' }, 'audited as AutoMod’s timeout');
  clock.advance(61_000);
  await must(say(victim, 'hello again'), 201);
  for (const r of (await must(owner.get(rules), 200)).body) await must(owner.delete(`${rules}/${r.id}`), 204);
});

t.test('spam: one text in three channels, or more than five messages in five seconds; not on edits nor from webhooks', async (t) => {
  const spammer = await fresh();
  await must(owner.post(rules, { name: 'spam', trigger: { type: 'spam' }, actions: [{ type: 'block_message', custom_message: 'Slow down.' }] }), 201);
  clock.advance(10_000);
  await must(say(spammer, 'buy now'), 201);
  await must(say(spammer, 'buy now', free), 201);
  const third1 = await say(spammer, 'Buy now', third);
  t.equal(third1.status, 403, 'the same text in a third channel');
  t.equal(third1.text.trim(), 'Slow down.');
  clock.advance(70_000);
  for (let i = 1; i <= 5; i++) await must(say(spammer, `line ${i}`), 201);
  t.equal((await say(spammer, 'line 6')).status, 403, 'a sixth message within five seconds');
  clock.advance(6_000);
  const kept = (await must(say(spammer, 'calm'), 201)).body;
  for (let i = 0; i < 6; i++) await must(spammer.put(`${messagesIn(general)}/${kept.id}`, { content: `calm ${i}` }), 200);
  for (let i = 0; i < 7; i++) t.equal((await new Client(owner.base).post(hookPath, { content: `deploy ${i}` })).status, 204, `webhook message ${i}`);
  for (const r of (await must(owner.get(rules), 200)).body) await must(owner.delete(`${rules}/${r.id}`), 204);
  t.ok(
    (await audit()).some((e) => e.action === 'automod_rule_delete'),
    'each deletion audited',
  );
});
