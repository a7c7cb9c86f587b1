import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { ICONS, iconsBuilt, writeIcons } from '../src/core/http/icons';
import { appShell } from '../src/core/http/static';
import { APP_COLORS } from '../src/api/web-app';
import { Client } from './helpers/client';
import { startServer } from './helpers/server';

/**
 * The installable app, as the server gives it (docs/api.md "The installable app"): the manifest
 * named after INSTANCE_NAME, its icons, every page linking it, /share, and the service worker
 * written with the asset version and the app shell. The browser side is test/browser-pwa.test.ts.
 */
const STATIC = path.join(__dirname, '..', 'static');
const PAGES = [
  '/',
  '/account',
  '/admin',
  '/import',
  '/invites/abc',
  '/reset-password',
  '/email-verified',
  '/channels/@me/00000000-0000-4000-8000-000000000000/00000000-0000-4000-8000-000000000001',
  '/share',
];

t.before(async () => {
  // What `make build` makes: the icons (a test run on a fresh checkout has no build yet).
  if (!iconsBuilt()) await writeIcons();
});

t.test('the manifest names the app after INSTANCE_NAME and holds what installing needs', async (t) => {
  const server = await startServer({ env: { INSTANCE_NAME: 'Le Club de Lecture 📚' } });
  t.teardown(server.close);
  const client = new Client(server.url);
  const res = await client.get('/manifest.webmanifest');
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/manifest+json');
  t.equal(res.headers.get('cache-control'), 'no-cache', 'asked again at every use: a new INSTANCE_NAME shows');
  const manifest = JSON.parse(res.text);
  t.equal(manifest.name, 'Le Club de Lecture 📚');
  t.equal(manifest.short_name, 'Le Club de L', 'the short name is cut to 12 characters');
  t.match(manifest, { id: '/', start_url: '/', scope: '/', display: 'standalone', theme_color: APP_COLORS.light, background_color: APP_COLORS.light });
  const sizes = (purpose: string) => manifest.icons.filter((i: { purpose: string }) => i.purpose === purpose).map((i: { sizes: string }) => i.sizes);
  t.same(sizes('any'), ['192x192', '512x512'], 'plain icons of 192 and 512 px');
  t.same(sizes('maskable'), ['192x192', '512x512'], 'and maskable ones');
  t.same(
    manifest.shortcuts.map((s: { name: string; url: string }) => [s.name, s.url]),
    [
      ['Direct messages', '/?view=friends'],
      ['Search', '/?search=1'],
    ],
  );
  t.match(manifest.share_target, {
    action: '/share',
    method: 'POST',
    enctype: 'multipart/form-data',
    params: { title: 'title', text: 'text', url: 'url', files: [{ name: 'files' }] },
  });

  const again = await client.get('/manifest.webmanifest', { 'if-none-match': res.headers.get('etag')! });
  t.equal(again.status, 304, 'unchanged: 304 to its ETag');
  const head = await fetch(`${server.url}/manifest.webmanifest`, { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(await head.text(), '', 'HEAD: no body');
  const plain = await startServer();
  t.teardown(plain.close);
  t.equal(JSON.parse((await new Client(plain.url).get('/manifest.webmanifest')).text).name, 'chat', "unset, the product's name");
});

t.test('every icon the manifest and the pages name is served, a PNG of its size', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  type Icon = { src: string; sizes: string };
  const manifest = (await (await fetch(`${server.url}/manifest.webmanifest`)).json()) as { icons: Icon[]; shortcuts: { icons: Icon[] }[] };
  const named: (readonly [string, number])[] = [...manifest.icons, ...manifest.shortcuts.flatMap((s) => s.icons)].map(
    (i) => [i.src, Number(i.sizes.split('x')[0])] as const,
  );
  named.push(['/icons/apple-touch-icon.png', 180]);
  for (const [src, size] of named) {
    const res = await fetch(server.url + src);
    t.equal(res.status, 200, src);
    t.equal(res.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
    t.same([meta.format, meta.width, meta.height], ['png', size, size], `${src} is ${size}×${size}`);
  }
  t.equal(named.length, ICONS.length + 2, 'each icon the build makes (the shortcuts reuse the 192 px one)');
});

t.test('a maskable icon fills its square; a plain one keeps the transparent corners', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const corner = async (file: string) => {
    const { data } = await sharp(Buffer.from(await (await fetch(`${server.url}/icons/${file}`)).arrayBuffer()))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return [...data.subarray(0, 4)];
  };
  t.same(await corner('icon-maskable-512.png'), [255, 255, 255, 255], 'maskable: a white background to the edge (a launcher crops it)');
  t.same(await corner('apple-touch-icon.png'), [255, 255, 255, 255], 'Apple: no transparency (iOS shows it black)');
  t.equal((await corner('icon-512.png'))[3], 0, 'plain: transparent around the image');
});

t.test('every page links the manifest and carries what iOS reads instead', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  for (const page of [...PAGES, '/no-such-page']) {
    const res = await fetch(server.url + page, { headers: { accept: 'text/html' } });
    const html = await res.text();
    t.match(html, /<link rel="manifest" href="\/manifest\.webmanifest">/, `${page}: the manifest`);
    t.match(
      html,
      /<link rel="apple-touch-icon" href="\/a\/[0-9a-f]{12}\/icons\/apple-touch-icon\.png">/,
      `${page}: the Apple touch icon, at its versioned address`,
    );
    t.match(html, /<meta name="apple-mobile-web-app-capable" content="yes">/, `${page}: iOS opens it as an app`);
    t.match(
      html,
      new RegExp(`<meta name="theme-color" content="${APP_COLORS.light}" media="\\(prefers-color-scheme: light\\)">`),
      `${page}: the light theme colour`,
    );
    t.match(html, new RegExp(`<meta name="theme-color" content="${APP_COLORS.dark}" media="\\(prefers-color-scheme: dark\\)">`), `${page}: the dark one`);
  }
  const app = await (await fetch(server.url)).text();
  t.match(app, /interactive-widget=resizes-content/, 'the app page shrinks for the on-screen keyboard');
  t.match(app, /viewport-fit=cover/, 'and lays itself out around a notch');
});

