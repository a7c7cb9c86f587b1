import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import t from 'tap';
import { startServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';

const MIB = 1024 * 1024;

interface RawResponse {
  status: number;
  head: string;
  body: string;
}

/**
 * Writes bytes on a plain socket and reads the response until the server closes it. Unlike
 * fetch, this can declare a length it never sends or stop mid-way through a chunked body,
 * which is how a 413 "without reading it all" is proven.
 */
function rawRequest(url: string, head: string, body: Buffer | string = ''): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may close while we are still writing: what it answered is what counts.
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      if (status === 0) reject(new Error(`no HTTP response, got ${JSON.stringify(text.slice(0, 200))}`));
      else resolve({ status, head: text.slice(0, split), body: text.slice(split + 4) });
    });
    socket.write(head.replace(/\n/g, '\r\n') + '\r\n\r\n');
    if (body.length) socket.write(body);
  });
}

t.test('GET /healthz answers 200 without a session', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const res = await new Client(server.url).get('/healthz');
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^application\/json/);
  t.same(res.body, { ok: true });
});

t.test('authenticated endpoints answer 401 in plain text without a valid session', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const someone = await signUp(server.url);
  const endpoints: [string, string][] = [
    ['GET', '/api/users/me'],
    ['GET', `/api/users/${someone.userId}`],
    ['GET', '/api/account'],
    ['GET', '/api/admin/me'],
    ['POST', '/api/logout'],
  ];
  for (const cookie of [undefined, 'app_session=not-a-real-token', 'app_session=']) {
    const anon = new Client(server.url);
    anon.cookie = cookie;
    for (const [method, path] of endpoints) {
      const res = await anon.request(method, path);
      t.equal(res.status, 401, `${method} ${path} with cookie ${cookie}`);
      t.match(res.headers.get('content-type'), /^text\/plain; charset=utf-8/);
      t.ok(res.text.trim().length > 0, 'names a reason');
    }
  }
});

t.test('routing', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);

  t.test('an unknown path is 404 for every method', async (t) => {
    for (const [method, path] of [
      ['GET', '/api/nothing-here'],
      ['POST', '/api/nothing-here'],
      ['GET', '/api/users/me/extra'],
      ['GET', '/no-such-page'],
      ['DELETE', '/'],
    ]) {
      const res = await user.request(method, path);
      t.equal(res.status, 404, `${method} ${path}`);
      t.match(res.headers.get('content-type'), /^text\/plain/);
    }
  });

  t.test('a browser asking for an unknown page gets a styled 404 page; API clients keep plain text', async (t) => {
    const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
    const page = await user.get('/no-such-page', html);
    t.equal(page.status, 404);
    t.match(page.headers.get('content-type'), /^text\/html/);
    t.match(page.headers.get('content-security-policy'), "script-src 'self'", 'under the page CSP');
    t.match(page.text, 'There is no page here');
    t.match(page.text, 'href="/"', 'with a way on');
    const head = await user.request('HEAD', '/no/such/page', undefined, html);
    t.equal(head.status, 404);
    t.equal(head.text, '', 'HEAD has no body');
    for (const [method, path] of [
      ['GET', '/api/nothing-here'],
      ['GET', '/api'],
      ['GET', '/uploads/00000000-0000-4000-8000-000000000000'],
      ['POST', '/no-such-page'],
    ]) {
      const res = await user.request(method, path, undefined, html);
      t.equal(res.status, 404, `${method} ${path}`);
      t.match(res.headers.get('content-type'), /^text\/plain/, `${method} ${path} stays plain text`);
    }
  });

  t.test('a known path with the wrong method is 405 with an Allow header', async (t) => {
    const cases: [string, string, string][] = [
      ['GET', '/api/register', 'POST'],
      ['PUT', '/api/login', 'POST'],
      ['GET', '/api/logout', 'POST'],
      ['DELETE', '/api/users/me', 'GET'],
      ['POST', `/api/users/${user.userId}`, 'GET'],
      ['POST', '/api/account', 'GET, PATCH, DELETE'],
      ['POST', '/healthz', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await user.request(method, path);
      t.equal(res.status, 405, `${method} ${path}`);
      t.equal(res.headers.get('allow'), allow, `${method} ${path} allows ${allow}`);
    }
  });

  t.test('HEAD is answered like GET, without a body', async (t) => {
    // fetch directly: a HEAD answer has JSON headers and no body to parse.
    const res = await fetch(`${server.url}/api/users/me`, { method: 'HEAD', headers: { cookie: user.cookie! } });
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.equal(await res.text(), '');
  });

  t.test('a path id that is not a UUID is 400 before anything else runs', async (t) => {
    for (const id of ['not-a-uuid', '123', `${user.userId}x`, '%E0%A4%A']) {
      const res = await user.get(`/api/users/${id}`);
      t.equal(res.status, 400, id);
      t.match(res.text, /user_id/, 'names the parameter');
    }
  });

  t.test('a path id in upper case is the same id', async (t) => {
    const res = await user.get(`/api/users/${user.userId.toUpperCase()}`);
    t.equal(res.status, 200);
    t.equal(res.body.user_id, user.userId);
  });
});

