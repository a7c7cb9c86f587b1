import crypto from 'node:crypto';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Client, signUp } from './helpers/client';
import { community, must } from './helpers/community';
import { startServer } from './helpers/server';
import { type Format, readFixture } from './helpers/webhook-payloads';
import { openSocket } from './helpers/ws';

/**
 * Bots and webhooks (issue 34): webhooks made and managed by a server's owner and full
 * administrators, called in Discord's, Slack's and GitHub's formats; what members see through
 * the API and their streams; bad calls refused with nothing written; bot accounts signing in
 * with `Authorization: Bot <token>`.
 */
/** A payload of the formats' own tests (test/webhooks/<format>/fixtures), as JSON reads it. */
const fixture = (format: Format, name: string): any => readFixture(format, name);

/** A call to a webhook URL, as a tool makes it: no cookie, no Origin. */
async function call(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    headers: res.headers,
    body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined,
  };
}

t.test('webhooks', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner, admin, member } = c.clients;
  const channel: string = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const hooks = `${c.base}/channels/${channel}/webhooks`;
  const messages = async () => (await must(member.get(`${c.base}/channels/${channel}/messages?limit=100`), 200)).body as any[];

  const made = (await must(owner.post(hooks, { name: 'CI' }), 201)).body;
  t.match(made, { name: 'CI', channel_id: channel, server_id: c.serverId, github_secret_set: false, created_by: { user_id: owner.userId } });
  t.match(made.token, /^[A-Za-z0-9_-]{43}$/, 'a token of 32 random bytes');
  t.equal(made.url, `${server.url}/api/webhooks/${made.id}/${made.token}`, 'the URL carries it');
  const url: string = made.url;

  await t.test('who may manage them', async (t) => {
    t.equal((await member.post(hooks, { name: 'x' })).status, 403, 'a member may not make one');
    t.equal((await member.get(hooks)).status, 403, 'nor list them');
    const listed = (await must(admin.get(hooks), 200)).body;
    t.same(
      listed.map((h: any) => h.id),
      [made.id],
      'a full administrator lists them',
    );
    t.notOk('token' in listed[0] || 'url' in listed[0], 'listed without the token');
    t.equal((await owner.post(hooks, { name: '' })).status, 400, 'a name is needed');
    t.equal((await member.request('PATCH', `/api/webhooks/${made.id}`, { name: 'y' })).status, 403);
    const actions = (await must(owner.get(`${c.base}/audit-log`), 200)).body.map((e: any) => e.action);
    t.ok(actions.includes('webhook_create'), 'its making is in the audit log');
  });

  await t.test("Discord's payload, with every embed field", async (t) => {
    const stream = await openSocket(server.url, '/api/ws', { client: member });
    await stream.event('ready');
    const payload = fixture('discord', 'full');
    const posted = await call(`${url}?wait=true`, payload);
    t.equal(posted.status, 200, posted.text);
    const message = posted.body;
    t.equal(message.webhook_id, made.id);
    t.equal(message.author.bot, true, 'the author is marked as a bot');
    t.equal(message.author.display_name, payload.username ?? 'CI', "the payload's username is shown");
    t.equal(message.embeds.length, payload.embeds.length, 'every embed kept');
    const embed = message.embeds[0];
    const given = payload.embeds[0];
    t.equal(embed.title, given.title);
    t.equal(embed.color, given.color);
    t.same(
      embed.fields.map((f: any) => f.name),
      given.fields.map((f: any) => f.name),
    );
    t.equal(embed.footer.text, given.footer.text);
    t.equal(embed.author.name, given.author.name);
    t.equal(embed.image.url, given.image.url);
    t.notOk('icon_url' in embed.footer, 'remote icons are dropped');
    const live = await stream.until((f) => f.event === 'message' && f.message.id === message.id);
    t.same(live.message.embeds, message.embeds, 'members get it live, with its embeds');
    t.equal((await call(url, { content: 'plain' })).status, 204, 'without wait: 204');
    const results = (await must(member.get(`/api/search?q=${encodeURIComponent(given.fields[0].value.split(/\s+/)[0])}`), 200)).body.results;
    t.ok(
      results.some((r: any) => r.id === message.id),
      'embed text is found by search',
    );
    t.equal((await member.put(`${c.base}/channels/${channel}/messages/${message.id}`, { content: 'edited' })).status, 403, 'members cannot edit it');
    t.equal((await owner.put(`${c.base}/channels/${channel}/messages/${message.id}`, { content: 'edited' })).status, 403, 'nor can the owner');
    stream.close();
  });

  await t.test('multipart: payload_json and files, checked as uploads', async (t) => {
    const form = new FormData();
    form.set('payload_json', JSON.stringify({ content: 'the build log', username: 'CI' }));
    form.set('files[0]', new Blob(['all green\n'], { type: 'text/plain' }), 'build.log');
    const res = await fetch(`${url}?wait=true`, { method: 'POST', body: form });
    t.equal(res.status, 200, 'posted');
    const message = (await res.json()) as any;
    t.equal(message.content, 'the build log');
    t.same(
      message.attachments.map((a: any) => a.name),
      ['build.log'],
      'with its file',
    );
    const file = await member.get(message.attachments[0].url);
    t.equal(file.text, 'all green\n', 'members download it');
    const bad = new FormData();
    bad.set('payload_json', '{"content": ');
    bad.set('files[0]', new Blob(['x']), 'x.txt');
    t.equal((await fetch(url, { method: 'POST', body: bad })).status, 400, 'a malformed payload_json is refused, its file dropped');
    const reply = (await must(member.post(`${c.base}/channels/${channel}/messages`, { content: 'thanks', reply_to: message.id }), 201)).body;
    t.equal(reply.reply_preview.author.bot, true, 'a reply to it names a bot');
    t.equal(reply.reply_preview.author.display_name, 'CI', 'under the name it posted with');
  });

  await t.test('allowed_mentions decides who is notified', async (t) => {
    const quiet = (await call(`${url}?wait=true`, { content: `hello @${member.username}`, allowed_mentions: { parse: [] } })).body;
    t.same(quiet.mentions, [], 'parse [] mentions nobody');
    const loud = (await call(`${url}?wait=true`, { content: `hello @${member.username}` })).body;
    t.same(loud.mentions, [member.userId], 'by default a name mentions');
    const named = (await call(`${url}?wait=true`, { content: `hello @${member.username}`, allowed_mentions: { parse: [], users: [member.userId] } })).body;
    t.same(named.mentions, [member.userId], 'or when named in users');
  });

  await t.test("Slack's payload", async (t) => {
    const before = (await messages()).length;
    const res = await call(`${url}/slack`, fixture('slack', 'attachment'));
    t.equal(res.status, 200, res.text);
    t.equal(res.text, 'ok', 'answered as Slack does');
    const [newest] = await messages();
    t.equal((await messages()).length, before + 1);
    t.ok(newest.embeds?.length >= 1, 'the attachment became an embed');
    t.ok(newest.embeds[0].fields?.length >= 1, 'with its fields');
    const form = await fetch(`${url}/slack`, { method: 'POST', body: new URLSearchParams({ payload: JSON.stringify({ text: 'from a form' }) }) });
    t.equal(form.status, 200, 'the form encoding too');
    t.equal((await messages())[0].content, 'from a form');
  });

  await t.test("GitHub's events", async (t) => {
    const events = ['ping', 'push', 'pull_request', 'issues', 'issue_comment', 'release', 'workflow_run'];
    for (const event of events) {
      const before = (await messages()).length;
      const res = await call(`${url}/github`, fixture('github', event), { 'x-github-event': event });
      t.equal(res.status, 204, `${event}: ${res.text}`);
      const after = await messages();
      t.equal(after.length, before + 1, `${event} made a message`);
      t.ok(after[0].embeds?.[0]?.title, `${event}: with an embed title`);
    }
    const skipped = await call(`${url}/github`, { action: 'labeled', issue: {}, repository: {} }, { 'x-github-event': 'label' });
    t.equal(skipped.status, 204, 'an event that makes no message is accepted');
    t.equal((await call(`${url}/github`, {})).status, 400, 'the event header is needed');

    const secret = 'It is a secret to everybody';
    await must(owner.request('PATCH', `/api/webhooks/${made.id}`, { github_secret: secret }), 200);
    const body = JSON.stringify(fixture('github', 'ping'));
    const signature = `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
    t.equal((await call(`${url}/github`, body, { 'x-github-event': 'ping' })).status, 401, 'unsigned: 401');
    t.equal((await call(`${url}/github`, body, { 'x-github-event': 'ping', 'x-hub-signature-256': 'sha256=00' })).status, 401, 'wrongly signed: 401');
    t.equal((await call(`${url}/github`, body, { 'x-github-event': 'ping', 'x-hub-signature-256': signature })).status, 204, 'signed: 204');
    await must(owner.request('PATCH', `/api/webhooks/${made.id}`, { github_secret: null }), 200);
  });

  await t.test('with a secret, every route takes signed calls only', async (t) => {
    const secret = 'signed or nothing';
    const sign = (body: string | Buffer) => `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
    await must(owner.request('PATCH', `/api/webhooks/${made.id}`, { github_secret: secret }), 200);
    const before = (await messages()).length;
    const discord = JSON.stringify({ content: '@everyone from Discord' });
    const slack = JSON.stringify({ text: '<!channel> from Slack' });
    t.equal((await call(url, discord)).status, 401, 'an unsigned Discord call: 401');
    t.equal((await call(`${url}/slack`, slack)).status, 401, 'an unsigned Slack call: 401 (<!channel> pings everyone)');
    t.equal((await call(url, discord, { 'x-hub-signature-256': sign('something else') })).status, 401, 'a Discord call signed wrongly: 401');
    const form = new FormData();
    form.set('payload_json', JSON.stringify({ content: 'a file, unsigned' }));
    form.set('files[0]', new Blob(['x']), 'x.txt');
    t.equal((await fetch(url, { method: 'POST', body: form })).status, 401, 'an unsigned multipart call: 401');
    t.equal((await messages()).length, before, 'none of them posted');

    t.equal((await call(url, discord, { 'x-hub-signature-256': sign(discord) })).status, 204, 'a signed Discord call: 204');
    t.equal((await call(`${url}/slack`, slack, { 'x-hub-signature-256': sign(slack) })).status, 200, 'a signed Slack call: 200');
    // A multipart body signed as it is sent: the signature covers every byte, files included.
    const signedForm = new FormData();
    signedForm.set('payload_json', JSON.stringify({ content: 'a file, signed' }));
    signedForm.set('files[0]', new Blob(['signed bytes\n'], { type: 'text/plain' }), 'signed.txt');
    const encoded = new Request('http://x/', { method: 'POST', body: signedForm });
    const bytes = Buffer.from(await encoded.arrayBuffer());
    const type = encoded.headers.get('content-type')!;
    const multipart = (signature: string) =>
      fetch(`${url}?wait=true`, { method: 'POST', body: bytes, headers: { 'content-type': type, 'x-hub-signature-256': signature } });
    t.equal((await multipart(sign(Buffer.concat([bytes, Buffer.from('x')])))).status, 401, 'a multipart call signed wrongly: 401');
    const res = await multipart(sign(bytes));
    t.equal(res.status, 200, 'a signed multipart call: 200');
    t.same(
      ((await res.json()) as any).attachments.map((a: any) => a.name),
      ['signed.txt'],
    );
    const after = await messages();
    t.same(
      after
        .slice(0, 3)
        .map((m) => m.content)
        .reverse(),
      ['@everyone from Discord', '@everyone from Slack', 'a file, signed'],
      'the signed ones posted',
    );
    t.notOk(
      after.some((m) => m.content === 'a file, unsigned'),
      'the unsigned file is nowhere',
    );
    await must(owner.request('PATCH', `/api/webhooks/${made.id}`, { github_secret: null }), 200);
    t.equal((await call(url, { content: 'open again' })).status, 204, 'without a secret, unsigned calls are taken again');
  });

  await t.test('bad calls are refused and write nothing', async (t) => {
    const before = (await messages()).length;
    const wrong = await call(`${server.url}/api/webhooks/${made.id}/${'x'.repeat(43)}`, { content: 'hi' });
    t.equal(wrong.status, 401, 'a wrong token');
    t.equal((await call(`${server.url}/api/webhooks/${crypto.randomUUID()}/${made.token}`, { content: 'hi' })).status, 404, 'no such webhook');
    t.equal((await call(url, '{"content": ')).status, 400, 'malformed JSON');
    t.equal((await call(url, {})).status, 400, 'nothing to post');
    t.equal((await call(url, { content: 'x'.repeat(2001) })).status, 400, 'too long');
    t.equal((await call(url, { embeds: Array.from({ length: 11 }, () => ({ title: 't' })) })).status, 400, 'eleven embeds');
    t.equal((await call(url, { embeds: [{ title: 't', url: 'javascript:alert(1)' }] })).status, 400, 'a script URL');
    t.equal((await call(url, 'x'.repeat(1024 * 1024 + 1))).status, 413, 'oversized');
    const text = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    t.equal(text.status, 415, 'not JSON');
    t.equal((await messages()).length, before, 'nothing was written');
  });

  await t.test('a new token, and deletion with and without its messages', async (t) => {
    const renewed = (await must(owner.request('PATCH', `/api/webhooks/${made.id}`, { regenerate_token: true }), 200)).body;
    t.not(renewed.token, made.token);
    t.equal((await call(url, { content: 'old URL' })).status, 401, 'the old URL stops');
    t.equal((await call(renewed.url, { content: 'new URL' })).status, 204, 'the new one works');
    await must(owner.delete(`/api/webhooks/${made.id}`), 204);
    t.equal((await call(renewed.url, { content: 'gone' })).status, 404, 'a deleted webhook is gone');
    t.ok(
      (await messages()).some((m) => m.webhook_id === made.id),
      'its messages stay',
    );

    const second = (await must(owner.post(hooks, { name: 'Alerts' }), 201)).body;
    await call(second.url, { content: 'alert one' });
    await call(second.url, { content: 'alert two' });
    await must(owner.delete(`/api/webhooks/${second.id}?delete_messages=true`), 204);
    t.notOk(
      (await messages()).some((m) => m.webhook_id === second.id),
      'asked: its messages go with it',
    );
    const log = (await must(owner.get(`${c.base}/audit-log`), 200)).body.filter((e: any) => e.action === 'webhook_delete');
    t.match(log[0].changes, { name: 'Alerts', messages_deleted: 2 }, 'the audit log says how many');
  });
});

