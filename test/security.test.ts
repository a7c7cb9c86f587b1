import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import argon2 from 'argon2';
import t, { type Test } from 'tap';
import { buildRoutes } from '../src/api';
import { DAY } from '../src/core/clock';
import { PAGE_CSP } from '../src/core/http/respond';
import type { Mail } from '../src/parts/accounts/mail';
import { MAX_CONCURRENT_HASHES } from '../src/core/passwords';
import { MAX_SESSIONS_PER_USER, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../src/parts/accounts/sessions';
import { FakeClock, type TestServer, startServer } from './helpers/server';
import { Client, type Res, signUp, uniqueName } from './helpers/client';

const PASSWORD = 'correct horse';

/** Directives of a CSP header as a map of directive name to its source list. */
function parseCsp(header: string | null): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of (header ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name.toLowerCase(), values);
  }
  return map;
}

/** Headers every response carries, whatever produced it. */
function assertBaseHeaders(t: Test, res: Res, what: string): void {
  t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
  t.equal(res.headers.get('referrer-policy'), 'no-referrer', `${what}: Referrer-Policy`);
  t.same(parseCsp(res.headers.get('content-security-policy')).get('frame-ancestors'), ["'none'"], `${what}: frame-ancestors 'none'`);
  t.equal(res.headers.get('access-control-allow-origin'), null, `${what}: no Access-Control-Allow-Origin`);
}

/** A signed-in user whose address is verified, and the mails captured since. */
async function userWithVerifiedEmail(server: TestServer) {
  const mails = captureMail(server);
  const user = await signUp(server.url);
  const email = `${user.username}@example.com`;
  await user.put('/api/account/email', { email });
  await server.app.mailer.idle?.();
  await user.get(`/api/verify-email?token=${tokenIn(mails.at(-1)!)}`);
  return { mails, user, email };
}

/** Captures every mail the server sends while still delivering it through the real mailer. */
function captureMail(server: TestServer): Mail[] {
  const mails: Mail[] = [];
  const real = server.app.mailer.send.bind(server.app.mailer);
  server.app.mailer.send = (mail) => {
    mails.push(mail);
    real(mail);
  };
  return mails;
}

const tokenIn = (mail: Mail): string => /token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? '';

/** A request through node:http, which sends exactly the headers given (fetch adds a content type). */
function rawStatus(base: string, method: string, path: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function login(base: string, username: string, password: string, headers: Record<string, string> = {}): Promise<Res> {
  return new Client(base).post('/api/login', { username, password }, headers);
}

t.test('security headers', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);
  const anon = new Client(server.url);

  t.test('every kind of response carries nosniff, no-referrer and frame-ancestors, and no CORS grant', async (t) => {
    const cases: [string, () => Promise<Res>][] = [
      ['API JSON', () => user.get('/api/users/me')],
      ['health check', () => anon.get('/healthz')],
      ['404', () => anon.get('/api/nothing-here')],
      ['401', () => anon.get('/api/users/me')],
      ['400', () => user.get('/api/users/not-a-uuid')],
      ['405', () => anon.request('DELETE', '/api/register')],
      ['403 cross-site', () => user.post('/api/servers', { name: 'x' }, { origin: 'https://evil.example' })],
      ['415', () => user.post('/api/servers', 'name=x', { 'content-type': 'text/plain' })],
      ['204', () => new Client(server.url).post('/api/register', { username: uniqueName(), password: PASSWORD })],
      ['303 form redirect', () => anon.post('/api/register', new URLSearchParams({ username: uniqueName(), password: PASSWORD }))],
      ['HTML page', () => anon.get('/')],
      ['static JS', () => anon.get('/js/home.js')],
      ['static CSS', () => anon.get('/css/site.css')],
      ['HEAD of a page', () => anon.request('HEAD', '/')],
    ];
    for (const [what, call] of cases) assertBaseHeaders(t, await call(), what);
    const page = await anon.get('/');
    assertBaseHeaders(t, await anon.get('/', { 'if-none-match': page.headers.get('etag')! }), '304 revalidation');
  });

  t.test('HTML pages carry the strict page CSP', async (t) => {
    const srv = (await user.post('/api/servers', { name: 'Pages' })).body;
    const invite = (await user.post(`/api/servers/${srv.id}/invites`)).body;
    const pages = ['/', '/index.html', '/reset-password', '/email-verified', '/account/warnings', `/invites/${invite.token}`];
    for (const page of pages) {
      const res = await user.get(page);
      t.equal(res.status, 200, `${page} is served`);
      t.match(res.headers.get('content-type'), /^text\/html/, `${page} is HTML`);
      assertBaseHeaders(t, res, page);
      const csp = parseCsp(res.headers.get('content-security-policy'));
      const required: [string, string][] = [
        ['default-src', "'self'"],
        ['script-src', "'self'"],
        ['object-src', "'none'"],
        ['base-uri', "'none'"],
        ['form-action', "'self'"],
        ['frame-ancestors', "'none'"],
      ];
      for (const [directive, value] of required) t.same(csp.get(directive), [value], `${page}: ${directive} ${value}`);
      const all = [...csp.values()].flat();
      for (const weak of ["'unsafe-inline'", "'unsafe-eval'", '*', 'http:', 'https:']) t.notOk(all.includes(weak), `${page}: no ${weak}`);
    }
    t.equal(PAGE_CSP.includes("'unsafe-inline'"), false, 'the page CSP allows no inline code');
  });

  t.test('an upload is served with nosniff and a sandbox CSP', async (t) => {
    const srv = (await user.post('/api/servers', { name: 'Files' })).body;
    const channel = (await user.get(`/api/servers/${srv.id}/channels`)).body[0] ?? (await user.post(`/api/servers/${srv.id}/channels`, { name: 'files' })).body;
    const form = new FormData();
    form.set('content', 'see attached');
    form.set('attachments', new Blob(['<script>alert(document.cookie)</script>'], { type: 'text/html' }), 'page.html');
    const sent = await user.post(`/api/servers/${srv.id}/channels/${channel.id}/messages`, form);
    t.equal(sent.status, 201, 'a message with a file is created');
    const res = await user.get(`/uploads/${sent.body.attachments[0].id}`);
    t.equal(res.status, 200);
    assertBaseHeaders(t, res, 'upload');
    const csp = parseCsp(res.headers.get('content-security-policy'));
    t.ok(csp.has('sandbox'), 'sandboxed: an HTML upload cannot run script as this origin');
    t.same(csp.get('default-src'), ["'none'"], "default-src 'none'");
    t.match(res.headers.get('content-disposition'), /^attachment/, 'an HTML file is a download, never rendered');
    t.notMatch(res.headers.get('content-type'), /html/, 'never served as HTML');
  });

  t.test('a foreign CORS preflight gets no permissive answer', async (t) => {
    const preflight = {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    };
    for (const path of ['/api/servers', '/api/login', '/api/users/me', '/api/nothing-here', '/']) {
      const res = await user.request('OPTIONS', path, undefined, preflight);
      t.ok(res.status >= 400, `OPTIONS ${path} is not a success (${res.status})`);
      for (const header of [
        'access-control-allow-origin',
        'access-control-allow-methods',
        'access-control-allow-headers',
        'access-control-allow-credentials',
      ]) {
        t.equal(res.headers.get(header), null, `OPTIONS ${path}: no ${header}`);
      }
    }
    const res = await user.get('/api/users/me', { origin: 'https://evil.example' });
    t.equal(res.headers.get('access-control-allow-origin'), null, 'a cross-origin read is not granted to the foreign page');
  });
});