t.test('JSON bodies', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anon = new Client(server.url);
  const host = new URL(server.url).host;

  t.test('a declared body over 1 MiB is 413 without the server waiting for it', async (t) => {
    // The body is never sent: if the server tried to read it first, this would hang.
    const res = await rawRequest(server.url, `POST /api/register HTTP/1.1\nHost: ${host}\nContent-Type: application/json\nContent-Length: ${MIB + 1}`);
    t.equal(res.status, 413);
    t.match(res.head, /content-type: text\/plain/i);
  });

  t.test('a chunked body that grows past 1 MiB is 413 once it crosses the cap', async (t) => {
    // One chunk just over the cap, and the terminating chunk never comes.
    const chunk = Buffer.alloc(MIB + 16, 'a');
    const res = await rawRequest(
      server.url,
      `POST /api/register HTTP/1.1\nHost: ${host}\nContent-Type: application/json\nTransfer-Encoding: chunked`,
      Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
    );
    t.equal(res.status, 413);
    t.match(res.body, /larger than/);
  });

  t.test('a body of exactly 1 MiB is read (and then judged on its content)', async (t) => {
    const padding = 'x'.repeat(MIB - 100);
    const text = JSON.stringify({ username: uniqueName(), password: 'password1', padding });
    const res = await anon.post('/api/register', text + ' '.repeat(MIB - Buffer.byteLength(text)), {
      'content-type': 'application/json',
    });
    t.equal(res.status, 201);
  });

  t.test('bodies that are not one JSON object are 400', async (t) => {
    for (const text of ['{"username": "abc",', '', 'not json', '[]', '[{"username":"abc"}]', '"text"', '42', 'null', 'true']) {
      const res = await anon.post('/api/register', text, { 'content-type': 'application/json' });
      t.equal(res.status, 400, JSON.stringify(text));
      t.match(res.headers.get('content-type'), /^text\/plain/);
    }
  });

  t.test('a body that is not JSON or a form is 415', async (t) => {
    const body = JSON.stringify({ username: uniqueName(), password: 'password1' });
    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x', 'application/jsonx']) {
      const res = await anon.post('/api/register', body, { 'content-type': type });
      t.equal(res.status, 415, type);
    }
    // A Blob without a type makes fetch send no Content-Type at all.
    const untyped = await fetch(`${server.url}/api/login`, { method: 'POST', body: new Blob([body]) });
    t.equal(untyped.status, 415, 'no content type at all');
  });

  t.test('a JSON content type with parameters or in capitals is accepted', async (t) => {
    for (const type of ['application/json; charset=utf-8', 'Application/JSON']) {
      const res = await anon.post('/api/register', { username: uniqueName(), password: 'password1' }, { 'content-type': type });
      t.equal(res.status, 201, type);
    }
  });

  t.test('__proto__, constructor and prototype keys change nothing', async (t) => {
    const name = uniqueName('proto');
    const text = `{"username": "${name}", "password": "password1", "__proto__": {"is_admin": true, "isAdmin": true},
      "constructor": {"prototype": {"is_admin": true}}, "prototype": {"is_admin": true}}`;
    const res = await anon.post('/api/register', text, { 'content-type': 'application/json' });
    t.equal(res.status, 201);
    t.equal(({} as Record<string, unknown>).is_admin, undefined, 'Object.prototype is untouched');
    const client = new Client(server.url);
    await client.post('/api/login', { username: name, password: 'password1' });
    t.equal((await client.get('/api/admin/me')).status, 403, 'not an administrator');
    t.equal((await client.get('/api/account')).body.is_admin, false);

    // Fields hidden behind __proto__ are not inherited as if they were sent.
    const hidden = `{"__proto__": {"username": "${uniqueName()}", "password": "password1"}}`;
    const refused = await anon.post('/api/register', hidden, { 'content-type': 'application/json' });
    t.equal(refused.status, 400);
  });
});

