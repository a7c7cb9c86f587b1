// Code that runs outside a request's promise (parser events, socket frames, timers, background
// jobs) sends its errors to an owner: the request it belongs to, the one connection it serves,
// or the log. Each path is made to fail here, by real input where input can do it and by a
// failpoint (FAILPOINTS, src/core/callbacks.ts) where it cannot, and the server must keep answering.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { armFailpoints, every } from '../src/core/callbacks';
import { Client, signUp } from './helpers/client';
import { befriend, crowd, must } from './helpers/community';
import { multipart, postMultipart } from './helpers/multipart';
import { startServerProcess } from './helpers/process';
import { type TestServer, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

t.setTimeout(120_000);
t.afterEach(() => armFailpoints([]));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The server still answers, and the signed-in caller is still signed in (sessions live in memory). */
async function stillServing(t: Test, server: { url: string }, client: Client): Promise<void> {
  t.equal((await new Client(server.url).get('/healthz')).status, 200, 'the server still answers');
  t.equal((await client.get('/api/users/me')).status, 200, 'and the session still holds');
}

/** A raw multipart body with boundary XX, exactly as given (CRLFs included). */
const raw = (text: string) => ({
  contentType: 'multipart/form-data; boundary=XX',
  length: Buffer.byteLength(text),
  *chunks() {
    yield Buffer.from(text);
  },
});

const part = (headers: string, body = 'abc') => `--XX\r\n${headers}\r\n\r\n${body}\r\n`;
const END = '--XX--\r\n';

// Malformed parts as a hostile client writes them. Every one once stopped the process or could.
const MALFORMED: [string, string][] = [
  ['a part with an empty name', part('Content-Disposition: form-data; name=""') + END],
  ['a part with no name', part('Content-Disposition: form-data') + END],
  ['a file part with an empty name', part('Content-Disposition: form-data; name=""; filename="a.txt"') + END],
  ['a file part with no name', part('Content-Disposition: form-data; filename="a.txt"') + END],
  ['a part without Content-Disposition', part('Content-Type: text/plain') + END],
  ['a part with no headers at all', '--XX\r\n\r\nabc\r\n' + END],
  ['a part whose disposition is not form-data', part('Content-Disposition: attachment; name="content"') + END],
  ['a nameless part before a good one', part('Content-Disposition: form-data; name=""') + part('Content-Disposition: form-data; name="content"') + END],
  ['a nameless part after a good one', part('Content-Disposition: form-data; name="content"') + part('Content-Disposition: form-data; name=""') + END],
  ['two nameless file parts', part('Content-Disposition: form-data; filename="a"') + part('Content-Disposition: form-data; filename="b"') + END],
  ['a nameless empty file part', part('Content-Disposition: form-data; name=""; filename=""', '') + END],
  ['a name made of a quote', part('Content-Disposition: form-data; name="\\""') + END],
  ['a name parameter without a value', part('Content-Disposition: form-data; name') + END],
  ['a name of 10 000 characters', part(`Content-Disposition: form-data; name="${'n'.repeat(10_000)}"`) + END],
  ['a body cut off inside the headers', '--XX\r\nContent-Disposition: form-data; na'],
  ['a body cut off inside a nameless part', '--XX\r\nContent-Disposition: form-data; name=""\r\n\r\nab'],
  ['no closing boundary', part('Content-Disposition: form-data; name=""')],
  ['nothing but the closing boundary', END],
];

t.test('malformed multipart parts get a 4xx on every multipart route and stop nothing', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, serverId, general, members } = await crowd(server, 1);
  await befriend(owner, members[0]);
  const dm = (await must(owner.post('/api/conversations/group', { name: 'g', usernames: [members[0].username] }), 201)).body.id;
  const routes: [string, string][] = [
    ['POST', `/api/servers/${serverId}/channels/${general}/messages`],
    ['POST', `/api/servers/${serverId}/messages`],
    ['POST', `/api/conversations/${dm}/messages`],
    ['PUT', '/api/account/avatar'],
  ];
  for (const [method, route] of routes) {
    for (const [what, body] of MALFORMED) {
      const res = await postMultipart(server.url, route, raw(body), { method, cookie: owner.cookie });
      t.ok(res.status >= 400 && res.status < 500, `${method} ${route.split('/').slice(-1)[0]}, ${what}: ${res.status} ${res.text.trim().slice(0, 80)}`);
    }
  }
  await stillServing(t, server, owner);
  t.same(fs.readdirSync(path.join(server.dataDir, 'uploads')), [], 'no file left in uploads/');
  t.same(fs.readdirSync(path.join(server.dataDir, 'avatars')), [], 'no file left in avatars/');
  t.notOk(
    server.logs.some((line) => /unexpected error|failed:/.test(line)),
    'nothing was an unexpected error',
  );
});

