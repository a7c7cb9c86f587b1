// Defects found by an adversarial run against the service, each with the test that failed
// before its fix. Numbers follow the report (docs/security.md "Caps and deadlines").
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { MAX_REACTIONS_PER_USER, MAX_REACTION_EMOJI } from '../src/parts/messages/message-store';
import { MAX_SOCKETS_PER_SESSION, MAX_SOCKETS_PER_USER, SOCKET_CAP_RETRY_S } from '../src/parts/live/sockets';
import { MAX_CHANNELS_PER_SERVER } from '../src/api/channels';
import { MAX_LIVE_INVITES_PER_SERVER } from '../src/api/invites';
import { MAX_ROLES_PER_SERVER, MAX_SERVERS_PER_USER } from '../src/api/servers';
import { Client, signUp, uniqueName } from './helpers/client';
import { befriend, crowd, must, setStanding } from './helpers/community';
import { multipart, startMultipart } from './helpers/multipart';
import { FakeClock, startServer, type TestServer } from './helpers/server';
import { type LiveSocket, openSocket, refusedUpgrade } from './helpers/ws';

const uploadsOf = (server: TestServer) => fs.readdirSync(path.join(server.dataDir, 'uploads'));
const count = (server: TestServer, table: string) => (server.app.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until the uploads directory holds no file. */
async function uploadsEmpty(server: TestServer): Promise<string[]> {
  for (let i = 0; i < 100 && uploadsOf(server).length > 0; i++) await sleep(20);
  return uploadsOf(server);
}

/** Waits (bounded) until an upload is streaming to disk. */
async function streaming(server: TestServer): Promise<void> {
  for (let i = 0; i < 100 && !uploadsOf(server).some((name) => name.endsWith('.part')); i++) await sleep(20);
}

/** Resolves with the next frame, or null when none comes within `ms`. */
async function nothingWithin(socket: LiveSocket, ms: number): Promise<unknown> {
  try {
    return await socket.next(ms);
  } catch {
    return null;
  }
}

t.test('1. a sanction that lands while an upload streams applies to it', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 0);
  const channelPath = `/api/servers/${c.serverId}/channels/${c.general}/messages`;
  const watcher = await openSocket(server.url, `/api/channels/${c.general}/ws`, { client: c.owner });
  t.teardown(() => watcher.close());
  const body = () =>
    multipart([
      { field: 'content', value: 'late words' },
      { file: 'attachments', filename: 'big.bin', size: 2 * 1024 * 1024 },
    ]);

  /** Starts an upload as `who`, applies `sanction` mid-stream, finishes it and checks nothing came of it. */
  async function check(what: string, who: Client, target: string, sanction: () => Promise<unknown> | unknown, status: number) {
    const messagesBefore = count(server, 'messages');
    const upload = await startMultipart(server.url, target, body(), { cookie: who.cookie, pauseAfter: 1024 * 1024 });
    await streaming(server);
    await sanction();
    const res = await upload.finish();
    t.equal(res.status, status, `${what}: ${res.status} ${res.text.trim()}`);
    t.equal(count(server, 'messages'), messagesBefore, `${what}: no message was stored`);
    t.same(await uploadsEmpty(server), [], `${what}: its file is gone`);
  }

  const kicked = await c.owner.post(`/api/servers/${c.serverId}/invites`).then(async (invite) => {
    const client = await signUp(server.url);
    await must(client.post(`/api/invites/${invite.body.token}/accept`), 200);
    return client;
  });
  await check('kicked', kicked, channelPath, () => must(c.owner.delete(`/api/servers/${c.serverId}/members/${kicked.userId}`), 204), 404);

  const invite = (await must(c.owner.post(`/api/servers/${c.serverId}/invites`), 201)).body.token;
  const joiner = async () => {
    const client = await signUp(server.url);
    await must(client.post(`/api/invites/${invite}/accept`), 200);
    return client;
  };
  const suspended = await joiner();
  await check('suspended', suspended, channelPath, () => setStanding(server, suspended.userId, 4), 403);
  const atRisk = await joiner();
  await check('standing 3', atRisk, channelPath, () => setStanding(server, atRisk.userId, 3), 403);
  const loggedOut = await joiner();
  const sameSession = new Client(server.url);
  sameSession.cookie = loggedOut.cookie;
  await check('logged out', loggedOut, channelPath, () => must(sameSession.post('/api/logout'), 204), 401);

  const [alice, bob] = [await signUp(server.url), await signUp(server.url)];
  await befriend(alice, bob);
  const dm = (await must(alice.post('/api/conversations/dm', { usernames: [bob.username] }), 201)).body.id;
  await check('standing 2 in a DM', alice, `/api/conversations/${dm}/messages`, () => setStanding(server, alice.userId, 2), 403);

  t.equal(await nothingWithin(watcher, 200), null, 'no refused message was pushed live');
  const ok = await startMultipart(server.url, channelPath, body(), { cookie: c.owner.cookie, pauseAfter: 1024 * 1024 });
  t.equal((await ok.finish()).status, 201, 'an upload nobody sanctioned still goes through');
});

