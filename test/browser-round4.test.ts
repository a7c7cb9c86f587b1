import fs from 'node:fs';
import path from 'node:path';
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
  shotsAtBothWidths,
  signIn,
  until,
} from './helpers/browser';
import { type Client, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Issue 47, the fourth newcomer review's defects in the chat app, each step failing before its
 * fix, in the system Chromium under the page CSP: role mentions drawn, counted live and notified
 * (#3), mentions by display name (#13), the copied message link as the docs say (#16), losing
 * access said neutrally (#4), Report server only where one is not the owner (#15), one empty state
 * and one notice in a read-only channel (#9), Members with no roles (#10), the role colour (#11),
 * Export server (#8), ... Each
 * fixed screen is shot at desktop and phone width. (#1 is in browser-restart, #2, #6, #7, #13's
 * BOT tag and #14 in browser-import, #17 in browser-a11y, the page weight in browser-pages.)
 */

/** What bob's page records instead of showing a notification, and whether it pretends to be hidden. */
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

t.test("the fourth newcomer review's defects in the app, fixed", { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-round4', [{ name: 'alice' }, { name: 'bob' }, { name: 'carol', phone: true }]);
  const { server, step } = scene;
  const [alice, bob, carol] = scene.windows;
  let aliceApi: Client;
  let bobApi: Client;
  let carolApi: Client;
  let serverId = '';
  let generalId = '';
  let supportId = '';

  const shots = (page: Page, name: string, onPhone?: () => Promise<void>) => shotsAtBothWidths(page, `round4-${name}`, onPhone);
  const channelButton = (page: Page, id: string) => page.locator(`#channel-list button.channel[data-id="${id}"]`);

  await step('(set-up) alice owns a server with #general and #support; bob holds the mentionable role Helpers and is notified of @mentions only', async () => {
    [aliceApi, bobApi, carolApi] = await Promise.all([
      signIn(scene, alice, uniqueName('alice')),
      signIn(scene, bob, uniqueName('bob')),
      signIn(scene, carol, uniqueName('carol')),
    ]);
    ({ serverId, generalId } = await bookClub(aliceApi, [bobApi, carolApi]));
    supportId = await addChannel(aliceApi, serverId, 'support');
    // A pale yellow, as Discord's palette has: unreadable on white as it is.
    await must(aliceApi.post(`/api/servers/${serverId}/roles`, { name: 'Helpers', mentionable: true, color: 0xf1c40f }), 201);
    await must(aliceApi.put(`/api/servers/${serverId}/members/${bobApi.userId}/role`, { role: 'Helpers' }), 200);
    await must(bobApi.put(`/api/account/notifications/${serverId}`, { level: 'mentions', muted_until: null }), 200);
    await must(aliceApi.request('PATCH', '/api/account', { display_name: 'Alice Liddell' }), 200);
    // Bob's page records notifications instead of showing them, and is hidden when the test says so.
    await bob.context.addInitScript(() => {
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
    await openChannel(alice, server.url, serverId, generalId, 'general');
    // Bob is on Friends: his page has not loaded this server's member list.
    await bob.page.goto(`${server.url}/?view=friends`);
    await bob.page.locator('#people-view').waitFor();
  });

  await step('#3: a role mention counts live for its holder, notifies at "Only @mentions", and shows in the role\'s colour, tinting the message', async (t) => {
    const { page } = bob;
    const rail = page.locator(`#server-list .rail-entry:has(button[data-id="${serverId}"])`);
    await post(aliceApi, serverId, supportId, '@Helpers can someone look at the printer?');
    await rail.locator('.badge-count', { hasText: '1' }).waitFor();
    t.pass('the server counts the role mention on the rail, live, with its member list never loaded');
    await setHidden(page, true);
    await post(aliceApi, serverId, generalId, 'an ordinary line nobody is named in');
    await post(aliceApi, serverId, generalId, '@Helpers and one more in general');
    await until(page, 'a notification of the role mention', async () => (await notified(page)).some((n) => n.includes('@Helpers and one more')));
    t.notOk(
      (await notified(page)).some((n) => n.includes('an ordinary line')),
      'at "Only @mentions", the ordinary line notified nothing and the role mention did',
    );
    await setHidden(page, false);
    await rail.locator('button').click();
    await channelButton(page, supportId).locator('.badge-count', { hasText: '1' }).waitFor();
    await channelButton(page, supportId).click();
    const pill = message(page, 'can someone look').locator('.mention', { hasText: '@Helpers' });
    await pill.waitFor();
    t.ok(
      await pill.evaluate((n) => n.classList.contains('role-colored') && n.classList.contains('held')),
      "the role mention is a pill in the role's colour, marked as held",
    );
    const colour = await pill.evaluate((n) => (globalThis as any).getComputedStyle(n).color);
    t.not(colour, 'rgb(241, 196, 15)', `drawn with a contrast floor (${colour}), not the pale yellow as it is`);
    t.ok(await message(page, 'can someone look').evaluate((n) => n.classList.contains('mentions-me')), 'the message is tinted for the holder');
    await shots(page, 'role-mention');
    // Alice holds no such role: the same pill, not held, the message not tinted.
    await openChannel(alice, server.url, serverId, supportId, 'support');
    const hers = message(alice.page, 'can someone look');
    await hers.locator('.mention.role-colored', { hasText: '@Helpers' }).waitFor();
    t.notOk(await hers.evaluate((n) => n.classList.contains('mentions-me')), 'not tinted for who does not hold the role');
  });

  await step('#13: a mention of a person shows their display name, @username on hover', async (t) => {
    const aliceName = (await must(aliceApi.get('/api/account'), 200)).body.username;
    await post(bobApi, serverId, supportId, `@${aliceName} the printer is fixed`);
    const { page } = bob;
    const named = message(page, 'the printer is fixed').locator('.mention');
    await named.waitFor();
    t.equal(await named.textContent(), '@Alice Liddell', 'the display name, as Discord shows a mention');
    t.equal(await named.getAttribute('title'), `@${aliceName}`, 'and the username on hover');
    const mine = message(alice.page, 'the printer is fixed').locator('.mention.me');
    await mine.waitFor();
    t.equal(await mine.textContent(), '@Alice Liddell', 'on her own page too, marked as her');
  });

  await step("#16: Copy link copies the message's address in the shape docs/ui.md gives", async (t) => {
    const { page } = alice;
    await alice.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const target = message(page, 'the printer is fixed');
    await target.hover();
    await target.getByRole('button', { name: 'More actions' }).click();
    await page.locator('#message-menu').getByRole('menuitem', { name: 'Copy link' }).click();
    await page.locator('#toast', { hasText: 'Copied.' }).waitFor();
    const copied = await page.evaluate(readClipboard);
    const ui = fs.readFileSync(path.join(__dirname, '..', 'docs', 'ui.md'), 'utf8');
    const section = ui.slice(ui.indexOf('### Message links'));
    const documented = /\*\*Copy link\*\* \(a message's More menu\) copies `<origin>([^`]+)`/.exec(section)?.[1];
    t.ok(documented, 'docs/ui.md says what Copy link copies');
    const shape = new RegExp(`^${server.url}${documented!.replace(/<[^>]+>/g, '[0-9a-f-]{36}').replace(/[?]/g, '\\?')}$`);
    t.match(copied, shape, `what the page copies (${copied}) has the documented shape (${documented})`);
  });

  await step('#4: losing access to the open channel says so by its name, neutrally, at desktop and phone width', async (t) => {
    await openChannel(bob, server.url, serverId, supportId, 'support');
    await openChannel(carol, server.url, serverId, supportId, 'support');
    // A read mark still on its way when access goes gets a 404: expected.
    EXPECTED_REFUSALS.push([404, `/api/servers/${serverId}/channels/${supportId}/read`]);
    await must(aliceApi.put(`/api/servers/${serverId}/channels/${supportId}/overwrites/${serverId}`, { deny: ['view_channel'] }), 200);
    for (const { page } of [bob, carol]) {
      const said = page.locator('#toast', { hasText: 'You no longer have access to #support.' });
      await said.waitFor();
      t.notOk(await said.evaluate((n) => n.classList.contains('error')), 'not an error');
      const colours = await said.evaluate((n) => {
        const style = (globalThis as any).getComputedStyle(n);
        return [style.color, style.backgroundColor];
      });
      const body = await page.evaluate(() => {
        const style = (globalThis as any).getComputedStyle((globalThis as any).document.body);
        return [style.color, style.backgroundColor];
      });
      t.same(colours, body, "drawn in the page's own colours, not the success green");
      await page.locator('#room-title', { hasText: 'general' }).waitFor();
    }
    await shots(carol.page, 'lost-access');
    await must(aliceApi.request('DELETE', `/api/servers/${serverId}/channels/${supportId}/overwrites/${serverId}`), 204);
  });

  await step('#15: "Report server" is offered on servers one does not own, not on one\'s own', async (t) => {
    const menuItems = async (page: Page) => {
      await page.click('#server-menu-button');
      await page.locator('#server-menu').waitFor();
      const items = await page.locator('#server-menu [role="menuitem"]').allTextContents();
      await page.keyboard.press('Escape');
      return items;
    };
    await openChannel(alice, server.url, serverId, generalId, 'general');
    t.notOk(
      (await menuItems(alice.page)).some((i) => i.includes('Report server')),
      'the owner is not offered it',
    );
    await openChannel(bob, server.url, serverId, generalId, 'general');
    t.ok(
      (await menuItems(bob.page)).some((i) => i.includes('Report server')),
      'a member is',
    );
  });

  await step('#9: an empty read-only channel shows readers one empty state and one notice, at desktop and phone width', async (t) => {
    const rulesId = await addChannel(aliceApi, serverId, 'rules');
    await must(aliceApi.put(`/api/servers/${serverId}/channels/${rulesId}/overwrites/${serverId}`, { deny: ['send_messages'] }), 200);
    for (const w of [bob, carol]) {
      await openChannel(w, server.url, serverId, rulesId, 'rules');
      const { page } = w;
      await page.locator('#room-empty:not([hidden])').waitFor();
      t.equal(await page.locator('#room-empty [data-part="room-empty-text"]').textContent(), 'Nothing has been posted here yet.', `${w.name}: no "Say hello"`);
      await page.locator('#composer-text[disabled]').waitFor();
      t.equal(
        await page.getAttribute('#composer-text', 'placeholder'),
        'This channel is read-only for you: you can read it, not write in it.',
        `${w.name}: the one notice`,
      );
      t.ok(await page.locator('#composer-notice').isHidden(), `${w.name}: no second notice above the composer`);
    }
    await shots(bob.page, 'read-only-empty');
    // Alice may write there: she is asked to say hello.
    await openChannel(alice, server.url, serverId, rulesId, 'rules');
    await alice.page.locator('#room-empty:not([hidden])', { hasText: 'Say hello' }).waitFor();
  });

  const openSettingsTab = async (page: Page, tab: string) => {
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.locator('#settings-dialog[open]').waitFor();
    await page.click(`#settings-tab-${tab}`);
  };

  await step("#11: a role's colour is picked from swatches (or none, or any), and the flags' note heads their list", async (t) => {
    const { page } = alice;
    await openSettingsTab(page, 'roles');
    await page.getByRole('button', { name: 'Edit role Helpers' }).click();
    await page.locator('#form-dialog[open]').waitFor();
    t.equal(await page.locator('#form-dialog input#form-color').getAttribute('type'), 'color', 'a colour picker, not a text field');
    t.equal(
      await page.locator('#form-dialog .swatch[aria-pressed="true"]').getAttribute('aria-label'),
      'Colour #f1c40f',
      "the role's colour is the pressed swatch",
    );
    const order = await page
      .locator('#form-fields > *')
      .evaluateAll((nodes) => nodes.map((n) => (n.classList.contains('field-note') ? 'note' : n.querySelector('input')?.id)));
    const note = order.indexOf('note');
    t.ok(note > 0 && order[note + 1] === 'form-view_channel', 'the note stands alone above the first flag');
    t.equal(await page.locator('#form-fields .field-hint').count(), 0, 'not beside a checkbox');
    await shots(page, 'role-colour');
    await page.getByRole('button', { name: 'Colour #3498db' }).click();
    await page.click('#form-submit');
    await page.locator('#toast', { hasText: 'Role saved.' }).waitFor();
    const helpers = (await aliceApi.get(`/api/servers/${serverId}/roles`)).body.find((r: { name: string }) => r.name === 'Helpers');
    t.equal(helpers.color, 0x3498db, 'the swatch is saved');
    await page.getByRole('button', { name: 'Edit role Helpers' }).click();
    t.equal(await page.locator('#form-dialog .swatch[aria-pressed="true"]').getAttribute('aria-label'), 'Colour #3498db', 'shown again as saved');
    await page.getByRole('button', { name: 'No colour' }).click();
    await page.click('#form-submit');
    const colour = async () => (await aliceApi.get(`/api/servers/${serverId}/roles`)).body.find((r: { name: string }) => r.name === 'Helpers').color;
    await until(page, 'the colour cleared', async () => (await colour()) === null);
    t.pass('"No colour" clears it');
    await page.click('#settings-close');
  });

  await step('#10: Members on a server with no roles says there are none yet and where to make one', async (t) => {
    const quiet = (await must(aliceApi.post('/api/servers', { name: 'Quiet Club' }), 201)).body;
    const { page } = alice;
    await page.goto(`${server.url}/?server=${quiet.id}`);
    await page.locator('#sidebar-title', { hasText: 'Quiet Club' }).waitFor();
    await openSettingsTab(page, 'members');
    const said = page.locator('#members-no-roles:not([hidden])');
    await said.waitFor();
    t.match(await said.textContent(), 'no roles yet', 'it says so once');
    t.equal(await page.locator('#settings-dialog', { hasText: 'Holds every role' }).count(), 0, 'not "Holds every role"');
    await shots(page, 'members-no-roles');
    await said.getByRole('button', { name: 'Roles' }).click();
    await page.locator('#settings-tab-roles[aria-selected="true"]').waitFor();
    t.pass('its button opens Roles');
    await page.click('#settings-close');
  });

  await step(
    '#12: pushes offered from the app: once after a first mention (phone), and in the status menu; failures in plain words, within a time limit',
    async (t) => {
      // Headless Chromium has no push service: its subscribe is made to hang (carol), then to fail as browsers do (bob).
      for (const w of [bob, carol]) {
        await w.context.grantPermissions(['notifications'], { origin: server.url });
        await w.context.addInitScript(() => {
          const g = globalThis as unknown as {
            pushWill: string;
            PushManager: { prototype: { subscribe: () => Promise<unknown> } };
            DOMException: new (m: string, n: string) => Error;
          };
          g.pushWill = 'hang';
          g.PushManager.prototype.subscribe = () =>
            g.pushWill === 'hang' ? new Promise(() => {}) : Promise.reject(new g.DOMException('Registration failed - push service error', 'AbortError'));
        });
      }
      const carolName = (await must(carolApi.get('/api/account'), 200)).body.username;
      await openChannel(carol, server.url, serverId, generalId, 'general');
      await post(aliceApi, serverId, generalId, `@${carolName} did you see the schedule?`);
      const offer = carol.page.locator('#push-offer');
      await offer.waitFor();
      t.match(await offer.textContent(), 'You were mentioned. Be notified on this device', 'the first mention offers pushes');
      await shots(carol.page, 'push-offer');
      await offer.getByRole('button', { name: 'Turn on' }).click();
      const late = carol.page.locator('#toast.error', { hasText: 'did not answer within 20 seconds' });
      await late.waitFor({ timeout: 40_000 });
      t.pass('a hanging push service ends, in words');
      await post(aliceApi, serverId, generalId, `@${carolName} and again`);
      await message(carol.page, 'and again').waitFor();
      await carol.page.waitForTimeout(300);
      t.equal(await offer.count(), 0, 'offered once only');

      const { page } = bob;
      await openChannel(bob, server.url, serverId, generalId, 'general');
      await page.evaluate(() => {
        (globalThis as unknown as { pushWill: string }).pushWill = 'fail';
      });
      await page.click('#me-button');
      await page.getByRole('menuitem', { name: 'Notify me on this device…' }).click();
      const failed = page.locator('#toast.error', { hasText: 'could not reach its push service' });
      await failed.waitFor();
      t.notMatch(await failed.textContent(), /Registration failed/, "not the browser's raw text");
    },
  );

  await step('#8: the owner exports the server from its settings, with progress; a member is not offered it', async (t) => {
    const { page } = alice;
    await openChannel(alice, server.url, serverId, generalId, 'general');
    await openSettingsTab(page, 'overview');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#server-export-button')]);
    t.match(download.suggestedFilename(), /\.zip$/, `the zip, under the server's name (${download.suggestedFilename()})`);
    const saved = await download.path();
    t.ok(saved && fs.statSync(saved).size > 100, 'with something in it');
    t.equal(fs.readFileSync(saved!).subarray(0, 2).toString(), 'PK', 'a zip file');
    await page.locator('#server-export [role="status"]', { hasText: /^Done: .*\.zip \(.+\), saved by your browser\.$/ }).waitFor();
    t.equal(await page.locator('#server-export progress').getAttribute('value'), '1', 'the bar full at the end');
    await shots(page, 'server-export');
    await page.click('#settings-close');
    await openChannel(bob, server.url, serverId, generalId, 'general');
    await openSettingsTab(bob.page, 'overview');
    t.equal(await bob.page.locator('#server-export-button').count(), 0, 'not offered to a member');
    await bob.page.click('#settings-close');
  });

  closeScene(t, scene);
});
