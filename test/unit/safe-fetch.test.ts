import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import zlib from 'node:zlib';
import t from 'tap';
import { FetchRefused, type FetchRules, MAX_PAGE_BYTES, ownListener, safeFetch } from '../../src/core/net/safe-fetch';

/**
 * The fetch rules (src/core/net/safe-fetch.ts) against real listeners on loopback: without the
 * testing aid every private form is refused before any connection (a listener counts them), and
 * with it (a page server on 127.0.0.1 let through by name) redirects, caps, decoding, types and
 * deadlines hold.
 */
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function listen(handler: Handler, host = '127.0.0.1'): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = http.createServer(handler);
  server.on('connection', () => connections++);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const rules = (allow: string[] = [], extra: Partial<FetchRules> = {}): FetchRules => ({
  allow: new Set(allow),
  isSelf: () => false,
  userAgent: 'Mozilla/5.0 (compatible; chat-preview/1.0; +http://chat.test)',
  ...extra,
});

const refusal = async (promise: Promise<unknown>): Promise<string> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof FetchRefused) return err.message;
    throw err;
  }
  return 'not refused';
};

t.test('every private and loopback form is refused without the aid, and no connection is made', async (t) => {
  const counter = await listen((_req, res) => res.end('<title>private</title>'));
  let v6: Awaited<ReturnType<typeof listen>> | null = null;
  try {
    v6 = await listen((_req, res) => res.end('private'), '::1');
  } catch {
    t.comment('no IPv6 loopback here: its forms are still refused, their connections not counted');
  }
  t.teardown(async () => {
    await counter.close();
    await v6?.close();
  });
  const p = counter.port;
  const forms = [
    `http://127.0.0.1:${p}/`,
    `http://127.1:${p}/`,
    `http://2130706433:${p}/`,
    `http://0x7f000001:${p}/`,
    `http://0x7f.0.0.1:${p}/`,
    `http://0177.0.0.1:${p}/`,
    `http://017700000001:${p}/`,
    `http://0.0.0.0:${p}/`,
    `http://[::ffff:127.0.0.1]:${p}/`,
    `http://[::ffff:7f00:1]:${p}/`,
    `http://[::127.0.0.1]:${p}/`,
    `http://[64:ff9b::127.0.0.1]:${p}/`,
    `http://localhost:${p}/`,
    `http://LOCALHOST.:${p}/`,
    `http://${os.hostname()}:${p}/`,
    `http://169.254.169.254:${p}/latest/meta-data/`,
    `http://10.0.0.1:${p}/`,
    `http://192.168.1.1:${p}/`,
  ];
  if (v6) forms.push(`http://[::1]:${v6.port}/`, `http://[0:0:0:0:0:0:0:1]:${v6.port}/`);
  for (const url of forms) t.not(await refusal(safeFetch(url, 'page', rules())), 'not refused', url);
  t.equal(counter.connections(), 0, 'no connection reached the IPv4 listener');
  if (v6) t.equal(v6.connections(), 0, 'no connection reached the IPv6 listener');
  t.match(await refusal(safeFetch('file:///etc/passwd', 'page', rules())), /only http and https/);
  t.match(await refusal(safeFetch(`http://user:pw@127.0.0.1:${p}/`, 'page', rules(['127.0.0.1']))), /user name or password/);
  t.equal(counter.connections(), 0);
});

t.test('a redirect from an allowed page to a private address is refused before connecting', async (t) => {
  const counter = await listen((_req, res) => res.end('<title>private</title>'));
  const page = await listen((req, res) => {
    res.writeHead(302, { Location: req.url === '/to-name' ? `http://localhost:${counter.port}/` : `http://[::ffff:127.0.0.1]:${counter.port}/` });
    res.end();
  });
  t.teardown(async () => {
    await counter.close();
    await page.close();
  });
  t.match(await refusal(safeFetch(`http://127.0.0.1:${page.port}/to-name`, 'page', rules(['127.0.0.1']))), /not a public address/);
  t.match(await refusal(safeFetch(`http://127.0.0.1:${page.port}/to-mapped`, 'page', rules(['127.0.0.1']))), /not a public address/);
  t.equal(page.connections(), 2, 'the allowed page was asked');
  t.equal(counter.connections(), 0, 'the private one never was');
});