t.test('2. reactions are capped, rate limited and named emoji only', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock: new FakeClock() });
  t.teardown(server.close);
  const c = await crowd(server, 3);
  const message = (await must(c.owner.post(`/api/servers/${c.serverId}/channels/${c.general}/messages`, { content: 'react' }), 201)).body;
  const reactions = `/api/servers/${c.serverId}/channels/${c.general}/messages/${message.id}/reactions`;
  const emoji = ['😀', '😃', '😄', '😁', '😆', '😅', '😂', '🤣', '😊', '😇', '🙂', '🙃', '😉', '😌', '😍', '🥰', '😘', '😗', '😙', '😚', '😋', '😛'];

  t.test('an unknown shortcode is not an emoji; a known one is its emoji', async (t) => {
    t.equal((await c.owner.put(reactions, { emoji: ':not_an_emoji_at_all:' })).status, 400);
    const res = await must(c.owner.put(reactions, { emoji: ':thumbsup:' }), 200);
    t.match(res.body.reactions, [{ emoji: /^👍/, count: 1, reacted: true }], ':thumbsup: is stored as 👍');
    await must(c.owner.delete(reactions, { emoji: ':+1:' }), 200);
  });

  t.test(`one user puts at most ${MAX_REACTIONS_PER_USER} emoji on one message`, async (t) => {
    for (const e of emoji.slice(0, MAX_REACTIONS_PER_USER)) await must(c.members[0].put(reactions, { emoji: e }), 200);
    const res = await c.members[0].put(reactions, { emoji: emoji[MAX_REACTIONS_PER_USER] });
    t.equal(res.status, 400);
    t.match(res.text, `at most ${MAX_REACTIONS_PER_USER}`);
  });

  t.test(`a message carries at most ${MAX_REACTION_EMOJI} different emoji`, async (t) => {
    for (const e of emoji.slice(MAX_REACTIONS_PER_USER, MAX_REACTION_EMOJI)) await must(c.members[1].put(reactions, { emoji: e }), 200);
    const res = await c.members[2].put(reactions, { emoji: emoji[MAX_REACTION_EMOJI] });
    t.equal(res.status, 400);
    t.match(res.text, `at most ${MAX_REACTION_EMOJI} different`);
    t.equal((await c.members[2].put(reactions, { emoji: emoji[0] })).status, 200, 'an emoji already there can still be added');
  });

  t.test('a toggle loop is rate limited', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await c.members[2].request(i % 2 ? 'DELETE' : 'PUT', reactions, { emoji: '🎉' })).status);
    t.ok(statuses.includes(429), `statuses: ${[...new Set(statuses)].join(', ')}`);
  });

  t.test('the event of one reaction carries the capped list', async (t) => {
    const listed = (await must(c.owner.get(`/api/servers/${c.serverId}/channels/${c.general}/messages`), 200)).body[0];
    t.ok(listed.reactions.length <= MAX_REACTION_EMOJI, `${listed.reactions.length} reactions on the message`);
  });
});

