// Passkeys (WebAuthn, docs/api.md "Passkeys", docs/security.md "Passkeys"): registered with the
// current password, listed, renamed, removed; a username-less sign-in with a discoverable
// credential that counts as two factors; the relying party from BASE_URL; a passkey in place of
// the password, with the recovery codes still a way in. A software authenticator answers
// (test/helpers/webauthn.ts); every refusal is a clear 4xx that opens no session.
import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import t, { type Test } from 'tap';
import { createSecretBox, loadSecretKey } from '../src/core/secret-box';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { FakeClock, type TestServer, startServer } from './helpers/server';
import { SoftAuthenticator } from './helpers/webauthn';

const PASSWORD = 'correct horse';

async function boot(t: Test, env: Record<string, string> = {}) {
  const clock = new FakeClock(Date.now());
  const server = await startServer({ clock, env });
  t.teardown(server.close);
  return { server, clock };
}

/** Registers a passkey made by `authenticator` for `client`'s account: the passkey's record. */
async function register(client: Client, authenticator: SoftAuthenticator, name?: string) {
  const options = await must(client.post('/api/account/passkeys/options', { current_password: PASSWORD }), 200);
  const res = await must(client.post('/api/account/passkeys', { response: authenticator.create(options.body), ...(name ? { name } : {}) }), 201);
  return res.body;
}

/** A username-less sign-in with the authenticator's passkey in a new browser. */
async function signInWith(server: TestServer, authenticator: SoftAuthenticator, bend = {}, extra: Record<string, unknown> = {}) {
  const client = new Client(server.url);
  const options = await must(client.post('/api/login/passkey/options'), 200);
  const res = await client.post('/api/login/passkey', { response: authenticator.get(options.body, bend), ...extra });
  return { client, res, options: options.body };
}

const noSession = (t: Test, server: TestServer, before: number, res: { headers: Headers }) => {
  t.notOk(
    res.headers.getSetCookie().some((c) => /^app_session=[^;]/.test(c)),
    'no session cookie',
  );
  t.equal(server.app.sessions.size, before, 'no session was opened');
};

/** Turns two-factor sign-in on with a known secret: the recovery codes and a code maker. */
async function twoFactorOn(server: TestServer, clock: FakeClock, client: Client) {
  await must(client.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200);
  const secret = new Secret({ size: 20 }).base32;
  const box = createSecretBox(loadSecretKey(server.dataDir, null));
  server.app.db.prepare('UPDATE users SET totp_pending = ? WHERE id = ?').run(box.seal(secret, client.userId), client.userId);
  const code = () => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: clock.now() });
  const enabled = await must(client.post('/api/account/2fa/enable', { code: code(), current_password: PASSWORD }), 200);
  clock.advance(30_000);
  return { recovery: enabled.body.recovery_codes as string[], code };
}