/** A server with its rate limits on, its owner, and a webhook of its first channel. */
async function hookWithLimits(t: Test, name: string) {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const serverId = (await must(owner.post('/api/servers', { name }), 201)).body.id;
  const channel = (await must(owner.get(`/api/servers/${serverId}/channels`), 200)).body[0].id;
  const hook = (await must(owner.post(`/api/servers/${serverId}/channels/${channel}/webhooks`, { name }), 201)).body;
  return { owner, serverId, channel, hook };
}

t.test('webhook rate limits', async (t) => {
  const { hook } = await hookWithLimits(t, 'flood');
  const answers = [];
  for (let i = 0; i < 6; i++) answers.push(await call(hook.url, { content: `n${i}` }));
  t.same(
    answers.map((a) => a.status),
    [204, 204, 204, 204, 204, 429],
    '5 in a burst, then 429',
  );
  t.match(answers[5].headers.get('retry-after'), /^\d+$/, 'with Retry-After');
});

t.test('a signed GitHub delivery is taken once; refused deliveries spend no rate limit', async (t) => {
  const { owner, serverId, channel, hook } = await hookWithLimits(t, 'GitHub');
  const secret = 'replay me if you can';
  await must(owner.request('PATCH', `/api/webhooks/${hook.id}`, { github_secret: secret }), 200);
  const count = async () => (await must(owner.get(`/api/servers/${serverId}/channels/${channel}/messages?limit=100`), 200)).body.length as number;
  const body = JSON.stringify(fixture('github', 'ping'));
  const signature = `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
  const deliver = (delivery: string, sig = signature, payload = body) =>
    call(`${hook.url}/github`, payload, { 'x-github-event': 'ping', 'x-github-delivery': delivery, 'x-hub-signature-256': sig });

  const delivery = crypto.randomUUID();
  t.equal((await deliver(delivery)).status, 204, 'delivered: 204');
  const repeat = await deliver(delivery);
  t.equal(repeat.status, 200, 'the same delivery again: 200');
  t.match(repeat.text, /already/, 'saying it was taken before');
  t.equal((await deliver(crypto.randomUUID())).status, 200, 'the same signed body under another delivery id: 200 too (the id is not signed)');
  t.equal(await count(), 1, 'posted once');

  for (let i = 0; i < 10; i++) t.equal((await deliver(crypto.randomUUID(), 'sha256=00')).status, 401, `a badly signed delivery ${i + 1}: 401`);
  const other = JSON.stringify({ ...fixture('github', 'ping'), zen: 'Keep it logically awesome.' });
  const otherSigned = `sha256=${crypto.createHmac('sha256', secret).update(other).digest('hex')}`;
  t.equal((await deliver(crypto.randomUUID(), otherSigned, other)).status, 204, 'ten refused deliveries later, a good one is not 429');
  t.equal(await count(), 2);
});

t.test('bots', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member } = c.clients;
  const maker = await signUp(server.url);
  const made = (await must(maker.post('/api/bots', { name: `bot${process.pid % 1000}x` }), 201)).body;
  t.match(made, { username: made.username, bot: true });
  t.match(made.token, new RegExp(`^${made.id}\\.`), 'the token names the bot');
  const auth = { authorization: `Bot ${made.token}` };
  const bot = new Client(server.url);

  await t.test('made, listed, and signing in by token only', async (t) => {
    const listed = (await must(maker.get('/api/bots'), 200)).body;
    t.same(
      listed.map((b: any) => b.id),
      [made.id],
    );
    t.notOk('token' in listed[0], 'listed without the token');
    t.same((await must(bot.get('/api/users/me', auth), 200)).body, {
      user_id: made.id,
      username: made.username,
      display_name: null,
      avatar_url: null,
      bot: true,
    });
    t.equal((await bot.get('/api/users/me', { authorization: `Bot ${made.id}.wrong` })).status, 401, 'a wrong token');
    t.equal((await bot.get('/api/users/me', { authorization: 'Bot nonsense' })).status, 401);
    t.equal((await bot.post('/api/login', { username: made.username, password: 'anything at all' })).status, 401, 'no password signs a bot in');
    for (const [method, p] of [
      ['GET', '/api/account'],
      ['POST', '/api/account/2fa/setup'],
      ['POST', '/api/account/export'],
      ['GET', '/api/account/sessions'],
      ['POST', '/api/bots'],
      ['POST', '/api/servers'],
    ] as const) {
      t.equal((await bot.request(method, p, method === 'POST' ? {} : undefined, auth)).status, 403, `${method} ${p}: not for bots`);
    }
    t.equal((await maker.post('/api/bots', { name: made.username })).status, 409, 'a taken name');
    const request = (await must(bot.post('/api/friends/requests', { username: maker.username }, auth), 201)).body;
    t.equal(request.from.bot, true, 'a friend request from a bot names a bot');
    await must(maker.post(`/api/friends/requests/${request.id}/accept`), 200);
    t.equal((await must(maker.get('/api/friends'), 200)).body.find((f: any) => f.user_id === made.id)?.bot, true, 'and so does the friends list');
    t.equal((await member.delete(`/api/bots/${made.id}`)).status, 404, "another's bot is not theirs to delete");
  });

  await t.test('added to a server by name, posting, its stream', async (t) => {
    t.equal((await member.post(`${c.base}/bots`, { username: made.username })).status, 403, 'a member may not add bots');
    t.equal((await owner.post(`${c.base}/bots`, { username: member.username })).status, 404, 'only bots are added by name');
    await must(owner.post(`${c.base}/bots`, { username: made.username }), 200);
    const members = (await must(owner.get(`${c.base}/members`), 200)).body;
    t.equal(members.find((m: any) => m.user_id === made.id)?.bot, true, 'a member, marked as a bot');
    const stream = await openSocket(server.url, '/api/ws', { headers: auth });
    const ready = await stream.event('ready');
    t.ok(
      ready.servers.some((s: any) => s.id === c.serverId),
      "the bot's stream has the server",
    );
    const channel = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
    // A bot's request carries no cookie: an Origin from elsewhere changes nothing.
    const posted = (await must(bot.post(`${c.base}/channels/${channel}/messages`, { content: 'beep' }, { ...auth, origin: 'https://elsewhere.example' }), 201))
      .body;
    t.equal(posted.author.bot, true);
    await must(owner.post(`${c.base}/channels/${channel}/messages`, { content: 'hello bot' }), 201);
    t.ok(await stream.until((f) => f.event === 'message' && f.message.content === 'hello bot'), 'the bot hears members live');

    await must(owner.put(`${c.base}/members/${made.id}/timeout`, { seconds: 600 }), 200);
    t.equal((await bot.post(`${c.base}/channels/${channel}/messages`, { content: 'beep' }, auth)).status, 403, 'a timeout applies to a bot');
    await must(owner.delete(`${c.base}/members/${made.id}/timeout`), 200);

    const renewed = (await must(maker.post(`/api/bots/${made.id}/token`), 200)).body.token;
    t.equal((await bot.get('/api/users/me', auth)).status, 401, 'the old token stops');
    t.equal((await stream.closed()).code, 4001, 'and its socket closes');
    t.equal((await bot.get('/api/users/me', { authorization: `Bot ${renewed}` })).status, 200, 'the new one works');
    await must(maker.delete(`/api/bots/${made.id}`), 204);
    t.equal((await bot.get('/api/users/me', { authorization: `Bot ${renewed}` })).status, 401, 'a deleted bot signs in no more');
    const after = (await must(owner.get(`${c.base}/members`), 200)).body;
    t.notOk(
      after.some((m: any) => m.user_id === made.id),
      'and leaves its servers',
    );
  });
});

t.test('a bot stands as its owner: restricted and suspended with them, its sockets closed, restored with them', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const maker = await c.newMember();
  const admin = await signUp(server.url);
  server.app.db.prepare('UPDATE users SET is_admin = 1 WHERE id = ?').run(admin.userId);
  const made = (await must(maker.post('/api/bots', { name: `standing${process.pid % 1000}` }), 201)).body;
  await must(c.clients.owner.post(`${c.base}/bots`, { username: made.username }), 200);
  const channel = (await must(c.clients.owner.get(`${c.base}/channels`), 200)).body[0].id;
  const auth = { authorization: `Bot ${made.token}` };
  const bot = new Client(server.url);
  const say = (content: string) => bot.post(`${c.base}/channels/${channel}/messages`, { content }, auth);
  const standing = (value: number) => must(admin.put(`/api/admin/users/${maker.userId}/standing`, { standing: value }), 200);
  await must(say('before'), 201);
  const stream = await openSocket(server.url, '/api/ws', { headers: auth });
  await stream.event('ready');

  await standing(3);
  t.match(await stream.event('standing'), { account_standing: 3 }, "the bot's stream learns its standing");
  const atRisk = await say('at risk');
  t.equal(atRisk.status, 403, 'an owner at risk: the bot may not send');
  t.match(atRisk.text, /at risk/, "with the owner's reason");

  await standing(4);
  t.equal((await stream.closed()).code, 4003, "the owner's suspension closes the bot's sockets");
  const suspended = await say('suspended');
  t.equal(suspended.status, 403, 'a suspended owner: the bot may not post');
  t.match(suspended.text, /suspended/, "with the owner's reason");
  t.equal((await bot.post(`${c.base}/invites`, {}, auth)).status, 403, 'nor make invites');
  t.equal((await bot.get('/api/users/me', auth)).status, 403, 'nor read');
  await t.rejects(openSocket(server.url, '/api/ws', { headers: auth }), 'nor open a stream');

  await standing(0);
  await must(say('restored'), 201);
  const again = await openSocket(server.url, '/api/ws', { headers: auth });
  await again.event('ready');
  t.pass('restored with the owner: it posts and streams again');
  again.close();
});

t.test('a server cannot be transferred to a bot, so a person is never trapped by one', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner } = c.clients;
  const made = (await must(owner.post('/api/bots', { name: `heir${process.pid % 1000}` }), 201)).body;
  await must(owner.post(`${c.base}/bots`, { username: made.username }), 200);
  const refused = await owner.put(`${c.base}/owner`, { user_id: made.id });
  t.equal(refused.status, 409, 'a bot cannot own a server');
  t.match(refused.text, /bot/, 'the reason says why');
  t.equal((await must(owner.get(c.base), 200)).body.owner_id, owner.userId, 'the owner is unchanged');
  // A server a bot came to own before the rule: the bot gives it back itself, with its token.
  server.app.db.prepare('UPDATE servers SET owner_id = ? WHERE id = ?').run(made.id, c.serverId);
  t.equal((await owner.delete(`/api/bots/${made.id}`)).status, 409, 'a bot that owns a server cannot be deleted');
  await must(new Client(server.url).put(`${c.base}/owner`, { user_id: owner.userId }, { authorization: `Bot ${made.token}` }), 200);
  await must(owner.delete(`/api/bots/${made.id}`), 204);
  t.pass('given back, the bot can be deleted');
});

t.test("a person's bots go with their account", async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const maker = await signUp(server.url);
  const made = (await must(maker.post('/api/bots', { name: `orphan${process.pid % 1000}` }), 201)).body;
  await must(maker.delete('/api/account', { password: 'correct horse' }), 204);
  t.equal((await new Client(server.url).get('/api/users/me', { authorization: `Bot ${made.token}` })).status, 401, 'the bot signs in no more');
});

t.test('the example bot answers !ping and greets newcomers', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member } = c.clients;
  const made = (await must(owner.post('/api/bots', { name: `pinger${process.pid % 1000}` }), 201)).body;
  await must(owner.post(`${c.base}/bots`, { username: made.username }), 200);
  const channel = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'examples', 'bot.mjs')], {
    env: { ...process.env, CHAT_URL: server.url, BOT_TOKEN: made.token },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.teardown(() => child.kill());
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('connected') && resolve());
    child.once('exit', (code) => reject(new Error(`the bot stopped (${code})`)));
  });
  const stream = await openSocket(server.url, '/api/ws', { client: member });
  await stream.event('ready');
  const ping = (await must(member.post(`${c.base}/channels/${channel}/messages`, { content: '!ping' }), 201)).body;
  const pong = await stream.until((f) => f.event === 'message' && f.message.author_id === made.id, 10_000);
  t.match(pong.message, { content: 'pong', reply_to: ping.id, author: { bot: true } }, 'pong, as a reply');
  const newcomer = await signUp(server.url);
  await c.join(newcomer);
  const welcome = await stream.until((f) => f.event === 'message' && f.message.author_id === made.id && f.message.content.startsWith('Welcome'), 10_000);
  t.equal(welcome.message.content, `Welcome, @${newcomer.username}!`, 'the newcomer is greeted');
  stream.close();
});
