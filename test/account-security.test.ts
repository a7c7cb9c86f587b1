// Password change, sessions, two-factor sign-in (TOTP, RFC 6238) and where its secrets live.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Secret, TOTP } from 'otpauth';
import t from 'tap';
import { createSecretBox, loadSecretKey } from '../src/core/secret-box';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { FakeClock, type TestServer, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
if (!fs.existsSync(CLI)) execFileSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'inherit' });

const PASSWORD = 'correct horse';
/** RFC 6238 appendix B: the SHA-1 secret is the ASCII string "12345678901234567890". */
const RFC_SECRET = Secret.fromLatin1('12345678901234567890').base32;
/** Its 8-digit codes at these times (seconds); authenticator apps show the last 6 digits. */
const RFC_VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
];

const codeAt = (secret: string, ms: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: ms });

async function login(server: TestServer, username: string, body: Record<string, unknown> = {}) {
  const client = new Client(server.url);
  const res = await client.post('/api/login', { username, password: PASSWORD, ...body });
  return { client, res };
}

/** Turns two-factor sign-in on with the RFC 6238 secret in place of the random one; the recovery codes. */
async function enableWithRfcSecret(server: TestServer, client: Client, clock: FakeClock): Promise<string[]> {
  await must(client.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200);
  const box = createSecretBox(loadSecretKey(server.dataDir, null));
  server.app.db.prepare('UPDATE users SET totp_pending = ? WHERE id = ?').run(box.seal(RFC_SECRET, client.userId), client.userId);
  return (await must(client.post('/api/account/2fa/enable', { code: codeAt(RFC_SECRET, clock.ms), current_password: PASSWORD }), 200)).body.recovery_codes;
}

t.test('RFC 6238 test vectors: six-digit codes at fixed times sign in', async (t) => {
  const clock = new FakeClock(59_000);
  const server = await startServer({ clock });
  t.teardown(server.close);
  const user = await signUp(server.url);
  for (const [seconds, eight] of RFC_VECTORS) t.equal(codeAt(RFC_SECRET, seconds * 1000), eight.slice(2), `our reference at T=${seconds}`);
  await enableWithRfcSecret(server, user, clock);
  for (const [seconds, eight] of RFC_VECTORS.slice(1)) {
    clock.ms = seconds * 1000;
    const { res } = await login(server, user.username, { code: eight.slice(2) });
    t.equal(res.status, 200, `T=${seconds}: ${eight.slice(2)} signs in`);
  }
});