t.test('/share is the app page; a share posted to the server itself is refused in words', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const page = await fetch(`${server.url}/share?text=hello&url=https%3A%2F%2Fexample.org`);
  t.equal(page.status, 200);
  t.equal(await page.text(), await (await fetch(server.url)).text(), 'the app page, whatever the query');
  t.match(page.headers.get('content-security-policy'), /script-src 'self'/, 'under the page CSP');
  const form = new FormData();
  form.set('text', 'hello');
  const posted = await fetch(`${server.url}/share`, { method: 'POST', body: form });
  t.equal(posted.status, 405, 'the service worker takes a share; without one, 405');
  t.equal(posted.headers.get('allow'), 'GET');
  t.match(await posted.text(), 'method not allowed');
});

t.test('the service worker is written with the asset version and the whole app shell, and nothing else', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const res = await fetch(`${server.url}/sw.js`);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), 'text/javascript');
  t.equal(res.headers.get('cache-control'), 'no-cache', 'checked for a new version at every start');
  const source = await res.text();
  const build = JSON.parse(/^const BUILD = (.*);$/m.exec(source)![1]) as { version: string; shell: string[] };
  const app = await (await fetch(server.url)).text();
  t.match(app, `/a/${build.version}/js/home.js`, 'the version is the one the pages use');
  t.equal(build.shell[0], '/', 'the app page first');
  t.equal(build.shell.filter((a) => !a.startsWith(`/a/${build.version}/`)).length, 1, 'and then only files under the version');
  const under = (file: string) => `/a/${build.version}${file}`;
  for (const file of [
    '/js/home.js',
    '/js/app.js',
    '/css/site.css',
    '/css/app.css',
    '/vendor/markdown-it.js',
    '/vendor/purify.js',
    '/js/place-menu.js',
    '/js/share.js',
    '/js/offline.js',
    '/vendor/emoji.json',
    '/css/import.css',
    '/favicon.svg',
  ]) {
    t.ok(build.shell.includes(under(file)), `${file}: loaded by the page, on first use, or lent by another page's module`);
  }
  for (const file of ['/js/account.js', '/js/admin.js', '/vendor/qrcode.js', '/sw.js'])
    t.notOk(build.shell.includes(under(file)), `${file}: another page's, not the app's`);
  t.notOk(
    build.shell.some((a) => /^\/(?:api|uploads|avatars)\//.test(a)),
    'no API answer, upload or picture',
  );
  for (const address of build.shell.slice(1)) {
    const file = await fetch(server.url + address);
    t.equal(file.status, 200, `${address} is served`);
    t.match(file.headers.get('cache-control'), 'immutable', `${address} under the current version`);
  }
});

t.test('the app shell follows absolute and relative addresses from the page, once each', async (t) => {
  const raw = new Map(
    Object.entries({
      '/index.html': '<link href="/css/a.css"><script type="module" src="/js/home.js"></script>',
      '/css/a.css': 'body { background: url(/favicon.svg) }',
      '/js/home.js': "import './b.js'; const lazy = () => import('./c.js'); new URL('../css/d.css', import.meta.url);",
      '/js/b.js': "import { x } from './home.js'; fetch('/vendor/data.json');",
      '/js/c.js': "// loads nothing; './missing.js' is not a file",
      '/css/d.css': '',
      '/vendor/data.json': '{}',
      '/favicon.svg': '<svg/>',
      '/js/other-page.js': '',
    }).map(([k, v]) => [k, Buffer.from(v)]),
  );
  t.same(appShell(raw), ['/css/a.css', '/css/d.css', '/favicon.svg', '/index.html', '/js/b.js', '/js/c.js', '/js/home.js', '/vendor/data.json']);
  t.ok(fs.existsSync(path.join(STATIC, 'sw.js')), 'static/sw.js exists');
});