t.test('responses', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);

  t.test('success is JSON and errors are plain text, both with security headers', async (t) => {
    const ok = await user.get('/api/users/me');
    t.match(ok.headers.get('content-type'), /^application\/json/);
    const error = await user.get('/api/users/00000000-0000-4000-8000-000000000000');
    t.equal(error.status, 404);
    t.match(error.headers.get('content-type'), /^text\/plain; charset=utf-8/);
    for (const res of [ok, error]) {
      t.equal(res.headers.get('x-content-type-options'), 'nosniff');
      t.equal(res.headers.get('cache-control'), 'no-store');
      t.match(res.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    }
  });

  t.test('every request is logged on one line without its query', async (t) => {
    await user.get('/healthz?token=very-secret-token');
    const line = server.logs.find((l) => l.startsWith('GET /healthz '));
    t.match(line, /^GET \/healthz 200 \d+(\.\d+)?ms$/);
    t.notOk(
      server.logs.some((l) => l.includes('very-secret-token')),
      'the query is not logged',
    );
  });
});

t.test('an unexpected failure is 500 without internals, and logged with its stack', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  server.app.db.close();
  const res = await new Client(server.url).get('/healthz');
  t.equal(res.status, 500);
  t.equal(res.text, 'internal server error\n');
  t.ok(
    server.logs.some((l) => l.startsWith('unexpected error:') && /\n\s+at /.test(l)),
    'the stack is in the log',
  );
});

t.test('cross-site requests', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anon = new Client(server.url);
  const register = (username: string, headers: Record<string, string>) => anon.post('/api/register', { username, password: 'password1' }, headers);

  t.test('a POST from a foreign Origin is 403 and registers nothing', async (t) => {
    const { hostname, port } = new URL(server.url);
    const foreign = ['https://evil.example', 'null', `${server.url}.evil.example`, `http://${hostname}:${Number(port) + 1}`, `http://localhost:${port}`];
    for (const origin of foreign) {
      const name = uniqueName('csrf');
      const res = await register(name, { origin });
      t.equal(res.status, 403, origin);
      t.equal((await register(name, {})).status, 201, `${origin}: the name was still free`);
    }
  });

  t.test('a form from our own page that a browser sends with Origin: null is accepted', async (t) => {
    // Chromium under Referrer-Policy: no-referrer sends Origin: null on a same-origin form post,
    // together with Sec-Fetch-Site: same-origin, which no page can forge.
    const name = uniqueName('form');
    const form = new URLSearchParams({ username: name, password: 'password1' });
    const res = await anon.post('/api/register', form, { origin: 'null', 'sec-fetch-site': 'same-origin' });
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/?registered=1');
    t.equal((await register(name, {})).status, 409, 'the account exists');
  });

  t.test('a foreign browser form is refused the same way', async (t) => {
    const name = uniqueName('csrf');
    const form = new URLSearchParams({ username: name, password: 'password1' });
    const res = await anon.post('/api/register', form, { origin: 'https://evil.example' });
    t.equal(res.status, 403);
    t.equal((await register(name, {})).status, 201);
  });

  t.test('Sec-Fetch-Site: cross-site is 403 even without an Origin', async (t) => {
    const name = uniqueName('csrf');
    t.equal((await register(name, { 'sec-fetch-site': 'cross-site' })).status, 403);
    t.equal((await register(name, {})).status, 201);
  });

  t.test('a session cookie does not help a cross-site logout', async (t) => {
    const user = await signUp(server.url);
    t.equal((await user.post('/api/logout', undefined, { origin: 'https://evil.example' })).status, 403);
    t.equal((await user.get('/api/users/me')).status, 200, 'still signed in');
  });

  t.test('same-origin, same-site and Origin-less requests work', async (t) => {
    const cases: Record<string, string>[] = [
      { origin: server.url },
      { origin: new URL(server.url).origin, 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'same-origin' },
      { 'sec-fetch-site': 'none' },
      {},
    ];
    for (const headers of cases) {
      t.equal((await register(uniqueName(), headers)).status, 201, JSON.stringify(headers));
    }
  });

  t.test('reads are not affected by a foreign Origin', async (t) => {
    const res = await anon.get('/healthz', { origin: 'https://evil.example' });
    t.equal(res.status, 200);
  });
});

