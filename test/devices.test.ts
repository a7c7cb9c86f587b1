// Remembered devices: a browser that signed in with "remember this device" signs in again after a
// restart, without its password or a code; the secret rotates, a copy ends every device; and the
// changes that must not be made with a stolen cookie alone ask for the current password.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import t from 'tap';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { FakeClock, type TestServer, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

const PASSWORD = 'correct horse';

async function remembered(server: TestServer, username: string, body: Record<string, unknown> = {}): Promise<Client> {
  const client = new Client(server.url);
  await must(client.post('/api/login', { username, password: PASSWORD, remember: true, ...body }), 200);
  return client;
}

/** A data directory that outlives one server: the restart tests start a second on it. */
function dataDir(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-devices-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('remember this device: the cookie, what is stored, and a restart survived', async (t) => {
  const dir = dataDir(t);
  let server = await startServer({ dataDir: dir });
  const user = await signUp(server.url);
  const browser = new Client(server.url);
  const login = await must(browser.post('/api/login', { username: user.username, password: PASSWORD, remember: true }), 200);
  const cookies = login.headers.getSetCookie();
  const device = cookies.find((c) => c.startsWith('app_device='))!;
  t.ok(device, 'a device cookie beside the session cookie');
  t.match(device, /HttpOnly/);
  t.match(device, /SameSite=Strict/);
  t.match(device, /Path=\/api\/session(;|$)/, 'sent only to the path that redeems it');
  t.match(device, /Max-Age=\d+/);
  const secret = /^app_device=([^;]+)/.exec(device)![1];
  t.match(secret, /^[A-Za-z0-9_-]{43}$/, '256 random bits');
  const stored = server.app.db.prepare('SELECT secret_hash FROM devices WHERE user_id = ?').pluck().all(user.userId);
  t.same(stored, [crypto.createHash('sha256').update(secret).digest('hex')], 'only its SHA-256 is stored');
  t.equal(
    (await new Client(server.url).post('/api/login', { username: user.username, password: PASSWORD })).headers
      .getSetCookie()
      .some((c) => c.startsWith('app_device=')),
    false,
    'not without remember',
  );
  const form = new Client(server.url);
  const viaForm = await form.post('/api/login', new URLSearchParams({ username: user.username, password: PASSWORD, remember: 'on' }));
  t.equal(viaForm.status, 303);
  t.ok(form.device, 'a form checkbox remembers too');
  t.equal((await new Client(server.url).post('/api/login', { username: user.username, password: PASSWORD, remember: 'yes please' })).status, 400);

  await server.close();
  server = await startServer({ dataDir: dir });
  t.teardown(() => server.close());
  const moved = new Client(server.url);
  moved.cookie = browser.cookie;
  moved.device = browser.device;
  t.equal((await moved.get('/api/users/me')).status, 401, 'the old session ended with the process');
  const oldDevice = moved.device;
  const resumed = await must(moved.post('/api/session/resume'), 200);
  t.same(resumed.body, { user_id: user.userId, suspended: false });
  t.not(moved.device, oldDevice, 'the secret rotated');
  t.equal((await moved.get('/api/users/me')).status, 200, 'signed in again, no password');
  t.equal((await new Client(server.url).post('/api/session/resume')).status, 401, 'no device cookie: 401');
  const stranger = new Client(server.url);
  stranger.device = 'app_device=nothing-like-a-secret';
  const refused = await stranger.post('/api/session/resume');
  t.equal(refused.status, 401);
  t.match(refused.headers.get('set-cookie'), /app_device=;/, 'an unknown secret is cleared');
});

t.test('a copied secret: the copy is refused and every device of the account ends', async (t) => {
  const server = await startServer({ settings: { deviceReuseGraceMs: 0 } });
  t.teardown(server.close);
  const user = await signUp(server.url);
  const laptop = await remembered(server, user.username);
  const phone = await remembered(server, user.username);
  const thief = new Client(server.url);
  thief.device = laptop.device;
  await must(laptop.post('/api/session/resume'), 200);
  const stream = await openSocket(server.url, '/api/ws', { client: laptop });
  await stream.event('ready');
  const replay = await thief.post('/api/session/resume');
  t.equal(replay.status, 401, 'a secret rotated away is refused');
  t.equal(thief.cookie, undefined, 'and opens no session');
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM devices WHERE user_id = ?').pluck().get(user.userId), 0, 'every device of the account ended');
  t.equal((await laptop.get('/api/users/me')).status, 401, 'the session a device opened ends with it');
  t.equal((await stream.closed()).code, 4001, 'its stream closes as signed out');
  t.equal((await laptop.post('/api/session/resume')).status, 401, 'the laptop must sign in again');
  t.equal((await phone.post('/api/session/resume')).status, 401, 'so must the phone');
  t.equal((await user.get('/api/users/me')).status, 200, 'a session signed in with the password lives on');
});

t.test('two requests with one secret at once (two tabs): the second is refused, nothing ends', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);
  const tab = await remembered(server, user.username);
  const other = new Client(server.url);
  other.device = tab.device;
  await must(tab.post('/api/session/resume'), 200);
  const raced = await other.post('/api/session/resume');
  t.equal(raced.status, 401);
  t.match(raced.text, /try again/);
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM devices WHERE user_id = ?').pluck().get(user.userId), 1, 'the device stays');
  t.equal((await tab.post('/api/session/resume')).status, 200, 'the current secret still works');
});

