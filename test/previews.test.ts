import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { type TestServer, startServer } from './helpers/server';
import { openSocket } from './helpers/ws';

/**
 * Link previews (docs/api.md "Link previews") against a page server on loopback, let through by
 * PREVIEW_INSECURE_HOSTS (the testing aid): what a page says of itself becomes embeds on the
 * message after it was answered, announced as message_updated.
 */
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082',
  'hex',
);

async function pageServer() {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    asked.push(req.url ?? '');
    const html = (body: string) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    // ?x=… makes another URL of the same page.
    const url = (req.url ?? '').replace(/\?x=\d+$/, '');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (url === '/og')
      return html(`<!doctype html><html><head><title>ignored</title>
        <meta property="og:title" content="Open &amp; Graph"><meta property="og:description" content="What the page says">
        <meta property="og:site_name" content="Example Site"><meta property="og:image" content="/pic.png"></head><body>x</body></html>`);
    if (url === '/twitter')
      return html(`<head><meta name="twitter:card" content="summary_large_image"><meta name="twitter:title" content="Tweet card">
        <meta name="twitter:description" content="A big picture"><meta name="twitter:image" content="${base}/big.png"></head>`);
    if (url === '/watch') return html(`<head><title>A video page</title><link rel="alternate" type="application/json+oembed" href="/oembed.json?v=1"></head>`);
    if (url === '/oembed.json?v=1') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return res.end(JSON.stringify({ type: 'video', title: 'The video', author_name: 'Someone', provider_name: 'Tube', thumbnail_url: `${base}/thumb.png` }));
    }
    if (url === '/pic.png' || url === '/big.png' || url === '/thumb.png' || url === '/direct.png') {
      res.writeHead(200, { 'Content-Type': 'image/png' });
      return res.end(PNG);
    }
    if (/^\/r[123]$/.test(url)) {
      res.writeHead(302, { Location: url === '/r3' ? '/og' : `/r${Number(url[2]) + 1}` });
      return res.end();
    }
    if (url === '/plain') return html('<html><body>no tags at all</body></html>');
    if (url === '/held') return void held.then(() => html('<head><meta property="og:title" content="Late"></head>'));
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, asked, release, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

/** A server of two: its owner and a member, its first channel; `invite` lets one more in. */
async function room(server: TestServer) {
  const [owner, member] = await Promise.all([signUp(server.url), signUp(server.url)]);
  const base = `/api/servers/${(await must(owner.post('/api/servers', { name: 'previews' }), 201)).body.id}`;
  const invite = async () => {
    const client = await signUp(server.url);
    await must(client.post(`/api/invites/${(await must(owner.post(`${base}/invites`), 201)).body.token}/accept`), 200);
    return client;
  };
  const token = (await must(owner.post(`${base}/invites`), 201)).body.token;
  await must(member.post(`/api/invites/${token}/accept`), 200);
  const general: string = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  const inGeneral = `${base}/channels/${general}/messages`;
  const post = async (client: typeof owner, content: string) => (await must(client.post(inGeneral, { content }), 201)).body;
  return { base, general, inGeneral, clients: { owner, member }, invite, post };
}