t.test('static pages', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const anon = new Client(server.url);

  for (const path of ['/', '/account', '/account/warnings']) {
    t.test(`GET ${path} serves an HTML page under a CSP that forbids inline script`, async (t) => {
      const res = await anon.get(path);
      t.equal(res.status, 200);
      t.match(res.headers.get('content-type'), /^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      t.match(csp, /script-src 'self'(;|$)/);
      t.match(csp, /style-src 'self'(;|$)/);
      t.match(res.text, /<!doctype html>/i);
      t.notMatch(res.text, /<script(?![^>]*\ssrc=)[^>]*>/i, 'no inline <script>');
      t.notMatch(res.text, /<style/i, 'no inline <style>');
      t.notMatch(res.text, /\sstyle=|\son[a-z]+=/i, 'no style or event-handler attributes');
      // Everything the page loads is served here.
      for (const [, asset] of res.text.matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css))"/g)) {
        const loaded = await anon.get(asset);
        t.equal(loaded.status, 200, asset);
      }
    });
  }

  t.test('scripts and styles are served with their types', async (t) => {
    t.match((await anon.get('/js/home.js')).headers.get('content-type'), /^text\/javascript/);
    t.match((await anon.get('/css/site.css')).headers.get('content-type'), /^text\/css/);
  });

  t.test('a page is revalidated with its ETag', async (t) => {
    const first = await anon.get('/');
    const etag = first.headers.get('etag');
    t.ok(etag);
    const again = await anon.get('/', { 'if-none-match': etag! });
    t.equal(again.status, 304);
  });

  t.test('assets are addressed by version, cached for good, and sent compressed as the client accepts', async (t) => {
    const page = await raw(server.url, '/', {});
    const assets = [...page.body.toString().matchAll(/(?:src|href)="(\/[^"]+\.(?:js|css|svg))"/g)].map((m) => m[1]);
    t.ok(assets.length >= 3, `the page loads ${assets.join(', ')}`);
    t.ok(
      assets.every((a) => /^\/a\/[0-9a-f]{12}\//.test(a)),
      'every asset address carries the version',
    );
    t.equal(page.headers['cache-control'], 'no-cache', 'the page itself is asked for again every time');
    const script = assets.find((a) => a.endsWith('/js/home.js'))!;
    const plain = await raw(server.url, script, {});
    t.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: the file as it is');
    t.equal(plain.headers.vary, 'Accept-Encoding');
    const br = await raw(server.url, script, { 'accept-encoding': 'gzip, deflate, br' });
    t.equal(br.headers['content-encoding'], 'br');
    t.same(zlib.brotliDecompressSync(br.body), plain.body, 'Brotli decodes to the same file');
    t.ok(br.body.length < plain.body.length / 2, `${br.body.length} of ${plain.body.length} bytes`);
    const gz = await raw(server.url, script, { 'accept-encoding': 'gzip;q=1, br;q=0' });
    t.equal(gz.headers['content-encoding'], 'gzip', 'br;q=0 refuses Brotli');
    t.same(zlib.gunzipSync(gz.body), plain.body);
    t.not(br.headers.etag, plain.headers.etag, 'each representation has its own strong ETag');
    t.equal((await raw(server.url, script, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag! })).status, 304);
    t.equal((await raw(server.url, script, { 'if-none-match': br.headers.etag! })).status, 200, 'the Brotli ETag does not match the plain file');
    // A page loaded before an upgrade asks for an older version: it gets today's file, never cached as that version.
    const old = await raw(server.url, script.replace(/^\/a\/[0-9a-f]{12}/, '/a/000000000000'), {});
    t.equal(old.status, 200);
    t.equal(old.headers['cache-control'], 'no-cache');
    t.equal((await raw(server.url, script.replace(/\/js\/home\.js$/, '/index.html'), {})).status, 404, 'pages are not served under a version');
  });

  t.test('the signed-out page loads none of the app', async (t) => {
    const page = (await anon.get('/')).text;
    t.notMatch(page, /app\.css|\/js\/app\.js|\/vendor\//, 'no app style sheet, app module or vendor library on the page');
    const home = (await anon.get('/js/home.js')).text;
    t.notMatch(
      home,
      /^import[^;\n(]*'\.\/app\.js'/m,
      'home.js imports the app only when signed in (no static import of it: the served file has a statement a line)',
    );
    t.match(home, /import\('\.\/app\.js'\)/);
  });

  t.test('a large JSON answer is compressed for a client that accepts it', async (t) => {
    const owner = await signUp(server.url);
    const guild = await owner.post('/api/servers', { name: 'big' });
    const channelId = guild.body.channels?.[0]?.id ?? (await owner.get(`/api/servers/${guild.body.id}/channels`)).body[0].id;
    for (let i = 0; i < 50; i++)
      await owner.post(`/api/servers/${guild.body.id}/channels/${channelId}/messages`, { content: `message ${i} `.padEnd(600, 'x') });
    const path = `/api/servers/${guild.body.id}/channels/${channelId}/messages?limit=50`;
    const plain = await raw(server.url, path, { cookie: owner.cookie! });
    t.equal(plain.status, 200);
    t.ok(plain.body.length >= 16 * 1024, `${plain.body.length} bytes as JSON`);
    t.equal(plain.headers['content-encoding'], undefined);
    t.equal(plain.headers.vary, 'Accept-Encoding');
    const br = await raw(server.url, path, { cookie: owner.cookie!, 'accept-encoding': 'br' });
    t.equal(br.headers['content-encoding'], 'br');
    t.equal(Number(br.headers['content-length']), br.body.length);
    t.same(JSON.parse(zlib.brotliDecompressSync(br.body).toString()), JSON.parse(plain.body.toString()), 'the same answer');
    const gz = await raw(server.url, path, { cookie: owner.cookie!, 'accept-encoding': 'gzip' });
    t.equal(gz.headers['content-encoding'], 'gzip');
    t.ok(gz.body.length < plain.body.length / 3, `gzip: ${gz.body.length} of ${plain.body.length} bytes`);
    const small = await raw(server.url, '/api/users/me', { cookie: owner.cookie!, 'accept-encoding': 'br' });
    t.equal(small.headers['content-encoding'], undefined, 'a small answer goes as it is');
  });

  t.test('paths outside static/ are not reachable', async (t) => {
    for (const path of ['/../package.json', '/%2e%2e/package.json', '/static/index.html', '/.gitkeep']) {
      t.equal((await anon.get(path)).status, 404, path);
    }
  });
});

/** A request with exactly these headers, the body as bytes on the wire (fetch would decode it). */
function raw(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(base + path, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}
