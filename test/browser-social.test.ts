import t from 'tap';
import { SKIP, bookClub, closeScene, gradientPng, message, openChannel, openScene, post, send, shot, signIn, until } from './helpers/browser';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * People end to end through the system Chromium under the page CSP: friend requests and direct
 * messages arriving live, desktop notifications, display names and pictures, blocking, pins and
 * the edit history, group chats. Alice and Bob, each in a browser of their own, share a server;
 * Dave uses the API only. Machines without /usr/bin/chromium skip this.
 */
const PNG = gradientPng(160, 100);

t.test('friends, direct messages, names, blocks, pins and groups work in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  const daveName = uniqueName('dave');
  const daveShown = 'Dávid the Diver';
  const scene = await openScene(t, 'browser-social', [{ name: 'alice' }, { name: 'bob' }]);
  const { server, step } = scene;
  const [alice, bob] = scene.windows;
  let dave: Client;
  let serverId = '';
  let generalId = '';
  let inviteUrl = '';

  await step("(set-up) alice's server, where she asked bob something and bob corrected a typo; both read #general", async () => {
    const [aliceApi, bobApi] = await Promise.all([signIn(scene, alice, aliceName), signIn(scene, bob, bobName)]);
    const club = await bookClub(aliceApi, [bobApi]);
    ({ serverId, generalId } = club);
    inviteUrl = `${server.url}/invites/${club.token}`;
    await post(aliceApi, serverId, generalId, 'are you there, bob?');
    const typo = await post(bobApi, serverId, generalId, 'a typo hree');
    await must(bobApi.put(`/api/servers/${serverId}/channels/${generalId}/messages/${typo.id}`, { content: 'a typo fixed' }), 200);
    await Promise.all(
      [alice, bob].map(async (w) => {
        await openChannel(w, server.url, serverId, generalId, 'general');
        await message(w.page, 'a typo fixed').waitFor();
      }),
    );
  });

  await step('issue 16: a friend request and a DM arrive live with badges; reading clears them; presence dots', async (t) => {
    await alice.page.click('#home-button');
    await alice.page.fill('#friend-name', bobName);
    await alice.page.click('#friend-form button[type=submit]');
    await alice.page.locator('#request-list li', { hasText: 'request sent' }).waitFor();
    await bob.page.locator('#home-button').click();
    await bob.page.locator('#request-badge', { hasText: '1' }).waitFor();
    t.pass("the request shows up live on bob's Friends badge");
    const request = bob.page.locator('#request-list li', { hasText: aliceName });
    await request.getByRole('button', { name: 'Accept' }).click();
    const friend = bob.page.locator('#friend-list li', { hasText: aliceName });
    await friend.locator('.presence.online').waitFor();
    t.pass('the new friend is listed with a green presence dot');
    await shot(bob.page, 'friends');
    // Bob goes back to the server; Alice writes to him.
    await bob.page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await alice.page.locator('#friend-list li', { hasText: bobName }).getByRole('button', { name: 'Message' }).click();
    await alice.page.locator('#room-title', { hasText: bobName }).waitFor();
    await send(alice.page, 'psst, in private');
    const dmBadge = bob.page.locator('#home-button ~ .badge-count', { hasText: '1' });
    await dmBadge.waitFor();
    await until(bob.page, 'the DM in the title', async () => (await bob.page.title()).startsWith('(1) '));
    t.pass('the DM shows a badge on the home button and in the title');
    await bob.page.click('#home-button');
    const dm = bob.page.locator('#conversation-list li').first();
    t.match(await dm.textContent(), aliceName, 'the DM is first in the list');
    await dm.locator('.badge-count', { hasText: '1' }).waitFor();
    await dm.locator('button').click();
    await message(bob.page, 'psst, in private').waitFor();
    await dmBadge.waitFor({ state: 'detached' });
    await until(bob.page, 'the title without a count', async () => !(await bob.page.title()).startsWith('('));
    t.pass('reading the DM clears its badge and the title count');
  });

  await step('desktop notifications are asked for on a click only, and shown for DMs while the tab is hidden', async (t) => {
    const { page } = bob;
    t.equal(await page.evaluate(() => (globalThis as any).Notification.permission), 'default', 'nothing was asked on load');
    await page.click('#me-button');
    const enable = page.getByRole('menuitem', { name: 'Enable desktop notifications' });
    await enable.waitFor();
    // The person says yes to the browser's question.
    await bob.context.grantPermissions(['notifications'], { origin: server.url });
    await enable.click();
    await page.locator('#toast', { hasText: 'Desktop notifications are on' }).waitFor();
    // Pretend the tab is hidden, and record notifications instead of showing them.
    await page.evaluate(() => {
      const w = globalThis as any;
      class Recorder {
        static permission = 'granted';
        constructor(title: string) {
          w.document.body.dataset.notified = title;
        }
        addEventListener() {}
        close() {}
      }
      w.Notification = Recorder;
      Object.defineProperty(w.document, 'hidden', { get: () => true, configurable: true });
    });
    await alice.page.click('#home-button');
    await alice.page.locator('#conversation-list button', { hasText: bobName }).click();
    await send(alice.page, 'ping while away');
    await until(page, 'a notification', async () => ((await page.locator('body').getAttribute('data-notified')) ?? '').includes(aliceName));
    t.pass('a DM while the tab is hidden raises a desktop notification');
    await page.evaluate(() => {
      delete (globalThis as any).document.hidden;
    });
  });

  await step('(set-up) bob goes back to the server', async () => {
    await bob.page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await bob.page.locator('#channel-list button', { hasText: 'general' }).waitFor();
  });

  await step('display names and pictures show wherever a user is named, live on user_updated', async (t) => {
    dave = await signUp(server.url, daveName);
    const token = inviteUrl.split('/invites/')[1];
    t.equal((await dave.post(`/api/invites/${token}/accept`)).status, 200, 'dave joins the server');
    t.equal((await dave.post(`/api/servers/${serverId}/channels/${generalId}/messages`, { content: 'dave says hi' })).status, 201);
    const { page } = bob;
    await page.locator('#channel-list button', { hasText: 'general' }).click();
    const daves = message(page, 'dave says hi');
    await daves.waitFor();
    t.equal(await daves.locator('.author').textContent(), daveName, 'without a display name, the username');

    t.equal((await dave.request('PATCH', '/api/account', { display_name: daveShown })).status, 200);
    const form = new FormData();
    form.append('avatar', new Blob([PNG], { type: 'image/png' }), 'me.png');
    t.equal((await dave.put('/api/account/avatar', form)).status, 200);
    await daves.locator('.author', { hasText: daveShown }).waitFor();
    t.equal(await daves.locator('.author').getAttribute('title'), `@${daveName}`, 'the new name shows live, the username on hover');
    await daves.locator('.msg-gutter img.avatar[src^="/avatars/"]').waitFor();
    t.equal(await daves.locator('.msg-gutter img.avatar[src^="/avatars/"]').count(), 1, 'and the new picture');
    await page.locator('#members .member-name', { hasText: daveShown }).waitFor();
    t.equal(
      await page.locator('#members .member-button', { hasText: daveShown }).locator('img.avatar').count(),
      1,
      'the member list follows: name and picture',
    );
  });

  await step('issue 18: blocking a user collapses their messages behind "show"', async (t) => {
    const { page } = bob;
    await message(page, 'dave says hi').locator('.author').click();
    await page.locator('#member-menu').getByRole('menuitem', { name: 'Block' }).click();
    await page.locator('#ask-dialog[open]', { hasText: `Block ${daveShown}?` }).waitFor();
    await page.click('#ask-submit');
    await page.locator('#toast', { hasText: 'is blocked' }).waitFor();
    const hidden = page.locator('#messages > li.blocked-msg');
    await hidden.waitFor();
    t.equal(await message(page, 'dave says hi').count(), 0, "the blocked user's message is collapsed");
    t.match(await hidden.textContent(), 'Blocked message', 'and says so');
    await hidden.getByRole('button', { name: /Show the blocked message/ }).click();
    await message(page, 'dave says hi').waitFor();
    t.equal(await page.locator('#messages > li.blocked-msg').count(), 0, 'a click shows it');
    await page.click('#home-button');
    await page.locator('#blocked-list li', { hasText: daveShown }).waitFor();
    t.ok(await page.isVisible('#blocked-section'), 'Friends lists the blocked user, with Unblock');
    await page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await page.locator('#room-title', { hasText: 'general' }).waitFor();
  });

  await step('(set-up) alice goes back to the server', async () => {
    await alice.page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await alice.page.locator('#channel-list button', { hasText: 'general' }).waitFor();
  });

  await step('issue 18: pins panel, and the edit history of an edited message', async (t) => {
    const { page } = alice;
    await page.locator('#channel-list button', { hasText: 'general' }).click();
    await message(page, 'dave says hi').waitFor();
    t.equal(await page.locator('#messages > li.blocked-msg').count(), 0, 'a block collapses messages for the blocker only');
    const target = message(page, 'are you there, bob?');
    await target.getByRole('button', { name: 'More actions' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#message-menu').getByRole('menuitem', { name: 'Pin' }).click();
    // (Focus is back on its "…" button, so the gutter shows the time there instead of the pin.)
    await target.locator('.pinned-mark').waitFor({ state: 'attached' });
    t.match(await target.getAttribute('aria-label'), 'pinned', 'the message says it is pinned');
    await message(bob.page, 'are you there, bob?').locator('.pinned-mark').waitFor();
    t.ok(await message(bob.page, 'are you there, bob?').evaluate((node: any) => node.classList.contains('pinned')), 'bob sees the pin live');
    await page.click('#pins-button');
    const pins = page.locator('#pins-panel');
    await pins.locator('.pin', { hasText: 'are you there, bob?' }).waitFor();
    t.equal(await pins.locator('.pin').count(), 1, 'the pins panel lists the pinned message');
    await shot(page, 'pins');
    await page.keyboard.press('Escape');
    await pins.waitFor({ state: 'hidden' });
    t.notOk(await pins.isVisible(), 'Escape closes the pins panel');

    // Bob's edited message: the owner reads every version from "(edited)".
    const edited = message(page, 'a typo fixed');
    await edited.getByRole('button', { name: '(edited)' }).click();
    const history = page.locator('#history-dialog[open]');
    await history.waitFor();
    const versions = await history.locator('.version-text').allTextContents();
    t.same(versions, ['a typo hree', 'a typo fixed'], 'the edit history lists the original, then the current text');
    t.match(await history.locator('.version.current').textContent(), 'current', 'the current version is marked');
    await page.keyboard.press('Escape');
    await history.waitFor({ state: 'hidden' });
  });

  await step('issue 18: group chats: rename live for the others, and leave', async (t) => {
    const { page } = alice;
    await page.click('#home-button');
    await page.click('#new-group');
    await page.fill('#group-name', 'Readers');
    await page.locator('#group-friends label', { hasText: bobName }).click();
    await page.click('#group-dialog button[type=submit]');
    await page.locator('#room-title', { hasText: 'Readers' }).waitFor();
    await page.click('#room-menu-button');
    await page.locator('#group-menu').getByRole('menuitem', { name: 'Rename group' }).click();
    await page.fill('#form-name', 'Book readers');
    await page.click('#form-submit');
    await page.locator('#room-title', { hasText: 'Book readers' }).waitFor();
    await bob.page.click('#home-button');
    await bob.page.locator('#conversation-list button', { hasText: 'Book readers' }).waitFor();
    t.equal(await bob.page.locator('#conversation-list button', { hasText: /^Readers/ }).count(), 0, 'bob sees the new name live');
    await page.click('#room-menu-button');
    await page.locator('#group-menu').getByRole('menuitem', { name: 'Leave group' }).click();
    await page.locator('#ask-dialog[open]', { hasText: 'Leave Book readers?' }).waitFor();
    await page.click('#ask-submit');
    await page.locator('#conversation-list button', { hasText: 'Book readers' }).waitFor({ state: 'detached' });
    t.equal(await page.locator('#conversation-list button', { hasText: 'Book readers' }).count(), 0, 'leaving takes the group away');
    await bob.page.locator('#conversation-list button', { hasText: 'Book readers' }).click();
    await bob.page.locator('#room-sub', { hasText: bobName }).waitFor();
    await until(bob.page, 'alice gone from the group', async () => !((await bob.page.textContent('#room-sub')) ?? '').includes(aliceName));
    t.notMatch(await bob.page.textContent('#room-sub'), aliceName, "bob's group no longer lists alice");
  });

  closeScene(t, scene);
});