t.test('redirects are followed up to three, each checked; a fourth is refused', async (t) => {
  const page = await listen((req, res) => {
    const n = Number(/\/hop\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
    if (n > 0) {
      res.writeHead(301, { Location: `/hop/${n - 1}` });
      res.end();
      return;
    }
    t.match(req.headers['user-agent'], /chat-preview.*\+http:\/\/chat\.test/, 'the User-Agent names the product and a contact URL');
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<title>here</title>');
  });
  t.teardown(page.close);
  const got = await safeFetch(`http://127.0.0.1:${page.port}/hop/3`, 'page', rules(['127.0.0.1']));
  t.equal(got.url, `http://127.0.0.1:${page.port}/hop/0`);
  t.equal(got.contentType, 'text/html');
  t.equal(got.body.toString(), '<title>here</title>');
  t.match(await refusal(safeFetch(`http://127.0.0.1:${page.port}/hop/4`, 'page', rules(['127.0.0.1']))), /more than 3 redirects/);
});

t.test('our own listener is never fetched, even under the aid', async (t) => {
  const page = await listen((_req, res) => res.end('self'));
  t.teardown(page.close);
  const self = rules(['127.0.0.1'], { isSelf: (_address, port) => port === page.port });
  t.match(await refusal(safeFetch(`http://127.0.0.1:${page.port}/`, 'page', self)), /this server/);
  t.equal(page.connections(), 0);
});

t.test('bodies stop at the cap, counted after decoding; types, deadlines and endless pages', async (t) => {
  // 64 MiB of zeros: about 64 KiB gzipped.
  const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024));
  const page = await listen((req, res) => {
    switch (req.url) {
      case '/bomb':
        res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' });
        res.end(bomb);
        return;
      case '/bomb-image':
        res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Encoding': 'gzip' });
        res.end(bomb);
        return;
      case '/endless': {
        res.writeHead(200, { 'Content-Type': 'text/html' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        const write = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', write);
        };
        write();
        return;
      }
      case '/slow':
        res.writeHead(200, { 'Content-Type': 'text/html' });
        res.write('<title>never ends');
        return;
      case '/silent':
        return;
      case '/text':
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('plain');
        return;
      case '/svg':
        res.writeHead(200, { 'Content-Type': 'image/svg+xml' });
        res.end('<svg/>');
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
  t.teardown(page.close);
  const base = `http://127.0.0.1:${page.port}`;
  const allow = rules(['127.0.0.1']);
  const bombed = await safeFetch(`${base}/bomb`, 'page', allow);
  t.equal(bombed.body.length, MAX_PAGE_BYTES, 'a gzip bomb page: its first 2 MiB, decoded');
  t.ok(bombed.truncated);
  t.match(await refusal(safeFetch(`${base}/bomb-image`, 'image', allow)), /larger than/, 'an image past 8 MiB decoded is refused');
  const endless = await safeFetch(`${base}/endless`, 'page', allow);
  t.equal(endless.body.length, MAX_PAGE_BYTES, 'a page that never ends: read up to the cap, then closed');
  const quick = rules(['127.0.0.1'], { timeoutMs: 300 });
  t.match(await refusal(safeFetch(`${base}/slow`, 'page', quick)), /in time|closed/, 'a body that never ends in time');
  t.match(await refusal(safeFetch(`${base}/silent`, 'page', quick)), /in time/, 'a server that never answers');
  t.match(await refusal(safeFetch(`${base}/text`, 'page', allow)), /text\/plain/, 'text/plain is no page');
  t.match(await refusal(safeFetch(`${base}/text`, 'image', allow)), /text\/plain/, 'nor an image');
  t.match(await refusal(safeFetch(`${base}/nothing`, 'page', allow)), /answered 404/);
  const svg = await safeFetch(`${base}/svg`, 'page', allow);
  t.equal(svg.contentType, 'image/svg+xml', 'a page fetch tells an image by its type (the proxy judges its bytes)');
});

t.test('ownListener: our port on a loopback, unspecified or local interface address is ours; another port or address is not', async (t) => {
  const ours = ownListener(() => 8080);
  for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '0.0.0.0', '::']) t.ok(ours(address, 8080), address);
  const local = Object.values(os.networkInterfaces()).flatMap((list) => list ?? [])[0]?.address;
  if (local) t.ok(ours(local, 8080), `a local interface address (${local})`);
  t.notOk(ours('127.0.0.1', 8081), 'another port');
  t.notOk(ours('8.8.8.8', 8080), 'another host');
  t.notOk(ownListener(() => null)('127.0.0.1', 8080), 'not listening yet');
});
