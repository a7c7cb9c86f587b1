import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import t from 'tap';
import type { Route } from '../src/core/types';
import { buildRoutes } from '../src/api';
import { type TestServer, startServer } from './helpers/server';
import { Client, type Res, signUp, uniqueName } from './helpers/client';

/**
 * Issue 9, "Done when": every state-changing route of the real route table, sent with a
 * foreign Origin or Sec-Fetch-Site: cross-site and a valid session cookie, answers 403 and
 * changes nothing. The routes come from buildRoutes, so a route added later is covered
 * without touching this file.
 */

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const PASSWORD = 'correct horse';

interface Scene {
  server: TestServer;
  /** Owns the server, is an administrator, has a friend, a DM and a pending request to answer. */
  owner: Client;
  friend: Client;
  stranger: Client;
  params: Record<string, string>;
}

async function ok(res: Res, status: number, what: string): Promise<Res> {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
  return res;
}

/** Everything a route's path can name exists, and one user (the owner) may act on all of it. */
async function buildScene(): Promise<Scene> {
  const ownerName = uniqueName('owner');
  const server = await startServer({ env: { ADMIN_USERS: ownerName } });
  const owner = await signUp(server.url, ownerName);
  const friend = await signUp(server.url);
  const stranger = await signUp(server.url);

  const srv = (await ok(await owner.post('/api/servers', { name: 'Scene' }), 201, 'server')).body;
  const channel = (await ok(await owner.post(`/api/servers/${srv.id}/channels`, { name: 'talk' }), 201, 'channel')).body;
  const message = (await ok(await owner.post(`/api/servers/${srv.id}/channels/${channel.id}/messages`, { content: 'hello' }), 201, 'message')).body;
  await ok(await owner.put(`/api/servers/${srv.id}/channels/${channel.id}/messages/${message.id}/reactions`, { emoji: '👍' }), 200, 'reaction');
  await ok(await owner.post(`/api/servers/${srv.id}/roles`, { name: 'mods', full_server_admin: false }), 201, 'role');
  const invite = (await ok(await owner.post(`/api/servers/${srv.id}/invites`), 201, 'invite')).body;
  await ok(await friend.post(`/api/invites/${invite.token}/accept`), 200, 'join');

  const request = (await ok(await owner.post('/api/friends/requests', { username: friend.username }), 201, 'request')).body;
  await ok(await friend.post(`/api/friends/requests/${request.id}/accept`), 200, 'accept');
  const pending = (await ok(await stranger.post('/api/friends/requests', { username: owner.username }), 201, 'pending')).body;

  const dm = (await ok(await owner.post('/api/conversations/dm', { usernames: [friend.username] }), 201, 'dm')).body;
  await ok(await friend.post(`/api/conversations/${dm.id}/messages`, { content: 'psst' }), 201, 'dm message');

  const warning = (await ok(await owner.post(`/api/admin/users/${stranger.userId}/warnings`, { reason: 'rude' }), 201, 'warning')).body;
  const report = (await ok(await friend.post('/api/reports', { type: 'user', target: stranger.userId, reason: 'spam' }), 201, 'report')).body;

  const params: Record<string, string> = {
    server_id: srv.id,
    channel_id: channel.id,
    message_id: message.id,
    user_id: friend.userId,
    token: invite.token,
    request_id: pending.id,
    conversation_id: dm.id,
    warning_id: warning.id,
    report_id: report.id,
  };

  // An attachment, if uploads are in the tree: its id fills :attachment_id.
  const form = new FormData();
  form.set('content', 'a file');
  form.set('attachments', new Blob(['hello\n'], { type: 'text/plain' }), 'note.txt');
  const upload = await owner.post(`/api/servers/${srv.id}/channels/${channel.id}/messages`, form);
  if (upload.status === 201 && upload.body.attachments?.[0]) params.attachment_id = upload.body.attachments[0].id;

  return { server, owner, friend, stranger, params };
}