t.test('devices in the sessions list; ending one; logging out; what ends them all', async (t) => {
  const server = await startServer({ env: { ADMIN_USERS: 'devboss' } });
  t.teardown(server.close);
  const admin = await signUp(server.url, 'devboss');
  const user = await signUp(server.url);
  const laptop = await remembered(server, user.username, {});
  const phone = await remembered(server, user.username, {});

  type Entry = { id: string; device: boolean; current: boolean; user_agent: string };
  const list = (await must<Entry[]>(laptop.get('/api/account/sessions'), 200)).body;
  t.equal(list.length, 3, 'two devices and the plain session of signUp');
  t.equal(list.filter((s) => s.device).length, 2);
  const mine = list.find((s) => s.current)!;
  t.equal(mine.device, true, "the caller's own entry is its device");
  const phoneEntry = list.find((s) => s.device && !s.current)!;
  await must(laptop.delete(`/api/account/sessions/${phoneEntry.id}`), 204);
  t.equal((await phone.get('/api/users/me')).status, 401, 'ending a device ends the session it opened');
  t.equal((await phone.post('/api/session/resume')).status, 401, 'and it is no longer remembered');

  const logout = await must(laptop.post('/api/logout'), 204);
  t.match(logout.headers.get('set-cookie'), /app_device=;/);
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM devices WHERE user_id = ?').pluck().get(user.userId), 0, 'logging out forgets the device');

  // A password change ends every device; the browser that made it stays remembered.
  const other = await remembered(server, user.username);
  const changer = await remembered(server, user.username);
  const changed = await must(changer.put('/api/account/password', { current_password: PASSWORD, new_password: 'another horse' }), 204);
  t.ok(
    changed.headers.getSetCookie().some((c) => c.startsWith('app_device=') && !c.startsWith('app_device=;')),
    'a new device cookie for the caller',
  );
  t.equal((await other.post('/api/session/resume')).status, 401, 'the other browser is forgotten');
  t.equal((await changer.post('/api/session/resume')).status, 200, 'the caller still resumes');

  // Suspension ends them all.
  const suspendedOne = await remembered(server, user.username, { password: 'another horse' });
  await must(admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 4 }), 200);
  t.equal((await suspendedOne.post('/api/session/resume')).status, 401, 'a suspension forgets every device');
  await must(admin.put(`/api/admin/users/${user.userId}/standing`, { standing: 0 }), 200);

  // Account deletion ends them all.
  const leaver = await signUp(server.url);
  const leaverDevice = await remembered(server, leaver.username);
  await must(leaver.delete('/api/account', { password: PASSWORD }), 204);
  t.equal((await leaverDevice.post('/api/session/resume')).status, 401, 'a deleted account has no devices');
  t.equal(server.app.db.prepare('SELECT COUNT(*) FROM devices WHERE user_id = ?').pluck().get(leaver.userId), 0);
});

