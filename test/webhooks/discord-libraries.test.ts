import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DiscordAPIError, REST, RateLimitError } from '@discordjs/rest';
import { EmbedBuilder, WebhookClient } from 'discord.js';
import { MessageBuilder, Webhook } from 'discord-webhook-node';
import t from 'tap';
import { Client } from '../helpers/client';
import { community, must } from '../helpers/community';
import { startServer } from '../helpers/server';

/**
 * Discord's own libraries, unchanged, against a real server (issue 52): discord.js's
 * WebhookClient and @discordjs/rest call `/api/v10/webhooks/{id}/{token}…` (their REST base
 * pointed at the server), discord-webhook-node posts to the URL it is given. Each checks what a
 * member then reads through our API.
 */
t.test('Discord’s libraries', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member } = c.clients;
  const channel: string = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const hook = (await must(owner.post(`${c.base}/channels/${channel}/webhooks`, { name: 'Status' }), 201)).body;
  const read = async (where = channel) => (await must(member.get(`${c.base}/channels/${where}/messages?limit=100`), 200)).body as any[];
  const api = `${server.url}/api`;
  const client = new WebhookClient({ id: hook.id, token: hook.token }, { rest: { api } });
  t.teardown(() => client.destroy());

  await t.test('discord.js sends, fetches, edits and deletes its own message', async (t) => {
    const embed = new EmbedBuilder().setTitle('Build 41').setDescription('green').setColor(0x00ff00);
    const sent = await client.send({ content: 'deploying…', username: 'Deployer', embeds: [embed] });
    t.match(sent, {
      id: String,
      type: 0,
      channel_id: channel,
      content: 'deploying…',
      author: { id: hook.id, username: 'Deployer', bot: true },
      embeds: [{ title: 'Build 41', description: 'green', color: 0x00ff00 }],
      attachments: [],
      webhook_id: hook.id,
      timestamp: String,
      edited_timestamp: null,
    });
    const seen = (await read()).find((m) => m.id === sent.id);
    t.match(seen, { content: 'deploying…', webhook_id: hook.id, author: { display_name: 'Deployer', bot: true }, embeds: [{ title: 'Build 41' }] });

    t.match(await client.fetchMessage(sent.id), { id: sent.id, content: 'deploying…' }, 'it reads its own message');
    const edited = await client.editMessage(sent.id, { content: 'deployed', embeds: [new EmbedBuilder().setTitle('Build 41 done')] });
    t.match(edited, { id: sent.id, content: 'deployed', embeds: [{ title: 'Build 41 done' }], edited_timestamp: String });
    t.match(
      (await read()).find((m) => m.id === sent.id),
      { content: 'deployed', embeds: [{ title: 'Build 41 done' }], edited_at: String },
      'members see the edit',
    );
    // Search finds the edit's card and no longer the card it replaced (the index took the new text).
    const search = async (word: string) => (await must(member.get(`/api/search?q=${word}&server_id=${c.serverId}`), 200)).body.results.map((x: any) => x.id);
    t.same(await search('done'), [sent.id], "search finds the edited card's words");
    t.same(await search('green'), [], 'and not the replaced card’s');
    const onlyText = await client.editMessage(sent.id, { content: 'deployed (41)' });
    t.match(onlyText.embeds, [{ title: 'Build 41 done' }], 'embeds not given stay');

    await client.deleteMessage(sent.id);
    t.notOk(
      (await read()).some((m) => m.id === sent.id),
      'members no longer see it',
    );
    const gone = await client.fetchMessage(sent.id).catch((err: unknown) => err);
    t.ok(gone instanceof DiscordAPIError, 'the library reports the error as Discord’s');
    t.match(gone, { status: 404, code: 10008 });
  });

  await t.test('discord.js sends files, and into a thread', async (t) => {
    const sent = await client.send({ username: 'Uploader', files: [{ attachment: Buffer.from('hello file'), name: 'notes.txt' }] });
    t.equal(sent.content, '', 'a file alone is a message');
    t.match(sent.attachments, [{ filename: 'notes.txt', size: 10, url: `${server.url}/uploads/${sent.attachments[0]?.id}` }]);
    const seen = (await read()).find((m) => m.id === sent.id);
    t.match(seen.attachments, [{ name: 'notes.txt', size: 10 }], 'members see the file');
    const download = await fetch(`${server.url}${seen.attachments[0].url}`, { headers: { cookie: member.cookie! } });
    t.equal(await download.text(), 'hello file');

    const thread = (await must(member.post(`${c.base}/channels/${channel}/threads`, { name: 'release notes' }), 201)).body;
    const inThread = await client.send({ content: 'in the thread', threadId: thread.id });
    t.equal(inThread.channel_id, thread.id);
    t.ok(
      (await read(thread.id)).some((m) => m.id === inThread.id),
      'members read it in the thread',
    );
    t.notOk(
      (await read()).some((m) => m.id === inThread.id),
      'not in the channel itself',
    );
    t.match(await client.fetchMessage(inThread.id, { threadId: thread.id }), { id: inThread.id });
    const elsewhere = await client.send({ content: 'x', threadId: crypto.randomUUID() }).catch((err: unknown) => err);
    t.match(elsewhere, { status: 400, code: 10003 }, 'a thread of another channel is Discord’s unknown channel');
  });

  await t.test('@discordjs/rest posts through Discord’s routes', async (t) => {
    const rest = new REST({ api, version: '10' });
    const route = `/webhooks/${hook.id}/${hook.token}` as const;
    const webhook = await rest.get(route, { auth: false });
    t.match(webhook, { id: hook.id, type: 1, name: 'Status', channel_id: channel, guild_id: c.serverId });
    t.notOk('token' in (webhook as object), 'without its token');
    const sent: any = await rest.post(route, {
      auth: false,
      query: new URLSearchParams({ wait: 'true' }),
      body: { content: 'from REST', attachments: [{ id: 0, filename: 'a.txt' }] },
      files: [{ name: 'a.txt', data: Buffer.from('aaa') }],
    });
    t.match(sent, { content: 'from REST', attachments: [{ filename: 'a.txt', size: 3 }], author: { bot: true } });
    const unanswered = (await rest.post(route, { auth: false, body: { content: 'no wait' } })) as ArrayBuffer;
    t.equal(unanswered.byteLength, 0, '204 without wait');
    t.ok((await read()).some((m) => m.content === 'no wait'));
    const refused = await rest.post(route, { auth: false, body: { content: '' } }).catch((err: unknown) => err);
    t.ok(refused instanceof DiscordAPIError);
    t.match(refused, { status: 400, code: 50035, rawError: { message: /needs content or an embed/ } }, 'a bad payload, in Discord’s shape');
    const wrongToken = await rest.post(`/webhooks/${hook.id}/nope`, { auth: false, body: { content: 'x' } }).catch((err: unknown) => err);
    t.match(wrongToken, { status: 401, code: 50027 });
    const unknown = await rest.get(`/webhooks/123456789012345678/abc`, { auth: false }).catch((err: unknown) => err);
    t.match(unknown, { status: 404, code: 10015 }, 'a Discord snowflake is no webhook here, in Discord’s words');
  });

  await t.test('the answers on Discord’s paths are what docs/openapi.json says', async (t) => {
    // Client checks every answer against the document (test/helpers/contract.ts).
    const anyone = new Client(server.url);
    const D = `/api/v10/webhooks/${hook.id}/${hook.token}`;
    t.equal((await anyone.get(D)).status, 200);
    const sent = await anyone.post(`${D}?wait=true`, { content: 'held to the contract', embeds: [{ title: 'card' }] });
    t.equal(sent.status, 200);
    t.equal((await anyone.get(`${D}/messages/${sent.body.id}`)).status, 200);
    t.equal((await anyone.request('PATCH', `${D}/messages/${sent.body.id}`, { content: null })).status, 200, 'a message keeping its card may lose its text');
    t.equal((await anyone.request('PATCH', `${D}/messages/${sent.body.id}`, {})).status, 400);
    const foreign = (await must(member.post(`${c.base}/channels/${channel}/messages`, { content: 'a member’s' }), 201)).body;
    t.match((await anyone.delete(`${D}/messages/${foreign.id}`)).body, { code: 10008 }, 'not the webhook’s own: unknown message');
    t.equal((await anyone.delete(`${D}/messages/${sent.body.id}`)).status, 204);
    t.match((await anyone.get(`${D}/messages/not-an-id`)).body, { code: 10008 });
    t.match((await anyone.post(`/api/v10/webhooks/${hook.id}/${hook.token}`, 'not json', { 'content-type': 'application/json' })).body, { code: 50035 });
  });

  await t.test('the older API versions and our own URL answer the same', async (t) => {
    for (const v of [6, 7, 8, 9]) {
      const res = await fetch(`${server.url}/api/v${v}/webhooks/${hook.id}/${hook.token}?wait=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: `v${v}` }),
      });
      t.equal(res.status, 200, `v${v}`);
      t.match(await res.json(), { content: `v${v}`, webhook_id: hook.id });
    }
    const ours = await fetch(`${server.url}/api/webhooks/${hook.id}/${hook.token}`, { method: 'GET' });
    t.equal(ours.status, 405, 'our own URL keeps its own answers');
    t.equal(ours.headers.get('content-type'), 'text/plain; charset=utf-8', 'and our plain-text errors');
  });

  await t.test('discord-webhook-node sends text, an embed and a file', async (t) => {
    for (const url of [hook.url as string, `${api}/v10/webhooks/${hook.id}/${hook.token}`]) {
      const sender = new Webhook({ url, throwErrors: true, retryOnLimit: false });
      sender.setUsername('Node sender');
      await sender.send('plain words');
      await sender.send(new MessageBuilder().setTitle('Card').setDescription('with a field').addField('k', 'v', true).setColor(0xff0000));
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dwn-')), 'report.csv');
      fs.writeFileSync(file, 'a,b\n1,2\n');
      t.teardown(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
      await sender.sendFile(file);
      const last = (await read()).slice(0, 3).reverse();
      t.match(last, [
        { content: 'plain words', author: { display_name: 'Node sender' } },
        { content: '', embeds: [{ title: 'Card', description: 'with a field', fields: [{ name: 'k', value: 'v', inline: true }] }] },
        { content: '', attachments: [{ name: 'report.csv', size: 8 }], author: { display_name: 'Node sender' } },
      ]);
    }
  });
  await t.test('the token never reaches the request log, on Discord’s paths either', async (t) => {
    const lines = server.logs.filter((line) => line.includes('/webhooks/'));
    t.ok(
      lines.some((line) => line.includes('/api/v10/webhooks/') && line.includes('/:token')),
      'the v10 calls are logged, their token masked',
    );
    t.notOk(
      server.logs.some((line) => line.includes(hook.token)),
      'no line holds the token',
    );
  });
});

t.test('rate limits on Discord’s paths send the headers the libraries read', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const c = await community(server);
  const { owner, member } = c.clients;
  const channel: string = (await must(owner.get(`${c.base}/channels`), 200)).body[0].id;
  const hook = (await must(owner.post(`${c.base}/channels/${channel}/webhooks`, { name: 'Busy' }), 201)).body;
  const url = `${server.url}/api/v10/webhooks/${hook.id}/${hook.token}`;

  const statuses: number[] = [];
  let limited: Response | undefined;
  for (let i = 0; i < 6; i++) {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `raw ${i}` }) });
    statuses.push(res.status);
    if (res.status === 204) t.match(res.headers.get('x-ratelimit-remaining'), String(4 - i), 'the bucket counts down');
    if (res.status === 429) limited = res;
  }
  t.strictSame(statuses, [204, 204, 204, 204, 204, 429], '5 per 2 s, Discord’s webhook limit');
  t.equal(limited?.headers.get('content-type'), 'application/json; charset=utf-8');
  t.match(limited?.headers.get('retry-after'), /^\d+$/);
  t.equal(limited?.headers.get('x-ratelimit-remaining'), '0');
  t.match(await limited?.json(), { code: 0, message: /too many/, retry_after: Number, global: false });

  // A library that meets the 429 reports it as Discord's rate limit.
  const strict = new REST({ api: `${server.url}/api`, version: '10', rejectOnRateLimit: () => true });
  const route = `/webhooks/${hook.id}/${hook.token}` as const;
  const refused = await strict.post(route, { auth: false, body: { content: 'too soon' } }).catch((err: unknown) => err);
  t.ok(refused instanceof RateLimitError, 'a RateLimitError');
  t.match(refused, { limit: 5, retryAfter: Number, global: false });
  t.ok((refused as RateLimitError).retryAfter > 0);

  // Once the bucket is full again, the library paces itself by the headers and never meets a 429.
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  const logged = server.logs.length;
  const rest = new REST({ api: `${server.url}/api`, version: '10' });
  for (let i = 1; i <= 7; i++) await rest.post(route, { auth: false, body: { content: `paced ${i}` } });
  const seen = (await must(member.get(`${c.base}/channels/${channel}/messages?limit=100`), 200)).body as any[];
  t.equal(seen.filter((m) => /^paced [1-7]$/.test(m.content)).length, 7, 'seven in a row, each posted');
  t.strictSame(
    server.logs.slice(logged).filter((line) => / 429 /.test(line)),
    [],
    'paced by X-RateLimit-Remaining and X-RateLimit-Reset-After: no 429 met',
  );
});