t.test('3. sockets are capped per session and per user', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 0);
  const path = `/api/channels/${c.general}/ws`;
  const sockets: LiveSocket[] = [];
  t.teardown(() => sockets.forEach((s) => s.close()));
  for (let i = 0; i < MAX_SOCKETS_PER_SESSION; i++) sockets.push(await openSocket(server.url, path, { client: c.owner }));
  const refused = await refusedUpgrade(server.url, path, { client: c.owner });
  t.equal(refused.status, 429, `socket ${MAX_SOCKETS_PER_SESSION + 1} of one session`);
  t.match(refused.body, 'too many open sockets');
  t.equal(refused.headers['retry-after'], String(SOCKET_CAP_RETRY_S), 'with Retry-After, like every 429');

  // More sessions of the same user, up to the per-user cap.
  const password = 'correct horse';
  while (sockets.length < MAX_SOCKETS_PER_USER) {
    const session = new Client(server.url);
    await must(session.post('/api/login', { username: c.owner.username, password }), 200);
    for (let i = 0; i < MAX_SOCKETS_PER_SESSION && sockets.length < MAX_SOCKETS_PER_USER; i++) {
      sockets.push(await openSocket(server.url, path, { client: session }));
    }
  }
  const another = new Client(server.url);
  await must(another.post('/api/login', { username: c.owner.username, password }), 200);
  t.equal((await refusedUpgrade(server.url, path, { client: another })).status, 429, `socket ${MAX_SOCKETS_PER_USER + 1} of one user`);
  sockets.pop()!.close();
  await sleep(100);
  const reopened = await openSocket(server.url, path, { client: another });
  sockets.push(reopened);
  t.pass('a closed socket frees its place');
});

t.test('4. a removed member cannot walk back in with an old invite', async (t) => {
  const clock = new FakeClock();
  const server = await startServer({ clock });
  t.teardown(server.close);
  const c = await crowd(server, 2);
  const [mallory, leaver] = c.members;
  const base = `/api/servers/${c.serverId}`;
  const ownersOld = (await must(c.owner.post(`${base}/invites`), 201)).body.token;
  const mallorysOwn = (await must(mallory.post(`${base}/invites`), 201)).body.token;
  clock.advance(1000);
  await must(c.owner.delete(`${base}/members/${mallory.userId}`), 204);

  t.equal((await new Client(server.url).get(`/api/invites/${mallorysOwn}`)).status, 404, "the removed member's invites are revoked");
  const back = await mallory.post(`/api/invites/${ownersOld}/accept`);
  t.equal(back.status, 403, 'an invite made before the removal does not let them back');
  t.match(back.text, 'new invite');
  const stranger = await signUp(server.url);
  t.equal((await stranger.post(`/api/invites/${ownersOld}/accept`)).status, 200, 'the same invite still works for others');

  const byMember = (await must(stranger.post(`${base}/invites`), 201)).body.token;
  clock.advance(1000);
  t.equal((await mallory.post(`/api/invites/${byMember}/accept`)).status, 403, "a plain member's new invite does not either");
  const anew = (await must(c.owner.post(`${base}/invites`), 201)).body.token;
  t.equal((await mallory.post(`/api/invites/${anew}/accept`)).status, 200, "the owner's new invite does");

  await must(leaver.delete(`${base}/members/${leaver.userId}`), 204);
  t.equal((await leaver.post(`/api/invites/${ownersOld}/accept`)).status, 200, 'someone who left on their own may come back');
});

/** Opens a raw connection from `localAddress` (127.0.0.0/8 is all this machine) and sends `head`. */
function rawConnection(port: number, localAddress: string, head: string): Promise<{ socket: net.Socket; answer: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.write(head);
      let text = '';
      const answer = new Promise<string>((done) => {
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('close', () => done(text));
        socket.on('error', () => {});
      });
      resolve({ socket, answer });
    });
    socket.once('error', reject);
  });
}

