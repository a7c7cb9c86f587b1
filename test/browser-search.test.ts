import t from 'tap';
import { SKIP, MARKDOWN, addChannel, bookClub, closeScene, message, openChannel, openScene, post, shot, signIn } from './helpers/browser';
import { signUp, uniqueName } from './helpers/client';

/**
 * Search end to end through the system Chromium under the page CSP (issue 19): the header search
 * box, highlighted results, filters, a jump to an old message and back to the present, and the
 * results at phone width. Alice writes through the API; Bob reads on a desktop and Carol on a
 * phone (390×844 with touch, preferring dark), each in a browser of their own. Machines without
 * /usr/bin/chromium skip this.
 */
t.test('search works end to end in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  const carolName = uniqueName('carol');
  const scene = await openScene(t, 'browser-search', [{ name: 'bob' }, { name: 'carol', phone: true }]);
  const { server, step } = scene;
  const [bob, carol] = scene.windows;

  await step("(set-up) alice's server: #general with her markdown message, #archive with 60 old ones, #random; bob reads #general, carol #random", async () => {
    const aliceApi = await signUp(server.url, aliceName);
    const [bobApi, carolApi] = await Promise.all([signIn(scene, bob, bobName), signIn(scene, carol, carolName)]);
    const { serverId, generalId } = await bookClub(aliceApi, [bobApi, carolApi]);
    await post(aliceApi, serverId, generalId, 'hello from alice\nsecond line');
    await post(aliceApi, serverId, generalId, MARKDOWN);
    const archiveId = await addChannel(aliceApi, serverId, 'archive');
    for (let i = 1; i <= 60; i++) await post(aliceApi, serverId, archiveId, `old message ${i}`);
    const randomId = await addChannel(aliceApi, serverId, 'random');
    await openChannel(bob, server.url, serverId, generalId, 'general');
    await message(bob.page, 'hello from alice').waitFor();
    await openChannel(carol, server.url, serverId, randomId, 'random');
  });

  await step('issue 19: the header search box (/ and Ctrl+F), highlighted results, filters, and a jump to an old message', async (t) => {
    const { page } = bob;
    await page.locator('#message-scroll').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('/');
    t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'search-input', '/ focuses the search box');
    await page.keyboard.press('Escape');
    await page.locator('#message-scroll').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Control+f');
    t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.id), 'search-input', 'so does Ctrl+F');

    // A word from the message that holds markup: marked, and still only text.
    await page.keyboard.type('onerror');
    await page.keyboard.press('Enter');
    const results = page.locator('#search-results > li.search-result');
    await results.first().waitFor();
    t.equal(await results.count(), 1, 'one message holds the word');
    t.same(await results.locator('mark').allTextContents(), ['onerror'], 'the word found is marked');
    t.equal(await results.locator('img').count(), 0, 'the markup in the message makes no element');
    t.match(await results.locator('.result-author').textContent(), aliceName, 'the result names the author');
    t.match(await results.locator('.result-place').textContent(), '#general', 'and the room');
    await page.selectOption('#search-author', { label: `From ${bobName}` });
    await page.locator('#search-status', { hasText: 'No messages match' }).waitFor();
    t.equal(await results.count(), 0, 'the author filter narrows the results');
    await page.selectOption('#search-author', '');
    await results.first().waitFor();

    // An old message, beyond the newest page of its channel: the result opens the room around it.
    await page.fill('#search-input', '"old message 3"');
    await page.press('#search-input', 'Enter');
    const old = page.locator('#search-results > li.search-result', { hasText: 'old message 3' });
    await old.waitFor();
    t.equal(await results.count(), 1, 'the phrase finds one message');
    t.equal((await old.locator('mark').allTextContents()).join(' '), 'old message 3', 'its words are marked');
    await shot(page, 'search');
    await old.locator('.result-text').click();
    await page.locator('#room-title', { hasText: 'archive' }).waitFor();
    const found = page.locator('#messages > li.msg').filter({ has: page.locator('.content').getByText('old message 3', { exact: true }) });
    await found.waitFor();
    t.ok(await found.evaluate((node: any) => node.classList.contains('flash')), 'the message is highlighted');
    const box = await found.boundingBox();
    const scroller = await page.locator('#message-scroll').boundingBox();
    t.ok(box && scroller && box.y >= scroller.y && box.y + box.height <= scroller.y + scroller.height, 'and scrolled into view');
    t.equal(await message(page, 'old message 60').count(), 0, 'its neighbours are loaded, not the newest page');
    await page.locator('#jump-present').waitFor();
    await page.click('#jump-present');
    await message(page, 'old message 60').waitFor();
    t.equal(await found.count(), 0, 'Jump to present loads the newest page');

    await page.press('#search-input', 'Escape');
    await page.locator('#search-panel').waitFor({ state: 'hidden' });
    t.notOk(await page.isVisible('#search-panel'), 'Escape closes the search');
  });

  await step('issue 19 at phone width: the results take the screen, a result brings the room back', async (t) => {
    const { page } = carol;
    await page.locator('#room-title', { hasText: 'random' }).waitFor();
    await page.fill('#search-input', 'hello');
    await page.press('#search-input', 'Enter');
    const result = page.locator('#search-results > li.search-result', { hasText: 'hello from alice' });
    await result.waitFor();
    t.notOk(await page.isVisible('#message-scroll'), 'the results show alone on a phone');
    t.notOk(await page.isVisible('#sidebar'), 'without the lists');
    const panel = await page.locator('#search-panel').boundingBox();
    t.ok(panel && panel.width >= 380, `across the screen (${panel?.width}px)`);
    const width = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
    t.ok(width <= 390, `nothing scrolls sideways (${width}px)`);
    await shot(page, 'phone-search');
    await result.getByRole('button', { name: /^Open .*message/ }).click();
    await page.locator('#room-title', { hasText: 'general' }).waitFor();
    await message(page, 'hello from alice').waitFor();
    t.ok(await page.isVisible('#message-scroll'), 'Jump shows the room with the message');
    t.notOk(await page.isVisible('#search-panel'), 'and not the results');
  });

  closeScene(t, scene);
});
