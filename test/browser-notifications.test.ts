import t from 'tap';
import type { Page } from 'playwright-core';
import {
  EXPECTED_REFUSALS,
  SKIP,
  addChannel,
  bookClub,
  closeScene,
  message,
  openChannel,
  openScene,
  post,
  sessionOf,
  shot,
  signIn,
  until,
} from './helpers/browser';
import { type Client, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Issue 33, the browser side: notification settings and mutes change what the sidebar shows and
 * which desktop notifications appear, live on every page of the user; the context menu of
 * servers, channels and conversations (right click, long press, Shift+F10); the notification
 * settings dialog; marking a server read; message links, opened by a member (the message
 * highlighted) and by an outsider ("You cannot see this message"). Alice has two pages (a desktop
 * and a phone); Bob writes; Carol is in no server of theirs. Machines without /usr/bin/chromium
 * skip this.
 */

/** What alice's desktop page records instead of showing a notification, and whether it pretends to be hidden. */
interface Recorded {
  notified: string[];
  hidden: boolean;
}
const notified = (page: Page) => page.evaluate(() => (globalThis as unknown as Recorded).notified);
const setHidden = (page: Page, hidden: boolean) =>
  page.evaluate((h) => {
    (globalThis as unknown as Recorded).hidden = h;
  }, hidden);
/** The clipboard's text (run in the page; the tests are compiled without the DOM's types). */
const readClipboard = () => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText();

t.test('notification settings, mutes, the place menu and message links work in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-notifications', [{ name: 'alice' }, { name: 'alice-phone', phone: true }, { name: 'bob' }, { name: 'carol' }]);
  const { server, step } = scene;
  const [alice, phone, bob, carol] = scene.windows;
  let aliceApi: Client;
  let bobApi: Client;
  let serverId = '';
  let generalId = '';
  let quietId = '';
  let aliceName = '';
  let link = '';
  let linkedId = '';

  const rail = (page: Page) => page.locator(`#server-list .rail-entry:has(button[data-id="${serverId}"])`);
  const channel = (page: Page, id: string) => page.locator(`#channel-list button.channel[data-id="${id}"]`);
  const hasClass = async (page: Page, selector: string, cls: string) =>
    page.locator(selector).evaluate((node, c) => (node as unknown as { classList: { contains(x: string): boolean } }).classList.contains(c), cls);

  await step(
    "(set-up) alice's server with #general (70 messages) and #quiet, bob in it; alice on a desktop and a phone, her desktop recording notifications",
    async () => {
      [aliceApi, bobApi] = await Promise.all([
        signIn(scene, alice, uniqueName('alice')),
        signIn(scene, bob, uniqueName('bob')),
        signIn(scene, carol, uniqueName('carol')),
      ]);
      aliceName = (await must(aliceApi.get('/api/account'), 200)).body.username;
      ({ serverId, generalId } = await bookClub(aliceApi, [bobApi]));
      quietId = await addChannel(aliceApi, serverId, 'quiet');
      let last = '';
      for (let i = 0; i < 70; i++) {
        last = (await post(bobApi, serverId, generalId, `old message number ${i}`)).id;
        if (i === 5) linkedId = last;
      }
      await must(aliceApi.put(`/api/servers/${serverId}/channels/${generalId}/read`, { message_id: last }), 200);
      // The phone is a second page of alice's: the same session.
      await phone.context.addCookies([{ name: 'app_session', value: (await sessionOf(alice, server.url))!, url: server.url }]);
      // Alice's desktop records notifications instead of showing them, and is hidden when the test says so.
      await alice.context.addInitScript(() => {
        const w = globalThis as unknown as Recorded & { Notification: unknown; document: object };
        w.notified = [];
        w.hidden = false;
        w.Notification = class {
          static permission = 'granted';
          static requestPermission = async () => 'granted';
          constructor(title: string, options?: { body?: string }) {
            w.notified.push(`${title}: ${options?.body}`);
          }
          addEventListener() {}
          close() {}
        };
        Object.defineProperty(w.document, 'hidden', { get: () => w.hidden, configurable: true });
        Object.defineProperty(w.document, 'visibilityState', { get: () => (w.hidden ? 'hidden' : 'visible'), configurable: true });
      });
      await Promise.all([alice, phone, bob].map((w) => openChannel(w, server.url, serverId, generalId, 'general')));
      await alice.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    },
  );

  await step('a muted channel with new messages is not shown unread, nor is its server; a mention badge still shows; live on the second page', async (t) => {
    const { page } = alice;
    await channel(page, quietId).click({ button: 'right' });
    const menu = page.locator('#place-menu');
    await menu.getByRole('menuitem', { name: 'Mark as read' }).waitFor();
    await shot(page, 'place-menu');
    await menu.getByRole('menuitem', { name: 'Mute', exact: true }).click();
    await menu.getByRole('menuitem', { name: 'For 1 hour' }).click();
    await channel(page, quietId).locator('.muted-mark[aria-label="Muted"]').waitFor();
    t.match(await channel(page, quietId).getAttribute('aria-label'), 'muted', 'the channel says it is muted');
    await channel(phone.page, quietId).locator('.muted-mark[aria-label="Muted"]').waitFor({ state: 'attached' });
    t.pass("the mute shows live on alice's phone");

    await post(bobApi, serverId, quietId, 'quiet chatter');
    await post(bobApi, serverId, generalId, 'a marker: quiet chatter has arrived');
    await message(page, 'a marker: quiet chatter has arrived').waitFor();
    t.notOk(await hasClass(page, `#channel-list button.channel[data-id="${quietId}"]`, 'unread'), 'the muted channel is not shown unread');
    t.ok(await hasClass(page, `#channel-list button.channel[data-id="${quietId}"]`, 'muted'), 'it is dimmed');
    // (#general, open, is marked read a moment after its message: then nothing is unread.)
    await until(page, 'the server not unread', async () => !(await hasClass(page, `#server-list .rail-entry:has(button[data-id="${serverId}"])`, 'unread')));
    t.notOk(
      await hasClass(page, `#channel-list button.channel[data-id="${quietId}"]`, 'unread'),
      'nor is its server on the rail, #quiet still unread on the server',
    );

    await post(bobApi, serverId, quietId, `@${aliceName} look at this`);
    await channel(page, quietId).locator('.badge-count', { hasText: '1' }).waitFor();
    await rail(page).locator('.badge-count', { hasText: '1' }).waitFor();
    await channel(phone.page, quietId).locator('.badge-count', { hasText: '1' }).waitFor({ state: 'attached' });
    t.pass('a mention in the muted channel still shows its badge, on the channel and the server');
  });

  await step('desktop notifications honour the mute, the level and replies', async (t) => {
    const { page } = alice;
    await setHidden(page, true);
    await post(bobApi, serverId, quietId, `@${aliceName} muted mention`);
    await post(bobApi, serverId, generalId, 'general while away');
    await until(page, 'a notification from #general', async () => (await notified(page)).some((n) => n.includes('general while away')));
    t.notOk(
      (await notified(page)).some((n) => n.includes('muted mention')),
      'a mention in a muted channel notifies nothing',
    );

    // Only mentions for the whole server, set in its dialog (reached from the keyboard).
    await setHidden(page, false);
    await page.locator(`#server-list button[data-id="${serverId}"]`).focus();
    await page.keyboard.press('Shift+F10');
    await page.locator('#place-menu').getByRole('menuitem', { name: 'Notification settings…' }).click();
    const dialog = page.locator('#notify-dialog[open]');
    await dialog.waitFor();
    await dialog.getByLabel('Only @mentions').check();
    await until(page, 'the level saved', async () =>
      (await must(aliceApi.get('/api/account/notifications'), 200)).body.some(
        (s: { target_id: string; level: string }) => s.target_id === serverId && s.level === 'mentions',
      ),
    );
    await shot(page, 'notification-settings');
    await phone.page.locator('#room-back').click();
    await phone.page.locator(`#server-list button[data-id="${serverId}"]`).click({ button: 'right' });
    await phone.page.locator('#place-menu').getByRole('menuitem', { name: 'Notification settings…' }).click();
    const phoneDialog = phone.page.locator('#notify-dialog[open]');
    await phoneDialog.getByLabel('Only @mentions').waitFor();
    t.ok(await phoneDialog.getByLabel('Only @mentions').isChecked(), "the phone's dialog shows the level alice set on her desktop");
    await shot(phone.page, 'notification-settings-phone');
    await phone.page.keyboard.press('Escape');
    await page.keyboard.press('Escape');

    await setHidden(page, true);
    const before = (await notified(page)).length;
    await post(bobApi, serverId, generalId, 'not for alice in particular');
    const mine = await post(aliceApi, serverId, generalId, 'alice asks a question');
    await must(bobApi.post(`/api/servers/${serverId}/channels/${generalId}/messages`, { content: 'an answer to alice', reply_to: mine.id }), 201);
    await until(page, 'the reply notified', async () => (await notified(page)).some((n) => n.includes('an answer to alice')));
    t.notOk(
      (await notified(page)).slice(before).some((n) => n.includes('not for alice')),
      'at "only mentions" a plain message notifies nothing',
    );
    t.pass('a reply to alice counts as a mention');
    await setHidden(page, false);
  });

  await step('muting the server on one page shows on the other; unmuting there shows back', async (t) => {
    const { page } = alice;
    await page.locator(`#server-list button[data-id="${serverId}"]`).click({ button: 'right' });
    await page.locator('#place-menu').getByRole('menuitem', { name: 'Notification settings…' }).click();
    const dialog = page.locator('#notify-dialog[open]');
    await dialog.getByLabel('Mute', { exact: true }).selectOption({ label: 'Mute for 8 hours' });
    await rail(phone.page).locator('.muted-mark[aria-label="Muted"]').waitFor();
    t.ok(await hasClass(phone.page, `#server-list .rail-entry:has(button[data-id="${serverId}"])`, 'muted'), 'the phone shows the server muted, live');
    await page.locator('#notify-state', { hasText: 'Muted until' }).waitFor();
    await page.keyboard.press('Escape');

    // A long press on the phone opens the server's menu there.
    const box = (await phone.page.locator(`#server-list button[data-id="${serverId}"]`).boundingBox())!;
    const cdp = await phone.context.newCDPSession(phone.page);
    const at = [{ x: box.x + box.width / 2, y: box.y + box.height / 2 }];
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: at });
    await phone.page.waitForTimeout(700);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    const unmute = phone.page.locator('#place-menu').getByRole('menuitem', { name: /^Unmute/ });
    await unmute.waitFor();
    await shot(phone.page, 'place-menu-phone');
    await unmute.click();
    await rail(page).locator('.muted-mark').waitFor({ state: 'detached' });
    t.pass('unmuted on the phone, the desktop shows it at once');
  });

  await step('"Mark as read" from the server\'s menu clears its unread state', async (t) => {
    const { page } = alice;
    await page.click('#home-button');
    await post(bobApi, serverId, generalId, 'while alice looks elsewhere');
    await until(page, 'the server unread', () => hasClass(page, `#server-list .rail-entry:has(button[data-id="${serverId}"])`, 'unread'));
    await rail(page).locator('.badge-count').waitFor(); // the mention in #quiet is still unread
    await page.locator(`#server-list button[data-id="${serverId}"]`).click({ button: 'right' });
    await page.locator('#place-menu').getByRole('menuitem', { name: 'Mark as read' }).click();
    await until(page, 'the server read', async () => !(await hasClass(page, `#server-list .rail-entry:has(button[data-id="${serverId}"])`, 'unread')));
    await rail(page).locator('.badge-count').waitFor({ state: 'detached' });
    await rail(phone.page).locator('.badge-count').waitFor({ state: 'detached' });
    const states = (await must(aliceApi.get('/api/servers'), 200)).body.find((s: { id: string }) => s.id === serverId);
    t.equal(states.unread, false, 'the server says the server is read');
    t.pass("no unread dot nor mention badge, on both of alice's pages");
  });

  await step('a copied message link opens the message, highlighted, for a member', async (t) => {
    const { page } = alice;
    await page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await page.locator('#channel-list button', { hasText: 'general' }).click();
    const target = message(page, 'a marker: quiet chatter has arrived');
    await target.hover();
    await target.getByRole('button', { name: 'More actions' }).click();
    await page.locator('#message-menu').getByRole('menuitem', { name: 'Copy link' }).click();
    await page.locator('#toast', { hasText: 'Copied.' }).waitFor();
    const copied = await page.evaluate(readClipboard);
    const markerId = await target.getAttribute('data-id');
    t.equal(copied, `${server.url}/channels/${serverId}/${generalId}/${markerId}`, "Copy link copies the message's address");

    // An old message, far from the newest page: its room opens around it.
    link = `${server.url}/channels/${serverId}/${generalId}/${linkedId}`;
    // The highlight lasts 3 s: on a busy machine it can come and go before a check looks, so
    // the page keeps a note of every message it highlighted.
    await bob.page.addInitScript({
      content: `window.flashed = [];
        new MutationObserver((changes) => {
          for (const change of changes) if (change.target.classList.contains('flash') && change.target.dataset.id) window.flashed.push(change.target.dataset.id);
        }).observe(document, { subtree: true, attributes: true, attributeFilter: ['class'] });`,
    });
    // A function, not a string: the page's CSP forbids evaluating strings.
    const highlighted = (id: string) =>
      bob.page.waitForFunction((want) => ((globalThis as unknown as { flashed?: string[] }).flashed ?? []).includes(want), id, { timeout: 30_000 });
    await bob.page.goto(link);
    await highlighted(linkedId);
    const linked = bob.page.locator(`#messages > li.msg[data-id="${linkedId}"]`);
    t.match(await linked.textContent(), 'old message number 5', 'the linked message is shown, highlighted');
    t.ok(await linked.isVisible(), 'and in view');
    await bob.page.goto(copied);
    await highlighted(markerId!);
    t.pass('the copied link opens its message for another member');
  });

  await step('an outsider, or a member with a link to no message, reads "You cannot see this message"', async (t) => {
    await carol.page.goto(link);
    await carol.page.locator('#toast', { hasText: 'You cannot see this message' }).waitFor();
    t.equal(await carol.page.locator('#messages li.msg').count(), 0, 'nothing of the message shows');
    // A message id that names nothing: the same words (the 404 it gets is expected).
    EXPECTED_REFUSALS.push([404, `/api/servers/${serverId}/channels/${generalId}/messages`]);
    await bob.page.goto(`${server.url}/channels/${serverId}/${generalId}/00000000-0000-4000-8000-000000000000`);
    await bob.page.locator('#toast', { hasText: 'You cannot see this message' }).waitFor();
    t.pass('the same words whether or not the message exists');
  });

  closeScene(t, scene);
});
