import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { FakeClock, startServer, type TestServer } from './helpers/server';
import { Client, type Res, signUp, uniqueName } from './helpers/client';
import { ref } from './helpers/community';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

const setStanding = (server: TestServer, userId: string, standing: number) =>
  server.app.db.prepare('UPDATE users SET standing = ? WHERE id = ?').run(standing, userId);

const form = (fields: Record<string, string>) => new URLSearchParams(fields);

/** The error a form redirect carries back to the home page, decoded. */
const formError = (res: Res) => new URL(res.headers.get('location') ?? '', 'http://x').searchParams.get('error');

t.test('POST /api/register', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anon = new Client(server.url);

  t.test('answers 201 with only the new user_id', async (t) => {
    const res = await anon.post('/api/register', { username: uniqueName(), password: 'password1' });
    t.equal(res.status, 201);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.same(Object.keys(res.body), ['user_id']);
    t.match(res.body.user_id, UUID);
    t.equal(res.headers.get('set-cookie'), null, 'registering does not sign in');
  });

  t.test('usernames are checked at their edges', async (t) => {
    const cases: [string, unknown, number][] = [
      ['2 characters', 'ab', 400],
      ['3 characters', 'abc', 201],
      ['32 characters', 'a'.repeat(31) + 'z', 201],
      ['33 characters', 'b'.repeat(33), 400],
      ['digits, _ and -', 'a_1-B', 201],
      ['all digits', '1234567', 201],
      ['a space', 'ab cd', 400],
      ['a leading space', ' abcd', 400],
      ['a dot', 'ab.cd', 400],
      ['an @', 'ab@cd', 400],
      ['a slash', 'ab/cd', 400],
      ['a letter with an accent', 'abé', 400],
      ['a Cyrillic letter that looks Latin', 'аbc', 400],
      ['an emoji', 'ab😀', 400],
      ['a newline', 'abc\n', 400],
      ['a NUL', 'abc\u0000', 400],
      ['the empty string', '', 400],
      ['a number', 12345, 400],
      ['null', null, 400],
      ['a boolean', true, 400],
      ['an array', ['abcd'], 400],
      ['an object', { name: 'abcd' }, 400],
      ['nothing', undefined, 400],
    ];
    for (const [what, username, status] of cases) {
      const res = await anon.post('/api/register', { username, password: 'password1' });
      t.equal(res.status, status, `username with ${what}`);
      if (status === 400) t.match(res.text, /username/, `${what}: the reason names the field`);
    }
  });

  t.test('passwords are checked at their edges', async (t) => {
    const cases: [string, unknown, number][] = [
      ['7 characters', 'p'.repeat(7), 400],
      ['8 characters', 'p'.repeat(8), 201],
      ['72 characters', 'p'.repeat(72), 201],
      ['73 characters', 'p'.repeat(73), 400],
      ['8 characters beyond ASCII', 'pässwörd', 201],
      ['spaces only', ' '.repeat(8), 201],
      ['the empty string', '', 400],
      ['a number', 12345678, 400],
      ['null', null, 400],
      ['an array', ['password1'], 400],
      ['nothing', undefined, 400],
    ];
    for (const [what, password, status] of cases) {
      const username = uniqueName();
      const res = await anon.post('/api/register', { username, password });
      t.equal(res.status, status, `password of ${what}`);
      if (status === 400) t.match(res.text, /password/, `${what}: the reason names the field`);
      if (status === 201) {
        const login = await new Client(server.url).post('/api/login', { username, password });
        t.equal(login.status, 200, `${what}: the password logs in`);
      }
    }
  });

  t.test('a taken username is 409 in any letter case', async (t) => {
    const name = uniqueName('Alice');
    t.equal((await anon.post('/api/register', { username: name, password: 'password1' })).status, 201);
    for (const again of [name, name.toLowerCase(), name.toUpperCase()]) {
      const res = await anon.post('/api/register', { username: again, password: 'another-password' });
      t.equal(res.status, 409, again);
      t.match(res.headers.get('content-type'), /^text\/plain/);
    }
    // The first owner keeps the name and the password.
    const login = await new Client(server.url).post('/api/login', { username: name, password: 'password1' });
    t.equal(login.status, 200);
  });

  t.test('two registrations racing for one name: one wins, the other is 409', async (t) => {
    const name = uniqueName('race');
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => anon.post('/api/register', { username: i % 2 ? name : name.toUpperCase(), password: 'password1' })),
    );
    t.same(answers.map((res) => res.status).sort(), [201, 409, 409, 409]);
    for (const res of answers.filter((r) => r.status === 409)) t.match(res.text, /username is already taken/);
  });

  t.test('a racing browser form that loses is redirected, not shown a plain-text error', async (t) => {
    const name = uniqueName('race');
    const answers = await Promise.all(Array.from({ length: 4 }, () => anon.post('/api/register', form({ username: name, password: 'password1' }))));
    t.same(
      answers.map((res) => res.status),
      [303, 303, 303, 303],
    );
    const locations = answers.map((res) => res.headers.get('location')).sort();
    t.equal(locations.filter((l) => l === '/?registered=1').length, 1);
    t.equal(locations.filter((l) => l?.startsWith('/?error=')).length, 3);
  });

  t.test('the name is stored as typed', async (t) => {
    const name = uniqueName('MiXeD');
    const res = await anon.post('/api/register', { username: name, password: 'password1' });
    const lookup = await (await signUp(server.url)).get(`/api/users/${res.body.user_id}`);
    t.equal(lookup.body.username, name);
  });
});