/** A JSON POST through node:http, which (unlike fetch) sends the Host header it is given. */
function rawPost(base: string, urlPath: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ name: 'raw' });
  return new Promise((resolve, reject) => {
    const req = http.request(
      base + urlPath,
      { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The path with every `:param` filled from the scene; unknown names get a random UUID. */
function fill(routePath: string, params: Record<string, string>): string {
  return routePath.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? crypto.randomUUID()));
}

/** Every table, every row: what "nothing changed" means for the database. */
function snapshotDb(server: TestServer): Record<string, string> {
  const { db } = server.app;
  // Virtual tables are read through their shadow tables (messages_fts_data...): a contentless
  // search index cannot be scanned itself.
  const tables = db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")
    .all();
  const snapshot: Record<string, string> = {};
  for (const { name } of tables) {
    snapshot[name] = JSON.stringify(db.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}" ORDER BY 1`).all());
  }
  return snapshot;
}

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

/** A body each route could plausibly accept; extra fields are ignored by the handlers. */
function jsonBody(scene: Scene): Record<string, unknown> {
  return {
    name: 'renamed',
    content: 'hijacked',
    emoji: '🔥',
    username: uniqueName('victim'),
    usernames: [scene.friend.username],
    password: 'new password 1',
    role: 'mods',
    full_server_admin: true,
    reason: 'forged',
    status: 'resolved',
    standing: 4,
    type: 'user',
    target: scene.stranger.userId,
    email: 'attacker@evil.example',
    token: 'not-a-token',
  };
}

interface Attempt {
  label: string;
  route: Route;
  url: string;
  body: unknown;
}

/** One JSON attempt per route, plus a multipart one for message routes and a form one for the auth forms. */
function attemptsFor(routes: Route[], scene: Scene): Attempt[] {
  const attempts: Attempt[] = [];
  for (const route of routes) {
    const url = fill(route.path, scene.params);
    attempts.push({ label: `${route.method} ${route.path} (JSON)`, route, url, body: jsonBody(scene) });
    if (route.body === 'message') {
      const form = new FormData();
      form.set('content', 'hijacked upload');
      form.set('attachments', new Blob([crypto.randomBytes(4096)], { type: 'application/octet-stream' }), 'evil.bin');
      attempts.push({ label: `${route.method} ${route.path} (multipart)`, route, url, body: form });
    }
    if (route.body === 'auth-form') {
      const form = new URLSearchParams({ username: uniqueName('formvictim'), password: 'new password 1' });
      attempts.push({ label: `${route.method} ${route.path} (form)`, route, url, body: form });
    }
  }
  return attempts;
}

const CROSS_SITE: [string, Record<string, string>][] = [
  ['a foreign Origin', { origin: 'https://evil.example' }],
  ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
  // Sandboxed frames, data: URLs and some redirects send the opaque origin.
  ['Origin: null', { origin: 'null' }],
];

/** A client that sends the owner's cookie but never takes a new one, so no attempt can alter it. */
function asOwner(scene: Scene): Client {
  const client = new Client(scene.server.url);
  const cookie = scene.owner.cookie;
  Object.defineProperty(client, 'cookie', { get: () => cookie, set: () => {} });
  return client;
}

t.test('every state-changing route refuses cross-site requests with 403 and no side effect', async (t) => {
  const scene = await buildScene();
  t.teardown(scene.server.close);
  const routes = buildRoutes(scene.server.app).filter((r) => STATE_CHANGING.has(r.method));

  t.test('the table covers every state-changing route', async (t) => {
    t.ok(routes.length > 0, `${routes.length} state-changing routes`);
    const covered = new Set(routes.map((r) => `${r.method} ${r.path}`));
    // The spec's state-changing endpoints (section 4): each must be in the table this test walks.
    const spec = [
      'POST /api/register',
      'POST /api/login',
      'POST /api/logout',
      'PUT /api/account/email',
      'POST /api/password-reset/request',
      'POST /api/password-reset',
      'POST /api/servers',
      'POST /api/servers/:server_id/channels',
      'POST /api/servers/:server_id/roles',
      'PUT /api/servers/:server_id/members/:user_id/role',
      'POST /api/servers/:server_id/invites',
      'POST /api/invites/:token/accept',
      'POST /api/servers/:server_id/channels/:channel_id/messages',
      'PUT /api/servers/:server_id/channels/:channel_id/messages/:message_id',
      'DELETE /api/servers/:server_id/channels/:channel_id/messages/:message_id',
      'PUT /api/servers/:server_id/channels/:channel_id/messages/:message_id/reactions',
      'DELETE /api/servers/:server_id/channels/:channel_id/messages/:message_id/reactions',
      'POST /api/servers/:server_id/messages',
      'POST /api/friends/requests',
      'POST /api/friends/requests/:request_id/accept',
      'POST /api/friends/requests/:request_id/reject',
      'POST /api/conversations/dm',
      'POST /api/conversations/group',
      'POST /api/conversations/:conversation_id/messages',
      'PUT /api/conversations/:conversation_id/messages/:message_id/reactions',
      'DELETE /api/conversations/:conversation_id/messages/:message_id/reactions',
      'POST /api/reports',
      'PUT /api/admin/reports/:report_id',
      'POST /api/admin/users/:user_id/warnings',
      'DELETE /api/admin/warnings/:warning_id',
      'PUT /api/admin/users/:user_id/standing',
    ];
    for (const key of spec) t.ok(covered.has(key), `covers ${key}`);
    t.ok(
      routes.some((r) => r.body === 'message'),
      'covers a multipart message route',
    );
    t.ok(
      routes.some((r) => r.body === 'auth-form'),
      'covers the auth forms',
    );
  });

  t.test('403 for every route, header and body kind; the database, sessions, uploads and outbox unchanged', async (t) => {
    const before = snapshotDb(scene.server);
    const uploadsBefore = filesUnder(path.join(scene.server.dataDir, 'uploads'));
    const outboxBefore = filesUnder(path.join(scene.server.dataDir, 'outbox'));
    const sessionsBefore = scene.server.app.sessions.size;
    const attacker = asOwner(scene);
    let sent = 0;
    for (const attempt of attemptsFor(routes, scene)) {
      for (const [how, headers] of CROSS_SITE) {
        const res = await attacker.request(attempt.route.method, attempt.url, attempt.body, headers);
        sent++;
        t.equal(res.status, 403, `${attempt.label} with ${how}`);
        t.match(res.text, /cross-site/, 'says why');
        t.notOk(res.headers.get('set-cookie'), 'sets no cookie');
      }
    }
    t.ok(sent >= routes.length * CROSS_SITE.length, `${sent} requests sent`);
    await scene.server.app.mailer.idle?.();
    t.same(snapshotDb(scene.server), before, 'every table holds the same rows');
    t.same(filesUnder(path.join(scene.server.dataDir, 'uploads')), uploadsBefore, 'no file reached the uploads directory');
    t.same(filesUnder(path.join(scene.server.dataDir, 'outbox')), outboxBefore, 'no mail was written');
    t.equal(scene.server.app.sessions.size, sessionsBefore, 'no session was created or ended');
    t.equal((await scene.owner.get('/api/users/me')).status, 200, "the owner's session still works");
  });

  t.test('without those headers the same requests are not refused as cross-site (control)', async (t) => {
    const { params } = scene;
    const owner = asOwner(scene);
    const controls: [string, string, unknown, number][] = [
      ['POST', '/api/servers', { name: 'Legit' }, 201],
      ['POST', `/api/servers/${params.server_id}/channels`, { name: 'legit' }, 201],
      ['PUT', `/api/servers/${params.server_id}/channels/${params.channel_id}/messages/${params.message_id}/reactions`, { emoji: '🎉' }, 200],
      ['POST', '/api/register', new URLSearchParams({ username: uniqueName('form'), password: PASSWORD }), 303],
      ['POST', '/api/register', { username: uniqueName('json'), password: PASSWORD }, 201],
    ];
    for (const [method, url, body, status] of controls) {
      const res = await owner.request(method, url, body);
      t.equal(res.status, status, `${method} ${url}`);
    }
  });

  t.test("an Origin equal to the server's own is accepted; near misses are not", async (t) => {
    const { url } = scene.server;
    const owner = asOwner(scene);
    const { port, hostname } = new URL(url);
    const sameOrigin: Record<string, string>[] = [{ origin: url }, { origin: url, 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of sameOrigin) {
      const res = await owner.post('/api/servers', { name: 'Same origin' }, headers);
      t.equal(res.status, 201, JSON.stringify(headers));
    }
    // The host the browser used (a LAN name rather than BASE_URL) counts as same-origin, in
    // either scheme: behind a TLS proxy the server cannot tell which one the browser saw.
    const viaLanName = await rawPost(url, '/api/servers', { host: `chat.lan:${port}`, origin: `http://chat.lan:${port}`, cookie: scene.owner.cookie! });
    t.equal(viaLanName, 201, 'Origin matching the Host header');
    const nearMisses = [
      `http://${hostname}:${Number(port) + 1}`,
      `http://${hostname}:${port}.evil.example`,
      `http://evil.example@${hostname}:${port}`,
      `${url}/`,
      `http://${hostname}`,
      `HTTP://${hostname.toUpperCase()}:${port}x`,
    ];
    for (const origin of nearMisses) {
      const res = await owner.post('/api/servers', { name: 'Near miss' }, { origin });
      t.equal(res.status, 403, `Origin ${origin}`);
    }
  });
});

t.test('ids cannot be probed: an outsider gets the same answer for a real id as for an unknown one', async (t) => {
  const scene = await buildScene();
  t.teardown(scene.server.close);
  // Someone with a session but no part in the server, the DM or the messages.
  const outsider = await signUp(scene.server.url);
  const hidden = ['server_id', 'channel_id', 'message_id', 'conversation_id', 'attachment_id'];
  // Administrator routes answer 403 to anyone else whatever the id: nothing to probe there.
  const routes = buildRoutes(scene.server.app).filter((r) => r.auth !== 'admin' && hidden.some((name) => r.path.includes(`:${name}`)));
  t.ok(routes.length > 0, `${routes.length} routes name a private id`);
  const unknown: Record<string, string> = {};
  for (const name of Object.keys(scene.params)) unknown[name] = name === 'token' ? 'no-such-token' : crypto.randomUUID();
  const before = snapshotDb(scene.server);
  for (const route of routes) {
    const body = route.method === 'GET' || (route.method === 'DELETE' && !route.body) ? undefined : jsonBody(scene);
    const real = await outsider.request(route.method, fill(route.path, scene.params), body);
    const fake = await outsider.request(route.method, fill(route.path, unknown), body);
    // A page (a message link) is the same page whatever the ids; its script asks the API, which answers as above.
    const page = route.path.startsWith('/channels/');
    t.equal(real.status, page ? 200 : 404, `${route.method} ${route.path}: ${page ? 'the page' : '404'} for a real id (${real.text.trim().slice(0, 80)})`);
    t.equal(real.status, fake.status, `${route.method} ${route.path}: same status as for an unknown id`);
    t.equal(real.text, fake.text, `${route.method} ${route.path}: same reason as for an unknown id`);
  }
  t.same(snapshotDb(scene.server), before, 'the outsider changed nothing');
});

/** A WebSocket handshake by hand: the status the server answers (101 when it upgrades). */
function upgradeStatus(base: string, urlPath: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + urlPath, {
      headers: {
        ...headers,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': crypto.randomBytes(16).toString('base64'),
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('WebSocket upgrades refuse cross-site pages (cross-site WebSocket hijacking)', async (t) => {
  const scene = await buildScene();
  t.teardown(scene.server.close);
  const cookie = scene.owner.cookie!;
  const sockets = [`/api/channels/${scene.params.channel_id}/ws`, `/api/conversations/${scene.params.conversation_id}/ws`];
  for (const socketPath of sockets) {
    for (const [how, headers] of CROSS_SITE) {
      t.equal(await upgradeStatus(scene.server.url, socketPath, { cookie, ...headers }), 403, `${socketPath} with ${how}`);
    }
    t.equal(await upgradeStatus(scene.server.url, socketPath, { cookie, origin: scene.server.url }), 101, `${socketPath} from the own origin`);
    t.equal(await upgradeStatus(scene.server.url, socketPath, { cookie }), 101, `${socketPath} without Origin (not a browser)`);
  }
});