t.test('a passkey is registered with the current password, listed, renamed and removed', async (t) => {
  const { server, clock } = await boot(t);
  const alice = await signUp(server.url, uniqueName('alice'), PASSWORD);
  const key = new SoftAuthenticator(server.url);

  t.equal((await alice.post('/api/account/passkeys/options', {})).status, 400, 'the password is required');
  t.equal((await alice.post('/api/account/passkeys/options', { current_password: 'wrong' })).status, 403, 'and checked');
  const options = await must(alice.post('/api/account/passkeys/options', { current_password: PASSWORD }), 200);
  t.equal(options.body.rp.id, '127.0.0.1', "the relying party is BASE_URL's host");
  t.match(options.body.authenticatorSelection, { residentKey: 'required', userVerification: 'required' }, 'discoverable and verified');
  t.equal(options.body.user.name, alice.username);
  t.same(
    options.body.pubKeyCredParams.map((p: { alg: number }) => p.alg),
    [-8, -7, -257],
    'Ed25519, ES256, RS256 (not the experimental ML-DSA the library would offer first)',
  );

  const made = await must(alice.post('/api/account/passkeys', { response: key.create(options.body), name: 'Laptop' }), 201);
  t.match(made.body, { name: 'Laptop', last_used_at: null, backed_up: false });
  t.equal((await alice.post('/api/account/passkeys', { response: key.create(options.body) })).status, 400, 'a challenge is good once');

  clock.advance(1000);
  const second = await register(alice, new SoftAuthenticator(server.url));
  t.equal(second.name, 'Passkey', 'a default name');
  const listed = await must(alice.get('/api/account/passkeys'), 200);
  t.same(
    listed.body.map((p: { id: string }) => p.id),
    [made.body.id, second.id],
    'oldest first',
  );
  t.match((await must(alice.request('PATCH', `/api/account/passkeys/${second.id}`, { name: 'Phone' }), 200)).body, { id: second.id, name: 'Phone' });
  t.equal((await alice.request('PATCH', `/api/account/passkeys/${second.id}`, { name: '' })).status, 400, 'a name is needed');

  const bob = await signUp(server.url, uniqueName('bob'), PASSWORD);
  t.equal((await bob.request('PATCH', `/api/account/passkeys/${second.id}`, { name: 'Mine' })).status, 404, "not bob's to rename");
  t.equal((await bob.delete(`/api/account/passkeys/${second.id}`)).status, 404, 'nor to remove');
  t.same((await must(bob.get('/api/account/passkeys'), 200)).body, [], 'bob sees none of them');

  await must(alice.delete(`/api/account/passkeys/${second.id}`), 204);
  t.equal((await must(alice.get('/api/account/passkeys'), 200)).body.length, 1);
});

t.test('a passkey signs in without a username, as two factors, and says when it was last used', async (t) => {
  const { server, clock } = await boot(t);
  const carol = await signUp(server.url, uniqueName('carol'), PASSWORD);
  const key = new SoftAuthenticator(server.url);
  const passkey = await register(carol, key);
  await twoFactorOn(server, clock, carol);

  const { client, res, options } = await signInWith(server, key, {}, { remember: true });
  t.equal(res.status, 200);
  t.same(res.body, { user_id: carol.userId, suspended: false }, 'no two-factor code asked: the passkey was verified');
  t.same(options.allowCredentials ?? [], [], 'the options name no account');
  t.ok(client.device, 'remember: the remembered device');
  t.match(server.app.sessions.listForUser(carol.userId), [{ method: 'password' }, { method: 'passkey' }]);
  await must(client.get('/api/users/me'), 200);
  const [used] = (await must(carol.get('/api/account/passkeys'), 200)).body;
  t.equal(used.id, passkey.id);
  t.ok(used.last_used_at, 'last used: now');

  // Suspended: signed in, and told, as a password login does.
  server.app.db.prepare('UPDATE users SET standing = 4 WHERE id = ?').run(carol.userId);
  t.same((await signInWith(server, key)).res.body, { user_id: carol.userId, suspended: true });
});