t.test('two-factor sign-in: setup, enable, login with and without a code, replay, window, recovery codes, off', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-23T12:00:00Z'));
  const server = await startServer({ clock });
  t.teardown(server.close);
  const user = await signUp(server.url);

  const account = await must(user.get('/api/account'), 200);
  t.equal(account.body.two_factor, false);
  const setup = await must(user.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200);
  t.match(setup.body.secret, /^[A-Z2-7]{32}$/, 'a 160-bit base32 secret');
  const url = new URL(setup.body.otpauth_url);
  t.equal(url.protocol, 'otpauth:');
  t.equal(url.searchParams.get('secret'), setup.body.secret);
  t.equal(url.searchParams.get('issuer'), 'chat');
  t.match(decodeURIComponent(url.pathname), new RegExp(`${user.username}$`));
  t.equal((await user.get('/api/account')).body.two_factor, false, 'pending until a code confirms it');
  t.equal((await login(server, user.username)).res.status, 200, 'no code needed yet');

  const wrong = await user.post('/api/account/2fa/enable', {
    code: '000000' === codeAt(setup.body.secret, clock.ms) ? '111111' : '000000',
    current_password: PASSWORD,
  });
  t.equal(wrong.status, 403, 'a code that does not match is refused like a wrong password');
  t.match(wrong.text, /code does not match/);
  const enabled = await must(user.post('/api/account/2fa/enable', { code: codeAt(setup.body.secret, clock.ms), current_password: PASSWORD }), 200);
  const recovery: string[] = enabled.body.recovery_codes;
  t.equal(recovery.length, 10);
  t.equal(new Set(recovery).size, 10);
  for (const code of recovery) t.match(code, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
  t.equal((await user.get('/api/account')).body.two_factor, true);
  t.equal((await user.post('/api/account/2fa/setup', { current_password: PASSWORD })).status, 409, 'on: set up again only after turning it off');

  // Without a code: 401 with the plain reason, and no session.
  const { res: bare, client: bareClient } = await login(server, user.username);
  t.equal(bare.status, 401);
  t.equal(bare.text.trim(), 'two-factor code required');
  t.equal(bare.headers.get('set-cookie'), null, 'no session cookie');
  t.equal(bareClient.cookie, undefined);
  // A wrong password still says only that.
  const badPassword = await new Client(server.url).post('/api/login', { username: user.username, password: 'wrong password', code: '123456' });
  t.equal(badPassword.status, 401);
  t.match(badPassword.text, /invalid username or password/);

  clock.advance(30_000);
  const code = codeAt(setup.body.secret, clock.ms);
  const { res: good, client: signedIn } = await login(server, user.username, { code });
  t.equal(good.status, 200, 'password and a current code sign in');
  t.equal((await signedIn.get('/api/users/me')).status, 200);
  const replay = await login(server, user.username, { code });
  t.equal(replay.res.status, 401, 'the same code a second time is refused');
  t.match(replay.res.text, /invalid two-factor code/);

  // ±1 step: the next step's code is accepted now; after it, the previous step's is a replay.
  const next = codeAt(setup.body.secret, clock.ms + 30_000);
  t.equal((await login(server, user.username, { code: next })).res.status, 200, 'one step ahead is allowed');
  clock.advance(30_000);
  t.equal((await login(server, user.username, { code: next })).res.status, 401, 'and then it was used');
  const twoAhead = codeAt(setup.body.secret, clock.ms + 60_000);
  t.equal((await login(server, user.username, { code: twoAhead })).res.status, 401, 'two steps ahead is outside the window');

  // Recovery codes: each once, in any case, with or without its dash.
  t.equal((await login(server, user.username, { code: recovery[0].toUpperCase() })).res.status, 200);
  t.equal((await login(server, user.username, { code: recovery[0] })).res.status, 401, 'a recovery code is used up');
  t.equal((await login(server, user.username, { code: recovery[1].replace('-', '') })).res.status, 200);

  // Turning it off takes a code.
  t.equal((await user.delete('/api/account/2fa', { code: '12345', current_password: PASSWORD })).status, 403);
  await must(user.delete('/api/account/2fa', { code: recovery[2], current_password: PASSWORD }), 204);
  t.equal((await user.get('/api/account')).body.two_factor, false);
  t.equal((await login(server, user.username)).res.status, 200, 'off: the password alone signs in');
  t.equal((await user.delete('/api/account/2fa', { code: recovery[3], current_password: PASSWORD })).status, 409, 'already off');
  t.equal((await user.post('/api/account/2fa/enable', { code: '123456', current_password: PASSWORD })).status, 409, 'nothing pending');
  const recoveryLeft = server.app.db.prepare('SELECT COUNT(*) AS n FROM recovery_codes WHERE user_id = ?').get(user.userId) as { n: number };
  t.equal(recoveryLeft.n, 0, 'the recovery codes went with it');
});