t.test('an error inside a multipart handler fails that request with a logged 500, and only that request', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, serverId, general } = await crowd(server, 0);
  const route = `/api/servers/${serverId}/channels/${general}/messages`;
  const upload = () =>
    multipart([
      { field: 'content', value: 'hi' },
      { file: 'attachments', filename: 'a.txt', data: 'hello' },
    ]);
  for (const point of ['multipart.field', 'multipart.file', 'multipart.close', 'upload.stored', 'upload.received']) {
    armFailpoints([point]);
    const res = await postMultipart(server.url, route, upload(), { cookie: owner.cookie });
    armFailpoints([]);
    t.equal(res.status, 500, `${point}: 500`);
    t.ok(
      server.logs.some((line) => line.includes(`failpoint ${point}`)),
      `${point}: logged with its stack`,
    );
    // The partial file is removed once its stream closes, soon after the answer (later on a busy machine).
    const left = () => fs.readdirSync(path.join(server.dataDir, 'uploads'));
    for (let i = 0; i < 100 && left().length > 0; i++) await sleep(20);
    t.same(left(), [], `${point}: no file left`);
  }
  armFailpoints(['multipart.file']);
  const avatar = multipart([{ file: 'avatar', filename: 'a.png', data: 'not really' }]);
  t.equal((await postMultipart(server.url, '/api/account/avatar', avatar, { method: 'PUT', cookie: owner.cookie })).status, 500, 'the avatar upload too');
  armFailpoints(['avatar.encode']);
  const image = multipart([{ file: 'avatar', filename: 'a.png', data: Buffer.from('89504e470d0a1a0a', 'hex') }]);
  t.equal((await postMultipart(server.url, '/api/account/avatar', image, { method: 'PUT', cookie: owner.cookie })).status, 500, 'and its decoding');
  armFailpoints([]);
  t.equal((await postMultipart(server.url, route, upload(), { cookie: owner.cookie })).status, 201, 'the next upload goes through');
  await stillServing(t, server, owner);
});

t.test('an error in a socket callback closes that socket (1011), and only that socket', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const bystander = await openSocket(server.url, '/api/ws', { client: members[0] });
  await bystander.event('ready');

  armFailpoints(['socket.message']);
  const room = await openSocket(server.url, `/api/channels/${general}/ws`, { client: owner });
  room.ws.send('hello');
  t.equal((await room.closed()).code, 1011, 'a frame that fails closes its socket with 1011');

  armFailpoints(['socket.ready']);
  const stream = await openSocket(server.url, '/api/ws', { client: owner });
  t.equal((await stream.closed()).code, 1011, 'a ready frame that cannot be built closes the stream with 1011');

  armFailpoints(['socket.close']);
  const other = await openSocket(server.url, `/api/channels/${general}/ws`, { client: owner });
  other.close();
  await other.closed();
  await sleep(50);
  t.ok(
    server.logs.some((line) => line.includes('websocket close failed')),
    'an error while closing is logged',
  );

  armFailpoints([]);
  await must(owner.post(`/api/servers/${serverId}/channels/${general}/messages`, { content: 'still here' }), 201);
  t.equal((await bystander.event('message')).message.content, 'still here', 'other sockets go on receiving');
  bystander.close();
  await stillServing(t, server, owner);
});

t.test('an event that fails to go out is dropped and logged; the events behind it are delivered', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, members, serverId, general } = await crowd(server, 1);
  const stream = await openSocket(server.url, '/api/ws', { client: members[0] });
  await stream.event('ready');
  const post = (content: string) => must(owner.post(`/api/servers/${serverId}/channels/${general}/messages`, { content }), 201);
  armFailpoints(['outbox.flush']);
  await post('lost');
  await sleep(50);
  armFailpoints([]);
  t.ok(
    server.logs.some((line) => line.includes('live event delivery failed')),
    'logged',
  );
  await post('delivered');
  t.equal((await stream.event('message')).message.content, 'delivered', 'the next event arrives');
  stream.close();
  await stillServing(t, server, owner);
});

t.test('an account export that fails midway is logged, leaves no file and stops nothing', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const { owner, serverId, general } = await crowd(server, 0);
  await must(owner.post(`/api/servers/${serverId}/channels/${general}/messages`, { content: 'to export' }), 201);
  for (const point of ['export.batch', 'export.messages']) {
    armFailpoints([point]);
    await must(owner.post('/api/account/export'), 202);
    let status = 'running';
    for (let i = 0; i < 100 && status === 'running'; i++) {
      await sleep(20);
      status = (await owner.get('/api/account/export')).body.status;
    }
    armFailpoints([]);
    t.equal(status, 'none', `${point}: no export is offered`);
    t.ok(
      server.logs.some((line) => line.includes(`export of user ${owner.userId} failed`) && line.includes(point)),
      `${point}: logged`,
    );
    t.same(fs.readdirSync(path.join(server.dataDir, 'exports')), [], `${point}: no file left`);
  }
  await must(owner.post('/api/account/export'), 202);
  await stillServing(t, server, owner);
});