t.test('passkey sign-in refusals: each a 4xx that opens no session', async (t) => {
  const { server, clock } = await boot(t);
  const dave = await signUp(server.url, uniqueName('dave'), PASSWORD);
  const key = new SoftAuthenticator(server.url);
  await register(dave, key);
  const before = server.app.sessions.size;

  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['another origin (phishing)', { origin: 'https://evil.example' }, /origin/i],
    ['another relying party', { rpId: 'evil.example' }, /RP ID/i],
    ['no user verification (one factor)', { userVerified: false }, /user (could not be )?verified/i],
    ['a challenge the server never gave', { challenge: crypto.randomBytes(40).toString('base64url') }, /challenge/i],
    ['a registration answer', { type: 'webauthn.create' }, /type/i],
    ["another account's user handle", { userHandle: Buffer.alloc(16, 7).toString('base64url') }, /user handle/],
  ];
  for (const [what, bend, reason] of cases) {
    const { res } = await signInWith(server, key, bend);
    t.equal(res.status, 401, `${what}: 401`);
    t.match(res.text, reason, `${what}: ${res.text}`);
    noSession(t, server, before, res);
  }

  // A challenge is good once: the same answer twice.
  const client = new Client(server.url);
  const options = await must(client.post('/api/login/passkey/options'), 200);
  const answer = key.get(options.body);
  await must(client.post('/api/login/passkey', { response: answer }), 200);
  const after = server.app.sessions.size;
  const replay = await client.post('/api/login/passkey', { response: answer });
  t.equal(replay.status, 401, 'a replayed answer');
  t.match(replay.text, /challenge/);
  t.equal(server.app.sessions.size, after, 'no session');

  // A cloned authenticator: its counter went back.
  const cloned = await signInWith(server, key, { counter: 1 });
  t.equal(cloned.res.status, 401, 'a counter that went back (a copy of the key)');
  noSession(t, server, after, cloned.res);

  // An expired challenge.
  const late = new Client(server.url);
  const old = await must(late.post('/api/login/passkey/options'), 200);
  clock.advance(6 * 60_000);
  t.equal((await late.post('/api/login/passkey', { response: key.get(old.body) })).status, 401, 'a challenge past 5 minutes');

  // A passkey removed, or never registered here.
  const stranger = new SoftAuthenticator(server.url);
  stranger.create({ challenge: 'x', rp: { id: '127.0.0.1' }, user: { id: 'AAAA' } });
  const unknown = await signInWith(server, stranger);
  t.equal(unknown.res.status, 401);
  t.match(unknown.res.text, /not registered here/);

  for (const body of [{}, { response: 'x' }, { response: { id: 'a', rawId: 'b', type: 'public-key', response: {} } }]) {
    t.equal((await new Client(server.url).post('/api/login/passkey', body)).status, 400, `malformed: ${JSON.stringify(body)}`);
  }
  t.equal((await signInWith(server, key, {}, { remember: 'maybe' })).res.status, 400, 'remember must be a boolean');
  t.equal(server.app.sessions.size, after, 'none of them opened a session');
});

t.test('a registration that does not check out is refused and stores nothing', async (t) => {
  const { server } = await boot(t);
  const erin = await signUp(server.url, uniqueName('erin'), PASSWORD);
  const key = new SoftAuthenticator(server.url);
  for (const [what, bend] of [
    ['another origin', { origin: 'https://evil.example' }],
    ['another relying party', { rpId: 'evil.example' }],
    ['no user verification', { userVerified: false }],
  ] as const) {
    const options = await must(erin.post('/api/account/passkeys/options', { current_password: PASSWORD }), 200);
    const res = await erin.post('/api/account/passkeys', { response: key.create(options.body, bend) });
    t.equal(res.status, 400, `${what}: 400`);
  }
  t.equal(
    (await erin.post('/api/account/passkeys', { response: key.create({ challenge: 'x', rp: { id: '127.0.0.1' }, user: { id: 'AAAA' } }) })).status,
    400,
    'no options asked',
  );
  t.same((await must(erin.get('/api/account/passkeys'), 200)).body, []);

  // The same authenticator's credential on a second account: excluded by the options, refused by the server.
  const options = await must(erin.post('/api/account/passkeys/options', { current_password: PASSWORD }), 200);
  const answer = key.create(options.body);
  await must(erin.post('/api/account/passkeys', { response: answer }), 201);
  const frank = await signUp(server.url, uniqueName('frank'), PASSWORD);
  await must(frank.post('/api/account/passkeys/options', { current_password: PASSWORD }), 200);
  const again = await frank.post('/api/account/passkeys', { response: answer });
  t.equal(again.status, 400, "another account's answer does not match this account's challenge");
});

t.test('the relying party is BASE_URL: a passkey of another origin does not sign in', async (t) => {
  const { server } = await boot(t, { BASE_URL: 'https://chat.example.org' });
  const gina = await signUp(server.url, uniqueName('gina'), PASSWORD);
  const options = await must(gina.post('/api/account/passkeys/options', { current_password: PASSWORD }), 200);
  t.equal(options.body.rp.id, 'chat.example.org');
  const right = new SoftAuthenticator('https://chat.example.org');
  await must(gina.post('/api/account/passkeys', { response: right.create(options.body) }), 201);
  t.equal((await signInWith(server, right)).res.status, 200, 'the origin BASE_URL names');
  t.equal((await signInWith(server, right, { origin: 'http://chat.example.org' })).res.status, 401, 'the same host over http');
  t.equal((await signInWith(server, right, { origin: 'https://evil.chat.example.org' })).res.status, 401, 'a subdomain');
});