t.test('POST /api/login and POST /api/logout', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const name = uniqueName();
  const registered = await new Client(server.url).post('/api/register', { username: name, password: 'password1' });

  t.test('login answers {user_id, suspended} and sets the session cookie', async (t) => {
    const client = new Client(server.url);
    const res = await client.post('/api/login', { username: name, password: 'password1' });
    t.equal(res.status, 200);
    t.same(res.body, { user_id: registered.body.user_id, suspended: false });
    const cookie = res.headers.get('set-cookie') ?? '';
    const parts = cookie.split(';').map((part) => part.trim());
    t.match(parts[0], /^app_session=[A-Za-z0-9_-]{43}$/, 'a 256-bit token');
    t.ok(parts.includes('HttpOnly'));
    t.ok(parts.includes('SameSite=Lax'));
    t.ok(parts.includes('Path=/'));
    t.notOk(parts.includes('Secure'), 'not Secure when BASE_URL is http');
    t.equal((await client.get('/api/users/me')).status, 200);
  });

  t.test('the username is matched in any letter case', async (t) => {
    const res = await new Client(server.url).post('/api/login', { username: name.toUpperCase(), password: 'password1' });
    t.equal(res.status, 200);
    t.equal(res.body.user_id, registered.body.user_id);
  });

  t.test('an unknown user and a wrong password get the same 401', async (t) => {
    const anon = new Client(server.url);
    const attempts = [
      { username: uniqueName('nobody'), password: 'password1' },
      { username: name, password: 'password2' },
      { username: name, password: 'PASSWORD1' },
      { username: 'not a valid name', password: 'password1' },
      { username: name, password: 'short' },
    ];
    const answers = await Promise.all(attempts.map((body) => anon.post('/api/login', body)));
    for (const [i, res] of answers.entries()) {
      t.equal(res.status, 401, JSON.stringify(attempts[i]));
      t.equal(res.text, answers[0].text, 'the same reason');
      t.equal(res.headers.get('set-cookie'), null, 'no cookie');
    }
  });

  t.test('missing or non-string credentials are 400', async (t) => {
    const anon = new Client(server.url);
    for (const body of [{}, { username: name }, { password: 'password1' }, { username: name, password: 12345678 }]) {
      t.equal((await anon.post('/api/login', body)).status, 400, JSON.stringify(body));
    }
  });

  t.test('every login is a new session; logging out ends only that one', async (t) => {
    const first = new Client(server.url);
    const second = new Client(server.url);
    await first.post('/api/login', { username: name, password: 'password1' });
    await second.post('/api/login', { username: name, password: 'password1' });
    t.not(first.cookie, second.cookie);

    const oldCookie = first.cookie!;
    const out = await first.post('/api/logout');
    t.equal(out.status, 204);
    t.equal(out.text, '');
    t.match(out.headers.get('set-cookie'), /^app_session=;.*Max-Age=0/, 'the cookie is cleared');

    const stale = new Client(server.url);
    stale.cookie = oldCookie;
    t.equal((await stale.get('/api/users/me')).status, 401, 'the old token no longer works');
    t.equal((await stale.post('/api/logout')).status, 401, 'nor can it log out again');
    t.equal((await second.get('/api/users/me')).status, 200, 'the other session lives on');
  });

  t.test('logout also accepts an empty JSON object', async (t) => {
    const client = await signUp(server.url);
    t.equal((await client.post('/api/logout', {})).status, 204);
    t.equal((await client.get('/api/users/me')).status, 401);
  });

  t.test('a token offered by the client is never adopted', async (t) => {
    const client = new Client(server.url);
    client.cookie = 'app_session=chosen-by-the-attacker-0000000000000000000000';
    await client.post('/api/login', { username: name, password: 'password1' });
    t.notMatch(client.cookie, /chosen-by-the-attacker/);
  });
});

