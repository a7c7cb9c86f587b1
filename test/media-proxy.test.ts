import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { Client, signUp } from './helpers/client';
import { must } from './helpers/community';
import { startServer } from './helpers/server';

/**
 * The media proxy (docs/api.md "Media proxy"): remote images served from our origin, re-encoded,
 * only for URLs the server signed, cached on disk under a cap. An image server on loopback is
 * let through by PREVIEW_INSECURE_HOSTS (the testing aid) by its address, not by `localhost`.
 */
const noise = (seed: number, side = 24) =>
  sharp(Buffer.from(Array.from({ length: side * side * 3 }, (_, i) => (i * 7919 * (seed + 3)) % 251)), { raw: { width: side, height: side, channels: 3 } })
    .png()
    .toBuffer();

t.test('signed URLs serve re-encoded images; unsigned, altered, SVG and non-images are refused; the cache stays under its cap', async (t) => {
  const pngs = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => noise(i)));
  let connections = 0;
  const images = http.createServer((req, res) => {
    const n = /^\/img(\d)\.png$/.exec(req.url ?? '');
    if (n) {
      res.writeHead(200, { 'Content-Type': 'image/png' });
      return res.end(pngs[Number(n[1])]);
    }
    if (req.url === '/pic.svg') {
      res.writeHead(200, { 'Content-Type': 'image/svg+xml' });
      return res.end('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    }
    if (req.url === '/svg-named.png') {
      res.writeHead(200, { 'Content-Type': 'image/png' });
      return res.end('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
    }
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<title>not an image</title>');
  });
  images.on('connection', () => connections++);
  await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
  const server = await startServer({ env: { PREVIEW_INSECURE_HOSTS: '127.0.0.1' }, config: { mediaCacheBytes: 3 * 1024 } });
  t.teardown(async () => {
    await server.close();
    await new Promise<void>((resolve) => (images.closeAllConnections(), images.close(() => resolve())));
  });
  const owner = await signUp(server.url);
  const serverId = (await must(owner.post('/api/servers', { name: 'media' }), 201)).body.id;
  const channel = (await must(owner.get(`/api/servers/${serverId}/channels`), 200)).body[0].id;
  const hook = (await must(owner.post(`/api/servers/${serverId}/channels/${channel}/webhooks`, { name: 'CI' }), 201)).body;

  // A webhook's embed image and avatar come with their proxy URLs.
  const posted = await fetch(`${hook.url}?wait=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: 'build', avatar_url: `${base}/img1.png`, embeds: [{ title: 'Build', image: { url: `${base}/img0.png` } }] }),
  });
  const message = (await posted.json()) as { embeds: { image: { proxy_url: string } }[]; webhook_avatar_proxy_url: string };
  const proxied: string = message.embeds[0].image.proxy_url;
  t.match(proxied, /^\/api\/media\/[A-Za-z0-9_-]{32}\/[A-Za-z0-9_-]+$/);
  t.match(message.webhook_avatar_proxy_url, /^\/api\/media\//);

  const served = await owner.get(proxied);
  t.equal(served.status, 200);
  t.equal(served.headers.get('content-type'), 'image/webp');
  t.match(served.headers.get('cache-control'), /max-age=31536000/, 'long cache headers');
  const bytes = Buffer.from(await (await fetch(server.url + proxied, { headers: { cookie: owner.cookie! } })).arrayBuffer());
  t.equal((await sharp(bytes).metadata()).format, 'webp', 're-encoded');
  t.ok(bytes.length < 1024, `a small image (${bytes.length} bytes): three fit in the cache`);
  const asked = connections;
  await must(owner.get(proxied), 200);
  t.equal(connections, asked, 'a second view comes from the cache');
  // The remote address (a posted URL, whose query may be a key) never reaches the request log.
  const remote = proxied.split('/').pop()!;
  t.notOk(server.logs.join('\n').includes(remote), 'the proxied URL is not logged');
  t.match(server.logs.join('\n'), /GET \/api\/media\/[A-Za-z0-9_-]{32}\/:url 200/, 'its request is logged with the URL masked');
  // A malformed one, its URL's slashes unencoded: no part of the URL is logged either.
  await owner.get('/api/media/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/https:/secret-host.example/private/path');
  t.notOk(server.logs.join('\n').includes('secret-host'), 'nor the rest of a URL whose slashes were not encoded');

  const [, , sig, encoded] = proxied.split('/').slice(1);
  const flipped = sig[0] === 'A' ? `B${sig.slice(1)}` : `A${sig.slice(1)}`;
  await must(owner.get(`/api/media/${flipped}/${encoded}`), 403);
  const other = Buffer.from(`${base}/img2.png`).toString('base64url');
  await must(owner.get(`/api/media/${sig}/${other}`), 403);
  await must(owner.get(`/api/media/${'A'.repeat(32)}/${other}`), 403);
  await must(new Client(server.url).get(proxied), 401);

  const sign = (url: string) => server.app.media.url(url);
  await must(owner.get(sign(`${base}/pic.svg`)), 415);
  await must(owner.get(sign(`${base}/svg-named.png`)), 415);
  await must(owner.get(sign(`${base}/page.html`)), 404);
  const before = connections;
  await must(owner.get(sign(`http://localhost:${(images.address() as AddressInfo).port}/img3.png`)), 404);
  t.equal(connections, before, 'a private address: refused without a connection');

  for (const n of [2, 3, 4, 5]) await must(owner.get(sign(`${base}/img${n}.png`)), 200);
  const dir = path.join(server.dataDir, 'media');
  const onDisk = fs.readdirSync(dir).reduce((sum, name) => sum + fs.statSync(path.join(dir, name)).size, 0);
  t.ok(onDisk <= 3 * 1024, `the cache stays under its cap (${onDisk} bytes on disk)`);
  t.ok(fs.readdirSync(dir).length < 6, 'the least recently used went');
});
