import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';

// The release a self-hoster downloads (`make dist`, scripts/dist.sh), tested as they would use it:
// unpacked into an empty directory outside the checkout and run with nothing from this machine:
// no compiler or node on PATH, and (where this runs as root, as CI does) no network but loopback.
const ROOT = path.join(__dirname, '..');
const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
const NAME = `chat-${version}-linux-x64`;
const TARBALL = path.join(ROOT, 'dist-release', `${NAME}.tar.gz`);
const MAX_MIB = 60;

t.test('the release tarball', async (t) => {
  t.ok(fs.existsSync(TARBALL), `${TARBALL} exists (make dist builds it; make test runs make dist first)`);
  if (!fs.existsSync(TARBALL)) return;
  const mib = fs.statSync(TARBALL).size / 1024 / 1024;
  t.ok(mib < MAX_MIB, `${mib.toFixed(1)} MiB compressed, under ${MAX_MIB} MiB`);

  const place = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-release-'));
  t.teardown(() => fs.rmSync(place, { recursive: true, force: true }));
  const untar = spawnSync('tar', ['-xzf', TARBALL, '-C', place], { encoding: 'utf8' });
  t.equal(untar.status, 0, `unpacks: ${untar.stderr}`);
  const release = path.join(place, NAME);

  t.test('holds the runtime, the app and production dependencies only', async (t) => {
    for (const part of [
      'bin/chat',
      'runtime/bin/node',
      'app/dist/server.js',
      'app/dist/cli.js',
      'app/static/index.html',
      'app/schema.sql',
      'README.md',
      'deploy/chat.service',
    ]) {
      t.ok(fs.existsSync(path.join(release, part)), part);
    }
    const modules = fs.readdirSync(path.join(release, 'app', 'node_modules'));
    for (const dev of ['tap', 'typescript', 'playwright-core', 'fast-check', 'autocannon']) t.notOk(modules.includes(dev), `no ${dev}`);
    const natives = spawnSync('find', [path.join(release, 'app'), '-name', '*.node'], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n');
    t.ok(natives.length >= 3, `native modules: ${natives.map((f) => path.relative(release, f)).join(', ')}`);
    t.ok(
      natives.every((f) => /linux-x64/.test(f) && !/musl/.test(f)),
      'every native binary is for linux-x64 with glibc, prebuilt (nothing compiled: no build/ directories)',
    );
    t.notOk(
      natives.some((f) => f.includes(`${path.sep}build${path.sep}`)),
      'no binary from a compiler',
    );
  });

  t.test('runs with no compiler, no node and no network: register, post, upload, back up, restore, stop', async (t) => {
    const scratch = path.join(place, 'scratch');
    fs.mkdirSync(scratch);
    const driver = path.join(__dirname, 'release', 'driver.mjs');
    const node = path.join(release, 'runtime', 'bin', 'node');
    // A network namespace of its own: only loopback, which is brought up inside it.
    const isolated = spawnSync('unshare', ['--net', '--', '/bin/sh', '-c', 'ip link set lo up'], { encoding: 'utf8' }).status === 0;
    if (!isolated) t.comment('unshare --net is not permitted here (not root?): the release runs with the network of this machine');
    const command = isolated
      ? ['unshare', '--net', '--', '/bin/sh', '-c', 'ip link set lo up && exec "$@"', 'sh', node, driver, release, scratch]
      : [node, driver, release, scratch];
    const res = spawnSync(command[0], command.slice(1), { encoding: 'utf8', timeout: 120_000, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } });
    const line = res.stdout.trim().split('\n').pop() ?? '';
    let seen: Record<string, any> = {};
    try {
      seen = JSON.parse(line);
    } catch {
      t.fail(`the driver printed no report: ${res.stdout} ${res.stderr}`);
      return;
    }
    t.notOk(seen.error, `no step failed${seen.error ? `: ${seen.error}` : ''}`);
    t.equal(seen.version?.code, 0, 'chat --version');
    t.match(seen.version?.out, new RegExp(`^chat ${version.replace(/\./g, '\\.')} \\(Node\\.js 24\\.`), `chat --version: ${seen.version?.out}`);
    t.equal(seen.help?.code, 0, 'chat help');
    for (const usage of ['chat serve', 'chat backup <dir>', 'chat restore <dir>', 'chat admin grant <username>'])
      t.match(seen.help?.out, usage, `help: ${usage}`);
    t.equal(seen.register, 201, 'register');
    t.equal(seen.login, 200, 'log in');
    t.equal(seen.post, 201, 'post a message');
    t.equal(seen.upload, 201, 'upload a file');
    t.equal(seen.download, true, 'the file comes back byte for byte');
    t.equal(seen.page, 200, 'the web app is served');
    t.equal(seen.backup?.code, 0, `chat backup while serving: ${seen.backup?.out}`);
    t.equal(seen.adminGrant?.code, 0, `chat admin grant: ${seen.adminGrant?.out}`);
    t.equal(seen.stop, 0, 'SIGTERM stops it with exit code 0');
    t.equal(seen.defaultDataDir, true, 'data/ beside bin/ by default');
    t.equal(seen.restore?.code, 0, `chat restore: ${seen.restore?.out}`);
    t.same(seen.restoredMessages, ['kept by the backup', 'with a file'], 'after the restore: the messages of the backup, not the later one');
    t.equal(seen.restoredDownload, true, 'and its file');
    t.equal(seen.stopAgain, 0);
  });
});