t.test('JSON endpoints refuse text/plain and form bodies with 415', async (t) => {
  const adminName = uniqueName('admin');
  const server = await startServer({ env: { ADMIN_USERS: adminName } });
  t.teardown(server.close);
  const admin = await signUp(server.url, adminName);
  const friend = await signUp(server.url);
  const srv = (await admin.post('/api/servers', { name: 'Bodies' })).body;
  const channel = (await admin.get(`/api/servers/${srv.id}/channels`)).body[0] ?? (await admin.post(`/api/servers/${srv.id}/channels`, { name: 'b' })).body;
  const request = (await admin.post('/api/friends/requests', { username: friend.username })).body;
  await friend.post(`/api/friends/requests/${request.id}/accept`);
  const dm = (await admin.post('/api/conversations/dm', { usernames: [friend.username] })).body;
  // Message routes read their body after the access check: real containers get that far.
  const params: Record<string, string> = { server_id: srv.id, channel_id: channel.id, conversation_id: dm.id };
  const routes = buildRoutes(server.app).filter((r) => r.body === 'json' || r.body === 'message');
  t.ok(routes.length > 10, `${routes.length} routes take a JSON body`);
  // What a cross-site <form> can send without a preflight: text/plain and urlencoded (multipart is below).
  const bodies: [string, string | undefined, string][] = [
    ['text/plain holding JSON', 'text/plain', JSON.stringify({ name: 'x', content: 'x', email: 'a@b.example' })],
    ['a urlencoded form', 'application/x-www-form-urlencoded', 'name=x&content=x&email=a%40b.example'],
    ['no content type', undefined, '{"name":"x","content":"x"}'],
  ];
  for (const route of routes) {
    const path = route.path.replace(/:([a-z_]+)/g, (_, name: string) => params[name] ?? crypto.randomUUID());
    for (const [what, type, body] of bodies) {
      const headers: Record<string, string> = { cookie: admin.cookie! };
      if (type) headers['content-type'] = type;
      const status = await rawStatus(server.url, route.method, path, headers, body);
      t.equal(status, 415, `${route.method} ${route.path} with ${what}`);
    }
  }
  const multipart = new FormData();
  multipart.set('name', 'x');
  t.equal((await admin.post('/api/servers', multipart)).status, 415, 'a multipart body to a JSON-only endpoint');

  t.test('the auth endpoints take the browser form flow', async (t) => {
    const name = uniqueName('form');
    const anon = new Client(server.url);
    const reg = await anon.post('/api/register', new URLSearchParams({ username: name, password: PASSWORD }));
    t.equal(reg.status, 303);
    t.equal(reg.headers.get('location'), '/?registered=1');
    const log = await anon.post('/api/login', new URLSearchParams({ username: name, password: PASSWORD }));
    t.equal(log.status, 303);
    t.equal(log.headers.get('location'), '/?logged_in=1');
    const out = await anon.post('/api/logout', new URLSearchParams());
    t.equal(out.status, 303);
    t.equal(out.headers.get('location'), '/');
    t.equal((await anon.post('/api/register', 'x', { 'content-type': 'text/plain' })).status, 415, 'but not text/plain');
  });
});