t.test('two-factor sign-in: asks for the current password; turning it on ends the other sessions and devices', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-27T12:00:00Z'));
  const server = await startServer({ clock, env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const user = await signUp(server.url);
  const elsewhere = await remembered(server, user.username);

  // A stolen cookie alone cannot start or finish a setup.
  t.equal((await user.post('/api/account/2fa/setup', {})).status, 400, 'no password');
  t.equal((await user.post('/api/account/2fa/setup', { current_password: 'wrong horse' })).status, 403, 'a wrong password');
  const { secret } = (await must(user.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200)).body;
  const totp = new TOTP({ secret: Secret.fromBase32(secret) });
  t.equal((await user.post('/api/account/2fa/enable', { code: totp.generate({ timestamp: clock.ms }) })).status, 400, 'enable: no password');
  t.equal((await user.post('/api/account/2fa/enable', { code: totp.generate({ timestamp: clock.ms }), current_password: 'wrong horse' })).status, 403);
  t.equal((await user.get('/api/account')).body.two_factor, false, 'still off');
  const enabled = await must(user.post('/api/account/2fa/enable', { code: totp.generate({ timestamp: clock.ms }), current_password: PASSWORD }), 200);
  const recovery: string[] = enabled.body.recovery_codes;
  t.equal((await elsewhere.get('/api/users/me')).status, 401, 'turning it on ends every other session');
  t.equal((await elsewhere.post('/api/session/resume')).status, 401, 'and every remembered device');
  t.equal((await user.get('/api/users/me')).status, 200, 'the caller stays');

  // A remembered device of a two-factor account signs in again without a code.
  clock.advance(30_000);
  const device = await remembered(server, user.username, { code: totp.generate({ timestamp: clock.ms }) });
  const restarted = new Client(server.url);
  restarted.device = device.device;
  t.equal((await restarted.post('/api/session/resume')).status, 200, 'no code after a restart');

  // New recovery codes: the password and a code; the old ones stop working.
  t.equal((await user.post('/api/account/2fa/recovery-codes', { code: recovery[0] })).status, 400, 'no password');
  t.equal(
    (
      await user.post('/api/account/2fa/recovery-codes', {
        current_password: PASSWORD,
        code: '000000' === totp.generate({ timestamp: clock.ms }) ? '111111' : '000000',
      })
    ).status,
    403,
    'a wrong code',
  );
  const renewed = (await must(user.post('/api/account/2fa/recovery-codes', { current_password: PASSWORD, code: recovery[0] }), 200)).body
    .recovery_codes as string[];
  t.equal(renewed.length, 10);
  t.equal(
    (await new Client(server.url).post('/api/login', { username: user.username, password: PASSWORD, code: recovery[1] })).status,
    401,
    'an old recovery code is gone',
  );
  t.equal(
    (await new Client(server.url).post('/api/login', { username: user.username, password: PASSWORD, code: renewed[0] })).status,
    200,
    'a new one signs in',
  );

  // Turning it off: the password and a code; every device ends.
  t.equal((await user.delete('/api/account/2fa', { code: renewed[1] })).status, 400, 'off: no password');
  await must(user.delete('/api/account/2fa', { code: renewed[1], current_password: PASSWORD }), 204);
  t.equal((await restarted.post('/api/session/resume')).status, 401, 'turning it off forgets every device');
});

t.test('resumes are limited per address', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  let last = 0;
  for (let i = 0; i < 61; i++) last = (await new Client(server.url).post('/api/session/resume')).status;
  t.equal(last, 429, 'the 61st in a burst waits');
});

t.test('a username in the sessions list never shows a device secret', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url, uniqueName('lister'));
  const browser = await remembered(server, user.username);
  const text = (await must(browser.get('/api/account/sessions'), 200)).text;
  t.notOk(text.includes(browser.device!.slice('app_device='.length)), 'no secret in the list');
});
