import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';
import { startServerProcess } from './helpers/process';

// The built programs are tested as a self-hoster runs them: `make test` builds first.
const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const SERVER = path.join(ROOT, 'dist', 'server.js');
if (!fs.existsSync(CLI) || !fs.existsSync(SERVER)) {
  execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built program to its end, with only the environment a self-hoster would give it. */
function run(file: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('node dist/cli.js admin', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const admin = (...args: string[]) => run(CLI, ['admin', ...args], { DATA_DIR: server.dataDir });
  const name = uniqueName('hoster');
  const user = await signUp(server.url, name);

  t.test('list says so when there are no administrators', async (t) => {
    const res = await admin('list');
    t.equal(res.code, 0);
    t.equal(res.stdout, '(no administrators)\n');
  });

  t.test('grant makes a user an administrator at once, while the server runs', async (t) => {
    t.equal((await user.get('/api/admin/me')).status, 403);
    const res = await admin('grant', name.toUpperCase());
    t.equal(res.code, 0, res.stderr);
    t.match(res.stdout, /is now an administrator/);
    t.equal((await user.get('/api/admin/me')).status, 200, 'the same session, no restart');
    t.equal((await admin('grant', name)).code, 0, 'granting twice is fine');
  });

  t.test('list names the administrators', async (t) => {
    const other = uniqueName('another');
    await signUp(server.url, other);
    await admin('grant', other);
    const res = await admin('list');
    t.equal(res.code, 0);
    t.same(res.stdout.trim().split('\n').sort(), [name, other].sort());
  });

  t.test('revoke takes it away at once', async (t) => {
    const res = await admin('revoke', name);
    t.equal(res.code, 0, res.stderr);
    t.match(res.stdout, /is no longer an administrator/);
    t.equal((await user.get('/api/admin/me')).status, 403);
    t.notMatch((await admin('list')).stdout, name);
  });

  t.test('standing set suspends at once and lifts at once, while the server runs', async (t) => {
    t.equal((await user.get('/api/account')).status, 200);
    t.equal((await run(CLI, ['standing', 'set', name, '4'], { DATA_DIR: server.dataDir })).code, 0);
    t.equal((await user.get('/api/servers')).status, 403, 'the same session is suspended on its next request');
    t.equal((await run(CLI, ['standing', 'set', name, '0'], { DATA_DIR: server.dataDir })).code, 0);
    t.equal((await user.get('/api/servers')).status, 200);
  });

  t.test('an unknown user exits 1 with the reason on stderr', async (t) => {
    for (const command of ['grant', 'revoke']) {
      const res = await admin(command, uniqueName('nobody'));
      t.equal(res.code, 1, command);
      t.match(res.stderr, /^no user named \S+\n$/);
      t.equal(res.stdout, '');
    }
  });

  t.test('a usage error exits 2 and prints the usage', async (t) => {
    for (const args of [[], ['admin'], ['admin', 'grant'], ['admin', 'promote', name], ['user', 'grant', name]]) {
      const res = await run(CLI, args, { DATA_DIR: server.dataDir });
      t.equal(res.code, 2, args.join(' ') || '(no arguments)');
      t.match(res.stderr, /^usage:/);
    }
  });

  t.test('a wrong data directory is one line, not a stack trace, and creates nothing', async (t) => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-empty-'));
    t.teardown(() => fs.rmSync(empty, { recursive: true, force: true }));
    for (const dataDir of [path.join(empty, 'does', 'not', 'exist'), empty]) {
      const res = await run(CLI, ['admin', 'list'], { DATA_DIR: dataDir });
      t.equal(res.code, 1, dataDir);
      t.match(res.stderr, /^no database at .*chat\.db; set DATA_DIR/);
      t.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
    }
    t.same(fs.readdirSync(empty), [], 'no empty database was created');
  });
});

t.test('node dist/server.js', async (t) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-process-'));
  t.teardown(() => fs.rmSync(scratch, { recursive: true, force: true }));

  t.test('a bad setting stops start-up with a one-line reason and no stack trace', async (t) => {
    const file = path.join(scratch, 'a-regular-file');
    fs.writeFileSync(file, '');
    const cases: [string, Record<string, string>, RegExp][] = [
      ['a port out of range', { PORT: '70000' }, /PORT/],
      ['a port that is not a number', { PORT: 'abc' }, /PORT/],
      ['a data dir that is a regular file', { PORT: '0', DATA_DIR: file }, /DATA_DIR/],
      ['a BASE_URL that is not a URL', { PORT: '0', BASE_URL: 'chat.example' }, /BASE_URL/],
    ];
    for (const [what, env, reason] of cases) {
      const res = await run(SERVER, [], { HOST: '127.0.0.1', DATA_DIR: path.join(scratch, 'data'), ...env });
      t.not(res.code, 0, `${what}: exits non-zero`);
      t.equal(res.stderr.trim().split('\n').length, 1, `${what}: one line (${res.stderr.trim()})`);
      t.match(res.stderr, reason, `${what}: names the setting`);
      t.notMatch(res.stderr, /\n\s+at /, `${what}: no stack trace`);
    }
  });

  t.test('SIGTERM closes the server cleanly and exits 0', async (t) => {
    const { child, url: base, output, exited } = await startServerProcess(path.join(scratch, 'graceful'));
    t.equal((await new Client(base).get('/healthz')).status, 200);
    const page = await new Client(base).get('/');
    t.equal(page.status, 200, 'serves the home page');

    child.kill('SIGTERM');
    t.equal(await exited, 0);
    t.match(output(), /SIGTERM/);
    // The database was closed cleanly: WAL checkpointed and its side files removed.
    t.notOk(fs.existsSync(path.join(scratch, 'graceful', 'chat.db-wal')), 'no WAL file left behind');
  });
});
