import t from 'tap';
import type { Page } from 'playwright-core';
import { SKIP, bookClub, closeScene, message, openChannel, openScene, post, send, shot, signIn, until } from './helpers/browser';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Issue 35, keyboard and accessibility, with defects 12 and 14, through the system Chromium under
 * the page CSP: the message list is one tab stop that the arrow keys move through (a roving
 * tabindex), keys act on the focused message, a skip link leads to the composer, Tab reaches the
 * composer in a few presses past 50 messages, focus never falls to <body> after a dialog or a
 * deleted message, typing anywhere goes to the composer, and "Jump to present" counts the
 * messages that arrived meanwhile. Alice reads #general on a desktop and on a phone (390×844,
 * dark); Bob writes through the API. Machines without /usr/bin/chromium skip this.
 */
const note = (i: number) => `note ${String(i).padStart(2, '0')}`;
const old = (i: number) => `old ${String(i).padStart(3, '0')}`;

/** What has focus: its id, whether it is a message, and that message's text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const a = (globalThis as any).document.activeElement;
    const item = a?.closest?.('li.msg');
    return {
      id: a?.id as string,
      tag: a?.tagName as string,
      isMessage: Boolean(a?.matches('li.msg')),
      text: (item?.querySelector('.content')?.textContent ?? '').trim() as string,
    };
  });

/** Every element of the message list that Tab stops at. */
const listStops = (page: Page) =>
  page.evaluate(
    () =>
      [...(globalThis as any).document.querySelectorAll('#messages, #messages *')].filter((node: any) => node.tabIndex >= 0 && node.checkVisibility()).length,
  );

/** Waits until the focused element's message text is `text`. */
async function focusOn(page: Page, text: string) {
  await until(page, `focus on "${text}"`, async () => (await focused(page)).text === text);
}