t.test('the session cookie is Secure when BASE_URL is https', async (t) => {
  const server = await startServer({ env: { BASE_URL: 'https://chat.example' } });
  t.teardown(server.close);
  const name = uniqueName();
  const anon = new Client(server.url);
  await anon.post('/api/register', { username: name, password: 'password1' });
  const res = await anon.post('/api/login', { username: name, password: 'password1' });
  t.equal(res.status, 200);
  t.match(res.headers.get('set-cookie'), /;\s*Secure(;|$)/);
});

t.test('user lookups', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const alice = await signUp(server.url, uniqueName('alice'));
  const bob = await signUp(server.url, uniqueName('bob'));

  t.test('GET /api/users/me answers {user_id, username}', async (t) => {
    const res = await alice.get('/api/users/me');
    t.equal(res.status, 200);
    t.same(res.body, ref(alice));
  });

  t.test('GET /api/users/{id} answers the user lookup record', async (t) => {
    const res = await alice.get(`/api/users/${bob.userId}`);
    t.equal(res.status, 200);
    t.same(res.body, ref(bob));
  });

  t.test('GET /api/users/{id} is 404 for an unknown id and 400 for a malformed one', async (t) => {
    t.equal((await alice.get(`/api/users/${UNKNOWN_ID}`)).status, 404);
    t.equal((await alice.get(`/api/users/${crypto.randomUUID()}`)).status, 404);
    t.equal((await alice.get('/api/users/bob')).status, 400);
  });
});

t.test('GET /api/account', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);
  const admin = await signUp(server.url, uniqueName('mod'));

  t.test('answers the account status record', async (t) => {
    const res = await user.get('/api/account');
    t.equal(res.status, 200);
    t.same(res.body, {
      user_id: user.userId,
      username: user.username,
      is_admin: false,
      account_standing: 0,
      warnings: [],
      email: null,
      email_verified: false,
      display_name: null,
      avatar_url: null,
      two_factor: false,
      has_password: true,
      username_changeable: false,
    });
  });

  t.test('lists warnings newest first, naming the issuer', async (t) => {
    const insert = server.app.db.prepare('INSERT INTO warnings (id, user_id, issued_by, reason, created_at) VALUES (?, ?, ?, ?, ?)');
    const older = crypto.randomUUID();
    const newer = crypto.randomUUID();
    insert.run(older, user.userId, admin.userId, 'first <b>warning</b>', '2026-01-01T00:00:00.000Z');
    insert.run(newer, user.userId, admin.userId, 'second warning', '2026-01-02T00:00:00.000Z');
    setStanding(server, user.userId, 2);
    const res = await user.get('/api/account');
    t.equal(res.body.account_standing, 2);
    t.same(res.body.warnings, [
      { id: newer, issued_by: admin.username, reason: 'second warning', created_at: '2026-01-02T00:00:00.000Z' },
      { id: older, issued_by: admin.username, reason: 'first <b>warning</b>', created_at: '2026-01-01T00:00:00.000Z' },
    ]);
    t.same((await admin.get('/api/account')).body.warnings, [], 'only the caller’s own warnings');
  });
});