t.test('prototype keys in bodies change nothing beyond the request', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const assertClean = (t: Test, what: string) => {
    const probe: Record<string, unknown> = {};
    t.equal(probe.polluted, undefined, `${what}: ({}).polluted is undefined`);
    t.equal(probe.isAdmin, undefined, `${what}: ({}).isAdmin is undefined`);
    t.equal(probe.is_admin, undefined, `${what}: ({}).is_admin is undefined`);
    t.notOk(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), `${what}: Object.prototype untouched`);
    t.notOk(Object.prototype.hasOwnProperty.call(Object.prototype, 'isAdmin'), `${what}: Object.prototype untouched`);
    t.equal(Object.getPrototypeOf(Object.prototype), null, `${what}: Object.prototype still has no prototype`);
  };
  const raw = (client: Client, method: string, path: string, text: string) => client.request(method, path, text, { 'content-type': 'application/json' });

  t.test('register with __proto__.isAdmin creates a plain user', async (t) => {
    const name = uniqueName('proto');
    const anon = new Client(server.url);
    const text = `{"username":"${name}","password":"${PASSWORD}","__proto__":{"isAdmin":true,"is_admin":1,"polluted":"yes"},"is_admin":true,"isAdmin":true}`;
    const reg = await raw(anon, 'POST', '/api/register', text);
    t.equal(reg.status, 201);
    await anon.post('/api/login', { username: name, password: PASSWORD });
    const account = await anon.get('/api/account');
    t.equal(account.body.is_admin, false, 'not an administrator');
    t.equal((await anon.get('/api/admin/me')).status, 403);
    const row = server.app.db.prepare<[string], { is_admin: number }>('SELECT is_admin FROM users WHERE username = ?').get(name);
    t.equal(row?.is_admin, 0);
    assertClean(t, 'after register');
  });

  t.test('nested __proto__, constructor and prototype keys are dropped everywhere', async (t) => {
    const user = await signUp(server.url);
    const poison = '"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"}';
    const srv = await raw(user, 'POST', '/api/servers', `{"name":"Poison",${poison},"nested":{${poison},"deeper":[{${poison}}]}}`);
    t.equal(srv.status, 201, 'the request still does its job');
    t.equal(srv.body.name, 'Poison');
    t.equal(srv.body.polluted, undefined);
    const channel = (await user.get(`/api/servers/${srv.body.id}/channels`)).body[0];
    if (channel) {
      const msg = await raw(user, 'POST', `/api/servers/${srv.body.id}/channels/${channel.id}/messages`, `{"content":"hi",${poison}}`);
      t.equal(msg.status, 201, 'a message with poison keys is posted');
      t.equal(msg.body.polluted, undefined);
    }
    const role = await raw(user, 'POST', `/api/servers/${srv.body.id}/roles`, `{"name":"r","full_server_admin":false,"__proto__":{"full_server_admin":true}}`);
    t.equal(role.status, 201);
    t.equal(role.body.full_server_admin, false, '__proto__ cannot supply a missing or default field');
    const onlyProto = await raw(user, 'POST', '/api/servers', `{"__proto__":{"name":"from the prototype"}}`);
    t.equal(onlyProto.status, 400, 'a field given only through __proto__ is missing, not inherited');
    assertClean(t, 'after JSON bodies');
  });

  t.test('form bodies drop the same keys', async (t) => {
    const name = uniqueName('formproto');
    const form = new URLSearchParams({ username: name, password: PASSWORD });
    form.append('__proto__', 'x');
    form.append('__proto__[polluted]', 'yes');
    form.append('constructor[prototype][polluted]', 'yes');
    const res = await new Client(server.url).post('/api/register', form);
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/?registered=1');
    assertClean(t, 'after a form');
  });

  t.test('the server still answers normally afterwards', async (t) => {
    const user = await signUp(server.url);
    t.equal((await user.get('/api/users/me')).status, 200);
    t.equal((await user.post('/api/servers', { name: 'After' })).status, 201);
    assertClean(t, 'at the end');
  });
});

