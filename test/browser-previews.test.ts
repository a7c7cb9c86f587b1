import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { SKIP, bookClub, closeScene, gradientPng, message, openChannel, openScene, post, sessionOf, signIn } from './helpers/browser';
import { uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Link previews and the media proxy, the browser side (issue 51): a webhook's embed image and
 * avatar, and a link's preview card with its thumbnail, show on a desktop and a phone, every
 * image loaded from our own origin (the media proxy) and not one request to any other; the
 * author removes the previews from the message's menu. A page server on loopback stands for the
 * web (PREVIEW_INSECURE_HOSTS). Machines without /usr/bin/chromium skip this.
 */
t.test('preview cards and webhook images through the media proxy, with no request to another origin', { skip: SKIP }, async (t) => {
  const png = gradientPng(64, 48);
  const site = http.createServer((req, res) => {
    if (req.url === '/article') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      return res.end(
        '<head><meta property="og:site_name" content="Example News"><meta property="og:title" content="A headline">' +
          '<meta property="og:description" content="What happened, in short"><meta property="og:image" content="/photo.png"></head>',
      );
    }
    res.writeHead(200, { 'Content-Type': 'image/png' });
    res.end(png);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (site.closeAllConnections(), site.close(() => resolve()))));
  const web = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

  const scene = await openScene(t, 'browser-previews', [{ name: 'alice' }, { name: 'alice-phone', phone: true }], {
    PREVIEW_INSECURE_HOSTS: '127.0.0.1',
    LINK_PREVIEWS: 'on',
  });
  const { server, step } = scene;
  const [alice, phone] = scene.windows;
  const elsewhere: string[] = [];
  for (const w of scene.windows) {
    w.page.on('request', (req) => {
      const url = new URL(req.url());
      if (!['data:', 'blob:'].includes(url.protocol) && url.origin !== new URL(server.url).origin) elsewhere.push(req.url());
    });
  }
  const aliceApi = await signIn(scene, alice, uniqueName('alice'));
  const { serverId, generalId } = await bookClub(aliceApi, []);
  await phone.context.addCookies([{ name: 'app_session', value: (await sessionOf(alice, server.url))!, url: server.url }]);
  await Promise.all([alice, phone].map((w) => openChannel(w, server.url, serverId, generalId, 'general')));

  /** The image has loaded (its pixels came), from our media proxy. */
  const loaded = async (img: ReturnType<typeof alice.page.locator>) => {
    await img.waitFor();
    t.match(await img.getAttribute('src'), /^\/api\/media\//, 'through the media proxy');
    t.equal(await img.getAttribute('loading'), 'lazy', 'loaded lazily');
    await t.resolves(
      img.evaluate((node) => {
        const image = node as unknown as { complete: boolean; naturalWidth: number; decode(): Promise<void> };
        return image.decode().then(() => image.naturalWidth > 0 || Promise.reject(new Error('no pixels')));
      }),
      'and shown',
    );
  };

  await step("a webhook's embed image and avatar show through the proxy", async () => {
    const hook = (await must(aliceApi.post(`/api/servers/${serverId}/channels/${generalId}/webhooks`, { name: 'CI' }), 201)).body;
    const called = await fetch(hook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'Chart of the day', avatar_url: `${web}/avatar.png`, embeds: [{ title: 'Load', image: { url: `${web}/chart.png` } }] }),
    });
    t.equal(called.status, 204);
    for (const { page } of [alice, phone]) {
      const item = message(page, 'Chart of the day');
      await loaded(item.locator('.embed img.embed-image'));
      await loaded(item.locator('.msg-gutter img'));
    }
  });

  await step('a link gets its preview card, its thumbnail through the proxy; the author removes it', async () => {
    await post(aliceApi, serverId, generalId, `Read this ${web}/article`);
    for (const { page } of [alice, phone]) {
      const card = message(page, 'Read this').locator('.embed-preview');
      await card.locator('.embed-title a', { hasText: 'A headline' }).waitFor();
      t.equal(await card.locator('.embed-provider').textContent(), 'Example News', "the site's name");
      t.match(await card.locator('.embed-description').textContent(), 'What happened, in short', 'its description');
      await loaded(card.locator('img.embed-thumbnail'));
    }
    const item = message(alice.page, 'Read this');
    await item.click({ button: 'right' });
    await alice.page.getByRole('menuitem', { name: 'Remove previews' }).click();
    for (const { page } of [alice, phone]) await message(page, 'Read this').locator('.embed').waitFor({ state: 'detached' });
  });

  t.same(elsewhere, [], 'no request went to any other origin');
  closeScene(t, scene);
});