t.test('a suspended account (standing 4)', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const name = uniqueName('suspended');
  const client = await signUp(server.url, name, 'password1');
  setStanding(server, client.userId, 4);

  t.test('can still log in, and is told it is suspended', async (t) => {
    const res = await client.post('/api/login', { username: name, password: 'password1' });
    t.equal(res.status, 200);
    t.same(res.body, { user_id: client.userId, suspended: true });
  });

  t.test('can read GET /api/account', async (t) => {
    const res = await client.get('/api/account');
    t.equal(res.status, 200);
    t.equal(res.body.account_standing, 4);
  });

  t.test('gets 403 from normal authenticated endpoints, effective at once', async (t) => {
    for (const path of ['/api/users/me', `/api/users/${client.userId}`, '/api/admin/me']) {
      const res = await client.get(path);
      t.equal(res.status, 403, path);
      t.match(res.text, /suspended/);
    }
  });

  t.test('is unsuspended as soon as the standing drops', async (t) => {
    setStanding(server, client.userId, 3);
    t.equal((await client.get('/api/users/me')).status, 200);
    setStanding(server, client.userId, 4);
  });

  t.test('can log out', async (t) => {
    t.equal((await client.post('/api/logout')).status, 204);
    t.equal((await client.get('/api/account')).status, 401);
  });
});

t.test('GET /api/admin/me', async (t) => {
  const server = await startServer({ env: { ADMIN_USERS: ' Boss , other-admin' } });
  t.teardown(server.close);

  t.test('is 401 without a session and 403 for a normal user', async (t) => {
    t.equal((await new Client(server.url).get('/api/admin/me')).status, 401);
    const user = await signUp(server.url);
    const res = await user.get('/api/admin/me');
    t.equal(res.status, 403);
    t.match(res.text, /administrator/);
  });

  t.test('is 200 for a user named in ADMIN_USERS, in any letter case', async (t) => {
    const boss = await signUp(server.url, 'boss');
    const res = await boss.get('/api/admin/me');
    t.equal(res.status, 200);
    t.same(res.body, { user_id: boss.userId, username: 'boss', is_admin: true });
    t.equal((await boss.get('/api/account')).body.is_admin, true);
  });

  t.test('is 403 for an administrator who is suspended', async (t) => {
    const admin = await signUp(server.url, 'other-admin');
    setStanding(server, admin.userId, 4);
    t.equal((await admin.get('/api/admin/me')).status, 403);
  });
});

t.test('ADMIN_USERS also grants administrators who registered before start-up', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-admins-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const name = uniqueName('veteran');
  const before = await startServer({ config: { dataDir } });
  await signUp(before.url, name, 'password1');
  await before.close();

  const after = await startServer({ config: { dataDir, adminUsers: [name.toUpperCase()] } });
  t.teardown(after.close);
  const client = new Client(after.url);
  t.equal((await client.post('/api/login', { username: name, password: 'password1' })).status, 200);
  t.equal((await client.get('/api/admin/me')).status, 200);
});

t.test('secrets stay secret', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const password = 'Very-Distinctive-Secret-42';
  const name = uniqueName('secret');
  const texts: string[] = [];
  const keep = async (res: Promise<Res>) => {
    const r = await res;
    texts.push(r.text, [...r.headers.entries()].join('\n'));
    return r;
  };
  const client = new Client(server.url);
  const anon = new Client(server.url);

  await keep(client.post('/api/register', { username: name, password }));
  await keep(client.post('/api/register', { username: name, password }));
  await keep(client.post('/api/register', form({ username: uniqueName(), password: password + 'x'.repeat(60) })));
  const login = await keep(client.post('/api/login', { username: name, password }));
  await keep(client.post('/api/login', { username: name, password: password + '!' }));
  await keep(client.post('/api/login', form({ username: name, password: password + '?' })));
  await keep(client.get('/api/users/me'));
  await keep(client.get(`/api/users/${login.body.user_id}`));
  await keep(client.get('/api/account'));
  await keep(client.get('/api/admin/me'));
  await keep(anon.get(`/api/users/${login.body.user_id}`));
  await keep(client.post('/api/logout'));

  const stored = server.app.db.prepare('SELECT password_hash FROM users WHERE id = ?').get(login.body.user_id) as {
    password_hash: string;
  };
  t.match(stored.password_hash, /^\$argon2id\$/, 'the password is stored as an argon2id hash');
  t.notOk(
    texts.some((text) => text.includes('$argon2') || text.includes(stored.password_hash)),
    'no response carries a password hash',
  );
  t.notOk(
    texts.some((text) => text.includes(password)),
    'no response echoes the password',
  );
  t.ok(server.logs.length >= 12, 'requests were logged');
  t.notOk(
    server.logs.some((line) => line.includes(password) || line.includes('$argon2')),
    'the logs hold neither',
  );
});

