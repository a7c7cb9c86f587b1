import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import t from 'tap';
import { iconsBuilt, writeIcons } from '../src/core/http/icons';
import {
  ARGS,
  CHROMIUM,
  EXPECTED_REFUSALS,
  KEEP_NAMES,
  PASSWORD,
  PHONE,
  SKIP,
  bookClub,
  addChannel,
  launchChromium,
  message,
  post,
  shot,
  stepper,
  until,
  watch,
} from './helpers/browser';
import { type Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';
import { startPushService } from './helpers/push-service';
import { type TestServer, startServer } from './helpers/server';

/**
 * The installed app (issue 54), in the system Chromium at phone size (390×844, touch): the
 * manifest linked and valid, Chromium's own installability check (the DevTools protocol's
 * Page.getInstallabilityErrors) passing signed out and signed in, the service worker keeping the
 * app shell of the asset version, a second start with the network cut showing the app from the
 * cache, offline and reconnecting; a push delivered by the local push service shown once per
 * room and opening its message when tapped; the unread count on the app's badge; a share from
 * another app landing in the composer of the chosen room; a long press, an edge swipe, lists that
 * keep their overscroll and a composer above the keyboard; then a new version of the server,
 * announced by the page and running at the app's next start, never mixed with the old one; and
 * the push offer on an iPhone, before and after adding the app to the Home Screen. Screenshots
 * (phone, light and dark) go to .tap/screenshots/.
 *
 * The profile is a persistent one: Chromium reports every window of a fresh context (what the
 * other browser tests use) as incognito, which is never installable. Headless Chromium has no
 * push service and no notification to tap: a push the server sent to the local push service is
 * handed to the service worker through the DevTools protocol (ServiceWorker.deliverPushMessage),
 * and the tap is the `notificationclick` event of that notification, dispatched in the worker.
 */
t.test('the installed app: installable, offline, pushes, badge, share target, gestures, upgrades', { skip: SKIP }, async (t) => {
  // What `make build` makes: the icons (a test run on a fresh checkout has no build yet).
  if (!iconsBuilt()) await writeIcons();
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-pwa-'));
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-pwa-profile-'));
  const newBuild = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-pwa-static-'));
  t.teardown(() => {
    for (const dir of [dataDir, profile, newBuild]) fs.rmSync(dir, { recursive: true, force: true });
  });
  const pushService = await startPushService({ tls: false });
  t.teardown(() => pushService.close());
  const env = { INSTANCE_NAME: 'Book club', PUSH_INSECURE_HOSTS: '127.0.0.1' };
  let server: TestServer = await startServer({ dataDir, env });
  t.teardown(() => server.close());
  const url = server.url;
  const port = Number(new URL(url).port);

  const { chromium } = await import('playwright-core');
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    timeout: 30_000,
    ...PHONE,
  });
  t.teardown(() => context.close());
  await context.addInitScript({ content: KEEP_NAMES });
  // Recorded in the page: every count given to the app's badge, and whether the page pretends to be
  // hidden (so the server pushes to this phone rather than tell its open page).
  await context.addInitScript(() => {
    const w = globalThis as unknown as Recorded & { navigator: Record<string, unknown>; document: object };
    const MutationObserver = (globalThis as any).MutationObserver;
    // (Kept across a page load in this tab: signing out clears the badge, then leaves the page.)
    const kept = (w as unknown as { sessionStorage: { getItem(k: string): string | null; setItem(k: string, v: string): void } }).sessionStorage;
    try {
      w.badges = JSON.parse(kept.getItem('test:badges') ?? '[]');
    } catch {
      w.badges = []; // (a page of no origin has no storage)
    }
    const record = (n: number | 'flag') => {
      w.badges.push(n);
      kept.setItem('test:badges', JSON.stringify(w.badges));
    };
    // The messages the page highlighted (a message opened from a link flashes for 3 s).
    w.flashed = [];
    new MutationObserver((changes: { target: unknown }[]) => {
      for (const change of changes) {
        const target = change.target as unknown as { classList: { contains(c: string): boolean }; dataset: { id?: string } };
        if (target.classList.contains('flash') && target.dataset.id) w.flashed.push(target.dataset.id);
      }
    }).observe(w.document as never, { subtree: true, attributes: true, attributeFilter: ['class'] });
    w.hidden = false;
    w.navigator.setAppBadge = async (n?: number) => record(n ?? 'flag');
    w.navigator.clearAppBadge = async () => record(0);
    Object.defineProperty(w.document, 'hidden', { get: () => w.hidden, configurable: true });
    Object.defineProperty(w.document, 'visibilityState', { get: () => (w.hidden ? 'hidden' : 'visible'), configurable: true });
  });
  // Allowed from the start, as a phone that said yes long ago (a grant made later reaches a running worker late).
  await context.grantPermissions(['notifications'], { origin: url });
  const zoe = await watch('zoe', context, context.pages()[0] ?? (await context.newPage()), EXPECTED_REFUSALS);
  const step = stepper(t, [zoe], 'browser-pwa');
  const cdp: CDPSession = await context.newCDPSession(zoe.page);
  /** A notification as the worker's registration lists it. */
  type Shown = { title: string; body: string; tag: string; url: string };

  const zoeName = uniqueName('zoe');
  let zoeApi: Client;
  let bobApi: Client;
  let serverId = '';
  let generalId = '';
  let booksId = '';
  let version = '';

  const installability = async () =>
    ((await cdp.send('Page.getInstallabilityErrors')) as { installabilityErrors: { errorId: string }[] }).installabilityErrors.map((e) => e.errorId);
  const versionOf = (page: Page) =>
    page.evaluate(
      () =>
        /\/a\/([0-9a-f]{12})\//.exec(
          (globalThis as unknown as { document: { querySelector(s: string): { src: string } } }).document.querySelector('script[type="module"]').src,
        )?.[1] ?? '',
    );
  /** The shells kept (beside them: what was shared, and the badge's count). */
  const cacheNames = async (page: Page) =>
    (await page.evaluate(() => (globalThis as any).caches.keys() as Promise<string[]>)).filter((name) => name.startsWith('shell-'));
  /** Opens a channel as a person on the phone does: back to the lists, then the channel. */
  const openRoom = async (page: Page, name: string) => {
    if (await page.locator('#room-back').isVisible()) await page.click('#room-back');
    await page.locator('#channel-list button', { hasText: name }).click();
    await page.locator('#room-title', { hasText: name }).waitFor();
  };
  const shots = async (page: Page, name: string) => {
    await page.emulateMedia({ colorScheme: 'light' });
    await shot(page, `${name}-phone-light`);
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot(page, `${name}-phone-dark`);
  };

  await step('(set-up) zoe and bob, in "Book club" with #general and #books', async () => {
    zoeApi = await signUp(url, zoeName, PASSWORD);
    bobApi = await signUp(url, uniqueName('bob'), PASSWORD);
    ({ serverId, generalId } = await bookClub(zoeApi, [bobApi]));
    booksId = await addChannel(zoeApi, serverId, 'books');
    await post(bobApi, serverId, generalId, 'welcome to the club');
  });

  await step('the manifest is linked and valid, and Chromium finds the app installable signed out', async (t) => {
    const { page } = zoe;
    await page.goto(`${url}/`);
    await page.locator('#login-form').waitFor();
    const { url: manifestUrl, errors, data } = (await cdp.send('Page.getAppManifest')) as { url: string; errors: { message: string }[]; data: string };
    t.equal(manifestUrl, `${url}/manifest.webmanifest`, 'the page links the manifest');
    t.same(errors, [], 'Chromium reads it without an error');
    const manifest = JSON.parse(data);
    t.match(
      manifest,
      { name: 'Book club', short_name: 'Book club', display: 'standalone', start_url: '/', scope: '/' },
      'named after INSTANCE_NAME, standalone',
    );
    const icons = ((await cdp.send('Page.getManifestIcons')) as { primaryIcon?: string }).primaryIcon;
    t.ok(icons, 'Chromium fetched a primary icon it can use');
    t.same(await installability(), [], 'installable signed out: Page.getInstallabilityErrors reports nothing');
  });

  await step('signed in, the app registers the service worker, which keeps the shell of this version (and no API answer); still installable', async (t) => {
    const { page } = zoe;
    await page.fill('#login-username', zoeName);
    await page.fill('#login-password', PASSWORD);
    await page.click('#login-form button[type=submit]');
    await page.locator('#app').waitFor();
    await page.goto(`${url}/?server=${serverId}&channel=${generalId}`);
    await message(page, 'welcome to the club').waitFor();
    version = await versionOf(page);
    t.match(version, /^[0-9a-f]{12}$/, 'the page runs one asset version');
    await until(page, 'the service worker controlling the page', async () =>
      page.evaluate(() => Boolean((globalThis as any).navigator.serviceWorker.controller)),
    );
    t.same(await cacheNames(page), [`shell-${version}`], "one shell: this version's");
    const kept: string[] = await page.evaluate(
      async (name) => (await (await (globalThis as any).caches.open(name)).keys()).map((r: { url: string }) => new URL(r.url).pathname),
      `shell-${version}`,
    );
    t.ok(kept.includes('/'), 'the app page');
    t.ok(kept.includes(`/a/${version}/js/app.js`) && kept.includes(`/a/${version}/js/place-menu.js`), 'its modules, those loaded on first use too');
    t.same(
      kept.filter((p) => !p.startsWith(`/a/${version}/`) && p !== '/'),
      [],
      'only files of this version',
    );
    t.same(
      kept.filter((p) => /^\/(?:api|uploads|avatars)\//.test(p)),
      [],
      'no API answer, upload or picture',
    );
    t.same(await installability(), [], 'installable signed in');
  });

  await step('a second start with the network cut shows the app from the cache, offline and reconnecting; back online, the room', async (t) => {
    const { page } = zoe;
    zoe.watching = false; // with the network cut every request fails, which Chromium logs as errors
    await context.setOffline(true);
    await page.reload();
    const offline = page.locator('#offline-state');
    await offline.waitFor();
    t.match(await offline.textContent(), /You are offline[\s\S]*Chat opens where you left off/, "the app says it is offline, not the browser's error page");
    await page.locator('#offline-retry', { hasText: /Reconnecting in \d+ s/ }).waitFor();
    t.notOk(await page.isVisible('#login-form'), 'not the sign-in forms: this browser was signed in');
    t.equal(await versionOf(page), version, 'the page and its files came from the shell');
    t.notOk(
      await page.evaluate(() =>
        fetch('/api/account').then(
          () => true,
          () => false,
        ),
      ),
      'an API call is not answered from any cache',
    );
    await shots(page, 'pwa-offline');
    await page.getByRole('button', { name: 'Retry now' }).click();
    await page.locator('#offline-retry', { hasText: /Reconnecting in [01] s/ }).waitFor();
    t.pass('"Retry now" asks again at once, and starts the wait over');
    // The browser says it is online again: the page asks the server, and starts the app.
    await context.setOffline(false);
    await message(page, 'welcome to the club').waitFor();
    t.pass('back online, the app starts in the room it left');
    zoe.watching = true;
  });

  await step('the app badge shows the unread mentions', async (t) => {
    const { page } = zoe;
    const badges = () => page.evaluate(() => (globalThis as unknown as Recorded).badges);
    await post(bobApi, serverId, booksId, `@${zoeName} first mention`);
    await until(page, 'a badge of 1', async () => (await badges()).at(-1) === 1);
    await post(bobApi, serverId, booksId, `@${zoeName} second mention`);
    await until(page, 'a badge of 2', async () => (await badges()).at(-1) === 2);
    await openRoom(page, 'books');
    await until(page, 'the badge cleared', async () => (await badges()).at(-1) === 0);
    t.pass('read, the badge is cleared');
  });

  await step('a push from the local push service shows one notification for its room, and a tap opens the message', async (t) => {
    const { page } = zoe;
    const { key } = (await must(zoeApi.get('/api/push/key'), 200)).body;
    await must(zoeApi.post('/api/account/push-subscriptions', { ...pushService.subscribe('phone', key), show_text: true }), 201);
    await openRoom(page, 'general');
    // The page goes to the background: its stream tells the server, which pushes from now on. (Its
    // own desktop notifications off: one for the same room would replace the push's, by its tag.)
    await page.evaluate(() => {
      const w = globalThis as any;
      w.localStorage.setItem('chat:notify', 'off');
      w.hidden = true;
      w.document.dispatchEvent(new Event('visibilitychange'));
    });
    const zoeId = (await must(zoeApi.get('/api/account'), 200)).body.user_id;
    await until(page, 'the server told the page is hidden', async () => !server.app.hub.hasVisibleStream(zoeId));
    const first = await post(bobApi, serverId, booksId, `@${zoeName} chapter three is out`);
    // (The server sends from a worker thread it starts on the first push: generous on a busy machine.)
    const [sent] = await pushService.waitFor(1, 20_000).catch((err) => {
      throw new Error(`${err.message}; the server's push log: ${server.logs.filter((line) => /push/i.test(line)).join(' | ')}`);
    });
    const payload = sent.payload as { url: string; tag: string; room: string; sender: string };
    t.equal(payload.url, `/channels/${serverId}/${booksId}/${first.id}`, 'the push names the message');

    await cdp.send('ServiceWorker.enable');
    const registrations: { registrationId: string; scopeURL: string }[] = [];
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) =>
      registrations.push(...e.registrations.filter((r) => !r.isDeleted)),
    );
    await until(page, 'the registration', async () => registrations.some((r) => r.scopeURL === `${url}/`));
    const registrationId = registrations.find((r) => r.scopeURL === `${url}/`)!.registrationId;
    const deliver = (data: unknown) => cdp.send('ServiceWorker.deliverPushMessage', { origin: url, registrationId, data: JSON.stringify(data) });
    const shown = (): Promise<Shown[]> =>
      page.evaluate(async () =>
        (await (await (globalThis as any).navigator.serviceWorker.ready).getNotifications()).map(
          (n: { title: string; body: string; tag: string; data?: { url: string } }) => ({ title: n.title, body: n.body, tag: n.tag, url: n.data?.url }),
        ),
      );
    // The worker may have stopped while idle: started first, as a push service's message would start it.
    await cdp.send('ServiceWorker.startWorker', { scopeURL: `${url}/` });
    // What the browser displayed, as DevTools' Background Services record it. (Asking the worker for
    // its notifications before one is displayed would drop it: Chromium keeps only displayed ones.)
    const displayed: string[] = [];
    cdp.on(
      'BackgroundService.backgroundServiceEventReceived',
      (e: { backgroundServiceEvent: { eventName: string; eventMetadata: { key: string; value: string }[] } }) => {
        if (e.backgroundServiceEvent.eventName === 'Notification displayed')
          displayed.push(e.backgroundServiceEvent.eventMetadata.find((m) => m.key === 'Body')?.value ?? '');
      },
    );
    await cdp.send('BackgroundService.startObserving', { service: 'notifications' });
    await cdp.send('BackgroundService.setRecording', { shouldRecord: true, service: 'notifications' });
    await deliver(payload);
    await until(page, 'a notification displayed', async () => displayed.length === 1);
    t.same(displayed, [`@${zoeName} chapter three is out`], 'displayed with the text (this device chose show_text)');
    const [note] = await shown();
    t.match(note, { tag: booksId, url: payload.url }, 'one notification, tagged with the room, opening the message');
    t.match(note.title, `${payload.sender} (#books`, 'titled with who wrote where');

    // A second push for the same room replaces the first (the burst's count after 3 s).
    await post(bobApi, serverId, booksId, 'and chapter four');
    const later = await pushService.waitFor(2, 20_000);
    await deliver(later[1].payload);
    await until(page, 'the second displayed', async () => displayed.length === 2);
    const second = later[1].payload as { url: string };
    t.same(await shown(), [{ ...note, body: 'and chapter four', url: second.url }], 'still one notification for the room: the new one in place of the first');

    // The tap: the worker's notificationclick for that notification (see the comment at the top).
    const [worker] = context.serviceWorkers();
    await worker.evaluate(KEEP_NAMES);
    await worker.evaluate(async (tag) => {
      const scope = globalThis as unknown as {
        registration: { getNotifications(o: object): Promise<unknown[]> };
        dispatchEvent(e: Event): boolean;
        NotificationEvent: new (type: string, init: object) => Event;
      };
      const [notification] = await scope.registration.getNotifications({ tag });
      const event = new scope.NotificationEvent('notificationclick', { notification });
      const waited: Promise<unknown>[] = [];
      Object.defineProperty(event, 'waitUntil', { value: (p: Promise<unknown>) => waited.push(p) });
      scope.dispatchEvent(event);
      // (Focusing a window is refused outside a real tap; opening the message is not.)
      await Promise.allSettled(waited);
    }, booksId);
    const secondId = second.url.split('/').pop()!;
    await page.locator('#room-title', { hasText: 'books' }).waitFor();
    await until(page, 'the message highlighted', async () => (await page.evaluate(() => (globalThis as unknown as Recorded).flashed)).includes(secondId));
    t.ok(await page.locator(`#messages > li.msg[data-id="${secondId}"]`).isVisible(), 'the app opened #books at the message, highlighted and in view');
    t.equal((await shown()).length, 0, 'the notification is gone');
    await page.evaluate(() => {
      const w = globalThis as any;
      w.hidden = false;
      w.document.dispatchEvent(new Event('visibilitychange'));
    });
  });

  await step("a share from another app asks where it goes, then fills that room's composer", async (t) => {
    const { page } = zoe;
    const manifest = (await (await fetch(`${url}/manifest.webmanifest`)).json()) as { share_target: unknown };
    const target = manifest.share_target as {
      action: string;
      method: string;
      enctype: string;
      params: { title: string; text: string; url: string; files: { name: string }[] };
    };
    // As the system does it: a form post of the manifest's fields to its action, which the service worker takes.
    await page.evaluate((share) => {
      const document = (globalThis as any).document;
      const form = document.createElement('form');
      Object.assign(form, { method: share.method, enctype: share.enctype, action: share.action, id: 'os-share' });
      const field = (name: string, value: string) => form.append(Object.assign(document.createElement('input'), { name, value }));
      field(share.params.title, 'A review');
      field(share.params.text, 'Worth reading: https://example.org/review');
      field(share.params.url, 'https://example.org/review');
      form.append(Object.assign(document.createElement('input'), { type: 'file', name: share.params.files[0].name, id: 'os-share-file' }));
      document.body.append(form);
    }, target);
    await page.setInputFiles('#os-share-file', {
      name: 'cover.png',
      mimeType: 'image/png',
      buffer: fs.readFileSync(path.join(__dirname, '..', 'dist', 'icons', 'icon-192.png')),
    });
    await Promise.all([page.waitForURL(`${url}/share?shared=1`), page.evaluate(() => (globalThis as any).document.getElementById('os-share').submit())]);
    const picker = page.locator('#switcher');
    await picker.locator('#switcher-title', { hasText: 'Share to…' }).waitFor();
    await shots(page, 'pwa-share-picker');
    await page.fill('#switcher-input', 'books');
    await page.press('#switcher-input', 'Enter');
    await page.locator('#room-title', { hasText: 'books' }).waitFor();
    t.equal(
      await page.inputValue('#composer-text'),
      'A review\nWorth reading: https://example.org/review',
      'the title and the text; the link, already in the text, once',
    );
    t.match(await page.textContent('#file-chips'), 'cover.png', 'the image waits as a chip');
    await shots(page, 'pwa-share-composer');
    await page.click('#send-button');
    await message(page, 'Worth reading').locator('.attachment').waitFor();
    t.pass('sent: the message carries the image');
    t.notOk(await page.evaluate(() => (globalThis as any).caches.has('share')), 'the share was taken once');

    // A share given in the address (GET) lands the same way.
    await page.goto(`${url}/share?text=${encodeURIComponent('short note')}`);
    await picker.locator('#switcher-title', { hasText: 'Share to…' }).waitFor();
    await page.fill('#switcher-input', 'general');
    await page.press('#switcher-input', 'Enter');
    await page.locator('#room-title', { hasText: 'general' }).waitFor();
    t.equal(await page.inputValue('#composer-text'), 'short note');
    await page.fill('#composer-text', '');
  });

  await step(
    "mobile comfort: a long press opens a message's menu, an edge swipe goes back, lists keep their overscroll, the composer stays above the keyboard",
    async (t) => {
      const { page } = zoe;
      const style = (selector: string): Promise<string> =>
        page.evaluate((s) => {
          const w = globalThis as any;
          return w.getComputedStyle(w.document.querySelector(s)).overscrollBehaviorY;
        }, selector);
      t.equal(await style('body'), 'none', 'the page itself never pulls to refresh');
      t.equal(await style('#message-scroll'), 'contain', 'the message list keeps its overscroll');
      const touch = async (points: { x: number; y: number }[], holdMs: number) => {
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [points[0]] });
        for (const point of points.slice(1)) {
          await page.waitForTimeout(30);
          await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [point] });
        }
        await page.waitForTimeout(holdMs);
        await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
      };
      const box = (await message(page, 'welcome to the club').locator('.content').boundingBox())!;
      await touch([{ x: box.x + 20, y: box.y + box.height / 2 }], 700);
      await page.locator('#message-menu').getByRole('menuitem', { name: 'Reply' }).waitFor();
      t.pass("a long press opened the message's menu");
      await page.keyboard.press('Escape');
      await page.locator('#message-menu').waitFor({ state: 'hidden' });

      t.ok(await page.evaluate(() => (globalThis as any).document.getElementById('app').classList.contains('pane-room')), 'the room fills the phone');
      await touch(
        [
          { x: 3, y: 420 },
          { x: 40, y: 422 },
          { x: 90, y: 424 },
          { x: 150, y: 425 },
        ],
        50,
      );
      await until(page, 'the lists', async () => page.evaluate(() => (globalThis as any).document.getElementById('app').classList.contains('pane-nav')));
      t.pass('a swipe in from the left edge went back to the lists');
      await openRoom(page, 'general');

      // The on-screen keyboard takes the bottom of the screen: the page shrinks, the composer with it.
      await page.setViewportSize({ width: 390, height: 460 });
      await until(page, 'the page fitted', async () =>
        page.evaluate(() => (globalThis as any).document.documentElement.style.getPropertyValue('--app-height') === '460px'),
      );
      const composer = (await page.locator('#composer').boundingBox())!;
      t.ok(composer.y + composer.height <= 460, `the composer (bottom ${Math.round(composer.y + composer.height)} px) is above the keyboard`);
      await page.setViewportSize(PHONE.viewport);
    },
  );

  await step('a new version of the server: the page says so, the next start runs it, and no page runs two versions', async (t) => {
    const { page } = zoe;
    fs.cpSync(path.join(__dirname, '..', 'static'), newBuild, { recursive: true });
    fs.appendFileSync(path.join(newBuild, 'js', 'ui.js'), '\n// a new version\n');
    zoe.watching = false; // while the server restarts the page's requests fail
    await server.close();
    server = await startServer({ dataDir, env, port, staticDir: newBuild });
    // The page signs in again by itself (a remembered device), reconnects, and asks for a new worker.
    await page.locator('#update-bar', { hasText: 'A new version of chat is ready.' }).waitFor({ timeout: 30_000 });
    await page.locator('#connection-bar').waitFor({ state: 'hidden' });
    await page.waitForTimeout(500); // (the refused socket of the reconnect is logged late, at times)
    zoe.watching = true;
    t.equal(await versionOf(page), version, 'meanwhile the page goes on with its own version');
    await shots(page, 'pwa-update');
    const newVersion = /\/a\/([0-9a-f]{12})\//.exec(await (await fetch(url)).text())![1];
    t.not(newVersion, version, 'the server runs another version');
    t.same((await cacheNames(page)).sort(), [`shell-${newVersion}`, `shell-${version}`].sort(), 'the new shell is kept beside the running one');

    // The next start: the app closed, and opened again a moment later. With no page of the old
    // version left, the browser hands over to the new worker (polled in the workers themselves).
    await page.close();
    // (An expression in the worker's own scope: BUILD is the version the server wrote into its script.)
    const workerStates = () =>
      Promise.all(context.serviceWorkers().map((w) => w.evaluate<string>('`${BUILD.version} ${self.serviceWorker.state}`').catch(() => 'gone')));
    for (const end = Date.now() + 10_000; !(await workerStates()).includes(`${newVersion} activated`);) {
      if (Date.now() > end) throw new Error(`the new worker never took over: ${(await workerStates()).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const next = await watch('zoe, next start', context, await context.newPage(), EXPECTED_REFUSALS);
    await next.page.goto(`${url}/`);
    await message(next.page, 'welcome to the club').waitFor({ state: 'attached' }); // (a phone starts on the lists)
    t.equal(await versionOf(next.page), newVersion, 'the app runs the new version');
    const loaded: string[] = await next.page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map((e) => new URL(e.name).pathname)
        .filter((p) => p.startsWith('/a/')),
    );
    t.same(
      loaded.filter((p) => !p.startsWith(`/a/${newVersion}/`)),
      [],
      'every file it loaded is of that version',
    );
    await until(next.page, 'the old shell dropped', async () => (await cacheNames(next.page)).length === 1);
    t.same(await cacheNames(next.page), [`shell-${newVersion}`], 'the old shell is gone');

    // Signing out clears the app's badge.
    await must(bobApi.post('/api/login', { username: bobApi.username, password: PASSWORD }), 200);
    await post(bobApi, serverId, booksId, `@${zoeName} after the upgrade`);
    const badges = async () => (await next.page.evaluate(() => (globalThis as unknown as Recorded).badges)).at(-1);
    await until(next.page, 'a badge of 1', async () => (await badges()) === 1);
    await next.page.click('#me-button');
    await next.page.getByRole('menuitem', { name: 'Log out' }).click();
    await next.page.locator('#login-form').waitFor();
    t.equal(await badges(), 0, 'signed out, the badge is cleared');
    t.same(next.problems, [], 'no console error, page error, CSP violation or dialog');
  });

  t.same(zoe.problems, [], 'no console error, page error, CSP violation or dialog');
  t.comment(`browser test took ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

t.test('on an iPhone: notifications are offered once the app is on the Home Screen, and explained before', { skip: SKIP }, async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const browser = await launchChromium(t);
  const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
  const open = async (name: string, standalone: boolean) => {
    const context = await browser.newContext({ ...PHONE, colorScheme: 'light', userAgent: IPHONE });
    t.teardown(() => context.close());
    const w = await watch(name, context, await context.newPage(), EXPECTED_REFUSALS);
    // Safari says it was started from the Home Screen with navigator.standalone (after watch's
    // init script, which the functions a test hands the page need).
    if (standalone) await context.addInitScript(() => Object.defineProperty((globalThis as any).navigator, 'standalone', { get: () => true }));
    const client = await signUp(server.url);
    await context.addCookies([{ name: 'app_session', value: client.cookie!.replace(/^app_session=/, ''), url: server.url }]);
    return w;
  };
  const step = stepper(t, [], 'browser-pwa-iphone');

  await step('in Safari, the page says how to add the app to the Home Screen to get notifications', async (t) => {
    const safari = await open('safari', false);
    await safari.page.goto(`${server.url}/`);
    const offer = safari.page.locator('#push-offer');
    await offer.waitFor();
    t.match(await offer.textContent(), 'Add to Home Screen', 'how to install it');
    t.notOk(await offer.getByRole('button', { name: 'Turn on' }).isVisible(), 'nothing to turn on in a tab');
    await shot(safari.page, 'pwa-iphone-not-installed');
    await offer.getByRole('button', { name: 'Not now' }).click();
    await safari.page.reload();
    await safari.page.locator('#me-button').waitFor();
    await safari.page.waitForTimeout(1500);
    t.notOk(await offer.isVisible(), '"Not now" is remembered');
    await safari.page.goto(`${server.url}/account`);
    await safari.page.locator('#push-result', { hasText: 'Add to Home Screen' }).waitFor();
    t.pass('the account page says the same');
    t.same(safari.problems, []);
  });

  await step('started from the Home Screen, the app offers to turn notifications on', async (t) => {
    const app = await open('home screen', true);
    await app.page.goto(`${server.url}/`);
    const offer = app.page.locator('#push-offer');
    await offer.waitFor();
    t.match(await offer.textContent(), 'Get notifications on this iPhone when chat is closed.');
    t.ok(await offer.getByRole('button', { name: 'Turn on' }).isVisible(), 'with a button to turn them on');
    await shot(app.page, 'pwa-iphone-push-offer');
    t.same(app.problems, []);
  });
});

/** What the page under test records (an init script): the badge counts, and whether it pretends to be hidden. */
interface Recorded {
  badges: (number | 'flag')[];
  hidden: boolean;
  flashed: string[];
}