t.test('5. slow bodies and connection floods', async (t) => {
  const server = await startServer({ env: { CONNECTIONS_PER_CLIENT: '5' }, timeouts: { bodyMs: 600 } });
  t.teardown(server.close);
  const port = Number(new URL(server.url).port);
  const slowLogin = 'POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{';

  t.test('a JSON body that dribbles is cut off with 408 at its deadline', async (t) => {
    const started = Date.now();
    const { answer } = await rawConnection(port, '127.0.0.3', slowLogin);
    const text = await answer;
    t.match(text, /^HTTP\/1\.1 408/, text.split('\r\n')[0]);
    t.ok(Date.now() - started < 5_000, `closed after ${Date.now() - started} ms`);
  });

  t.test('one address holds at most its share of connections; others and the health check still answer', async (t) => {
    const held = await Promise.all(Array.from({ length: 5 }, () => rawConnection(port, '127.0.0.2', 'GET /healthz HTTP/1.1\r\nHost: x\r\n')));
    t.teardown(() => held.forEach((h) => h.socket.destroy()));
    await sleep(50);
    const extra = await rawConnection(port, '127.0.0.2', 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    const refused = await extra.answer;
    t.match(refused, /^HTTP\/1\.1 503/, 'the sixth connection from that address is refused');
    t.match(refused, /too many connections from this address/);
    const health = await fetch(`${server.url}/healthz`);
    t.equal(health.status, 200, 'the health check from another address answers');
    const other = await rawConnection(port, '127.0.0.4', 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    t.match(await other.answer, /^HTTP\/1\.1 200/, 'so does any other client');
  });
});

t.test('6. start-up removes upload files no row holds, and reports rows without files', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-test-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  let server = await startServer({ dataDir });
  const c = await crowd(server, 0);
  const posted = await c.owner.post(
    `/api/servers/${c.serverId}/channels/${c.general}/messages`,
    (() => {
      const form = new FormData();
      form.append('content', 'kept');
      form.append('attachments', new Blob(['kept file']), 'kept.txt');
      form.append('attachments', new Blob(['lost file']), 'lost.txt');
      return form;
    })(),
  );
  t.equal(posted.status, 201);
  const [kept, lost] = posted.body.attachments.map((a: { id: string }) => a.id);
  await server.close();
  const uploads = path.join(dataDir, 'uploads');
  const orphan = crypto.randomUUID();
  fs.writeFileSync(path.join(uploads, orphan), 'a file a crash left behind');
  fs.writeFileSync(path.join(uploads, `${crypto.randomUUID()}.part`), 'half an upload');
  fs.rmSync(path.join(uploads, lost));

  server = await startServer({ dataDir });
  t.teardown(server.close);
  t.same(fs.readdirSync(uploads).sort(), [kept], 'only the file a row holds is left');
  t.ok(
    server.logs.some((line) => line.includes('removed 2 file(s)')),
    'the removal is logged',
  );
  t.ok(
    server.logs.some((line) => line.includes('1 attachment(s) have no file') && line.includes(lost)),
    'the row without a file is reported',
  );
});

t.test('7. a server report by someone outside it tells them nothing about the server', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const c = await crowd(server, 1);
  const outsider = await signUp(server.url);
  const res = await must(outsider.post('/api/reports', { type: 'server', target: c.serverId, reason: 'spam' }), 201);
  t.notOk(JSON.stringify(res.body).includes(c.owner.username), 'no owner name');
  t.same(res.body.snapshot, { server_id: c.serverId });
  const member = await must(c.members[0].post('/api/reports', { type: 'server', target: c.serverId, reason: 'spam' }), 201);
  t.equal(member.body.snapshot.owner_username, c.owner.username, 'a member sees what they could see anyway');
});

t.test('8. administrators cannot change their own standing or warnings through the API; the CLI can', async (t) => {
  const name = uniqueName('selfadmin');
  const server = await startServer({ env: { ADMIN_USERS: name } });
  t.teardown(server.close);
  const admin = await signUp(server.url, name);
  const other = await signUp(server.url);
  t.equal((await admin.put(`/api/admin/users/${admin.userId}/standing`, { standing: 4 })).status, 403, 'own standing');
  t.equal((await admin.post(`/api/admin/users/${admin.userId}/warnings`, { reason: 'oops' })).status, 403, 'own warning');
  t.equal((await admin.put(`/api/admin/users/${other.userId}/standing`, { standing: 1 })).status, 200, 'another user: as before');

  // The way back for an administrator suspended anyway (by another administrator, say).
  server.app.db
    .prepare("INSERT INTO warnings (id, user_id, issued_by, reason, created_at) VALUES (?, ?, ?, 'x', '2026-01-01T00:00:00Z')")
    .run(crypto.randomUUID(), admin.userId, other.userId);
  setStanding(server, admin.userId, 4);
  const cli = (...args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [path.join(__dirname, '..', 'dist', 'cli.js'), ...args], { env: { DATA_DIR: server.dataDir } }, (err, out, errOut) =>
        resolve({ code: err ? Number(err.code) : 0, out: out + errOut }),
      ),
    );
  const listed = await cli('warnings', 'list', name);
  t.equal(listed.code, 0);
  t.match(listed.out, /1 warning\(s\), standing 4/);
  t.equal((await admin.get('/api/admin/me')).status, 403, 'suspended');
  t.equal((await cli('standing', 'set', name, '0')).code, 0);
  t.equal((await admin.get('/api/admin/me')).status, 200, 'standing set 0 lets them back at once');
  const cleared = await cli('warnings', 'clear', name);
  t.match(cleared.out, /removed 1 warning\(s\)/);
  t.equal((await admin.get('/api/account')).body.warnings.length, 0);
  t.equal((await cli('standing', 'set', name, '5')).code, 2, 'a standing outside 0-4 is refused');
  t.equal((await cli('standing', 'set', 'nobody_at_all', '1')).code, 1, 'an unknown user is refused');
});

