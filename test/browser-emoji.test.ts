import t from 'tap';
import { SKIP, bookClub, closeScene, gradientPng, openChannel, openScene, sessionOf, shot, signIn } from './helpers/browser';
import { uniqueName } from './helpers/client';

/**
 * Custom emoji, stickers and polls in the browser (issue 50): the owner (a desktop) uploads an
 * emoji and a sticker in Server settings → Emoji, writes it from the picker and from `:` autocomplete, and
 * reacts with it; a member (a phone) sends a sticker from the composer's "+"; the owner creates
 * a poll, the member votes and the owner sees the count move, then ends it. Machines without
 * /usr/bin/chromium skip this.
 */
t.test('custom emoji, a sticker and a poll, on a desktop and a phone', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-emoji', [{ name: 'alice' }, { name: 'bob-phone', phone: true }]);
  const { server, step } = scene;
  const [alice, bob] = scene.windows;
  const aliceApi = await signIn(scene, alice, uniqueName('alice'));
  const bobApi = await signIn(scene, bob, uniqueName('bob'));
  const { serverId, generalId } = await bookClub(aliceApi, [bobApi]);
  t.ok(await sessionOf(bob, server.url), 'bob is signed in on the phone');
  await Promise.all([alice, bob].map((w) => openChannel(w, server.url, serverId, generalId, 'general')));
  const { page } = alice;
  const image = gradientPng(64, 64);
  let emojiId = '';
  let stickerId = '';

  await step('the owner uploads an emoji and a sticker in Server settings → Emoji', async (t) => {
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.click('#settings-tab-emoji');
    await page.setInputFiles('#emoji-file', { name: 'party blob.png', mimeType: 'image/png', buffer: image });
    t.equal(await page.inputValue('#emoji-name'), 'party_blob', 'the name is taken from the file');
    await page.click('#emoji-form button[type=submit]');
    await page.locator('#emoji-list li', { hasText: ':party_blob:' }).waitFor();
    t.match(await page.textContent('#settings-panel'), '1 of 100 static', 'the slots are counted');
    emojiId = (await page.locator('#emoji-list li').first().getAttribute('data-id'))!;
    await page.setInputFiles('#sticker-file', { name: 'dance.png', mimeType: 'image/png', buffer: image });
    await page.fill('#sticker-name', 'Happy dance');
    await page.fill('#sticker-tags', '🎉');
    await page.click('#sticker-form button[type=submit]');
    await page.locator('#sticker-list li', { hasText: 'Happy dance' }).waitFor();
    stickerId = (await page.locator('#sticker-list li').first().getAttribute('data-id'))!;
    await page.click('#settings-close');
  });

  await step('it is picked from the emoji picker and from : autocomplete, and sent', async (t) => {
    await page.click('#emoji-button');
    await page.locator('#emoji-picker .emoji-cell.custom[aria-label=":party_blob:"]').waitFor();
    await shot(page, 'emoji-picker-custom-desktop');
    await page.locator('#emoji-picker .emoji-cell.custom[aria-label=":party_blob:"]').click();
    t.equal(await page.inputValue('#composer-text'), `<:party_blob:${emojiId}>`, 'the picker writes <:name:id>');
    await page.locator('#composer-text').pressSequentially(' and :party');
    await page.locator('#mention-suggest .suggest-item', { hasText: ':party_blob:' }).waitFor();
    await page.press('#composer-text', 'Enter');
    t.equal(await page.inputValue('#composer-text'), `<:party_blob:${emojiId}> and <:party_blob:${emojiId}> `, 'the autocomplete writes it too');
    await page.press('#composer-text', 'Enter');
    for (const w of [alice, bob]) {
      const drawn = w.page.locator('#messages li.msg .content img.custom-emoji[alt=":party_blob:"]');
      await drawn.nth(1).waitFor();
      t.equal(await drawn.count(), 2, `${w.name} sees both drawn`);
    }
  });

  await step('the owner reacts with it from the picker; both see the reaction', async (t) => {
    const item = page.locator('#messages li.msg').filter({ has: page.locator('.content img.custom-emoji') });
    await item.hover();
    await item.locator('.react-button').click();
    await page.locator('#emoji-picker .emoji-cell.custom[aria-label=":party_blob:"]').click();
    for (const w of [alice, bob]) {
      const reaction = w.page.locator('#messages .reaction', { has: w.page.locator('img.custom-emoji[alt=":party_blob:"]') });
      await reaction.waitFor();
      t.equal(await reaction.locator('.r-count').textContent(), '1', `${w.name} sees one reaction`);
    }
  });

  await step('the member sends a sticker from the phone', async (t) => {
    await bob.page.click('#extras-button');
    await bob.page.getByRole('menuitem', { name: 'Send a sticker' }).click();
    await bob.page.click(`#sticker-picker [data-sticker="${stickerId}"]`);
    for (const w of [alice, bob]) await w.page.locator('#messages img.sticker[alt="Happy dance"]').waitFor();
    t.pass('both see the sticker');
  });

  await step('the owner creates a poll; the member votes and the owner sees the count move; the owner ends it', async (t) => {
    await page.click('#extras-button');
    await page.getByRole('menuitem', { name: 'Create a poll' }).click();
    await page.fill('#form-question', 'Where do we meet?');
    await page.fill('#form-answers', 'the park\nonline');
    await page.selectOption('#form-duration', '4');
    await page.click('#form-submit');
    const park = (p: typeof page) => p.locator('#messages .poll .poll-answer', { hasText: 'the park' });
    for (const w of [alice, bob]) await park(w.page).waitFor();
    t.equal(await park(page).locator('.poll-count').textContent(), '0', 'no vote yet');
    await park(bob.page).click();
    await bob.page.locator('#messages .poll .poll-answer.chosen', { hasText: 'the park' }).waitFor();
    await page.locator('#messages .poll .poll-answer .poll-count', { hasText: '1' }).waitFor();
    t.equal(await park(bob.page).locator('.poll-count').textContent(), '1', 'the voter sees the count move too');
    await shot(bob.page, 'poll-phone');
    t.equal(await park(page).getAttribute('aria-pressed'), 'false', "the owner's own vote is not pressed");
    await page.click('#messages .poll .poll-end');
    await page.click('#ask-submit');
    await bob.page.locator('#messages .poll.ended .poll-hint', { hasText: 'Final results' }).waitFor();
    t.ok(await park(bob.page).isDisabled(), 'an ended poll takes no vote');
  });

  closeScene(t, scene);
});
