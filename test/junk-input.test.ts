import crypto from 'node:crypto';
import t from 'tap';
import { buildRoutes } from '../src/api';
import { Client, signUp } from './helpers/client';
import { community, must } from './helpers/community';
import { startServer } from './helpers/server';

// Every field name any endpoint reads, and values of every JSON type and edge a client can send.
const FIELDS = [
  'content', 'reply_to', 'name', 'usernames', 'username', 'password', 'emoji', 'reason', 'status',
  'standing', 'role', 'full_server_admin', 'email', 'token', 'type', 'target',
];
const JUNK: unknown[] = [
  null, 0, -1, 1.5, 1e308, true, '', ' ', '\u0000', '\ud800', 'x'.repeat(70_000), [], [null], ['a', 1], {}, { a: { b: [] } },
];

// About 100 000 requests: a minute alone, more when the suite runs beside it on two busy cores.
t.setTimeout(300_000);

t.test('no route answers 5xx to junk in any field, as any caller', async (t) => {
  const server = await startServer({ env: { ADMIN_USERS: 'junk_admin' } });
  t.teardown(server.close);
  const admin = await signUp(server.url, 'junk_admin');
  const scene = await community(server);
  const { owner } = scene.clients;
  const channel = (await must(owner.get(`${scene.base}/channels`), 200)).body[0].id;
  const message = (await must(owner.post(`${scene.base}/channels/${channel}/messages`, { content: 'hi' }), 201)).body.id;
  const ids: Record<string, string> = {
    server_id: scene.serverId, channel_id: channel, message_id: message, user_id: scene.clients.member.userId,
    token: scene.token, conversation_id: crypto.randomUUID(), request_id: crypto.randomUUID(),
    report_id: crypto.randomUUID(), warning_id: crypto.randomUUID(), attachment_id: crypto.randomUUID(),
  };
  const callers: [string, Client][] = [['admin', admin], ['owner', owner], ['anonymous', new Client(server.url)]];
  const routes = buildRoutes(server.app);
  let sent = 0;
  for (const route of routes) {
    const path = route.path.replace(/:([a-z_]+)/g, (_, name: string) => ids[name] ?? crypto.randomUUID());
    const bodies = route.method === 'GET' ? [undefined] : FIELDS.flatMap((field) => JUNK.map((value) => ({ [field]: value })));
    for (const [who, client] of callers) {
      const statuses = new Set<number>();
      // Logging out would end the caller's session for the rest of the table.
      if (route.path === '/api/logout') continue;
      // Sixteen at a time: quicker than one by one, and concurrent junk is a harder test anyway.
      for (let i = 0; i < bodies.length; i += 16) {
        const answers = await Promise.all(bodies.slice(i, i + 16).map((body) => client.request(route.method, path, body)));
        for (const answer of answers) statuses.add(answer.status);
        sent += answers.length;
      }
      const worst = Math.max(0, ...statuses);
      t.ok(worst < 500, `${route.method} ${route.path} as ${who}: ${[...statuses].sort().join(', ')}`);
    }
  }
  t.ok(sent > 10_000, `${sent} requests sent`);
  t.equal((await owner.get('/api/users/me')).status, 200, 'the server still answers afterwards');
});