t.test('wrong codes count as failed logins', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-23T12:00:00Z'));
  const server = await startServer({ clock, env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const user = await signUp(server.url);
  await enableWithRfcSecret(server, user, clock);
  for (let i = 0; i < 5; i++) {
    t.equal((await login(server, user.username, { code: '000001' })).res.status, 401, `wrong code ${i + 1}`);
  }
  const limited = await login(server, user.username, { code: codeAt(RFC_SECRET, clock.ms + 30_000) });
  t.equal(limited.res.status, 429, 'the sixth attempt waits, even with the right code');
  t.ok(Number(limited.res.headers.get('retry-after')) > 0);
  // Asking without a code is no failure: the password was right.
  clock.advance(10 * 60_000);
  for (let i = 0; i < 8; i++) t.equal((await login(server, user.username)).res.status, 401);
  t.equal((await login(server, user.username, { code: codeAt(RFC_SECRET, clock.ms) })).res.status, 200, 'still allowed after asking 8 times');
});

t.test('secrets: the key file is 0600, the database holds no secret that signs in, cli 2fa reset', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-23T12:00:00Z'));
  const server = await startServer({ clock });
  t.teardown(server.close);
  const user = await signUp(server.url, uniqueName('locked'));
  await enableWithRfcSecret(server, user, clock);

  const keyFile = path.join(server.dataDir, 'secret.key');
  t.equal(fs.statSync(keyFile).mode & 0o777, 0o600, 'the key file is readable by its owner only');
  const row = server.app.db.prepare('SELECT totp_secret FROM users WHERE id = ?').get(user.userId) as { totp_secret: string };
  t.notMatch(row.totp_secret, RFC_SECRET, 'the secret is not stored as it is');
  t.notMatch(row.totp_secret, Buffer.from('12345678901234567890').toString('base64'));
  const codes = server.app.db.prepare('SELECT code_hash FROM recovery_codes WHERE user_id = ?').all(user.userId) as { code_hash: string }[];
  t.ok(
    codes.every((c) => /^[0-9a-f]{64}$/.test(c.code_hash)),
    'recovery codes are stored hashed',
  );
  const otherKey = createSecretBox(Buffer.alloc(32, 7));
  t.equal(otherKey.open(row.totp_secret, user.userId), null, 'another key does not open it');
  const rightKey = createSecretBox(loadSecretKey(server.dataDir, null));
  t.equal(rightKey.open(row.totp_secret, user.userId), RFC_SECRET, 'the data directory key does');
  t.equal(rightKey.open(row.totp_secret, '00000000-0000-4000-8000-000000000000'), null, 'bound to its user: copied to another row it opens nothing');

  // SECRET_KEY set instead: the key file is not used, and codes sealed under it do not open.
  const other = await startServer({ clock, env: { SECRET_KEY: 'ab'.repeat(32) } });
  t.teardown(other.close);
  t.notOk(fs.existsSync(path.join(other.dataDir, 'secret.key')), 'no key file when SECRET_KEY is set');

  // An administrator turns it off for someone locked out.
  const reset = spawnSync(process.execPath, [CLI, '2fa', 'reset', user.username], { env: { PATH: process.env.PATH ?? '', DATA_DIR: server.dataDir } });
  t.equal(reset.status, 0, reset.stderr.toString());
  t.match(reset.stdout.toString(), /two-factor sign-in is off/);
  t.equal((await login(server, user.username)).res.status, 200, 'the password alone signs in again');
  const unknown = spawnSync(process.execPath, [CLI, '2fa', 'reset', 'nobody_here'], { env: { PATH: process.env.PATH ?? '', DATA_DIR: server.dataDir } });
  t.equal(unknown.status, 1);
  t.match(unknown.stderr.toString(), /no user named nobody_here/);
});

t.test('password change: 204, other sessions end (streams close 4001), this one stays', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const user = await signUp(server.url);
  const { client: laptop } = await login(server, user.username);
  const stream = await openSocket(server.url, '/api/ws', { client: laptop });
  await stream.event('ready');
  const mine = await openSocket(server.url, '/api/ws', { client: user });
  await mine.event('ready');

  const wrong = await user.put('/api/account/password', { current_password: 'not my password', new_password: 'new password 1' });
  t.equal(wrong.status, 403);
  t.match(wrong.text, /current password is wrong/);
  t.equal((await user.put('/api/account/password', { current_password: PASSWORD, new_password: 'short' })).status, 400);
  t.equal((await user.put('/api/account/password', { new_password: 'new password 1' })).status, 400);

  await must(user.put('/api/account/password', { current_password: PASSWORD, new_password: 'new password 1' }), 204);
  t.equal((await stream.closed()).code, 4001, "the other session's stream closes as signed out");
  t.equal((await laptop.get('/api/users/me')).status, 401, 'the other session ended');
  t.equal((await user.get('/api/users/me')).status, 200, 'the caller stays signed in');
  t.same(await mine.drain(200), [], 'and its stream stays open');
  mine.close();
  t.equal((await new Client(server.url).post('/api/login', { username: user.username, password: PASSWORD })).status, 401);
  t.equal((await new Client(server.url).post('/api/login', { username: user.username, password: 'new password 1' })).status, 200);
});