t.test('the keyboard reaches everything, and focus is never lost', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-keyboard', [{ name: 'alice' }, { name: 'alice-phone', phone: true }]);
  const { server, step } = scene;
  const [alice, phone] = scene.windows;
  const { page } = alice;
  let aliceApi: Client;
  let bobApi: Client;
  let serverId = '';
  let generalId = '';
  const base = () => `/api/servers/${serverId}/channels/${generalId}`;

  await step('(set-up) 160 messages in #general: alice wrote old 000–099 and note 00–29 and read them, bob 30–59; alice opens it', async () => {
    [aliceApi, bobApi] = await Promise.all([signIn(scene, alice, uniqueName('alice')), signUp(server.url, uniqueName('bob'))]);
    ({ serverId, generalId } = await bookClub(aliceApi, [bobApi]));
    let last = '';
    for (let i = 0; i < 100; i++) await post(aliceApi, serverId, generalId, old(i));
    for (let i = 0; i < 30; i++) last = (await post(aliceApi, serverId, generalId, note(i))).id;
    await must(aliceApi.put(`${base()}/read`, { message_id: last }), 200);
    for (let i = 30; i < 60; i++) await post(bobApi, serverId, generalId, note(i));
    await phone.context.addCookies(await alice.context.cookies(server.url));
    await openChannel(alice, server.url, serverId, generalId, 'general');
    await message(page, note(59)).waitFor();
  });

  await step('A: the message list is one tab stop; ↑ ↓ Home End Page Up/Down move between messages, past the divider', async (t) => {
    t.equal(await listStops(page), 1, 'exactly one element of the list is in the tab order');
    t.equal(await page.locator('#messages > li.msg[tabindex="0"]').count(), 1, 'one message has tabindex=0');
    t.equal(await message(page, note(59)).getAttribute('tabindex'), '0', 'before any focus, the newest one');
    t.equal(await message(page, note(40)).locator('button').first().getAttribute('tabindex'), '-1', "a message's buttons are out of the tab order");
    // Shift+Tab from the composer: past the paperclip (and "Jump to present", shown while the
    // room opens at the divider), into the list.
    await page.focus('#composer-text');
    for (let i = 0; i < 3 && !(await focused(page)).text; i++) await page.keyboard.press('Shift+Tab');
    t.same(await focused(page), { id: '', tag: 'LI', isMessage: true, text: note(59) }, 'entering the list lands on the newest message');
    await page.keyboard.press('ArrowUp');
    await focusOn(page, note(58));
    await page.keyboard.press('ArrowDown');
    await focusOn(page, note(59));
    await page.keyboard.press('PageUp');
    await focusOn(page, note(49));
    await page.keyboard.press('PageDown');
    await focusOn(page, note(59));
    // The "new messages" divider stands between 29 (read) and 30: ↑ passes over it.
    t.equal(
      await page.locator('#messages > li.msg:has-text("note 30") + li.new-divider, #messages > li.new-divider + li.msg:has-text("note 30")').count(),
      1,
      'the divider is right before note 30',
    );
    for (let i = 0; i < 29; i++) await page.keyboard.press('ArrowUp');
    await focusOn(page, note(30));
    await page.keyboard.press('ArrowUp');
    await focusOn(page, note(29));
    t.pass('↑ goes from 30 to 29 over the divider');
    await page.keyboard.press('End');
    await focusOn(page, note(59));
    t.equal(await listStops(page), 1, 'still one tab stop while moving');
    await shot(page, 'keyboard-focused-message');
  });

  await step('A: Home goes to the first loaded message, ↑ there loads older ones; Tab leaves the list and comes back to the same message', async (t) => {
    const firstLoaded = (await page.locator('#messages > li.msg .content').first().textContent())!.trim();
    await page.keyboard.press('Home');
    await focusOn(page, firstLoaded);
    t.not(firstLoaded, old(0), `Home goes to the first loaded message (${firstLoaded}), not the first of the history`);
    // Held ↑ at the top: the older pages come as they would by scrolling, focus stays on messages.
    for (let i = 0; i < 200 && (await focused(page)).text !== old(0); i++) {
      await page.keyboard.press('ArrowUp');
      if (!(await focused(page)).isMessage) break;
    }
    await focusOn(page, old(0));
    t.pass('↑ at the first loaded message loads older ones, up to the first of the history');
    await page.keyboard.press('End');
    await focusOn(page, note(59));
    for (let i = 0; i < 5; i++) await page.keyboard.press('PageUp');
    await focusOn(page, note(9));
    await page.keyboard.press('PageDown');
    await focusOn(page, note(19));
    await page.keyboard.press('Tab');
    t.notOk((await focused(page)).text, 'Tab leaves the list in one press');
    await page.keyboard.press('Shift+Tab');
    await focusOn(page, note(19));
    t.pass('Shift+Tab comes back to the message focused last');
  });

  await step('A: messages arriving, edited and deleted live keep the one tab stop and the focus', async (t) => {
    await page.keyboard.press('End');
    await focusOn(page, note(59));
    await page.keyboard.press('ArrowUp');
    await focusOn(page, note(58));
    const mine = await post(bobApi, serverId, generalId, 'bob arrives live');
    await message(page, 'bob arrives live').waitFor();
    t.equal(await listStops(page), 1, 'a new message adds no tab stop');
    await focusOn(page, note(58));
    const ids = await page.locator('#messages > li.msg').evaluateAll((items: any[]) => items.map((x) => x.dataset.id));
    const id58 = ids[ids.length - 3];
    await must(bobApi.put(`${base()}/messages/${id58}`, { content: `${note(58)} changed` }), 200);
    await message(page, `${note(58)} changed`).waitFor();
    await focusOn(page, `${note(58)} changed (edited)`);
    t.pass('an edit redraws the message and it keeps focus');
    await must(bobApi.delete(`${base()}/messages/${id58}`), 204);
    await message(page, `${note(58)} changed`).waitFor({ state: 'detached' });
    await focusOn(page, note(59));
    t.pass('the focused message deleted: focus goes to its neighbour, not to <body>');
    t.equal(await listStops(page), 1, 'still one tab stop');
    await must(bobApi.delete(`${base()}/messages/${mine.id}`), 204);
  });

  await step(
    'B: keys on the focused message: Enter and Shift+F10 open its menu, + reacts, R replies, E edits, ← → reach its buttons, Delete deletes',
    async (t) => {
      await send(page, 'alice writes a line');
      const own = message(page, 'alice writes a line');
      await own.focus();
      await page.keyboard.press('Enter');
      await page.locator('#message-menu').waitFor();
      t.equal((await focused(page)).tag, 'BUTTON', 'Enter opens the menu, focus on its first item');
      await page.keyboard.press('Escape');
      await page.locator('#message-menu').waitFor({ state: 'hidden' });
      await focusOn(page, 'alice writes a line');
      await page.keyboard.press('Shift+F10');
      await page.locator('#message-menu').waitFor();
      await page.keyboard.press('Escape');
      await focusOn(page, 'alice writes a line');
      t.pass('Shift+F10 opens it too; Escape gives focus back to the message');
      await page.keyboard.press('+');
      await page.locator('#emoji-picker').waitFor();
      await page.keyboard.press('Escape');
      await page.locator('#emoji-picker').waitFor({ state: 'hidden' });
      await focusOn(page, 'alice writes a line');
      t.pass('+ opens the emoji picker; Escape gives focus back to the message');
      await page.keyboard.press('ArrowRight');
      const inner = await focused(page);
      t.ok(!inner.isMessage && inner.tag === 'BUTTON' && inner.text === 'alice writes a line', '→ focuses the first of its buttons');
      await page.keyboard.press('Escape');
      await focusOn(page, 'alice writes a line');
      t.ok((await focused(page)).isMessage, 'Escape goes back to the message');

      await message(page, note(59)).focus();
      await page.keyboard.press('r');
      await page.locator('#reply-bar:not([hidden])', { hasText: note(59) }).waitFor();
      t.equal((await focused(page)).id, 'composer-text', 'R replies: the reply bar, and the composer has focus');
      await page.keyboard.press('Escape');
      await page.locator('#reply-bar').waitFor({ state: 'hidden' });
      await message(page, note(59)).focus();
      await page.keyboard.press('e');
      t.equal(await page.locator('#messages .edit-form').count(), 0, "E does nothing on another's message");
      t.equal(await page.inputValue('#composer-text'), '', 'nor does it type an e into the composer');

      await own.focus();
      await page.keyboard.press('e');
      const edit = page.locator('#messages .edit-form textarea');
      await edit.waitFor();
      t.equal((await focused(page)).tag, 'TEXTAREA', "E edits one's own message");
      await page.keyboard.type(', edited');
      await page.keyboard.press('Enter');
      await message(page, 'alice writes a line, edited').locator('.edited').waitFor();
      await focusOn(page, 'alice writes a line, edited (edited)');
      t.ok((await focused(page)).isMessage, 'after the edit, focus is on the message again');

      await page.keyboard.press('Delete');
      await page.locator('#form-dialog[open]', { hasText: 'Delete this message?' }).waitFor();
      await page.keyboard.press('Enter');
      await message(page, 'alice writes a line').waitFor({ state: 'detached' });
      await focusOn(page, note(59));
      t.ok((await focused(page)).isMessage, 'Delete asks, deletes, and focus goes to the neighbour message');
    },
  );

  await step('C: the skip link is the first stop, hidden until focused, and leads to the composer', async (t) => {
    // A fresh page (which focuses the composer as a room opens).
    await page.reload();
    await message(page, note(59)).waitFor();
    t.ok(await page.locator('#skip-link').evaluate((a: any) => a.getBoundingClientRect().bottom <= 0), 'out of sight while not focused');
    const first = await page.evaluate(
      () =>
        [...(globalThis as any).document.querySelectorAll('a[href], button, input, textarea, select, [tabindex]')].find(
          (node: any) => node.tabIndex >= 0 && !node.disabled && node.checkVisibility(),
        )?.id,
    );
    t.equal(first, 'skip-link', 'it is the first element of the tab order');
    await page.focus('#home-button');
    await page.keyboard.press('Shift+Tab');
    t.equal((await focused(page)).id, 'skip-link', "Shift+Tab from the rail's first button reaches it");
    t.ok(await page.locator('#skip-link').evaluate((a: any) => a.getBoundingClientRect().top >= 0), 'it shows once focused');
    t.equal(await page.textContent('#skip-link'), 'Skip to message composer');
    await shot(page, 'keyboard-skip-link');
    await page.keyboard.press('Enter');
    t.equal((await focused(page)).id, 'composer-text', 'Enter moves focus to the composer');
    t.equal(new URL(page.url()).hash, '', 'the address keeps no #');
  });

  await step('D: from the top of the page, Tab reaches the composer in far fewer than 150 presses past 50 messages', async (t) => {
    await page.reload();
    await message(page, note(59)).waitFor();
    t.ok((await page.locator('#messages > li.msg').count()) >= 50, 'at least 50 messages are loaded');
    await page.focus('#home-button');
    await page.keyboard.press('Shift+Tab');
    t.equal((await focused(page)).id, 'skip-link', 'counting from the skip link, the top of the page');
    let presses = 0;
    let inList = 0;
    for (; presses < 200; presses++) {
      const now = await page.evaluate(() => {
        const a = (globalThis as any).document.activeElement;
        return { id: a?.id, inList: Boolean(a?.closest('#messages')) };
      });
      if (now.id === 'composer-text') break;
      if (now.inList) inList++;
      await page.keyboard.press('Tab');
    }
    t.comment(`Tab presses from the skip link to the composer: ${presses}`);
    t.ok(presses < 40, `fewer than 40 presses (${presses})`);
    t.equal(inList, 1, 'the message list is exactly one stop');
  });

  await step('E (defect 12): focus goes back to what opened a dialog or a picker, or to the composer when it is gone', async (t) => {
    // Server settings, from the server menu.
    await page.focus('#server-menu-button');
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Server settings' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#settings-dialog[open]').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('#settings-dialog').waitFor({ state: 'hidden' });
    await until(page, 'focus back on the server menu button', async () => (await focused(page)).id === 'server-menu-button');
    t.pass('closing server settings gives focus back to the server menu button');
    // The composer's emoji picker.
    await page.focus('#emoji-button');
    await page.keyboard.press('Enter');
    await page.locator('#emoji-picker').waitFor();
    await page.keyboard.press('Escape');
    await until(page, 'focus back on the emoji button', async () => (await focused(page)).id === 'emoji-button');
    t.pass('closing the emoji picker gives focus back to its button');
    // A confirmation whose message is deleted while it is open: the composer takes focus.
    await message(page, note(57)).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Report' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#ask-dialog[open]').waitFor();
    const id57 = await message(page, note(57)).getAttribute('data-id');
    await must(bobApi.delete(`${base()}/messages/${id57}`), 204);
    await message(page, note(57)).waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
    await page.locator('#ask-dialog').waitFor({ state: 'hidden' });
    await until(page, 'focus on the composer', async () => (await focused(page)).id === 'composer-text');
    t.pass('its message gone, closing the dialog focuses the composer, not <body>');
  });

  await step('E: a printable key pressed outside any field types into the composer; Ctrl and Alt combinations do not', async (t) => {
    await page.fill('#composer-text', '');
    await message(page, note(56)).focus();
    await page.keyboard.type('hi');
    t.equal(await page.inputValue('#composer-text'), 'hi', 'typed on a message: the text is in the composer');
    t.equal((await focused(page)).id, 'composer-text', 'and the composer has focus');
    await page.evaluate(() => (globalThis as any).document.activeElement?.blur());
    await page.keyboard.press('x');
    t.equal(await page.inputValue('#composer-text'), 'hix', 'typed with focus nowhere: the same');
    await page.evaluate(() => (globalThis as any).document.activeElement?.blur());
    await page.keyboard.press('Control+b');
    await page.keyboard.press('Alt+x');
    t.not((await focused(page)).id, 'composer-text', 'Ctrl and Alt combinations do not go to the composer');
    t.equal(await page.inputValue('#composer-text'), 'hix', 'nor type anything');
    await page.keyboard.press('/');
    t.equal((await focused(page)).id, 'search-input', '/ still goes to the search box');
    await page.keyboard.press('Escape');
    await page.fill('#composer-text', '');
  });

  await step('F (defect 14): scrolled up, "Jump to present" counts the messages that arrived; jumping or scrolling down resets it', async (t) => {
    const jump = page.locator('#jump-present');
    const scrollUp = () =>
      page.locator('#message-scroll').evaluate((s: any) => {
        s.scrollTop = 200;
        s.dispatchEvent(new Event('scroll'));
      });
    await scrollUp();
    await jump.waitFor();
    t.equal(await jump.textContent(), 'Jump to present', 'nothing new yet');
    await post(bobApi, serverId, generalId, 'live one');
    await jump.filter({ hasText: '1 new message — Jump to present' }).waitFor();
    t.pass('one message: "1 new message — Jump to present"');
    await post(bobApi, serverId, generalId, 'live two');
    await post(bobApi, serverId, generalId, 'live three');
    await jump.filter({ hasText: '3 new messages — Jump to present' }).waitFor();
    t.pass('three: "3 new messages — Jump to present"');
    await shot(page, 'keyboard-jump-count');
    await jump.click();
    await jump.waitFor({ state: 'hidden' });
    t.ok(await message(page, 'live three').isVisible(), 'the jump shows the newest');
    await scrollUp();
    await jump.waitFor();
    t.equal(await jump.textContent(), 'Jump to present', 'the count starts again after a jump');
    await post(bobApi, serverId, generalId, 'live four');
    await jump.filter({ hasText: '1 new message' }).waitFor();
    await page.locator('#message-scroll').evaluate((s: any) => {
      s.scrollTop = s.scrollHeight;
    });
    await jump.waitFor({ state: 'hidden' });
    await scrollUp();
    await jump.waitFor();
    t.equal(await jump.textContent(), 'Jump to present', 'scrolling to the bottom resets it too');
  });

  await step('the phone: the focused message, the skip link and the count, at 390 px', async (t) => {
    const p = phone.page;
    await openChannel(phone, server.url, serverId, generalId, 'general');
    await message(p, 'live four').waitFor();
    await p.focus('#skip-link');
    t.ok(await p.locator('#skip-link').evaluate((a: any) => a.getBoundingClientRect().top >= 0), 'the skip link shows when focused on a phone too');
    await shot(p, 'keyboard-skip-link-phone');
    await message(p, note(59)).focus();
    await p.keyboard.press('ArrowUp');
    await focusOn(p, note(56));
    await shot(p, 'keyboard-focused-message-phone');
    await p.locator('#message-scroll').evaluate((s: any) => {
      s.scrollTop = 200;
      s.dispatchEvent(new Event('scroll'));
    });
    await p.locator('#jump-present').waitFor();
    await post(bobApi, serverId, generalId, 'live five');
    await p.locator('#jump-present', { hasText: '1 new message — Jump to present' }).waitFor();
    await shot(p, 'keyboard-jump-count-phone');
    t.pass('screenshots taken');
  });

  closeScene(t, scene);
});
