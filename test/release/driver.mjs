// Drives an unpacked release the way a self-hoster would, with the release's own Node.js and
// nothing else: test/release.test.ts runs this file inside a network namespace with no
// interface but loopback, and PATH pointing at an empty directory (no compiler, no node, no
// npm). It prints one JSON line of what it saw; the test holds each part against what it wants.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [releaseDir, scratch] = process.argv.slice(2);
const chat = path.join(releaseDir, 'bin', 'chat');
const emptyPath = path.join(scratch, 'empty-path');
fs.mkdirSync(emptyPath, { recursive: true });
// What a service manager gives a process: no PATH to tools, a home of its own.
const env = { PATH: emptyPath, HOME: scratch, HOST: '127.0.0.1', PORT: '0' };
const seen = {};

function run(...args) {
  const res = spawnSync(chat, args, { env, encoding: 'utf8', timeout: 60_000 });
  return { code: res.status, out: `${res.stdout}${res.stderr}`.trim() };
}

function serve() {
  const child = spawn(chat, ['serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const listening = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      const port = /listening on http:\/\/[^:]+:(\d+)/.exec(output)?.[1];
      if (port) resolve(`http://127.0.0.1:${port}`);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then((code) => reject(new Error(`chat serve exited ${code} before listening: ${output}`)));
  });
  return { child, listening, exited, output: () => output };
}

async function call(base, method, url, { cookie, json, form } = {}) {
  const headers = {};
  if (cookie) headers.cookie = cookie;
  let body;
  if (json) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(json);
  } else if (form) body = form;
  const res = await fetch(base + url, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  const session = /app_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed, text, cookie: session ? `app_session=${session}` : undefined };
}

const FILE = Buffer.from('a file that travels through a backup\n'.repeat(100));

async function main() {
  seen.version = run('--version');
  seen.help = run('help');

  // First start: a person registers, makes a server, posts and uploads.
  let server = serve();
  let base = await server.listening;
  seen.register = (await call(base, 'POST', '/api/register', { json: { username: 'alice', password: 'correct horse' } })).status;
  const login = await call(base, 'POST', '/api/login', { json: { username: 'alice', password: 'correct horse' } });
  seen.login = login.status;
  const cookie = login.cookie;
  const created = await call(base, 'POST', '/api/servers', { cookie, json: { name: 'release' } });
  const channels = await call(base, 'GET', `/api/servers/${created.body.id}/channels`, { cookie });
  const messages = `/api/servers/${created.body.id}/channels/${channels.body[0].id}/messages`;
  seen.post = (await call(base, 'POST', messages, { cookie, json: { content: 'kept by the backup' } })).status;
  const form = new FormData();
  form.append('content', 'with a file');
  form.append('attachments', new Blob([FILE], { type: 'text/plain' }), 'notes.txt');
  const uploaded = await call(base, 'POST', messages, { cookie, form });
  seen.upload = uploaded.status;
  const fileUrl = uploaded.body?.attachments?.[0]?.url;
  seen.download = Buffer.from(await (await fetch(base + fileUrl, { headers: { cookie } })).arrayBuffer()).equals(FILE);
  seen.page = (await call(base, 'GET', '/')).status;

  // A backup while it runs, then a message the backup does not have.
  seen.backup = run('backup', path.join(scratch, 'backup'));
  seen.adminGrant = run('admin', 'grant', 'alice');
  await call(base, 'POST', messages, { cookie, json: { content: 'after the backup' } });
  server.child.kill('SIGTERM');
  seen.stop = await server.exited;
  seen.defaultDataDir = fs.existsSync(path.join(releaseDir, 'data', 'chat.db'));

  // Restore with the server stopped, start again: the state of the backup, file included.
  seen.restore = run('restore', path.join(scratch, 'backup'));
  server = serve();
  base = await server.listening;
  const again = await call(base, 'POST', '/api/login', { json: { username: 'alice', password: 'correct horse' } });
  const history = await call(base, 'GET', `${messages}?limit=50`, { cookie: again.cookie });
  seen.restoredMessages = (history.body ?? []).map((m) => m.content).sort();
  seen.restoredDownload = Buffer.from(await (await fetch(base + fileUrl, { headers: { cookie: again.cookie } })).arrayBuffer()).equals(FILE);
  server.child.kill('SIGTERM');
  seen.stopAgain = await server.exited;
}

main()
  .catch((err) => (seen.error = String(err.stack ?? err)))
  .finally(() => console.log(JSON.stringify(seen)));
