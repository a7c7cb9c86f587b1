import t from 'tap';
import type { Page } from 'playwright-core';
import { SKIP, addChannel, bookClub, closeScene, message, openChannel, openScene, post, signIn, until } from './helpers/browser';
import { signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Issue 46: a room is an instance. The app's main room is made by createRoom(root) and its
 * composer by createComposer(root, room); a second room (what a thread pane or a voice channel's
 * chat will be) is made the same way, from the same modules, in a copy of the room's elements
 * the test puts beside the main one. Each room shows its own channel, follows the stream for it
 * alone, keeps its own reply and typing line, and its composer writes to it; closing one leaves
 * the other live. Alice reads in Chromium under the page CSP; Bob writes through the API.
 * Machines without /usr/bin/chromium skip this.
 */

/** The second room's elements, the copy the test made. */
const SECOND = '[data-test="second-room"]';

/**
 * Makes the second room in the page, from the very modules the page loaded (the same URLs, so one
 * store). A string, not a function: the test's compiler would turn a function's import() into a
 * require() the page does not have.
 */
const mountSecondRoom = (page: Page, serverId: string, channelId: string) =>
  page.evaluate(`(async () => {
    const base = document.querySelector('script[type="module"]').src; // /a/<version>/js/home.js
    const [{ createRoom }, { createComposer }] = await Promise.all([import(new URL('room.js', base).href), import(new URL('composer.js', base).href)]);
    const main = document.querySelector('#room .room-main');
    const root = main.cloneNode(true);
    for (const node of root.querySelectorAll('[id]')) node.removeAttribute('id');
    for (const node of root.querySelectorAll('label[for]')) node.removeAttribute('for');
    root.querySelector('[data-part="messages"]').replaceChildren();
    root.setAttribute('data-test', 'second-room');
    main.after(root);
    const room = createRoom(root);
    const composer = createComposer(root, room);
    composer.restoreDraft(room.open({ kind: 'channel', serverId: ${JSON.stringify(serverId)}, channelId: ${JSON.stringify(channelId)} }));
    globalThis.secondRoom = { room, composer, root };
  })()`);

t.test('a second room and composer run beside the main one, each with its own channel', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-rooms', [{ name: 'alice' }]);
  const { server, step } = scene;
  const [alice] = scene.windows;
  const { page } = alice;
  const mainList = page.locator('#messages');
  const second = page.locator(SECOND);
  const secondList = second.locator('[data-part="messages"]');
  let serverId = '';
  let generalId = '';
  let loungeId = '';
  let bobApi: Awaited<ReturnType<typeof signUp>>;
  const lounge = () => `/api/servers/${serverId}/channels/${loungeId}`;

  await step('(set-up) Book club with #general and #lounge, one message in each; alice opens #general', async () => {
    const aliceApi = await signIn(scene, alice, uniqueName('alice'));
    bobApi = await signUp(server.url, uniqueName('bob'));
    ({ serverId, generalId } = await bookClub(aliceApi, [bobApi]));
    loungeId = await addChannel(aliceApi, serverId, 'lounge');
    await post(bobApi, serverId, generalId, 'said in general');
    await post(bobApi, serverId, loungeId, 'said in the lounge');
    await openChannel(alice, server.url, serverId, generalId, 'general');
    await message(page, 'said in general').waitFor();
  });

  await step('createRoom() on a copy of the elements: the second room shows #lounge, the main one still #general', async (t) => {
    await mountSecondRoom(page, serverId, loungeId);
    await secondList.locator('li.msg', { hasText: 'said in the lounge' }).waitFor();
    t.equal(await mainList.locator('li.msg', { hasText: 'said in the lounge' }).count(), 0, 'the main room does not show the lounge');
    t.equal(await secondList.locator('li.msg', { hasText: 'said in general' }).count(), 0, 'the second room does not show #general');
    t.equal(await second.locator('[data-part="composer-text"]').getAttribute('placeholder'), 'Message #lounge', 'its composer is for #lounge');
    t.equal(await page.getAttribute('#composer-text', 'placeholder'), 'Message #general', 'the main composer is still for #general');
  });

  await step("the second composer writes to its own room's channel", async (t) => {
    const area = second.locator('[data-part="composer-text"]');
    await area.fill('written in the second room');
    await area.press('Enter');
    await secondList.locator('li.msg', { hasText: 'written in the second room' }).waitFor();
    const inLounge = (await must(bobApi.get(`${lounge()}/messages`), 200)).body as { content: string }[];
    t.ok(
      inLounge.some((m) => m.content === 'written in the second room'),
      'the server has it in #lounge',
    );
    const inGeneral = (await must(bobApi.get(`/api/servers/${serverId}/channels/${generalId}/messages`), 200)).body as { content: string }[];
    t.notOk(
      inGeneral.some((m) => m.content === 'written in the second room'),
      'and not in #general',
    );
    t.equal(await mainList.locator('li.msg', { hasText: 'written in the second room' }).count(), 0, 'the main room does not show it');
    t.equal(await page.inputValue('#composer-text'), '', "the main composer's text is untouched");
  });

  await step('the stream feeds each room its own channel: messages and the typing line', async (t) => {
    await post(bobApi, serverId, loungeId, 'live in the lounge');
    await post(bobApi, serverId, generalId, 'live in general');
    await secondList.locator('li.msg', { hasText: 'live in the lounge' }).waitFor();
    await message(page, 'live in general').waitFor();
    t.equal(await secondList.locator('li.msg', { hasText: 'live in general' }).count(), 0, 'the second room shows only its channel');
    t.equal(await mainList.locator('li.msg', { hasText: 'live in the lounge' }).count(), 0, 'and the main room only its own');
    const loungeUnread = page.locator('#channel-list button.unread', { hasText: 'lounge' });
    await until(page, 'the second room to mark #lounge read', async () => (await loungeUnread.count()) === 0);
    await must(bobApi.post(`${lounge()}/typing`), 204);
    await second.locator('[data-part="typing-line"]', { hasText: 'is typing' }).waitFor();
    t.equal(await page.textContent('#typing-line'), '', "the main room's typing line stays empty");
  });

  await step("a reply belongs to the room it was started in: R on the second room's message, sent from its composer", async (t) => {
    const target = secondList.locator('li.msg', { hasText: 'live in the lounge' });
    await target.focus();
    await page.keyboard.press('r');
    const bar = second.locator('[data-part="reply-bar"]');
    await bar.waitFor();
    t.match(await bar.textContent(), 'live in the lounge', "the second composer's reply bar names the message");
    t.ok(await page.isHidden('#reply-bar'), "the main composer's reply bar stays hidden");
    const area = second.locator('[data-part="composer-text"]');
    await area.fill('a reply in the lounge');
    await area.press('Enter');
    await secondList.locator('li.msg', { hasText: 'a reply in the lounge' }).waitFor();
    const inLounge = (await must(bobApi.get(`${lounge()}/messages`), 200)).body as { id: string; content: string; reply_to: string | null }[];
    const replied = inLounge.find((m) => m.content === 'live in the lounge')!;
    t.equal(inLounge.find((m) => m.content === 'a reply in the lounge')?.reply_to, replied.id, 'the server has it as a reply to that message');
  });

  await step('destroyed, the second room stops following the stream; the main one goes on', async (t) => {
    await page.evaluate(() => {
      const { room, composer, root } = (globalThis as any).secondRoom;
      room.destroy();
      composer.destroy();
      root.remove();
    });
    await post(bobApi, serverId, loungeId, 'after the second room went');
    await post(bobApi, serverId, generalId, 'general goes on');
    await message(page, 'general goes on').waitFor();
    await until(
      page,
      'the lounge to count as unread again',
      async () => (await page.locator('#channel-list button.unread', { hasText: 'lounge' }).count()) === 1,
    );
    t.equal(await page.locator(SECOND).count(), 0, 'the copy is gone');
  });

  closeScene(t, scene);
});
