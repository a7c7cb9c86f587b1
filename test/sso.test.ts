// Signing in with an OpenID Provider (docs/sso.md): a real provider on loopback (oidc-provider,
// its own sign-in pages walked by a cookie jar), the chat server's relying party (openid-client),
// and every refusal the issue lists: each a clear 4xx that opens no session.
import crypto from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import t, { type Test } from 'tap';
import { createSecretBox, loadSecretKey } from '../src/core/secret-box';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { ProviderAgent, type TestProvider, listenProvider } from './helpers/oidc-provider';
import { FakeClock, type TestServer, startServer } from './helpers/server';

const PASSWORD = 'correct horse';

interface Scene {
  server: TestServer;
  provider: TestProvider;
  clock: FakeClock;
  /** A person's browser at the provider. */
  agent(): ProviderAgent;
}

/** A provider on loopback and the chat server that trusts it (`extra`: the provider entry's options). */
async function scene(t: Test, extra: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Scene> {
  const listening = await listenProvider();
  t.teardown(listening.close);
  // Our clock starts at the real time: the provider's tokens carry real times.
  const clock = new FakeClock(Date.now());
  const server = await startServer({ clock, env: { OIDC_PROVIDERS: JSON.stringify([listening.entry({ allow_signup: true, ...extra })]), ...env } });
  t.teardown(server.close);
  const callback = `${server.url}/api/auth/oidc/test/callback`;
  const provider = await listening.configure(callback);
  return { server, provider, clock, agent: () => new ProviderAgent(callback) };
}

/** A path and query of a URL on the chat server. */
const local = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

/** Starts a sign-in in `client`'s browser; the provider's authorization URL. */
async function start(client: Client, query = ''): Promise<string> {
  const res = await must(client.get(`/api/auth/oidc/test/start${query}`), 303);
  return res.headers.get('location')!;
}

/** A whole sign-in as `login` at the provider: the callback's answer. */
async function signInAs(s: Scene, login: string, client = new Client(s.server.url), query = '') {
  const authorization = await start(client, query);
  const back = await s.agent().authorize(authorization, login);
  return { client, res: await client.get(local(back)), back };
}

/** The callback's refusal opened no session: no cookie, and the server holds no more sessions than before. */
function noSession(t: Test, s: Scene, before: number, res: { headers: Headers }) {
  t.notOk(
    res.headers.getSetCookie().some((c) => /^app_session=[^;]/.test(c)),
    'no session cookie',
  );
  t.equal(s.server.app.sessions.size, before, 'no session was opened');
}

/** Re-signs the ID token with a change to its payload (with the provider's key unless `key`). */
const resign = (s: Scene, change: (payload: Record<string, unknown>) => void, key?: crypto.KeyObject) => (token: string) => {
  const { header, payload } = s.provider.decode(token);
  change(payload);
  return s.provider.sign(header, payload, key);
};

t.test('a first sign-in makes an account (username from the claim, made unique, changeable once); the next signs in to it', async (t) => {
  const s = await scene(t);
  await signUp(s.server.url, 'alice', PASSWORD);
  s.provider.claims.set('sub-alice', { preferred_username: 'Alice', name: 'Alice Liddell', email: 'alice@wonder.example' });

  const { client, res } = await signInAs(s, 'sub-alice', undefined, '?return_to=/invites/AbCdEf');
  t.equal(res.status, 303);
  t.equal(res.headers.get('location'), '/invites/AbCdEf', 'back where the person started');
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('app_session='))!;
  t.match(cookie, /HttpOnly; SameSite=Lax; Path=\//, "the spec's cookie, as a login sets it");
  const account = await must(client.get('/api/account'), 200);
  t.equal(account.body.username, 'Alice-2', '"Alice" is taken in another letter case: -2');
  t.equal(account.body.display_name, 'Alice Liddell', 'the display name from the name claim');
  t.equal(account.body.has_password, false, 'no password');
  t.equal(account.body.username_changeable, true);
  const identities = await must(client.get('/api/account/identities'), 200);
  t.match(identities.body, [{ provider_id: 'test', provider_name: 'Test Org', email: 'alice@wonder.example' }]);
  t.match(s.server.app.sessions.listForUser(account.body.user_id), [{ method: 'oidc' }]);

  const again = await signInAs(s, 'sub-alice');
  t.equal(again.res.headers.get('location'), '/', 'the default return path');
  t.equal((await must(again.client.get('/api/account'), 200)).body.user_id, account.body.user_id, 'the same account');
  t.equal(s.server.app.db.prepare("SELECT COUNT(*) FROM users WHERE username LIKE 'Alice%'").pluck().get(), 2, 'no third account');

  t.equal((await client.put('/api/account/username', { username: 'alice' })).status, 409, 'taken in another letter case');
  t.equal((await must(client.put('/api/account/username', { username: 'liddell' }), 200)).body.username, 'liddell', 'changed once');
  t.equal((await client.put('/api/account/username', { username: 'alice_l' })).status, 409, 'not twice');
  const chosen = await signUp(s.server.url);
  t.equal((await chosen.put('/api/account/username', { username: uniqueName('other') })).status, 409, 'a chosen username stays');
});

t.test('a sign-up is refused without allow_signup, and outside allowed_domains; neither opens a session', async (t) => {
  const closed = await scene(t, { allow_signup: false });
  let before = closed.server.app.sessions.size;
  const refused = await signInAs(closed, 'nobody');
  t.equal(refused.res.status, 403);
  t.match(refused.res.text, /no account here is linked to this Test Org identity/);
  noSession(t, closed, before, refused.res);
  t.equal(closed.server.app.db.prepare('SELECT COUNT(*) FROM users').pluck().get(), 0, 'no account was made');

  const domains = await scene(t, { allowed_domains: ['school.example'] });
  domains.provider.claims.set('pupil', { email: 'pupil@school.example' });
  domains.provider.claims.set('outsider', { email: 'outsider@elsewhere.example' });
  domains.provider.claims.set('unverified', { email: 'unverified@school.example', email_verified: false });
  before = domains.server.app.sessions.size;
  for (const login of ['outsider', 'unverified']) {
    const { res } = await signInAs(domains, login);
    t.equal(res.status, 403, `${login}: refused`);
    t.match(res.text, /open to verified addresses of school\.example only/);
    noSession(t, domains, before, res);
  }
  t.equal((await signInAs(domains, 'pupil')).res.status, 303, 'a verified address of the domain signs up');
});

t.test('linking: signed in with the password, a person links an identity; it signs in to that account; unlinked, it no longer does', async (t) => {
  const s = await scene(t, { allow_signup: false });
  const bob = await signUp(s.server.url, uniqueName('bob'), PASSWORD);
  t.equal((await bob.post('/api/account/identities', { provider_id: 'test', current_password: 'wrong password' })).status, 403, 'the password is asked');
  t.equal((await bob.post('/api/account/identities', { provider_id: 'nope', current_password: PASSWORD })).status, 404);
  const started = await must(bob.post('/api/account/identities', { provider_id: 'test', current_password: PASSWORD }), 200);
  const back = await s.agent().authorize(started.body.authorization_url, 'bob-at-org');
  const linked = await bob.get(local(back));
  t.equal(linked.status, 303);
  t.equal(linked.headers.get('location'), '/account?linked=1#sign-in-methods');
  const [identity] = (await must(bob.get('/api/account/identities'), 200)).body;
  t.match(identity, { provider_id: 'test', email: 'bob-at-org@example.org' });

  const { client, res } = await signInAs(s, 'bob-at-org');
  t.equal(res.status, 303);
  t.equal((await must(client.get('/api/account'), 200)).body.user_id, bob.userId, 'the identity signs in to the linked account');

  // Another account cannot take the identity.
  const carol = await signUp(s.server.url, uniqueName('carol'), PASSWORD);
  const other = await must(carol.post('/api/account/identities', { provider_id: 'test', current_password: PASSWORD }), 200);
  const taken = await carol.get(local(await s.agent().authorize(other.body.authorization_url, 'bob-at-org')));
  t.equal(taken.status, 409, 'linked to another account');
  t.same((await must(carol.get('/api/account/identities'), 200)).body, []);

  t.equal((await bob.delete(`/api/account/identities/${crypto.randomUUID()}`)).status, 404);
  t.equal((await carol.delete(`/api/account/identities/${identity.id}`)).status, 404, "not carol's to unlink");
  await must(bob.delete(`/api/account/identities/${identity.id}`), 204);
  const before = s.server.app.sessions.size;
  const gone = await signInAs(s, 'bob-at-org');
  t.equal(gone.res.status, 403, 'unlinked: it opens nothing (sign-up is closed here)');
  noSession(t, s, before, gone.res);
});

t.test('a verified email of an existing account is not linked automatically (account takeover)', async (t) => {
  const s = await scene(t);
  const dave = await signUp(s.server.url, uniqueName('dave'), PASSWORD);
  s.server.app.db.prepare("UPDATE users SET email = 'dave@example.org', email_verified = 1 WHERE id = ?").run(dave.userId);
  s.provider.claims.set('mallory', { email: 'Dave@Example.org' });
  const users = s.server.app.db.prepare('SELECT COUNT(*) FROM users').pluck().get();
  const before = s.server.app.sessions.size;
  const { res } = await signInAs(s, 'mallory');
  t.equal(res.status, 409);
  t.match(res.text, /already has the address dave@example\.org: sign in with its password, then link Test Org/);
  noSession(t, s, before, res);
  t.equal(s.server.app.db.prepare('SELECT COUNT(*) FROM users').pluck().get(), users, 'and no second account either');
  t.same((await must(dave.get('/api/account/identities'), 200)).body, [], 'nothing was linked');
});

t.test('the last way in stays: an account made through a provider cannot unlink its only identity', async (t) => {
  const s = await scene(t);
  const { client } = await signInAs(s, 'erin');
  const [identity] = (await must(client.get('/api/account/identities'), 200)).body;
  const refused = await client.delete(`/api/account/identities/${identity.id}`);
  t.equal(refused.status, 409);
  t.match(refused.text, /last way into the account/);
  // Freshly signed in, it may set a password (no current one to give), and then unlink.
  await must(client.put('/api/account/password', { current_password: '', new_password: 'a new password' }), 204);
  t.equal((await must(client.get('/api/account'), 200)).body.has_password, true);
  await must(client.delete(`/api/account/identities/${identity.id}`), 204);
});

t.test('an account without a password proves itself by a fresh sign-in, not by an old session', async (t) => {
  const s = await scene(t);
  const { client } = await signInAs(s, 'frank');
  s.clock.advance(11 * 60_000);
  const stale = await client.post('/api/account/2fa/setup', { current_password: '' });
  t.equal(stale.status, 403);
  t.match(stale.text, /sign in again/);
  const fresh = await signInAs(s, 'frank');
  await must(fresh.client.post('/api/account/2fa/setup', {}), 200);
});

t.test('refusals: a wrong state, a foreign browser, a replayed code, a code of another sign-in', async (t) => {
  const s = await scene(t);
  const client = new Client(s.server.url);
  const back = new URL(await s.agent().authorize(await start(client), 'grace'));
  const before = s.server.app.sessions.size;

  const wrongState = new URL(back);
  wrongState.searchParams.set('state', 'x'.repeat(43));
  const res1 = await client.get(local(wrongState.href));
  t.equal(res1.status, 400, 'a state nobody started');
  t.match(res1.text, /unknown, used, expired or was started in another browser/);
  noSession(t, s, before, res1);

  const stranger = new Client(s.server.url);
  await start(stranger);
  const res2 = await stranger.get(local(back.href));
  t.equal(res2.status, 400, "another browser's callback (login CSRF)");
  noSession(t, s, before, res2);

  const res3 = await client.get(local(back.href));
  t.equal(res3.status, 400, 'the sign-in was used up by the refused try: a state is good once');
  noSession(t, s, before, res3);

  // A code is good once: used, it is refused the second time (here by us, the state being used).
  const good = await signInAs(s, 'grace');
  t.equal(good.res.status, 303);
  const replay = await good.client.get(local(good.back));
  t.equal(replay.status, 400, 'a replayed callback');

  // A code carried into another sign-in of the same browser: its PKCE verifier does not match.
  const sessions = s.server.app.sessions.size;
  const victim = new Client(s.server.url);
  const first = new URL(await s.agent().authorize(await start(victim), 'grace'));
  const second = new URL(await s.agent().authorize(await start(victim), 'grace'));
  second.searchParams.set('code', first.searchParams.get('code')!);
  const injected = await victim.get(local(second.href));
  t.equal(injected.status, 401, "another sign-in's code is refused by the provider (PKCE)");
  t.match(injected.text, /invalid_grant/);
  noSession(t, s, sessions, injected);
});

t.test("refusals: the ID token's nonce, expiry, signature and issuer; an iss mix-up in the response", async (t) => {
  const s = await scene(t);
  const other = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const cases: [string, (token: string) => string, RegExp][] = [
    [
      'a wrong nonce',
      resign(s, (p) => {
        p.nonce = 'another nonce';
      }),
      /nonce/,
    ],
    [
      'an expired ID token',
      resign(s, (p) => {
        p.iat = Math.floor(Date.now() / 1000) - 7200;
        p.exp = Math.floor(Date.now() / 1000) - 3600;
      }),
      /exp/,
    ],
    ['an ID token signed by another key', resign(s, () => {}, other), /signature/],
    [
      'an ID token of another issuer',
      resign(s, (p) => {
        p.iss = 'https://evil.example';
      }),
      /iss/,
    ],
    [
      'an ID token for another client',
      resign(s, (p) => {
        p.aud = 'someone-else';
      }),
      /aud/,
    ],
  ];
  for (const [what, tamper, reason] of cases) {
    s.provider.onIdToken = tamper;
    const before = s.server.app.sessions.size;
    const { res } = await signInAs(s, 'henry');
    t.equal(res.status, 401, `${what}: 401`);
    t.match(res.text, reason, `${what}: ${res.text}`);
    noSession(t, s, before, res);
  }
  s.provider.onIdToken = null;
  t.equal(s.server.app.db.prepare('SELECT COUNT(*) FROM users').pluck().get(), 0, 'none of them made an account');

  // RFC 9207: an authorization response that names another issuer (a mix-up attack).
  const client = new Client(s.server.url);
  const back = new URL(await s.agent().authorize(await start(client), 'henry'));
  t.equal(back.searchParams.get('iss'), s.provider.issuer, 'the provider names itself in the response');
  back.searchParams.set('iss', 'https://evil.example');
  const before = s.server.app.sessions.size;
  const mixup = await client.get(local(back.href));
  t.equal(mixup.status, 401);
  t.match(mixup.text, /iss/);
  noSession(t, s, before, mixup);
  t.ok(
    s.server.logs.some((line) => line.startsWith('sso test: sign-in refused:')),
    'refusals are logged for the administrator',
  );
});

t.test('refusals: an open redirect in the return path; an unknown provider; a provider that does not answer', async (t) => {
  const s = await scene(t);
  const client = new Client(s.server.url);
  for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'evil', '/a b', `/${'x'.repeat(2048)}`]) {
    const res = await client.get(`/api/auth/oidc/test/start?return_to=${encodeURIComponent(bad)}`);
    t.equal(res.status, 400, `return_to=${bad.slice(0, 30)}: 400`);
    t.notOk(res.headers.get('location'), 'and no redirect');
  }
  t.equal((await client.get('/api/auth/oidc/nope/start')).status, 404);
  t.equal((await client.get('/api/auth/oidc/nope/callback?state=x&code=y')).status, 404);
  t.equal((await client.get('/api/auth/oidc/test/start?remember=maybe')).status, 400);

  const dead = crypto.randomBytes(8).toString('hex');
  const down = await startServer({
    env: { OIDC_PROVIDERS: JSON.stringify([{ id: 'down', name: 'Down', issuer: 'http://127.0.0.1:9', client_id: dead, client_secret: dead }]) },
  });
  t.teardown(down.close);
  const res = await new Client(down.url).get('/api/auth/oidc/down/start');
  t.equal(res.status, 502, 'a provider that does not answer: 502, never a 500');
  t.match(res.text, /Down cannot be reached/);
});

