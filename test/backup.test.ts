import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { Client } from './helpers/client';
import { crowd } from './helpers/community';
import { startServer } from './helpers/server';

const CLI = path.join(__dirname, '..', 'dist', 'cli.js');

function cli(dataDir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [CLI, ...args], { env: { DATA_DIR: dataDir } }, (err, out, errOut) =>
      resolve({ code: err ? Number(err.code) : 0, out: out + errOut }),
    ),
  );
}

/** A message with one attachment; answers its id and the attachment's url. */
function withFile(content: string, fileText: string): FormData {
  const form = new FormData();
  form.append('content', content);
  form.append('attachments', new Blob([fileText]), `${content}.txt`);
  return form;
}

t.test('back up while the server runs, write more, restore: the backed-up state comes back', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-backup-data-'));
  const target = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'chat-backup-')), 'copy');
  t.teardown(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(path.dirname(target), { recursive: true, force: true });
  });
  let server = await startServer({ dataDir });
  const c = await crowd(server, 0);
  const messages = `/api/servers/${c.serverId}/channels/${c.general}/messages`;
  const before = (await c.owner.post(messages, withFile('before', 'kept bytes'))).body;
  await c.owner.post(messages, { content: 'also before' });
  const avatar = new FormData();
  avatar.append(
    'avatar',
    new Blob([
      await sharp({ create: { width: 8, height: 8, channels: 3, background: 'red' } })
        .png()
        .toBuffer(),
    ]),
    'me.png',
  );
  const avatarUrl: string = (await c.owner.put('/api/account/avatar', avatar)).body.avatar_url;
  const key = fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8');
  const vapid = fs.readFileSync(path.join(dataDir, 'vapid.json'), 'utf8');

  const backedUp = await cli(dataDir, 'backup', target);
  t.equal(backedUp.code, 0, backedUp.out);
  t.match(backedUp.out, /the database and 1 file\(s\)/);
  t.same(fs.readdirSync(path.join(target, 'uploads')), [before.attachments[0].id], 'the file its rows name');
  t.same(
    fs.readdirSync(dataDir).filter((n) => n.startsWith('.backup-staging')),
    [],
    'no staging folder is left',
  );
  t.same(fs.readdirSync(path.join(target, 'avatars')), [`${c.owner.userId}.webp`], 'the avatars');
  t.equal(fs.readFileSync(path.join(target, 'secret.key'), 'utf8'), key, 'the key that opens two-factor secrets');
  t.equal(fs.statSync(path.join(target, 'secret.key')).mode & 0o777, 0o600, 'still readable by its owner only');
  t.equal(fs.readFileSync(path.join(target, 'vapid.json'), 'utf8'), vapid, 'the VAPID keys (push subscriptions are bound to them)');
  t.equal(fs.statSync(path.join(target, 'vapid.json')).mode & 0o777, 0o600, 'readable by its owner only');

  const after = (await c.owner.post(messages, withFile('after', 'later bytes'))).body;
  const refused = await cli(dataDir, 'restore', target);
  t.equal(refused.code, 1, 'restore refuses while the server runs');
  t.match(refused.out, /is running on/);
  t.equal((await c.owner.get(messages)).body.length, 3, 'and changed nothing');

  await server.close();
  const restored = await cli(dataDir, 'restore', target);
  t.equal(restored.code, 0, restored.out);
  t.match(restored.out, /kept in .*before-restore-/);

  server = await startServer({ dataDir });
  t.teardown(server.close);
  const owner = new Client(server.url);
  await owner.post('/api/login', { username: c.owner.username, password: 'correct horse' });
  const list = (await owner.get(messages)).body.map((m: { content: string }) => m.content);
  t.same(list, ['also before', 'before'], 'the backed-up messages are there, the later one is not');
  t.equal((await owner.get(before.attachments[0].url)).text, 'kept bytes', 'with their files');
  t.equal((await owner.get(after.attachments[0].url)).status, 404, 'the later file is not');
  const uploads = fs.readdirSync(path.join(dataDir, 'uploads'));
  t.same(uploads, [before.attachments[0].id], 'no orphan file came back');
  t.equal((await fetch(server.url + avatarUrl)).status, 200, 'the avatar came back');
  t.equal(fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8'), key, 'and the same key');
  t.equal(fs.readFileSync(path.join(dataDir, 'vapid.json'), 'utf8'), vapid, 'and the same VAPID keys');
});

t.test('backup and restore refuse what they cannot do, with a reason', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-backup-data-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServer({ dataDir });
  await server.close();
  const notEmpty = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-backup-'));
  t.teardown(() => fs.rmSync(notEmpty, { recursive: true, force: true }));
  fs.writeFileSync(path.join(notEmpty, 'something'), 'x');
  const intoFull = await cli(dataDir, 'backup', notEmpty);
  t.equal(intoFull.code, 1);
  t.match(intoFull.out, /is not empty/);
  const fromNothing = await cli(dataDir, 'restore', notEmpty);
  t.equal(fromNothing.code, 1);
  t.match(fromNothing.out, /not a backup/);
  t.equal((await cli(dataDir, 'backup')).code, 2, 'a missing directory is a usage error');
});

t.test('a second server refuses a data directory a running server holds', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-backup-data-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dataDir, 'server.pid'), `${process.ppid}\n`);
  await t.rejects(startServer({ dataDir }), /another server \(pid \d+\) is running/);
  fs.writeFileSync(path.join(dataDir, 'server.pid'), '999999999\n');
  const server = await startServer({ dataDir });
  t.pass('a pid file of a process that is gone does not count');
  await server.close();
  t.notOk(fs.existsSync(path.join(dataDir, 'server.pid')), 'a server that stops lets go of the directory');
});