t.test('browser forms are answered with redirects', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const name = uniqueName('former');
  const browser = new Client(server.url);
  const origin = { origin: server.url };

  t.test('register redirects to /?registered=1', async (t) => {
    const res = await browser.post('/api/register', form({ username: name, password: 'password1' }), origin);
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/?registered=1');
  });

  t.test('login redirects to /?logged_in=1 with the session cookie', async (t) => {
    const res = await browser.post('/api/login', form({ username: name, password: 'password1' }), origin);
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/?logged_in=1');
    t.match(res.headers.get('set-cookie'), /^app_session=[^;]+; HttpOnly; SameSite=Lax; Path=\//);
    t.equal((await browser.get('/api/users/me')).body.username, name);
  });

  t.test('logout redirects to / and ends the session', async (t) => {
    const res = await browser.post('/api/logout', form({}), origin);
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/');
    t.equal((await browser.get('/api/users/me')).status, 401);
  });

  t.test('a suspended user is sent to /account/warnings', async (t) => {
    const suspended = uniqueName('banned');
    const client = await signUp(server.url, suspended, 'password1');
    setStanding(server, client.userId, 4);
    const res = await browser.post('/api/login', form({ username: suspended, password: 'password1' }), origin);
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/account/warnings');
    t.equal((await browser.get('/api/account')).body.account_standing, 4, 'signed in, for the account page');
    await browser.post('/api/logout', form({}), origin);
  });

  t.test('form errors go back to / with a code the page words (never text from the URL)', async (t) => {
    const cases: [string, string, Record<string, string>, string][] = [
      ['a short password', '/api/register', { username: uniqueName(), password: 'short' }, 'password_rule'],
      ['a bad username', '/api/register', { username: 'a b', password: 'password1' }, 'username_rule'],
      ['a taken username', '/api/register', { username: name.toUpperCase(), password: 'password1' }, 'username_taken'],
      ['no fields', '/api/register', {}, 'username_rule'],
      ['a wrong password', '/api/login', { username: name, password: 'password2' }, 'login_failed'],
      ['an unknown user', '/api/login', { username: uniqueName(), password: 'password1' }, 'login_failed'],
      ['no session', '/api/logout', {}, 'signed_out'],
    ];
    for (const [what, path, fields, reason] of cases) {
      const res = await browser.post(path, form(fields), origin);
      t.equal(res.status, 303, what);
      t.match(res.headers.get('location'), /^\/\?error=/, `${what}: back to the home page`);
      t.equal(formError(res), reason, `${what}: ${formError(res)}`);
      t.equal(res.text, '', `${what}: no plain-text error page`);
    }
  });

  t.test('a JSON client still gets statuses, not redirects', async (t) => {
    const res = await browser.post('/api/login', { username: name, password: 'password2' });
    t.equal(res.status, 401);
    t.equal(res.headers.get('location'), null);
  });
});