t.test('the provider refusing the sign-in (access_denied) is a 401 that opens no session', async (t) => {
  const s = await scene(t);
  const client = new Client(s.server.url);
  const url = new URL(await start(client));
  const before = s.server.app.sessions.size;
  const res = await client.get(
    `/api/auth/oidc/test/callback?error=access_denied&error_description=the+user+said+no&state=${url.searchParams.get('state')}&iss=${encodeURIComponent(s.provider.issuer)}`,
  );
  t.equal(res.status, 401);
  t.match(res.text, /Test Org did not sign you in \(access_denied: the user said no\)/);
  noSession(t, s, before, res);
});

t.test('standing, two-factor (and amr), remembered devices and admin_group apply to a sign-in through a provider', async (t) => {
  const s = await scene(t, { admin_group: 'chat-admins', scopes: ['openid', 'profile', 'email', 'groups'] });
  const ivy = await signUp(s.server.url, uniqueName('ivy'), PASSWORD);
  const started = await must(ivy.post('/api/account/identities', { provider_id: 'test', current_password: PASSWORD }), 200);
  await ivy.get(local(await s.agent().authorize(started.body.authorization_url, 'ivy')));

  // Suspended: signed in, sent to the standing page (as a password login is).
  s.server.app.db.prepare('UPDATE users SET standing = 4 WHERE id = ?').run(ivy.userId);
  const suspended = await signInAs(s, 'ivy');
  t.equal(suspended.res.headers.get('location'), '/account/warnings');
  t.equal((await suspended.client.get('/api/users/me')).status, 403, 'and held to it');
  s.server.app.db.prepare('UPDATE users SET standing = 0 WHERE id = ?').run(ivy.userId);

  // Remember this device: the callback sets the device cookie, which signs in again after a restart.
  const remembered = await signInAs(s, 'ivy', undefined, '?remember=on');
  t.ok(remembered.client.device, 'the app_device cookie');
  remembered.client.cookie = undefined;
  t.equal((await must(remembered.client.post('/api/session/resume'), 200)).body.user_id, ivy.userId, 'the remembered device signs in');

  // admin_group: the provider decides at each sign-in.
  s.provider.claims.set('ivy', { groups: ['staff', 'chat-admins'] });
  await signInAs(s, 'ivy');
  t.equal((await must(ivy.get('/api/account'), 200)).body.is_admin, true, 'in the group: an administrator');
  s.provider.claims.set('ivy', { groups: ['staff'] });
  await signInAs(s, 'ivy');
  t.equal((await must(ivy.get('/api/account'), 200)).body.is_admin, false, 'out of it: no longer');

  // Two-factor sign-in on: the code is asked after the provider, unless the provider says it used MFA.
  await must(ivy.post('/api/account/2fa/setup', { current_password: PASSWORD }), 200);
  const secret = new Secret({ size: 20 }).base32;
  const box = createSecretBox(loadSecretKey(s.server.dataDir, null));
  s.server.app.db.prepare('UPDATE users SET totp_pending = ? WHERE id = ?').run(box.seal(secret, ivy.userId), ivy.userId);
  const code = (offsetSteps = 0) =>
    new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: s.clock.now() + offsetSteps * 30_000 });
  await must(ivy.post('/api/account/2fa/enable', { code: code(), current_password: PASSWORD }), 200);
  s.clock.advance(30_000);

  const before = s.server.app.sessions.size;
  const waiting = await signInAs(s, 'ivy', undefined, '?return_to=/account');
  t.equal(waiting.res.headers.get('location'), '/?sso=code', 'the code is still needed');
  noSession(t, s, before, waiting.res);
  t.equal((await waiting.client.post('/api/auth/oidc/two-factor', { code: '000000' === code() ? '111111' : '000000' })).status, 401, 'a wrong code');
  t.equal((await new Client(s.server.url).post('/api/auth/oidc/two-factor', { code: code() })).status, 400, 'another browser has nothing waiting');
  const done = await must(waiting.client.post('/api/auth/oidc/two-factor', { code: code() }), 200);
  t.same(done.body, { user_id: ivy.userId, suspended: false, return_to: '/account' });
  await must(waiting.client.get('/api/users/me'), 200);
  t.equal((await waiting.client.post('/api/auth/oidc/two-factor', { code: code(1) })).status, 400, 'the wait is over');

  s.provider.onIdToken = resign(s, (p) => {
    p.amr = ['pwd', 'otp'];
  });
  const mfa = await signInAs(s, 'ivy');
  t.equal(mfa.res.headers.get('location'), '/', 'amr says the provider used two factors: no second code');
  await must(mfa.client.get('/api/users/me'), 200);
  s.provider.onIdToken = resign(s, (p) => {
    p.amr = ['pwd'];
  });
  t.equal((await signInAs(s, 'ivy')).res.headers.get('location'), '/?sso=code', 'one factor at the provider: the code is asked');
});