t.test('previews: OpenGraph, Twitter card, oEmbed, a direct image, a redirect chain, a page without tags', async (t) => {
  const pages = await pageServer();
  const server = await startServer({ env: { PREVIEW_INSECURE_HOSTS: '127.0.0.1', LINK_PREVIEWS: 'on' } });
  t.teardown(async () => {
    pages.release();
    await server.close();
    await pages.close();
  });
  const c = await room(server);
  const { owner, member } = c.clients;
  const socket = await openSocket(server.url, `/api/channels/${c.general}/ws`, { client: owner });
  t.teardown(() => socket.close());

  // The post's answer does not wait: /held is not answered until after the 201.
  const late = await c.post(member, `soon ${pages.base}/held`);
  t.notOk(late.embeds, 'answered with no preview yet');
  pages.release();
  const lateUpdate = await socket.until((f) => f.event === 'message_updated' && f.id === late.id);
  t.match(lateUpdate.embeds, [{ type: 'link', url: `${pages.base}/held`, title: 'Late' }], 'the preview arrives as message_updated');

  const links = [`${pages.base}/og`, `${pages.base}/twitter`, `${pages.base}/watch`, `${pages.base}/direct.png`].join(' ');
  const sent = await c.post(member, `look: ${links} and <${pages.base}/plain> and ${pages.base}/plain`);
  const updated = await socket.until((f) => f.event === 'message_updated' && f.id === sent.id);
  const embeds = updated.embeds;
  t.equal(embeds.length, 4, 'four cards: the page without tags gives none, the link in <…> is not fetched');
  t.match(embeds[0], {
    type: 'link',
    url: `${pages.base}/og`,
    title: 'Open & Graph',
    description: 'What the page says',
    provider: { name: 'Example Site' },
    thumbnail: { url: `${pages.base}/pic.png`, proxy_url: /^\/api\/media\// },
  });
  t.notOk(embeds[0].image, 'a summary card: a thumbnail, no large image');
  t.match(embeds[1], { type: 'link', title: 'Tweet card', description: 'A big picture', image: { url: `${pages.base}/big.png` } });
  t.match(embeds[2], { type: 'video', title: 'The video', author: { name: 'Someone' }, provider: { name: 'Tube' }, image: { url: `${pages.base}/thumb.png` } });
  t.match(embeds[3], { type: 'image', url: `${pages.base}/direct.png`, image: { url: `${pages.base}/direct.png` } });
  t.equal(pages.asked.filter((u) => u === '/plain').length, 1, 'the link in <…> was not fetched; the bare one once');
  const redirected = await c.post(member, `${pages.base}/r1`);
  const chain = await socket.until((f) => f.event === 'message_updated' && f.id === redirected.id);
  t.match(chain.embeds, [{ type: 'link', url: `${pages.base}/r1`, title: 'Open & Graph' }], 'a redirect chain of three: the page at its end');
  // Results and failures are kept a day per URL: neither page is asked again.
  const asked = pages.asked.length;
  const again = await c.post(member, `${pages.base}/plain and ${pages.base}/og again`);
  const cachedCard = await socket.until((f) => f.event === 'message_updated' && f.id === again.id);
  t.match(cachedCard.embeds, [{ url: `${pages.base}/og`, title: 'Open & Graph' }]);
  t.equal(pages.asked.length, asked, 'a success and a failure both come from the cache');
  const read = (await must(owner.get(`${c.inGeneral}?limit=10`), 200)).body.find((m: { id: string }) => m.id === sent.id);
  t.same(read.embeds, embeds, 'stored: a page of history shows them');

  // An edit fetches the links that changed; the others come from the cache.
  const before = pages.asked.length;
  await must(member.put(`${c.inGeneral}/${sent.id}`, { content: `only ${pages.base}/og now, and ${pages.base}/twitter?x=1` }), 200);
  const edited = await socket.until((f) => f.event === 'message_updated' && f.id === sent.id && f.embeds?.length === 2);
  t.match(edited.embeds, [{ url: `${pages.base}/og` }, { url: `${pages.base}/twitter?x=1`, title: 'Tweet card' }]);
  t.same(pages.asked.slice(before), ['/twitter?x=1'], 'only the new link was fetched');

  // suppress_embeds: not by another member; by the author; and an edit brings none back.
  const other = await c.invite();
  await must(other.request('PATCH', `${c.inGeneral}/${sent.id}`, { suppress_embeds: true }), 403);
  await must(member.request('PATCH', `${c.inGeneral}/${sent.id}`, { suppress_embeds: false }), 400);
  const suppressed = await must(member.request('PATCH', `${c.inGeneral}/${sent.id}`, { suppress_embeds: true }), 200);
  t.notOk(suppressed.body.embeds, 'the previews are gone');
  const gone = await socket.until((f) => f.event === 'message_updated' && f.id === sent.id && !f.embeds);
  t.ok(gone, 'told as message_updated');
  await must(member.put(`${c.inGeneral}/${sent.id}`, { content: `again ${pages.base}/og` }), 200);
  const frames = await socket.drain(500);
  t.notOk(
    frames.some((f) => f.event === 'message_updated' && f.id === sent.id && f.embeds),
    'an edit after suppress_embeds fetches no preview',
  );
  // A moderator (the owner) may remove someone's previews too.
  const another = await c.post(member, `${pages.base}/og`);
  await socket.until((f) => f.event === 'message_updated' && f.id === another.id);
  t.notOk((await must(owner.request('PATCH', `${c.inGeneral}/${another.id}`, { suppress_embeds: true }), 200)).body.embeds);
});

t.test('a server that turns previews off, and LINK_PREVIEWS=off, fetch nothing', async (t) => {
  const pages = await pageServer();
  const server = await startServer({ env: { PREVIEW_INSECURE_HOSTS: '127.0.0.1', LINK_PREVIEWS: 'on' } });
  const off = await startServer({ env: { PREVIEW_INSECURE_HOSTS: '127.0.0.1', LINK_PREVIEWS: 'off' } });
  t.teardown(async () => {
    await server.close();
    await off.close();
    await pages.close();
  });
  const c = await room(server);
  await must(c.clients.member.request('PATCH', c.base, { link_previews: false }), 403);
  const patched = await must(c.clients.owner.request('PATCH', c.base, { link_previews: false }), 200);
  t.equal(patched.body.link_previews, false);
  await c.post(c.clients.member, `${pages.base}/og`);
  const d = await room(off);
  t.equal((await must(d.clients.owner.get(d.base), 200)).body.link_previews, true, 'the server switch is on; the setting wins');
  await d.post(d.clients.member, `${pages.base}/twitter`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.same(pages.asked, [], 'no page was fetched');
});

t.test('without the aid, private links are never fetched: no connection, no card', async (t) => {
  let connections = 0;
  const counter = http.createServer((_req, res) => res.end('<title>private</title>'));
  counter.on('connection', () => connections++);
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  const p = (counter.address() as AddressInfo).port;
  const server = await startServer({ env: { LINK_PREVIEWS: 'on' } });
  t.teardown(async () => {
    await server.close();
    await new Promise<void>((resolve) => (counter.closeAllConnections(), counter.close(() => resolve())));
  });
  const c = await room(server);
  const socket = await openSocket(server.url, `/api/channels/${c.general}/ws`, { client: c.clients.owner });
  t.teardown(() => socket.close());
  const forms = [`http://127.0.0.1:${p}/`, `http://2130706433:${p}/`, `http://0x7f.1:${p}/`, `http://[::ffff:127.0.0.1]:${p}/`, `http://localhost:${p}/`];
  const tricky = [`http://[::127.0.0.1]:${p}/`, `http://0177.0.0.1:${p}/`, `http://169.254.169.254:${p}/`, `http://127.1:${p}/`, `http://localhost.:${p}/`];
  await c.post(c.clients.member, forms.join(' '));
  await c.post(c.clients.member, tricky.join(' '));
  // Our own listener too: loopback, so refused already; under the aid it would be refused as ours.
  await c.post(c.clients.member, `${server.url}/api/session`);
  const frames = await socket.drain(1000);
  t.notOk(
    frames.some((f) => f.event === 'message_updated' && f.embeds),
    'no card',
  );
  t.equal(connections, 0, 'no connection was made');
});

t.test('a flood of links to a slow site: bounded, one host at a time, and the server answers as usual', async (t) => {
  let open = 0;
  let most = 0;
  const hanging: http.ServerResponse[] = [];
  const slow = http.createServer((_req, res) => {
    most = Math.max(most, ++open);
    res.on('close', () => open--);
    hanging.push(res);
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const slowBase = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  const pages = await pageServer();
  // The page server as `localhost`: another host than the slow one.
  const server = await startServer({ env: { PREVIEW_INSECURE_HOSTS: '127.0.0.1,localhost', RATE_LIMIT: 'on', LINK_PREVIEWS: 'on' } });
  t.teardown(async () => {
    await server.close();
    await pages.close();
    await new Promise<void>((resolve) => (slow.closeAllConnections(), slow.close(() => resolve())));
  });
  const c = await room(server);
  const socket = await openSocket(server.url, `/api/channels/${c.general}/ws`, { client: c.clients.owner });
  t.teardown(() => socket.close());
  for (let i = 0; i < 20; i++) {
    await c.post(c.clients.member, Array.from({ length: 5 }, (_, j) => `${slowBase}/page/${i}/${j}`).join(' '));
  }
  const fast = await c.post(c.clients.owner, pages.base.replace('127.0.0.1', 'localhost') + '/og');
  const card = await socket.until((f) => f.event === 'message_updated' && f.id === fast.id);
  t.match(card.embeds, [{ title: 'Open & Graph' }], 'another site gets its card while the slow one hangs');
  const started = Date.now();
  await must(c.clients.owner.get(`${c.inGeneral}?limit=50`), 200);
  t.ok(Date.now() - started < 5_000, 'the server answers as usual (well under the fetch deadline)');
  t.ok(most <= 2, `at most 2 fetches at once to one host (saw ${most})`);
  // 100 links from one user: the per-user budget (30) fetches some, the rest go without a card.
  t.ok(server.app.linkPreviews.pending <= 30, `the user's budget bounds what waits (${server.app.linkPreviews.pending})`);
});