t.test('9. shutdown refuses new requests on busy kept-alive connections and removes uploads in flight', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-test-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir });
  const c = await crowd(server, 0);
  const port = Number(new URL(server.url).port);
  // A kept-alive connection busy with a request whose body is still arriving when the drain starts.
  const busy = await rawConnection(port, '127.0.0.1', 'POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{');
  const upload = await startMultipart(
    server.url,
    `/api/servers/${c.serverId}/channels/${c.general}/messages`,
    multipart([{ file: 'attachments', filename: 'big.bin', size: 4 * 1024 * 1024 }]),
    { cookie: c.owner.cookie, pauseAfter: 1024 * 1024 },
  );
  await streaming(server);
  t.ok(
    uploadsOf(server).some((name) => name.endsWith('.part')),
    'the upload is on disk',
  );
  const closing = server.close();
  // The first request finishes; a second one arrives on the same connection during the drain.
  busy.socket.write('}GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  const answers = await busy.answer;
  t.match(answers, /^HTTP\/1\.1 400/, 'the request in flight is answered as usual');
  const second = answers.slice(answers.indexOf('HTTP/1.1', 10));
  t.match(second, /^HTTP\/1\.1 503/, 'the next request on that connection is turned away');
  t.match(second, /connection: close/i);
  const uploadAnswer = await upload.finish().catch(() => ({ status: 0 }));
  t.ok(uploadAnswer.status === 503 || uploadAnswer.status === 0, `the upload was ended: ${uploadAnswer.status}`);
  await closing;
  t.same(fs.readdirSync(path.join(dataDir, 'uploads')), [], 'no .part or orphan file is left');
});

t.test('10. what one user can create is capped', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const base = (await must(owner.post('/api/servers', { name: 'capped' }), 201)).body.id;
  const S = `/api/servers/${base}`;

  for (let i = 1; i < MAX_CHANNELS_PER_SERVER; i++) await must(owner.post(`${S}/channels`, { name: `c${i}` }), 201);
  const channel = await owner.post(`${S}/channels`, { name: 'one too many' });
  t.equal(channel.status, 400, `channel ${MAX_CHANNELS_PER_SERVER + 1}`);
  t.match(channel.text, `at most ${MAX_CHANNELS_PER_SERVER} channels`);

  for (let i = 0; i < MAX_ROLES_PER_SERVER; i++) await must(owner.post(`${S}/roles`, { name: `r${i}` }), 201);
  t.equal((await owner.post(`${S}/roles`, { name: 'one too many' })).status, 400, `role ${MAX_ROLES_PER_SERVER + 1}`);

  for (let i = 0; i < MAX_LIVE_INVITES_PER_SERVER; i++) await must(owner.post(`${S}/invites`), 201);
  t.equal((await owner.post(`${S}/invites`)).status, 400, `live invite ${MAX_LIVE_INVITES_PER_SERVER + 1}`);

  for (let i = 1; i < MAX_SERVERS_PER_USER; i++) await must(owner.post('/api/servers', { name: `s${i}` }), 201);
  const server101 = await owner.post('/api/servers', { name: 'one too many' });
  t.equal(server101.status, 403, `server ${MAX_SERVERS_PER_USER + 1}`);
  t.match(server101.text, `${MAX_SERVERS_PER_USER} servers`);
  const other = await signUp(server.url);
  const elsewhere = (await must(other.post('/api/servers', { name: 'elsewhere' }), 201)).body.id;
  const invite = (await must(other.post(`/api/servers/${elsewhere}/invites`), 201)).body.token;
  t.equal((await owner.post(`/api/invites/${invite}/accept`)).status, 403, 'joining counts too');
});