t.test('sessions', async (t) => {
  t.test('every login mints a fresh token; a client-supplied one is never adopted', async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const a = new Client(server.url);
    const b = new Client(server.url);
    await a.post('/api/login', { username: user.username, password: PASSWORD });
    await b.post('/api/login', { username: user.username, password: PASSWORD });
    t.ok(a.cookie && b.cookie && a.cookie !== user.cookie, 'two logins, two cookies');
    t.not(a.cookie, b.cookie);
    t.match(a.cookie, /^app_session=[A-Za-z0-9_-]{43}$/, '256 random bits, base64url');

    const planted = `app_session=${crypto.randomBytes(32).toString('base64url')}`;
    const victim = new Client(server.url);
    victim.cookie = planted;
    const res = await victim.post('/api/login', { username: user.username, password: PASSWORD });
    t.equal(res.status, 200);
    t.not(victim.cookie, planted, 'the Set-Cookie token is not the planted one');
    const attacker = new Client(server.url);
    attacker.cookie = planted;
    t.equal((await attacker.get('/api/users/me')).status, 401, 'the planted token grants nothing');

    const fixated = new Client(server.url);
    fixated.cookie = a.cookie;
    await fixated.post('/api/login', { username: user.username, password: PASSWORD });
    t.not(fixated.cookie, a.cookie, 'even a live token sent to login is replaced by a new one');
  });

  t.test('the cookie is HttpOnly, SameSite=Lax, and Secure when BASE_URL is https', async (t) => {
    for (const [baseUrl, secure] of [
      ['', false],
      ['https://chat.example', true],
    ] as const) {
      const server = await startServer(baseUrl ? { env: { BASE_URL: baseUrl } } : {});
      const name = uniqueName();
      const anon = new Client(server.url);
      await anon.post('/api/register', { username: name, password: PASSWORD });
      const res = await anon.post('/api/login', { username: name, password: PASSWORD });
      const cookie = res.headers.get('set-cookie') ?? '';
      t.match(cookie, /; HttpOnly/, `${baseUrl || 'http'}: HttpOnly`);
      t.match(cookie, /; SameSite=Lax/, 'SameSite=Lax');
      t.match(cookie, /; Path=\//, 'Path=/');
      t.match(cookie, new RegExp(`; Max-Age=${SESSION_ABSOLUTE_MS / 1000}`), 'Max-Age is the absolute lifetime');
      t.equal(/; Secure/.test(cookie), secure, secure ? 'Secure' : 'not Secure over plain http');
      await server.close();
    }
  });

  t.test('logout ends only the session it was sent with', async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const other = new Client(server.url);
    await other.post('/api/login', { username: user.username, password: PASSWORD });
    const old = user.cookie;
    const res = await user.post('/api/logout');
    t.equal(res.status, 204);
    t.match(res.headers.get('set-cookie'), /app_session=;.*Max-Age=0/, 'the cookie is cleared');
    const replay = new Client(server.url);
    replay.cookie = old;
    t.equal((await replay.get('/api/users/me')).status, 401, 'the logged-out token is dead');
    t.equal((await other.get('/api/users/me')).status, 200, 'the other session lives on');
  });

  t.test('an idle session ends after 7 days', async (t) => {
    const clock = new FakeClock();
    const server = await startServer({ clock });
    t.teardown(server.close);
    const user = await signUp(server.url);
    t.equal(SESSION_IDLE_MS, 7 * DAY);
    clock.advance(SESSION_IDLE_MS);
    t.equal((await user.get('/api/users/me')).status, 200, 'exactly 7 days idle is still alive (and the use resets the idle timer)');
    clock.advance(SESSION_IDLE_MS + 1);
    t.equal((await user.get('/api/users/me')).status, 401, '7 days + 1 ms idle ends it');
    t.equal(server.app.sessions.size, 0, 'and it is gone from memory');
  });

  t.test('an active session still ends 30 days after login', async (t) => {
    const clock = new FakeClock();
    const server = await startServer({ clock });
    t.teardown(server.close);
    const user = await signUp(server.url);
    t.equal(SESSION_ABSOLUTE_MS, 30 * DAY);
    for (let day = 0; day < 30; day += 5) {
      clock.advance(5 * DAY);
      t.equal((await user.get('/api/users/me')).status, 200, `day ${day + 5}: active, alive`);
    }
    clock.advance(1);
    t.equal((await user.get('/api/users/me')).status, 401, '30 days + 1 ms after login: ended however active');
  });

  t.test('expired sessions are swept from memory without being used', async (t) => {
    const clock = new FakeClock();
    const server = await startServer({ clock });
    t.teardown(server.close);
    await signUp(server.url);
    await signUp(server.url);
    t.equal(server.app.sessions.size, 2);
    clock.advance(SESSION_IDLE_MS + 1);
    server.app.sessions.sweep();
    t.equal(server.app.sessions.size, 0);
  });

  t.test(`a user holds at most ${MAX_SESSIONS_PER_USER} sessions; the next login ends the oldest`, async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const clients = [user];
    for (let i = 1; i <= MAX_SESSIONS_PER_USER; i++) {
      const c = new Client(server.url);
      t.equal((await c.post('/api/login', { username: user.username, password: PASSWORD })).status, 200);
      clients.push(c);
    }
    t.equal(server.app.sessions.size, MAX_SESSIONS_PER_USER);
    t.equal((await clients[0].get('/api/users/me')).status, 401, 'the oldest session ended');
    for (const c of clients.slice(1)) t.equal((await c.get('/api/users/me')).status, 200);
    const someoneElse = await signUp(server.url);
    t.equal((await someoneElse.get('/api/users/me')).status, 200, "another user's sessions are not touched");
  });
});

t.test('password hashing', async (t) => {
  t.test('hashes are argon2id with m=19456, t=2, p=1', async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const row = server.app.db.prepare<[string], { password_hash: string }>('SELECT password_hash FROM users WHERE id = ?').get(user.userId);
    t.match(row?.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    t.notMatch(row?.password_hash, new RegExp(PASSWORD), 'no trace of the password');
  });

  t.test('a hash made with other parameters is upgraded at the next login', async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const old = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 4096, timeCost: 3, parallelism: 1 });
    server.app.db.prepare('UPDATE users SET password_hash = ? WHERE id = ?').run(old, user.userId);
    const read = () =>
      server.app.db.prepare<[string], { password_hash: string }>('SELECT password_hash FROM users WHERE id = ?').get(user.userId)!.password_hash;
    t.match(read(), /m=4096,t=3,p=1/);
    t.equal((await login(server.url, user.username, 'wrong password')).status, 401);
    t.equal(read(), old, 'a failed login changes nothing');
    t.equal((await login(server.url, user.username, PASSWORD)).status, 200, 'the old hash still logs in');
    t.match(read(), /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, 'and is replaced by an OWASP one');
    t.equal((await login(server.url, user.username, PASSWORD)).status, 200, 'which logs in too');
  });

  t.test(`at most ${MAX_CONCURRENT_HASHES} hashes run at once, however many logins arrive`, async (t) => {
    const server = await startServer();
    t.teardown(server.close);
    const user = await signUp(server.url);
    let running = 0;
    let most = 0;
    const count =
      <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        most = Math.max(most, ++running);
        try {
          return await fn(...args);
        } finally {
          running--;
        }
      };
    const { verify, hash } = argon2;
    argon2.verify = count(verify);
    argon2.hash = count(hash) as typeof hash;
    t.teardown(() => {
      argon2.verify = verify;
      argon2.hash = hash;
    });
    const attempts = Array.from({ length: 50 }, (_, i) => login(server.url, user.username, i % 2 ? PASSWORD : 'wrong password'));
    const statuses = (await Promise.all(attempts)).map((r) => r.status);
    t.same([...new Set(statuses)].sort(), [200, 401], 'every login was answered');
    t.ok(most >= 2, `hashing ran in parallel (${most} at once)`);
    t.ok(most <= MAX_CONCURRENT_HASHES, `never more than ${MAX_CONCURRENT_HASHES} at once (saw ${most})`);
  });
});