t.test('a mail transport that throws fails that mail (retried), not the process', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);
  armFailpoints(['mail.deliver']);
  await must(user.put('/api/account/email', { email: 'someone@example.org' }), 200);
  await sleep(50);
  armFailpoints([]);
  t.ok(
    server.logs.some((line) => /mail to someone@example\.org .* failed \(attempt 1 of 4\), retrying/.test(line)),
    'logged, retry planned',
  );
  await stillServing(t, server, user);
});

t.test('a timer whose work throws logs it and keeps running', async (t) => {
  const lines: string[] = [];
  let runs = 0;
  armFailpoints(['timer.probe']);
  const timer = every(
    5,
    'probe',
    () => runs++,
    (line) => lines.push(line),
  );
  t.teardown(() => clearInterval(timer));
  for (let waited = 0; lines.length < 2 && waited < 2_000; waited += 20) await sleep(20);
  t.equal(runs, 0, 'the failing work never ran');
  t.ok(lines.length >= 2 && lines.every((line) => line.startsWith('probe failed: Error: failpoint timer.probe')), 'each failure logged with its stack');
  armFailpoints([]);
  // Bounded, not a fixed wait: on a busy machine a 5 ms timer may fire late (CI saw one run in 40 ms).
  for (let waited = 0; runs < 2 && waited < 2_000; waited += 20) await sleep(20);
  t.ok(runs >= 2, 'the timer went on');
});

t.test('the heartbeat and presence timers of a running server survive their own errors', async (t) => {
  const server: TestServer = await startServer({ settings: { heartbeatMs: 50, presenceGraceMs: 100 } });
  t.teardown(server.close);
  const { owner } = await crowd(server, 0);
  armFailpoints(['timer.presence', 'timer.heartbeat']);
  const stream = await openSocket(server.url, '/api/ws', { client: owner });
  await stream.event('ready');
  stream.close();
  await stream.closed();
  // The offline timer fires presenceGraceMs after the last socket closed.
  await sleep(300);
  t.ok(
    server.logs.some((line) => line.startsWith('presence failed: Error: failpoint timer.presence')),
    'presence timer failure logged',
  );
  t.ok(
    server.logs.some((line) => line.startsWith('heartbeat failed: Error: failpoint timer.heartbeat')),
    'heartbeat failure logged',
  );
  armFailpoints([]);
  const silent = await openSocket(server.url, '/api/ws', { client: owner, autoPong: false });
  t.equal((await silent.closed(2_000)).code, 1006, 'the heartbeat went on: a peer that never answers is cut off');
  await stillServing(t, server, owner);
});

t.test('an exception no callback owns is logged and the server goes on, sessions intact (the process-level policy)', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-escape-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // `:escape` throws on the next turn, outside every owner: what a defect would do.
  const proc = await startServerProcess(dataDir, { FAILPOINTS: 'multipart.field:escape' });
  t.teardown(() => proc.child.kill('SIGKILL'));
  const user = await signUp(proc.url);
  const serverId = (await must(user.post('/api/servers', { name: 's' }), 201)).body.id;
  const sent = await postMultipart(proc.url, `/api/servers/${serverId}/messages`, multipart([{ field: 'content', value: 'hi' }]), { cookie: user.cookie });
  t.equal(sent.status, 201, 'the request itself was answered');
  for (let i = 0; i < 50 && !proc.output().includes('uncaught exception'); i++) await sleep(20);
  t.match(proc.output(), /uncaught exception \(a defect: the server goes on\): Error: failpoint multipart\.field\n\s+at /, 'logged with its stack');
  t.equal(proc.child.exitCode, null, 'the process is still running');
  await stillServing(t, proc, user);
});

t.test('logging never throws: with its stdout and stderr readers gone, a SIGTERM still drains and exits', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-epipe-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const proc = await startServerProcess(dataDir);
  t.teardown(() => proc.child.kill('SIGKILL'));
  // `chat serve | tee log`, and tee dies: every write to either pipe now fails with EPIPE.
  proc.child.stdout!.destroy();
  proc.child.stderr!.destroy();
  // Requests, so that the request log has lines to write to the broken pipe.
  for (let i = 0; i < 3; i++) t.equal((await new Client(proc.url).get('/healthz')).status, 200, 'still serving');
  proc.child.kill('SIGTERM');
  // Before, it closed its port and spun at 100 % CPU, never exiting. The bound is generous: the
  // drain itself takes a moment, on a busy machine several.
  const code = await Promise.race([proc.exited, sleep(20_000).then(() => 'still running' as const)]);
  t.equal(code, 0, 'it exited, as a drain ends');
});