t.test('10. creation is rate limited', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock: new FakeClock() });
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) statuses.push((await owner.post('/api/servers', { name: `s${i}` })).status);
  t.ok(statuses.includes(429), `servers: ${[...new Set(statuses)].join(', ')}`);
  const serverId = (await owner.get('/api/servers')).body[0].id;
  const made: number[] = [];
  for (let i = 0; i < 60; i++) made.push((await owner.post(`/api/servers/${serverId}/invites`)).status);
  t.ok(made.includes(429), `invites: ${[...new Set(made)].join(', ')}`);
});

t.test('11. a client that drops mid-body is one log line, not an unexpected error', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const port = Number(new URL(server.url).port);
  const { socket } = await rawConnection(
    port,
    '127.0.0.1',
    'POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user',
  );
  await sleep(50);
  socket.destroy();
  for (let i = 0; i < 50 && !server.logs.some((l) => l.startsWith('POST /api/login')); i++) await sleep(20);
  t.ok(
    server.logs.some((l) => /^POST \/api\/login aborted [\d.]+ms$/.test(l)),
    server.logs.filter((l) => l.includes('login')).join(' | '),
  );
  t.notOk(
    server.logs.some((l) => l.includes('unexpected error')),
    'no stack',
  );
});

t.test('12. form errors redirect with a code, never with text', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const form = (fields: Record<string, string>) => new URLSearchParams(fields);
  const anon = new Client(server.url);
  const res = await anon.post('/api/login', form({ username: 'nobody_here', password: 'wrong password' }));
  t.equal(res.status, 303);
  t.equal(res.headers.get('location'), '/?error=login_failed');
  const home = fs.readFileSync(path.join(__dirname, '..', 'static', 'js', 'home.js'), 'utf8');
  t.match(home, 'login_failed', 'the page words the code itself');
});

t.test('13. DURABILITY=strict syncs every commit, and uploads still work', async (t) => {
  const server = await startServer({ env: { DURABILITY: 'strict' } });
  t.teardown(server.close);
  t.equal(server.app.db.pragma('synchronous', { simple: true }), 2, 'synchronous = FULL');
  const c = await crowd(server, 0);
  const form = new FormData();
  form.append('attachments', new Blob(['durable']), 'd.txt');
  const res = await c.owner.post(`/api/servers/${c.serverId}/channels/${c.general}/messages`, form);
  t.equal(res.status, 201);
  t.equal((await c.owner.get(res.body.attachments[0].url)).text, 'durable');
  const normal = await startServer();
  t.teardown(normal.close);
  t.equal(normal.app.db.pragma('synchronous', { simple: true }), 1, 'the default stays NORMAL');
});

t.test('14. a refused request whose small body is still arriving gets its answer, and the connection goes on', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const port = Number(new URL(server.url).port);
  // Refused before its body is read (no session): the answer comes while the client still sends.
  const { socket, answer } = await rawConnection(
    port,
    '127.0.0.1',
    'POST /api/imports HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 40\r\n\r\n--b\r\n',
  );
  let first = '';
  socket.on('data', (chunk) => (first += chunk.toString('latin1')));
  for (let i = 0; i < 250 && !first.includes('\r\n\r\n'); i++) await sleep(20);
  t.match(first, /^HTTP\/1\.1 401/, 'refused at once');
  t.notMatch(first, /connection: close/i, 'a small body is read and dropped, not cut off');
  // The rest of the body, then a second request on the same connection (a cut-off one would
  // have met these writes with a broken pipe, and never answered).
  if (!socket.destroyed) socket.write('x'.repeat(35) + 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  const all = await answer;
  t.match(all.slice(all.indexOf('HTTP/1.1', 1)), /^HTTP\/1\.1 200/, 'the connection answers its next request');
});