t.test('a wrong current password counts as a failed login', async (t) => {
  const server = await startServer({ env: { RATE_LIMIT: 'on' } });
  t.teardown(server.close);
  const user = await signUp(server.url);
  for (let i = 0; i < 5; i++) {
    t.equal((await user.put('/api/account/password', { current_password: `guess ${i}xx`, new_password: 'new password 1' })).status, 403);
  }
  t.equal((await user.put('/api/account/password', { current_password: PASSWORD, new_password: 'new password 1' })).status, 429);
  t.equal((await new Client(server.url).post('/api/login', { username: user.username, password: PASSWORD })).status, 429, 'login waits too');
});

t.test('sessions: list, end one, end the others', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);
  const phone = new Client(server.url);
  await must(phone.post('/api/login', { username: user.username, password: PASSWORD }, { 'user-agent': 'PhoneBrowser/1.0' }), 200);
  const tablet = new Client(server.url);
  await must(tablet.post('/api/login', { username: user.username, password: PASSWORD }, { 'user-agent': 'x'.repeat(1000) }), 200);
  const stranger = await signUp(server.url);

  const list = (await must(user.get('/api/account/sessions'), 200)).body as {
    id: string;
    created_at: string;
    last_seen_at: string;
    user_agent: string;
    address: string;
    current: boolean;
  }[];
  t.equal(list.length, 3);
  t.equal(list.filter((s) => s.current).length, 1, 'exactly one is the caller');
  t.equal(list[0].current, true, 'most recently used first: this request');
  for (const s of list) {
    t.match(s.id, /^[0-9a-f-]{36}$/);
    t.notOk(user.cookie!.includes(s.id) || phone.cookie!.includes(s.id), 'the id is not the cookie value');
    t.equal(s.address, '127.0.0.1');
    t.ok(Date.parse(s.created_at) <= Date.parse(s.last_seen_at));
  }
  const phoneSession = list.find((s) => s.user_agent === 'PhoneBrowser/1.0')!;
  t.ok(phoneSession, 'the user agent is recorded');
  t.equal(list.find((s) => s.user_agent.startsWith('xxx'))!.user_agent.length, 256, 'a long user agent is cut');

  const phoneStream = await openSocket(server.url, '/api/ws', { client: phone });
  await phoneStream.event('ready');
  t.equal((await stranger.delete(`/api/account/sessions/${phoneSession.id}`)).status, 404, "another user's session is not found");
  t.equal((await user.delete('/api/account/sessions/00000000-0000-4000-8000-000000000000')).status, 404);
  t.equal((await user.delete('/api/account/sessions/not-a-uuid')).status, 400);
  await must(user.delete(`/api/account/sessions/${phoneSession.id}`), 204);
  t.equal((await phoneStream.closed()).code, 4001, 'its stream closes as signed out');
  t.equal((await phone.get('/api/users/me')).status, 401);
  t.equal((await tablet.get('/api/users/me')).status, 200, 'the others live on');

  await must(user.delete('/api/account/sessions'), 204);
  t.equal((await tablet.get('/api/users/me')).status, 401);
  const left = (await must(user.get('/api/account/sessions'), 200)).body;
  t.equal(left.length, 1);
  t.equal(left[0].current, true);
  // Ending one's own session by id is a sign-out.
  const own = await user.delete(`/api/account/sessions/${left[0].id}`);
  t.equal(own.status, 204);
  t.match(own.headers.get('set-cookie'), /app_session=;/);
  t.equal((await user.get('/api/users/me')).status, 401);
  t.equal((await new Client(server.url).get('/api/account/sessions')).status, 401);
});