t.test('a passkey may replace the password; the recovery codes still sign in; the last way in stays', async (t) => {
  const { server, clock } = await boot(t);
  const hank = await signUp(server.url, uniqueName('hank'), PASSWORD);
  t.equal((await hank.delete('/api/account/password', { current_password: PASSWORD })).status, 409, 'not before another way in');
  const key = new SoftAuthenticator(server.url);
  const passkey = await register(hank, key);
  const { recovery, code } = await twoFactorOn(server, clock, hank);

  t.equal((await hank.delete('/api/account/password', { current_password: 'wrong' })).status, 403);
  t.equal((await hank.delete('/api/account/password', { current_password: PASSWORD })).status, 403, 'with two-factor on, a code too');
  const other = await must(new Client(server.url).post('/api/login', { username: hank.username, password: PASSWORD, code: code() }), 200);
  t.ok(other);
  clock.advance(30_000);
  await must(hank.delete('/api/account/password', { current_password: PASSWORD, code: code() }), 204);
  t.equal((await must(hank.get('/api/account'), 200)).body.has_password, false);
  t.equal((await hank.delete('/api/account/password', { current_password: PASSWORD })).status, 409, 'no password to remove');
  t.equal(server.app.sessions.listForUser(hank.userId).length, 1, "the other sessions ended, the caller's stayed");

  t.equal((await new Client(server.url).post('/api/login', { username: hank.username, password: PASSWORD })).status, 401, 'the password no longer signs in');
  t.equal((await new Client(server.url).post('/api/login', { username: hank.username, password: '' })).status, 401, 'nor an empty one');
  t.equal((await signInWith(server, key)).res.status, 200, 'the passkey does');

  // The passkey lost: a recovery code alone signs in (once); a code from the app does not.
  clock.advance(30_000);
  t.equal((await new Client(server.url).post('/api/login', { username: hank.username, password: '', code: code() })).status, 401, 'a TOTP code alone');
  const rescued = new Client(server.url);
  t.same((await must(rescued.post('/api/login', { username: hank.username, password: '', code: recovery[0] }), 200)).body, {
    user_id: hank.userId,
    suspended: false,
  });
  t.equal((await new Client(server.url).post('/api/login', { username: hank.username, password: '', code: recovery[0] })).status, 401, 'used up');

  // Freshly signed in by the recovery code, the account may add a passkey (no password to give).
  const spare = new SoftAuthenticator(server.url);
  const options = await must(rescued.post('/api/account/passkeys/options', {}), 200);
  await must(rescued.post('/api/account/passkeys', { response: spare.create(options.body) }), 201);
  await must(rescued.delete(`/api/account/passkeys/${passkey.id}`), 204);
  const [last] = (await must(rescued.get('/api/account/passkeys'), 200)).body;
  const refused = await rescued.delete(`/api/account/passkeys/${last.id}`);
  t.equal(refused.status, 409, 'the last way in stays');
  t.match(refused.text, /last way into the account/);
  t.equal((await signInWith(server, key)).res.status, 401, 'the removed passkey no longer signs in');
});

t.test('failed passkey sign-ins count as failed logins of the account and the address', async (t) => {
  const { server } = await boot(t, { RATE_LIMIT: 'on' });
  const ivy = await signUp(server.url, uniqueName('ivy'), PASSWORD);
  const key = new SoftAuthenticator(server.url);
  await register(ivy, key);
  let status = 0;
  for (let i = 0; i < 30 && status !== 429; i++) status = (await signInWith(server, key, { userVerified: false })).res.status;
  t.equal(status, 429, 'failures are limited');
  t.equal((await signInWith(server, key)).res.status, 429, 'and then a good answer waits too');
});