t.test('passwords, session tokens and email tokens never reach the log', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const mails = captureMail(server);
  const name = uniqueName('logs');
  const password = 'hunter2 is my password';
  const newPassword = 'a brand new secret';
  const anon = new Client(server.url);
  await anon.post('/api/register', { username: name, password });
  await anon.post('/api/login', { username: name, password: 'not the password at all' });
  const ok = await anon.post('/api/login', { username: name, password });
  t.equal(ok.status, 200);
  const session = anon.cookie!.split('=')[1];
  await anon.post('/api/register', new URLSearchParams({ username: uniqueName('logs'), password }));
  t.equal((await anon.put('/api/account/email', { email: `${name}@example.com` })).status, 200);
  await server.app.mailer.idle?.();
  const verifyToken = tokenIn(mails.at(-1)!);
  t.ok(verifyToken, 'a verification link was sent');
  t.equal((await anon.get(`/api/verify-email?token=${verifyToken}`)).status, 200);
  t.equal((await anon.post('/api/password-reset/request', { email: `${name}@example.com` })).status, 202);
  await server.app.mailer.idle?.();
  const resetToken = tokenIn(mails.at(-1)!);
  t.ok(resetToken && resetToken !== verifyToken, 'a reset link was sent');
  t.equal((await anon.post('/api/password-reset', { token: resetToken, password: newPassword })).status, 204);
  await anon.get(`/reset-password?token=${resetToken}`);
  await anon.get(`/api/verify-email?token=${verifyToken}`);
  await server.app.mailer.idle?.();

  const log = server.logs.join('\n');
  t.ok(server.logs.length >= 10, `${server.logs.length} lines logged`);
  t.match(log, /POST \/api\/login 200/, 'requests are logged');
  t.match(log, /GET \/api\/verify-email 200/, 'the verify link is logged by its path');
  for (const [what, secret] of [
    ['the password', password],
    ['the wrong password', 'not the password at all'],
    ['the new password', newPassword],
    ['the session token', session],
    ['the verification token', verifyToken],
    ['the reset token', resetToken],
  ]) {
    t.notOk(log.includes(secret), `no ${what}`);
  }
  t.notMatch(log, /token=/, 'no query string with a token');
  t.notMatch(log, /app_session=/, 'no cookie');
});

t.test('webhook and invite tokens, credentials in the path, never reach the log', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const serverId: string = (await owner.post('/api/servers', { name: uniqueName('logs') })).body.id;
  const channel: string = (await owner.get(`/api/servers/${serverId}/channels`)).body[0].id;
  const hook = (await owner.post(`/api/servers/${serverId}/channels/${channel}/webhooks`, { name: 'CI' })).body;
  const invite: string = (await owner.post(`/api/servers/${serverId}/invites`)).body.token;
  const call = (path: string, body: unknown = { content: 'hi' }, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const W = `/api/webhooks/${hook.id}/${hook.token}`;
  t.equal((await call(W)).status, 204);
  t.equal((await call(`${W}/slack`, { text: 'hi' })).status, 200);
  t.equal((await call(`${W}/github`, { action: 'labeled', issue: {}, repository: {} }, { 'x-github-event': 'label' })).status, 204);
  t.equal((await call(`${W}/elsewhere`)).status, 404, 'a path past the token that is no route');
  t.equal((await call(`/API/webhooks/${hook.id}/${hook.token}`)).status, 404, 'the path in other letter case');
  t.equal((await call(`/api/webhooks/${hook.id}/${hook.token}x`)).status, 401, 'a wrong token');
  const newcomer = await signUp(server.url);
  t.equal((await newcomer.get(`/api/invites/${invite}`)).status, 200);
  t.equal((await newcomer.get(`/invites/${invite}`, { accept: 'text/html' })).status, 200);
  t.equal((await newcomer.post(`/api/invites/${invite}/accept`)).status, 200);
  // A WebSocket upgrade aimed at a webhook's URL is no socket's either.
  const upgrade = await new Promise<string>((resolve) => {
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    let said = '';
    socket.on('data', (chunk) => (said += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(said));
    socket.write(
      `GET ${W} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\n\r\n`,
    );
  });
  t.match(upgrade, /^HTTP\/1\.1 404/, 'the upgrade is refused');
  await new Promise((resolve) => setTimeout(resolve, 50));

  const log = server.logs.join('\n');
  t.notOk(log.includes(hook.token), 'no webhook token');
  t.notOk(log.includes(invite), 'no invite token');
  t.match(log, new RegExp(`POST /api/webhooks/${hook.id}/:token 204`), 'a webhook call is logged with its token masked');
  t.match(log, new RegExp(`POST /api/webhooks/${hook.id}/:token/github 204`), 'on every route');
  t.match(log, /GET \/invites\/:token 200/, 'an invite page');
  t.match(log, /POST \/api\/invites\/:token\/accept 200/, 'an invite accepted');
});

t.test('every path parameter is an id or a token: a new kind of credential in a path needs a decision about the log', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const params = new Set(buildRoutes(server.app).flatMap((r) => r.path.split('/').filter((segment) => segment.startsWith(':'))));
  // `_id` parameters are UUIDs that grant nothing; `token` is a credential the log masks.
  // `provider` is an OpenID Provider's id from the administrator's configuration (docs/sso.md):
  // public (on the sign-in page's links), no credential, logged as it is.
  // Discord's webhook paths name the webhook's and a message's id `:hook` and `:message` (read by
  // the handlers, so a malformed one is answered in Discord's shape): ids, logged as they are.
  // `:emoji` is a reaction's emoji (a Unicode emoji, a shortcode, or a custom emoji's name:id).
  // The media proxy's `:sig` and `:url` are the server's signature of a URL posted in a message its
  // reader sees, and that URL: the route also needs a session; the log masks `:url` (its query may be a key).
  const named = new Set([':token', ':provider', ':hook', ':message', ':emoji', ':sig', ':url']);
  for (const param of params) t.ok(named.has(param) || param.endsWith('_id'), `${param}: an id or a token`);
});

