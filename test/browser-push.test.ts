import t from 'tap';
import { SKIP, WAIT, closeScene, openScene, signIn } from './helpers/browser';
import { must } from './helpers/community';
import { startPushService } from './helpers/push-service';

/**
 * Web push in the system Chromium (issue 33): the service worker registers from our origin under
 * the page CSP with no console error; the account page lists each device's subscription, changes
 * whether it shows the text, and turns one off. (Headless Chromium has no push service of its own
 * to subscribe to: the subscriptions here are made through the API, as a browser would send them;
 * test/push.test.ts follows a push from the server to a push service and decrypts it.)
 */
t.test('web push: the service worker under the CSP, and the devices on the account page', { skip: SKIP }, async (t) => {
  const service = await startPushService({ tls: false });
  t.teardown(() => service.close());
  const scene = await openScene(t, 'browser-push', [{ name: 'laptop' }, { name: 'phone', phone: true }], { PUSH_INSECURE_HOSTS: '127.0.0.1' });
  const { server, step } = scene;
  const [laptop, phone] = scene.windows;
  const zoe = await signIn(scene, laptop, 'zoe');
  await phone.context.addCookies([{ name: 'app_session', value: zoe.cookie!.replace(/^app_session=/, ''), url: server.url }]);
  const { key } = (await must(zoe.get('/api/push/key'), 200)).body;

  await step('the service worker registers from our origin, under the CSP', async (t) => {
    await laptop.page.goto(`${server.url}/account`);
    // (The test's TypeScript has no service worker types: the page's own are described here.)
    type Workers = {
      register(url: string): Promise<{ scope: string }>;
      ready: Promise<unknown>;
      getRegistration(scope: string): Promise<{ active: unknown } | undefined>;
    };
    const scope = await laptop.page.evaluate(async () => {
      const workers = (navigator as unknown as { serviceWorker: Workers }).serviceWorker;
      const registration = await workers.register('/sw.js');
      await workers.ready;
      return registration.scope;
    });
    t.equal(scope, `${server.url}/`, 'its scope is the whole site');
    t.ok(
      await laptop.page.evaluate(async () => Boolean((await (navigator as unknown as { serviceWorker: Workers }).serviceWorker.getRegistration('/'))?.active)),
      'active',
    );
  });

  await step('the account page lists the devices, shows the text on one, turns another off', async (t) => {
    const laptopSub = (await must(zoe.post('/api/account/push-subscriptions', service.subscribe('laptop', key)), 201)).body;
    await must(zoe.post('/api/account/push-subscriptions', { ...service.subscribe('tablet', key), show_text: true }), 201);
    await phone.page.goto(`${server.url}/account`);
    const items = phone.page.locator('#push-list > li');
    await items.nth(1).waitFor({ timeout: WAIT });
    t.equal(await items.count(), 2, 'two devices');
    const laptopItem = items.last();
    await laptopItem.getByLabel('Show the message text').check();
    await phone.page.waitForTimeout(300);
    const listed = (await must(zoe.get('/api/account/push-subscriptions'), 200)).body as { id: string; show_text: boolean }[];
    t.equal(listed.find((s) => s.id === laptopSub.id)?.show_text, true, 'the choice reached the server');
    await items
      .first()
      .getByRole('button', { name: /Turn off notifications/ })
      .click();
    await phone.page.locator('#push-list > li').nth(1).waitFor({ state: 'detached', timeout: WAIT });
    t.equal((await must(zoe.get('/api/account/push-subscriptions'), 200)).body.length, 1, 'one left');
  });

  closeScene(t, scene);
});