t.test('rate limits: refused callbacks are failed logins of the address; starts and sign-ups are limited', async (t) => {
  const s = await scene(t, {}, { RATE_LIMIT: 'on' });
  const client = new Client(s.server.url);
  let status = 0;
  for (let i = 0; i < 21 && status !== 429; i++) {
    status = (await client.get(`/api/auth/oidc/test/callback?state=${'s'.repeat(43)}&code=x`)).status;
  }
  t.equal(status, 429, 'past 20 refused callbacks from one address: 429');
  const starts = [];
  for (let i = 0; i < 21; i++) starts.push((await client.get('/api/auth/oidc/test/start')).status);
  t.equal(starts.filter((x) => x === 303).length, 20);
  t.equal(starts.at(-1), 429, 'past 20 starts: 429');
});

t.test('sign-ups through a provider count as registrations of the address', async (t) => {
  const s = await scene(t, {}, { RATE_LIMIT: 'on' });
  const statuses = [];
  for (let i = 0; i < 11; i++) statuses.push((await signInAs(s, `newcomer${i}`)).res.status);
  t.same(statuses.slice(0, 10), Array(10).fill(303));
  t.equal(statuses[10], 429, 'the 11th sign-up from one address waits');
});

t.test('PASSWORD_SIGNUP=off: registration is refused, sign-in with a password still works, the page is told', async (t) => {
  const s = await scene(t, {}, { PASSWORD_SIGNUP: 'off' });
  const refused = await new Client(s.server.url).post('/api/register', { username: uniqueName(), password: PASSWORD });
  t.equal(refused.status, 403);
  t.match(refused.text, /password sign-up is off/);
  t.same((await must(new Client(s.server.url).get('/api/auth/providers'), 200)).body, {
    providers: [{ id: 'test', name: 'Test Org' }],
    password_signup: false,
  });
  t.equal((await signInAs(s, 'jack')).res.status, 303, 'accounts come through the provider');
});

t.test('deleting an account made through a provider forgets its identity', async (t) => {
  const s = await scene(t);
  const { client } = await signInAs(s, 'kate');
  await must(client.delete('/api/account', { password: '' }), 204);
  t.equal(s.server.app.db.prepare('SELECT COUNT(*) FROM identities').pluck().get(), 0);
  const again = await signInAs(s, 'kate');
  t.equal(again.res.status, 303, 'the identity signs up anew');
  t.equal((await must(again.client.get('/api/account'), 200)).body.username, 'kate', 'with the name free again');
});