/** Opens a raw socket; resolves when the server closes it, with what it said and how long it took. */
function trickle(url: string, first: string, drip: string, everyMs: number): Promise<{ ms: number; said: string }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let said = '';
    socket.on('data', (chunk) => (said += chunk.toString('latin1')));
    socket.on('error', () => {});
    const timer = setInterval(() => {
      if (socket.writable) socket.write(drip);
    }, everyMs);
    // The test's own bound: a server that never cuts the client off fails here, not by hanging.
    const bound = setTimeout(() => socket.destroy(), 10_000);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(bound);
      resolve({ ms: performance.now() - started, said });
    });
    socket.write(first);
  });
}

t.test('slow clients are cut off', async (t) => {
  t.test('a slow-loris client dribbling headers is closed after headersTimeout', async (t) => {
    const server = await startServer({ timeouts: { headersMs: 1000 } });
    t.teardown(server.close);
    const { ms, said } = await trickle(server.url, 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ', 'a', 300);
    t.ok(ms < 3000, `closed after ${Math.round(ms)} ms, although a byte arrived every 300 ms`);
    t.ok(said === '' || /^HTTP\/1\.1 4\d\d /.test(said), `answered nothing or a 4xx: ${JSON.stringify(said.slice(0, 40))}`);
    t.match(said, /^HTTP\/1\.1 408 /, 'the answer is 408 Request Timeout');
  });

  t.test('a body that never completes is cut off after requestTimeout', async (t) => {
    const server = await startServer({ timeouts: { headersMs: 1000, requestMs: 1500 } });
    t.teardown(server.close);
    const head = `POST /api/register HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":`;
    const { ms, said } = await trickle(server.url, head, ' ', 300);
    t.ok(ms < 3500, `closed after ${Math.round(ms)} ms, although a byte arrived every 300 ms`);
    t.ok(said === '' || /^HTTP\/1\.1 4\d\d /.test(said), `answered nothing or a 4xx: ${JSON.stringify(said.slice(0, 40))}`);
    t.match(said, /^HTTP\/1\.1 408 /, 'the answer is 408 Request Timeout');
  });

  t.test('the defaults are set deliberately', async (t) => {
    const { DEFAULT_TIMEOUTS } = await import('../src/app');
    t.ok(DEFAULT_TIMEOUTS.headersMs <= 30_000, `headers within ${DEFAULT_TIMEOUTS.headersMs} ms`);
    t.ok(DEFAULT_TIMEOUTS.requestMs >= 10 * 60_000, `a request may take ${DEFAULT_TIMEOUTS.requestMs / 60_000} min (a 25 MiB upload at ~40 KB/s)`);
    t.ok(DEFAULT_TIMEOUTS.keepAliveMs > 0 && DEFAULT_TIMEOUTS.idleMs > 0);
  });
});

t.test('rate limits', async (t) => {
  const limited = (opts: { env?: Record<string, string> } = {}) => {
    const clock = new FakeClock();
    return startServer({ clock, env: { RATE_LIMIT: 'on', ...opts.env } }).then((server) => ({ server, clock }));
  };
  const assert429 = (t: Test, res: Res, what: string): number => {
    t.equal(res.status, 429, what);
    t.match(res.headers.get('content-type'), /^text\/plain/, `${what}: plain text`);
    t.match(res.text, /too many .*try again in \d+ s/, `${what}: says why and when`);
    const retry = Number(res.headers.get('retry-after'));
    t.ok(Number.isInteger(retry) && retry >= 1, `${what}: Retry-After ${retry}`);
    return retry;
  };

  t.test('failed logins per account: 5, then 429 until Retry-After has passed', async (t) => {
    const { server, clock } = await limited();
    t.teardown(server.close);
    const user = await signUp(server.url);
    for (let i = 1; i <= 5; i++) t.equal((await login(server.url, user.username, 'wrong password')).status, 401, `failure ${i}`);
    const refused = await login(server.url, user.username, 'wrong password');
    const retry = assert429(t, refused, 'the 6th attempt');
    assertBaseHeaders(t, refused, '429');
    assert429(t, await login(server.url, user.username, PASSWORD), 'even the right password while limited');
    assert429(t, await login(server.url, user.username.toUpperCase(), 'wrong password'), 'the same account in other letter case');
    t.equal((await login(server.url, uniqueName(), 'wrong password')).status, 401, 'another account is unaffected');
    clock.advance(retry * 1000 - 1);
    t.equal((await login(server.url, user.username, PASSWORD)).status, 429, 'not a millisecond early');
    clock.advance(1);
    t.equal((await login(server.url, user.username, PASSWORD)).status, 200, 'after Retry-After the account works again');
    t.equal((await user.get('/api/users/me')).status, 200, 'sessions made before were never affected');
  });

  t.test('a successful login does not consume the failure budget', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const user = await signUp(server.url);
    for (let i = 0; i < 10; i++) t.equal((await login(server.url, user.username, PASSWORD)).status, 200);
    for (let i = 1; i <= 4; i++) t.equal((await login(server.url, user.username, 'wrong password')).status, 401);
    for (let i = 0; i < 5; i++) t.equal((await login(server.url, user.username, PASSWORD)).status, 200, 'successes between failures');
    t.equal((await login(server.url, user.username, 'wrong password')).status, 401, 'the 5th failure is still a plain 401');
    assert429(t, await login(server.url, user.username, 'wrong password'), 'the 6th failure');
  });

  t.test('parallel guesses cannot slip past the limit while passwords are being hashed', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const statuses = (await Promise.all(Array.from({ length: 15 }, () => login(server.url, user.username, 'wrong password')))).map((r) => r.status);
    t.equal(statuses.filter((s) => s === 401).length, 5, 'exactly 5 guesses were checked');
    t.equal(statuses.filter((s) => s === 429).length, 10, 'the rest were refused');
  });

  t.test('failed logins per client address: 20 across usernames, then 429', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    for (let i = 1; i <= 20; i++) t.equal((await login(server.url, uniqueName('guess'), 'wrong password')).status, 401, `failure ${i}`);
    assert429(t, await login(server.url, uniqueName('guess'), 'wrong password'), 'the 21st, for yet another name');
  });

  t.test("logging in to one's own account buys no extra guesses against others", async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const own = await signUp(server.url);
    for (let i = 1; i <= 20; i++) {
      t.equal((await login(server.url, uniqueName('victim'), 'wrong password')).status, 401, `guess ${i}`);
      if (i < 20) t.equal((await login(server.url, own.username, PASSWORD)).status, 200, `own login ${i}`);
    }
    assert429(t, await login(server.url, uniqueName('victim'), 'wrong password'), 'the 21st guess from this address');
    assert429(t, await login(server.url, own.username, PASSWORD), 'and, the address being limited, even its own login waits');
  });

  t.test('a rate-limited account can still request a password reset', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const { mails, user, email } = await userWithVerifiedEmail(server);
    for (let i = 0; i < 5; i++) await login(server.url, user.username, 'wrong password');
    assert429(t, await login(server.url, user.username, PASSWORD), 'login is limited');
    const res = await new Client(server.url).post('/api/password-reset/request', { email });
    t.equal(res.status, 202, 'the reset request answers its normal success');
    await server.app.mailer.idle?.();
    const token = tokenIn(mails.at(-1)!);
    t.ok(token, 'and the reset link is mailed');
    t.equal((await new Client(server.url).post('/api/password-reset', { token, password: 'a new password' })).status, 204, 'the reset goes through');
  });

  t.test('after a completed password reset the owner can sign in at once', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const { mails, user, email } = await userWithVerifiedEmail(server);
    for (let i = 0; i < 5; i++) await login(server.url, user.username, 'wrong password');
    await new Client(server.url).post('/api/password-reset/request', { email });
    await server.app.mailer.idle?.();
    await new Client(server.url).post('/api/password-reset', { token: tokenIn(mails.at(-1)!), password: 'a new password' });
    t.equal((await login(server.url, user.username, 'a new password')).status, 200, 'proving control of the email lifts the lock');
  });

  t.test('registrations per client address: 10, then 429', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const anon = new Client(server.url);
    for (let i = 1; i <= 10; i++)
      t.equal((await anon.post('/api/register', { username: uniqueName('reg'), password: PASSWORD })).status, 201, `registration ${i}`);
    assert429(t, await anon.post('/api/register', { username: uniqueName('reg'), password: PASSWORD }), 'the 11th');
  });

  t.test('reset emails per address: 3, then 429; per client: 10, then 429', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const anon = new Client(server.url);
    for (let i = 1; i <= 3; i++) t.equal((await anon.post('/api/password-reset/request', { email: 'one@example.com' })).status, 202);
    assert429(t, await anon.post('/api/password-reset/request', { email: 'ONE@example.com' }), 'a 4th to the same address');
    // The refused 4th still counted against the client: 4 so far, 6 more to other addresses.
    for (let i = 5; i <= 10; i++) t.equal((await anon.post('/api/password-reset/request', { email: `n${i}@example.com` })).status, 202, `request ${i}`);
    assert429(t, await anon.post('/api/password-reset/request', { email: 'fresh@example.com' }), 'an 11th from the same client');
  });

  t.test('friend requests per user: 20, then 429 (failed lookups count)', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const user = await signUp(server.url);
    for (let i = 1; i <= 20; i++) t.equal((await user.post('/api/friends/requests', { username: uniqueName('nobody') })).status, 404, `probe ${i}`);
    assert429(t, await user.post('/api/friends/requests', { username: uniqueName('nobody') }), 'the 21st');
    const other = await signUp(server.url);
    t.equal((await other.post('/api/friends/requests', { username: user.username })).status, 201, 'another user has their own budget');
  });

  t.test('reports per user: 10, then 429', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const user = await signUp(server.url);
    // Eleven different targets (messages of the reporter's own server): a second report of the
    // same target while it is pending is merged, not counted again.
    const srv = (await user.post('/api/servers', { name: 'Reported' })).body;
    const channel = (await user.get(`/api/servers/${srv.id}/channels`)).body[0];
    const targets: string[] = [];
    for (let i = 0; i < 11; i++) targets.push((await user.post(`/api/servers/${srv.id}/channels/${channel.id}/messages`, { content: `m${i}` })).body.id);
    for (let i = 1; i <= 10; i++)
      t.equal((await user.post('/api/reports', { type: 'server_message', target: targets[i - 1], reason: `r${i}` })).status, 201, `report ${i}`);
    assert429(t, await user.post('/api/reports', { type: 'server_message', target: targets[10], reason: 'again' }), 'the 11th');
  });

  t.test('message sends per user: a burst of 20, then one per 500 ms', async (t) => {
    const { server, clock } = await limited();
    t.teardown(server.close);
    const user = await signUp(server.url);
    const srv = (await user.post('/api/servers', { name: 'Chatty' })).body;
    const channel = (await user.get(`/api/servers/${srv.id}/channels`)).body[0] ?? (await user.post(`/api/servers/${srv.id}/channels`, { name: 'c' })).body;
    const path = `/api/servers/${srv.id}/channels/${channel.id}/messages`;
    for (let i = 1; i <= 20; i++) t.equal((await user.post(path, { content: `m${i}` })).status, 201, `message ${i}`);
    const retry = assert429(t, await user.post(path, { content: 'too fast' }), 'the 21st');
    t.equal(retry, 1);
    const legacy = await user.post(`/api/servers/${srv.id}/messages`, { content: 'legacy' });
    t.equal(legacy.status, 429, 'the legacy route shares the budget');
    clock.advance(500);
    t.equal((await user.post(path, { content: 'one more' })).status, 201, '500 ms later, one more');
    t.equal((await user.post(path, { content: 'and another' })).status, 429, 'but only one');
    const count = server.app.db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM messages WHERE channel_id = ?').get(channel.id)!.n;
    t.equal(count, 21, 'refused messages were not stored');
  });

  t.test('RATE_LIMIT=off disables every limit', async (t) => {
    const server = await startServer({ env: { RATE_LIMIT: 'off' } });
    t.teardown(server.close);
    const user = await signUp(server.url);
    for (let i = 1; i <= 30; i++) t.equal((await login(server.url, user.username, 'wrong password')).status, 401, `failure ${i}`);
    t.equal((await login(server.url, user.username, PASSWORD)).status, 200);
    for (let i = 0; i < 30; i++) t.equal((await user.post('/api/friends/requests', { username: uniqueName('nobody') })).status, 404);
    for (const [name, limiter] of Object.entries(server.app.limits)) t.equal(limiter.size, 0, `${name} holds nothing`);
  });

  t.test('TRUST_PROXY on: each X-Forwarded-For client has its own budget', async (t) => {
    const { server } = await limited({ env: { TRUST_PROXY: 'on' } });
    t.teardown(server.close);
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 0; i < 20; i++) await login(server.url, uniqueName('guess'), 'wrong password', from('203.0.113.1'));
    assert429(t, await login(server.url, uniqueName('guess'), 'wrong password', from('203.0.113.1')), 'the first client is limited');
    t.equal((await login(server.url, uniqueName('guess'), 'wrong password', from('203.0.113.2'))).status, 401, 'a second client is not');
  });

  t.test('TRUST_PROXY off: X-Forwarded-For is ignored', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    for (let i = 0; i < 20; i++) await login(server.url, uniqueName('guess'), 'wrong password', { 'x-forwarded-for': `203.0.113.${i}` });
    assert429(t, await login(server.url, uniqueName('guess'), 'wrong password', { 'x-forwarded-for': '198.51.100.7' }), 'every request is the socket address');
  });

  t.test('TRUST_PROXY on: a client cannot pick its own address by sending X-Forwarded-For to the proxy', async (t) => {
    const { server } = await limited({ env: { TRUST_PROXY: 'on' } });
    t.teardown(server.close);
    // nginx ($proxy_add_x_forwarded_for) and most proxies append the peer to what the client sent.
    const via = (spoofed: string) => ({ 'x-forwarded-for': `${spoofed}, 203.0.113.9` });
    for (let i = 0; i < 20; i++) await login(server.url, uniqueName('guess'), 'wrong password', via(`10.0.${i}.1`));
    assert429(t, await login(server.url, uniqueName('guess'), 'wrong password', via('10.9.9.9')), 'one real client, one budget');
  });

  t.test('TRUST_PROXY on: addresses of one IPv6 /64 share a budget', async (t) => {
    const { server } = await limited({ env: { TRUST_PROXY: 'on' } });
    t.teardown(server.close);
    for (let i = 0; i < 20; i++) await login(server.url, uniqueName('guess'), 'wrong password', { 'x-forwarded-for': `2001:db8:1:2::${i + 1}` });
    assert429(t, await login(server.url, uniqueName('guess'), 'wrong password', { 'x-forwarded-for': '2001:db8:1:2:ffff::1' }), 'the same /64');
  });

  t.test('a login with a name no account can have does not grow the per-account limiter', async (t) => {
    const { server } = await limited();
    t.teardown(server.close);
    const res = await login(server.url, 'x'.repeat(500_000), 'wrong password');
    t.equal(res.status, 401);
    t.equal(server.app.limits.loginFailuresPerAccount.size, 0, 'no 500 KB key is kept');
    t.equal(server.app.limits.loginFailuresPerClient.size, 1, 'the client address still pays for the failure');
  });
});
