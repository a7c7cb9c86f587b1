import t from 'tap';
import {
  SKIP,
  MARKDOWN,
  XSS,
  closeScene,
  gradientPng,
  join,
  message,
  openChannel,
  openScene,
  send,
  sessionOf,
  shot,
  shotsAtBothWidths,
  signIn,
  until,
} from './helpers/browser';
import { Client, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Messages end to end through the system Chromium under the page CSP: markdown, live delivery,
 * typing, mentions and unread counts, every message action from the keyboard, reactions, edits,
 * files and uploads, the phone layout, the quick switcher, drafts, history pages and the dark
 * theme. Alice, Bob and Carol (a phone: 390×844 with touch, preferring dark), each in a browser
 * of their own, signed up through the API. Machines without /usr/bin/chromium skip this.
 *
 * Each step names the issue-17 defect (D1…D11) or the feature it proves.
 */
const PNG = gradientPng(160, 100);

t.test('messages work end to end in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  const carolName = uniqueName('carol');
  const scene = await openScene(t, 'browser-messages', [{ name: 'alice' }, { name: 'bob' }, { name: 'carol', phone: true }]);
  const { server, step } = scene;
  const [alice, bob, carol] = scene.windows;
  let aliceApi: Client;
  let bobApi: Client;
  let carolApi: Client;
  let serverId = '';
  let generalId = '';

  await step("(set-up) alice, bob and carol have accounts; alice's tab shows the app", async () => {
    [aliceApi, bobApi, carolApi] = await Promise.all([signIn(scene, alice, aliceName), signIn(scene, bob, bobName), signIn(scene, carol, carolName)]);
    await alice.page.goto(`${server.url}/`);
    await alice.page.locator('#connection-bar').waitFor({ state: 'hidden' });
  });

  await step('a server with markdown messages: bold, italic, code with a copy button, quotes, spoilers, links, mentions', async (t) => {
    const { page } = alice;
    await page.click('#new-server');
    await page.fill('#ask-input', `Book club ${XSS}`);
    await page.click('#ask-submit');
    await page.locator('#channel-list button', { hasText: 'general' }).waitFor();
    t.equal(await page.textContent('#sidebar-title'), `Book club ${XSS}`, 'the server name is shown as literal text');
    t.equal(await page.locator('#sidebar img, #rail img, #room-title img').count(), 0, 'no element comes from the name');
    t.ok(await page.isVisible('#new-channel'), 'the owner is offered "Create a channel"');
    const params = new URL(page.url()).searchParams;
    serverId = params.get('server')!;
    generalId = params.get('channel')!;
    t.match(await page.title(), /^#general · Book club/, 'D11: the title names the room');
    await page.locator('#room-empty').waitFor();

    // Shift+Enter makes a new line; Enter sends.
    await page.fill('#composer-text', 'hello from alice');
    await page.press('#composer-text', 'Shift+Enter');
    await page.type('#composer-text', 'second line');
    t.equal(await page.inputValue('#composer-text'), 'hello from alice\nsecond line', 'Shift+Enter is a new line');
    await page.press('#composer-text', 'Enter');
    const first = message(page, 'hello from alice');
    await first.waitFor();
    t.equal(await first.locator('.content').innerText(), 'hello from alice\nsecond line', 'the line break is kept');
    t.equal(await page.inputValue('#composer-text'), '', 'the composer is cleared');

    const md = MARKDOWN;
    await page.fill('#composer-text', md);
    await page.press('#composer-text', 'Enter');
    const rich = message(page, 'bold');
    await rich.waitFor();
    t.equal(await rich.locator('.content strong').textContent(), 'bold', 'bold');
    t.equal(await rich.locator('.content em').textContent(), 'italic', 'italic');
    t.equal(await rich.locator('.content p code').textContent(), 'inline code', 'inline code');
    t.equal(await rich.locator('.content blockquote').innerText(), 'a quote', 'quote');
    t.equal(await rich.locator('.content pre code').textContent(), 'const x = 1;\n', 'code block');
    t.ok(await rich.locator('.code-block .copy-code').count(), 'the code block has a copy button');
    const link = rich.locator('.content a[href="https://example.org/page"]');
    t.equal(await link.getAttribute('rel'), 'noopener noreferrer nofollow', 'autolinked URL with rel=noopener noreferrer nofollow');
    t.equal(await link.getAttribute('target'), '_blank', 'opening in a new tab');
    const spoiler = rich.locator('.spoiler');
    t.notOk(await spoiler.evaluate((node: any) => node.classList.contains('revealed')), 'the spoiler starts hidden');
    await spoiler.click();
    t.ok(await spoiler.evaluate((node: any) => node.classList.contains('revealed')), 'a click reveals the spoiler');
    t.equal(await rich.locator('img').count(), 0, 'no image element from markdown or from markup');
    t.equal(await rich.locator('a[href^="javascript"]').count(), 0, 'no javascript: link');
    t.match(await rich.locator('.content').textContent(), XSS, 'markup stays text');
    t.equal(await page.locator('img[src="x"]').count(), 0, 'nothing made from the markup');
  });

  await step('(set-up) bob and carol join the server and read #general', async () => {
    await join(aliceApi, serverId, [bobApi, carolApi]);
    await Promise.all(
      [bob, carol].map(async (w) => {
        await openChannel(w, server.url, serverId, generalId, 'general');
        await message(w.page, 'hello from alice').waitFor();
      }),
    );
  });

  await step('live: messages, typing, @ autocomplete, unread bold, mention badges, the title count and the divider', async (t) => {
    await send(alice.page, 'are you there, bob?');
    await message(bob.page, 'are you there, bob?').waitFor();
    t.pass("bob sees alice's message without reloading");

    // Typing line (Carol has not typed here yet: the server passes one notice per 3 s).
    await carol.page.fill('#composer-text', 'thinking');
    await bob.page.locator('#typing-line', { hasText: `${carolName} is typing…` }).waitFor();
    t.pass('bob sees "carol is typing…"');
    await carol.page.fill('#composer-text', '');

    // A second channel; Alice mentions Bob there while Bob reads #general.
    await alice.page.click('#new-channel');
    await alice.page.fill('#ask-input', 'random');
    await alice.page.click('#ask-submit');
    await alice.page.locator('#room-title', { hasText: 'random' }).waitFor();
    const random = bob.page.locator('#channel-list button', { hasText: 'random' });
    await random.waitFor();
    t.pass("the new channel appears live in bob's sidebar");
    // @ autocomplete of names.
    await alice.page.fill('#composer-text', `look @${bobName.slice(0, 4)}`);
    await alice.page.locator('#mention-suggest .suggest-item', { hasText: bobName }).waitFor();
    await alice.page.press('#composer-text', 'Enter');
    t.equal(await alice.page.inputValue('#composer-text'), `look @${bobName} `, '@ autocomplete completes the name');
    await alice.page.type('#composer-text', 'at this');
    await alice.page.press('#composer-text', 'Enter');
    await message(alice.page, 'at this').waitFor();

    await random.locator('.badge-count', { hasText: '1' }).waitFor();
    t.ok(await random.evaluate((node: any) => node.classList.contains('unread')), 'the unread channel is bold');
    await bob.page.locator(`#server-list button[data-id="${serverId}"] ~ .badge-count`, { hasText: '1' }).waitFor();
    t.pass('the server shows a mention badge');
    await until(bob.page, 'the title count', async () => (await bob.page.title()).startsWith('(1) '));
    t.pass('the title counts the mention: (1)');

    await random.click();
    const mention = message(bob.page, 'at this');
    await mention.waitFor();
    t.ok(await bob.page.locator('#messages .new-divider').count(), 'a "new messages" divider marks where reading starts');
    t.ok(await mention.evaluate((node: any) => node.classList.contains('mentions-me')), 'the message that mentions bob stands out');
    t.equal(await mention.locator('.mention.me').textContent(), `@${bobName}`, 'his own @mention is highlighted');
    await random.locator('.badge-count').waitFor({ state: 'detached' });
    await until(bob.page, 'the title without a count', async () => !(await bob.page.title()).startsWith('('));
    t.notOk(await random.evaluate((node: any) => node.classList.contains('unread')), 'reading clears the badge and the bold');
    await bob.page.locator('#channel-list button', { hasText: 'general' }).click();
    await shot(alice.page, 'desktop-sidebar-room');
  });

  await step('(set-up) bob becomes a full server administrator; alice reads #general again', async () => {
    await must(aliceApi.post(`/api/servers/${serverId}/roles`, { name: 'mods', full_server_admin: true }), 201);
    await must(aliceApi.put(`/api/servers/${serverId}/members/${bobApi.userId}/role`, { role: 'mods' }), 200);
    await bob.page.locator('#new-channel').waitFor();
    await alice.page.locator('#channel-list button', { hasText: 'general' }).click();
    await message(alice.page, 'are you there, bob?').waitFor();
  });

  await step('D5, D9: every message action is reachable from the keyboard; Escape cancels a reply and closes the picker', async (t) => {
    const { page } = bob;
    const target = message(page, 'are you there, bob?');
    const more = target.getByRole('button', { name: 'More actions' });
    await more.focus();
    t.ok(
      await more.evaluate((node: any) => node === (globalThis as any).document.activeElement),
      'the "More actions" button takes keyboard focus without hovering',
    );
    await page.keyboard.press('Enter');
    const menu = page.locator('#message-menu');
    await menu.waitFor();
    const names = await menu.getByRole('menuitem').allTextContents();
    for (const name of ['Reply', 'Add reaction', 'Copy text', 'Delete', 'Report']) t.ok(names.includes(name), `the menu offers ${name} to a screen reader`);
    await page.keyboard.press('ArrowDown');
    t.equal(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent), 'Add reaction', 'arrow keys move through the menu');
    await page.keyboard.press('Escape');
    await menu.waitFor({ state: 'hidden' });
    t.ok(await more.evaluate((node: any) => node === (globalThis as any).document.activeElement), 'Escape gives focus back to the button');

    // Reply, then Escape cancels it.
    await page.keyboard.press('Enter');
    await menu.getByRole('menuitem', { name: 'Reply' }).click();
    await page.locator('#reply-bar:not([hidden])').waitFor();
    await page.press('#composer-text', 'Escape');
    await page.locator('#reply-bar').waitFor({ state: 'hidden' });
    t.pass('Escape cancels the reply');

    // React through the picker: search, pick; Escape closes it.
    await target.getByRole('button', { name: 'React', exact: true }).focus();
    await page.keyboard.press('Enter');
    const picker = page.locator('#emoji-picker');
    await picker.waitFor();
    await page.keyboard.press('Escape');
    await picker.waitFor({ state: 'hidden' });
    t.pass('Escape closes the emoji picker');
    await target.getByRole('button', { name: 'React', exact: true }).focus();
    await page.keyboard.press('Enter');
    await picker.locator('.emoji-cell').first().waitFor();
    await page.keyboard.type('thumbs up');
    await picker.locator('.emoji-heading', { hasText: 'Results' }).waitFor();
    await picker.locator('.emoji-tab').nth(2).hover();
    await shot(page, 'emoji-picker');
    await picker.getByRole('button', { name: 'thumbs up', exact: true }).click();
    await target.locator('.reaction.reacted', { hasText: '1' }).waitFor();
    const seen = message(alice.page, 'are you there, bob?').locator('.reaction', { hasText: '1' });
    await seen.waitFor();
    t.equal(await seen.getAttribute('aria-pressed'), 'false', 'alice sees the count live, not highlighted for her');
    await seen.click();
    await target.locator('.reaction', { hasText: '2' }).waitFor();
    t.pass('the count reaches 2 on both sides');
    // Recent emoji: the picker opens on the one just used.
    await target.getByRole('button', { name: 'React', exact: true }).focus();
    await page.keyboard.press('Enter');
    await picker.locator('.emoji-section-title', { hasText: 'Recently used' }).waitFor();
    t.match(await picker.locator('.emoji-cell').first().getAttribute('aria-label'), 'thumbs up', 'recently used comes first');
    await page.keyboard.press('Escape');

    // Edit with ↑ in the empty composer.
    await send(page, 'a typo hree');
    await page.click('#composer-text');
    await page.press('#composer-text', 'ArrowUp');
    const edit = page.locator('#messages .edit-form textarea');
    await edit.waitFor();
    await edit.fill('a typo fixed');
    await edit.press('Enter');
    await message(alice.page, 'a typo fixed').locator('.edited').waitFor();
    t.pass('↑ edits the last message; the edit shows live');

    // Report, from the keyboard menu.
    const alices = message(page, 'hello from alice');
    await alices.getByRole('button', { name: 'More actions' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Report' }).click();
    await page.fill('#ask-input', 'not nice');
    await page.click('#ask-submit');
    await page.locator('#toast', { hasText: 'Reported' }).waitFor();

    // Delete asks first (bob is a full server administrator now).
    await alices.getByRole('button', { name: 'More actions' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    // Another's message: the moderator's confirmation offers a reason for the audit log.
    await page.locator('#form-dialog[open]', { hasText: 'Delete this message?' }).waitFor();
    t.ok(await page.isVisible('#form-reason'), "a moderator deleting another's message may give a reason");
    await page.click('#form-dialog button[data-cancel]');
    t.equal(await alices.count(), 1, 'cancelling keeps the message');
  });

  await step(
    'D3, D4, D11: file checks before sending, chips, progress and cancel, typing goes on during an upload, drop, paste, lightbox, icons',
    async (t) => {
      const { page } = bob;
      // Too big and too many are refused at once, before anything is sent.
      // 25 MiB crosses the DevTools pipe in one piece: on a busy machine that outlasts WAIT.
      await page.setInputFiles(
        '#composer-files',
        { name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(25 * 1024 * 1024 + 1) },
        { timeout: 60_000 },
      );
      await page.locator('#toast', { hasText: 'huge.bin' }).waitFor();
      t.match(await page.textContent('#toast'), 'at most 25 MB', 'a file over 25 MiB is refused before sending');
      t.equal(await page.locator('#file-chips .chip').count(), 0, 'and gets no chip');
      const six = Array.from({ length: 6 }, (_, i) => ({ name: `note${i}.txt`, mimeType: 'text/plain', buffer: Buffer.from(`note ${i}\n`) }));
      await page.setInputFiles('#composer-files', six);
      await page.locator('#toast', { hasText: 'at most 5 files' }).waitFor();
      t.equal(await page.locator('#file-chips .chip').count(), 5, 'the sixth file is left out, with a reason');
      await page.locator('#file-chips .chip', { hasText: 'note0.txt' }).getByRole('button', { name: 'Remove note0.txt' }).click();
      t.equal(await page.locator('#file-chips .chip').count(), 4, 'a chip can be removed');
      for (let i = 0; i < 4; i++) await page.locator('#file-chips .chip-remove').first().click();

      // A slow upload: progress, and the composer stays usable.
      const cdp = await bob.context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 256 * 1024 });
      await page.setInputFiles('#composer-files', [
        { name: 'gradient.png', mimeType: 'image/png', buffer: PNG },
        { name: 'slow.txt', mimeType: 'text/plain', buffer: Buffer.alloc(600 * 1024, 'a') },
      ]);
      await page.fill('#composer-text', 'a picture');
      await page.press('#composer-text', 'Enter');
      await page.locator('#uploads .upload progress').waitFor();
      t.equal(await page.inputValue('#composer-text'), '', 'the composer is free at once');
      await page.fill('#composer-text', 'sent during the upload');
      await page.press('#composer-text', 'Enter');
      await message(alice.page, 'sent during the upload').waitFor();
      t.pass('D3: a second Enter during an upload sends');
      await page.fill('#composer-text', 'still typing');
      await until(
        page,
        'upload progress',
        async () =>
          Number(
            await page
              .locator('#uploads progress')
              .first()
              .getAttribute('value')
              .catch(() => '100'),
          ) > 0,
      );
      await message(page, 'a picture').waitFor({ timeout: 15_000 });
      t.equal(await page.inputValue('#composer-text'), 'still typing', 'D3: text typed while the upload ran is not erased');
      await page.fill('#composer-text', '');
      // Cancel an upload.
      await page.setInputFiles('#composer-files', { name: 'cancel-me.txt', mimeType: 'text/plain', buffer: Buffer.alloc(900 * 1024, 'b') });
      await page.fill('#composer-text', 'never arrives');
      await page.press('#composer-text', 'Enter');
      await page.locator('#uploads .upload').getByRole('button', { name: 'Cancel' }).click();
      await page.locator('#toast', { hasText: 'Upload cancelled' }).waitFor();
      t.equal(await page.locator('#uploads .upload').count(), 0, 'the cancelled upload is gone');
      // Issue 35 #2: cancelling gives back what was being sent.
      t.equal(await page.inputValue('#composer-text'), 'never arrives', 'issue 35 #2: the text of a cancelled upload is back in the composer');
      t.same(await page.locator('#file-chips .chip-name').allTextContents(), ['cancel-me.txt'], 'issue 35 #2: and so is its file');
      await shotsAtBothWidths(page, 'round3-upload-cancelled');
      await page.locator('#file-chips .chip-remove').click();
      await page.fill('#composer-text', '');
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await cdp.detach();

      // Drag-and-drop and paste add chips.
      const dropped = await page.evaluateHandle(() => {
        const w = globalThis as any;
        const dt = new w.DataTransfer();
        dt.items.add(new w.File(['dropped\n'], 'dropped.txt', { type: 'text/plain' }));
        return dt;
      });
      await page.dispatchEvent('#room', 'dragenter', { dataTransfer: dropped });
      t.ok(await page.locator('#room.dropping').count(), 'dragging files over the room shows the drop zone');
      await page.dispatchEvent('#room', 'drop', { dataTransfer: dropped });
      await page.locator('#file-chips .chip', { hasText: 'dropped.txt' }).waitFor();
      await page.locator('#composer-text').evaluate((area: any) => {
        const w = globalThis as any;
        const dt = new w.DataTransfer();
        dt.items.add(new w.File(['pasted\n'], 'pasted.txt', { type: 'text/plain' }));
        area.dispatchEvent(new w.ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
      });
      await page.locator('#file-chips .chip', { hasText: 'pasted.txt' }).waitFor();
      t.pass('a dropped file and a pasted file become chips');
      await page.press('#composer-text', 'Enter');
      const files = message(page, 'dropped').or(
        page.locator('#messages > li.msg').filter({ has: page.locator('.attachment.file', { hasText: 'pasted.txt' }) }),
      );
      await files.first().waitFor();
      const card = page.locator('.attachment.file', { hasText: 'dropped.txt' });
      await card.waitFor();
      t.equal(await card.locator('svg.download-icon').count(), 1, 'D11: the download sign is an SVG icon, not a font glyph');
      t.equal(
        await page
          .locator('.attachments')
          .first()
          .evaluate((node: any) => (globalThis as any).getComputedStyle(node).alignItems),
        'flex-start',
        'D11: attachments do not stretch beside each other',
      );

      // The picture, for both, opens in a lightbox.
      for (const b of [bob, alice]) {
        const img = message(b.page, 'a picture').locator('.attachments img');
        await img.waitFor();
        t.match(await img.getAttribute('src'), /^\/uploads\/[0-9a-f-]{36}$/, `${b.name} sees an <img> of the upload`);
        await until(b.page, 'the image to load', async () => img.evaluate((node: any) => node.complete && node.naturalWidth > 0));
      }
      await message(alice.page, 'a picture').locator('.attachment.image').click();
      const box = alice.page.locator('#lightbox[open]');
      await box.waitFor();
      t.match(await box.locator('#lightbox-name').textContent(), 'gradient.png', 'D11: the image opens in a lightbox, not a raw tab');
      await until(alice.page, 'the lightbox image', async () => box.locator('img').evaluate((node: any) => node.complete && node.naturalWidth === 160));
      await shot(alice.page, 'lightbox');
      await alice.page.keyboard.press('Escape');
      await box.waitFor({ state: 'hidden' });
    },
  );

  await step('D6: at phone width one pane shows at a time, with a way back; "…" or a long press holds the actions; new lines', async (t) => {
    const { page } = carol;
    await page.goto(`${server.url}/?server=${serverId}&channel=${generalId}`);
    await message(page, 'a picture').waitFor();
    const layout = await page.evaluate(() => {
      const w = globalThis as any;
      return {
        scrollWidth: w.document.documentElement.scrollWidth,
        sidebar: w.getComputedStyle(w.document.getElementById('sidebar')).display,
        composer: w.document.getElementById('composer').getBoundingClientRect().bottom,
      };
    });
    t.ok(layout.scrollWidth <= 390, `nothing scrolls sideways (${layout.scrollWidth}px)`);
    t.equal(layout.sidebar, 'none', 'the room shows alone');
    t.ok(layout.composer <= 844, `the composer is on screen (bottom at ${Math.round(layout.composer)}px)`);
    t.equal(await page.locator('html').getAttribute('data-theme'), 'dark', 'the theme follows prefers-color-scheme (dark here)');
    const item = message(page, 'are you there, bob?');
    t.notOk(await item.getByRole('button', { name: 'Reply' }).isVisible(), 'no row of buttons on every message');
    t.ok(await item.getByRole('button', { name: 'More actions' }).isVisible(), 'a "…" button instead');
    await item.locator('.content').click({ button: 'right' }); // what a long press becomes
    await page.locator('#message-menu').getByRole('menuitem', { name: 'Reply' }).waitFor();
    await page.keyboard.press('Escape');
    // On a touch screen Enter is a new line and the send button sends; the new-line button too.
    await page.fill('#composer-text', 'from my phone');
    await page.press('#composer-text', 'Enter');
    t.equal(await page.inputValue('#composer-text'), 'from my phone\n', 'Enter on a phone keyboard makes a new line');
    await page.click('#newline-button');
    await page.type('#composer-text', 'two lines');
    await page.click('#send-button');
    const mine = message(page, 'from my phone');
    await mine.waitFor();
    t.equal(await mine.locator('.content').innerText(), 'from my phone\n\ntwo lines', 'the send button sends, lines kept');
    await shot(page, 'phone-room');
    await page.click('#room-back');
    await page.locator('#sidebar').waitFor();
    t.notOk(await page.isVisible('#room'), 'Back shows the lists alone');
    await shot(page, 'phone-lists');
    await page.locator('#channel-list button', { hasText: 'random' }).click();
    await page.locator('#room-title', { hasText: 'random' }).waitFor();
    await page.click('#members-button');
    await page.locator('#members .member-name', { hasText: aliceName }).waitFor();
    t.notOk(await page.isVisible('#message-scroll'), 'the member list takes the screen on a phone');
    await page.click('#members-button');
  });

  await step('Ctrl+K, drafts across reloads, older pages on scroll, jump to present, dark theme toggle', async (t) => {
    const { page } = alice;
    const api = new Client(server.url);
    api.cookie = `app_session=${await sessionOf(alice, server.url)}`;
    const channel = (await api.post(`/api/servers/${serverId}/channels`, { name: 'history' })).body;
    for (let i = 1; i <= 60; i++) {
      const res = await api.post(`/api/servers/${serverId}/channels/${channel.id}/messages`, { content: `old message ${i}` });
      if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${res.text}`);
    }
    await page.keyboard.press('Control+k');
    await page.locator('#switcher[open]').waitFor();
    await page.keyboard.type('histo');
    await page.keyboard.press('Enter');
    await page.locator('#room-title', { hasText: 'history' }).waitFor();
    await message(page, 'old message 60').waitFor();
    t.pass('Ctrl+K opens any channel by name');
    t.equal(await page.locator('#messages > li.msg').count(), 50, 'the newest 50 come first');
    t.ok(await page.locator('.day-sep').count(), 'a day separator heads the list');
    t.ok(await page.locator('#messages > li.msg.continued').count(), 'consecutive messages by one author are grouped');

    // Older pages load on scroll to the top; "Jump to present" brings the reader back.
    await page.locator('#message-scroll').hover();
    await page.mouse.wheel(0, -20000);
    await page.locator('#messages .content').getByText('old message 1', { exact: true }).waitFor();
    t.equal(await page.locator('#messages > li.msg').count(), 60, 'the older 10 load by scrolling up');
    await page.locator('#history-start').waitFor();
    await page.locator('#jump-present').waitFor();
    await page.click('#jump-present');
    await page.locator('#jump-present').waitFor({ state: 'hidden' });
    t.ok(await message(page, 'old message 60').isVisible(), 'Jump to present scrolls to the newest');

    // A draft survives a reload and a change of room.
    await page.fill('#composer-text', 'an unsent thought');
    await page.reload();
    await page.locator('#room-title', { hasText: 'history' }).waitFor();
    t.equal(await page.inputValue('#composer-text'), 'an unsent thought', 'the draft is back after a reload');
    await page.locator('#channel-list button', { hasText: 'general' }).click();
    t.equal(await page.inputValue('#composer-text'), '', 'each room has its own draft');
    await page.locator('#channel-list button', { hasText: 'history' }).click();
    t.equal(await page.inputValue('#composer-text'), 'an unsent thought', 'and keeps it');
    await page.fill('#composer-text', '');

    await page.click('#theme-button');
    t.equal(await page.locator('html').getAttribute('data-theme'), 'dark', 'the toggle switches to the dark theme');
    await page.locator('#channel-list button', { hasText: 'general' }).click();
    await message(page, 'a picture').waitFor();
    await shot(page, 'dark-theme');
    await page.click('#theme-button');
    t.equal(await page.locator('html').getAttribute('data-theme'), 'light', 'and back');
  });

  closeScene(t, scene);
});