t.test('failed-login rate limits', async (t) => {
  const login = (client: Client, username: string, password: string) => client.post('/api/login', { username, password });

  t.test('5 failed logins for an account are followed by 429 with Retry-After, until it passes', async (t) => {
    const clock = new FakeClock();
    const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock });
    t.teardown(server.close);
    const name = uniqueName('target');
    const victim = await signUp(server.url, name, 'password1');
    const attacker = new Client(server.url);
    for (let i = 1; i <= 5; i++) t.equal((await login(attacker, name, `wrong-${i}xx`)).status, 401, `failure ${i}`);

    const limited = await login(attacker, name.toUpperCase(), 'wrong-6xx');
    t.equal(limited.status, 429, 'the account key ignores letter case');
    const retryAfter = Number(limited.headers.get('retry-after'));
    t.ok(Number.isInteger(retryAfter) && retryAfter > 0, `Retry-After is whole seconds (${retryAfter})`);
    t.equal((await login(attacker, name, 'password1')).status, 429, 'even the right password waits');
    t.equal((await victim.get('/api/users/me')).status, 200, 'existing sessions are untouched');

    const other = await signUp(server.url, uniqueName(), 'password1');
    t.ok(other.userId, 'other accounts can still log in');

    clock.advance(retryAfter * 1000 - 1);
    t.equal((await login(attacker, name, 'password1')).status, 429, 'not a moment early');
    clock.advance(1);
    const res = await login(attacker, name, 'password1');
    t.equal(res.status, 200, 'after Retry-After seconds the right password works');
  });

  t.test('successful logins do not spend the failure budget', async (t) => {
    const clock = new FakeClock();
    const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock });
    t.teardown(server.close);
    const name = uniqueName();
    const client = await signUp(server.url, name, 'password1');
    for (let i = 0; i < 4; i++) t.equal((await login(client, name, 'wrong-password')).status, 401);
    for (let i = 0; i < 10; i++) t.equal((await login(client, name, 'password1')).status, 200, `success ${i + 1}`);
    t.equal((await login(client, name, 'wrong-password')).status, 401, 'the fifth failure is still allowed');
    t.equal((await login(client, name, 'wrong-password')).status, 429, 'the sixth is not');
  });

  t.test('parallel wrong guesses cannot slip past the limit while passwords are being checked', async (t) => {
    const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock: new FakeClock() });
    t.teardown(server.close);
    const name = uniqueName();
    await signUp(server.url, name, 'password1');
    const attacker = new Client(server.url);
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(attacker, name, `guess-number-${i}`)));
    const statuses = answers.map((res) => res.status);
    t.equal(statuses.filter((s) => s === 401).length, 5, 'five guesses are checked');
    t.equal(statuses.filter((s) => s === 429).length, 15, 'the rest are refused');
  });

  t.test('a rate-limited browser form is redirected with its code and Retry-After', async (t) => {
    const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock: new FakeClock() });
    t.teardown(server.close);
    const name = uniqueName();
    const browser = new Client(server.url);
    for (let i = 0; i < 5; i++) await browser.post('/api/login', form({ username: name, password: 'wrong-password' }));
    const res = await browser.post('/api/login', form({ username: name, password: 'wrong-password' }));
    t.equal(res.status, 303);
    t.equal(formError(res), 'rate_limited');
    t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After still tells when');
  });

  t.test('a login name no account can have counts only against the address', async (t) => {
    const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock: new FakeClock() });
    t.teardown(server.close);
    const attacker = new Client(server.url);
    for (let i = 0; i < 5; i++) {
      const res = await login(attacker, `${'x'.repeat(100_000)}${i}`, 'wrong-password');
      t.equal(res.status, 401);
    }
    t.equal(server.app.limits.loginFailuresPerAccount.size, 0, 'no attacker-sized key is kept per account');
    t.equal(server.app.limits.loginFailuresPerClient.size, 1, 'the address is still charged');
  });

  t.test('behind a proxy, the address is the one the proxy saw, not one the client made up', async (t) => {
    const server = await startServer({ env: { RATE_LIMIT: 'on', TRUST_PROXY: 'on' }, clock: new FakeClock() });
    t.teardown(server.close);
    const anon = new Client(server.url);
    const register = (forwardedFor: string) =>
      anon.post('/api/register', { username: uniqueName(), password: 'password1' }, { 'x-forwarded-for': forwardedFor });
    // The proxy appends the address it accepted the connection from; anything before it is
    // whatever the client sent.
    for (let i = 0; i < 10; i++) t.equal((await register(`10.9.9.${i}, 203.0.113.7`)).status, 201);
    t.equal((await register('10.9.9.99, 203.0.113.7')).status, 429, 'a made-up first hop does not help');
    t.equal((await register('203.0.113.8')).status, 201, 'another real client has its own allowance');
  });

  t.test('registrations per client address are limited too', async (t) => {
    const server = await startServer({ env: { RATE_LIMIT: 'on' }, clock: new FakeClock() });
    t.teardown(server.close);
    const anon = new Client(server.url);
    for (let i = 0; i < 10; i++) {
      t.equal((await anon.post('/api/register', { username: uniqueName(), password: 'password1' })).status, 201);
    }
    const res = await anon.post('/api/register', { username: uniqueName(), password: 'password1' });
    t.equal(res.status, 429);
    t.ok(res.headers.get('retry-after'));
  });
});
