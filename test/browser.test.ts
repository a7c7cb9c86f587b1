import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { ARGS, CHROMIUM, DESKTOP, PHONE, SKIP, type Watched, shot, stepper, until, watch } from './helpers/browser';
import { Client, signUp, uniqueName } from './helpers/client';
import { startServer, type TestServer } from './helpers/server';

/**
 * End to end through the system Chromium: the pages under the real page CSP, three users in
 * three separate browsers (each its own fresh profile; Carol's is a phone, 390×844 with touch,
 * preferring dark), live delivery between them over the user stream. playwright-core only
 * drives the browser; it downloads nothing. Machines without /usr/bin/chromium skip this.
 *
 * Each step names the issue-17 defect (D1…D11) or the feature it proves.
 */
const PASSWORD = 'correct horse';
const XSS = '<img src=x onerror=alert(1)>';
const PNG_WIDTH = 160;
const PNG = gradientPng(PNG_WIDTH, 100);

/** A small RGB gradient as a PNG file, so the screenshot shows a real picture. */
function gradientPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      rows.set([60 + (x * 160) / width, 110 + (y * 120) / height, 210], y * (width * 3 + 1) + 1 + x * 3);
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Chromium logs every 4xx answer as a console error. These are answers the pages ask for on
 * purpose, so they are expected; any other is a fault: how the pages learn who is looking
 * (signed out; not an administrator), a wrong password, the styled 404 page, a used reset link.
 */
const EXPECTED_REFUSALS: [number, string][] = [
  [401, '/api/account'],
  [401, '/api/login'],
  [403, '/api/admin/me'],
  [404, '/no-such-page'],
  [400, '/api/password-reset'],
];

type Browser = Watched;

async function openBrowser(t: Test, name: string, phone = false): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), `chat-browser-${name}-`));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    ...(phone ? PHONE : DESKTOP),
    timeout: 30_000,
  });
  t.teardown(async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });
  return watch(name, context, context.pages()[0] ?? (await context.newPage()), EXPECTED_REFUSALS);
}

/** The message whose text contains `text`. */
const message = (page: Page, text: string) => page.locator('#messages > li.msg').filter({ has: page.locator('.content', { hasText: text }) });

async function send(page: Page, text: string) {
  await page.fill('#composer-text', text);
  await page.press('#composer-text', 'Enter');
  await message(page, text.split('\n')[0]).last().waitFor();
}

const sessionOf = async (b: Browser, url: string) => (await b.context.cookies(url)).find((c) => c.name === 'app_session')?.value;

t.test('the chat works end to end in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const started = Date.now();
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  const carolName = uniqueName('carol');
  // Alice is an administrator (ADMIN_USERS applies at registration): she sees the admin page.
  const server: TestServer = await startServer({ env: { ADMIN_USERS: aliceName } });
  t.teardown(server.close);
  const [alice, bob, carol] = await Promise.all([openBrowser(t, 'alice'), openBrowser(t, 'bob'), openBrowser(t, 'carol', true)]);
  const everyone = [alice, bob, carol];
  const step = stepper(t, everyone, 'browser-test');
  let serverId = '';
  let generalId = '';
  let inviteUrl = '';

  await step('D9: forms work without JavaScript; with it, registering signs in and a failed login keeps the name', async (t) => {
    // Bob's first visit runs no script at all: the forms are plain posts answered by redirects.
    bob.watching = false;
    await bob.page.route('**/*.js', (route) => route.abort());
    await bob.page.goto(`${server.url}/`);
    await bob.page.fill('#register-username', bobName);
    await bob.page.fill('#register-password', PASSWORD);
    await Promise.all([bob.page.waitForURL(`${server.url}/?registered=1`), bob.page.click('#register-form button[type=submit]')]);
    await bob.page.fill('#login-username', bobName);
    await bob.page.fill('#login-password', 'wrong password');
    await Promise.all([bob.page.waitForURL(/\?error=/), bob.page.click('#login-form button[type=submit]')]);
    t.match(bob.page.url(), /\?error=login_failed$/, 'without script, a wrong password comes back as ?error=login_failed');
    await bob.page.fill('#login-username', bobName);
    await bob.page.fill('#login-password', PASSWORD);
    await Promise.all([bob.page.waitForURL(`${server.url}/?logged_in=1`), bob.page.click('#login-form button[type=submit]')]);
    t.ok(await sessionOf(bob, server.url), 'the form login set the session cookie');
    await bob.page.unroute('**/*.js');
    bob.watching = true;

    const { page } = alice;
    await page.goto(`${server.url}/?error=${encodeURIComponent(XSS)}`);
    await page.locator('#problem').waitFor();
    t.notMatch(await page.textContent('#problem'), 'img', 'text from the URL is never shown: an unknown code gets the page\'s own words');
    t.equal(await page.locator('#problem img').count(), 0, 'and creates no element');
    t.ok(await page.isVisible('a[href="/reset-password"]'), 'signed out, a "Forgot your password?" link is shown');
    await shot(page, 'sign-in');
    // With script, a failed login keeps the username (only the password is cleared).
    await page.fill('#login-username', aliceName);
    await page.fill('#login-password', 'not the password');
    await page.click('#login-form button[type=submit]');
    await page.locator('#problem', { hasText: 'Wrong username or password.' }).waitFor();
    t.equal(await page.inputValue('#login-username'), aliceName, 'the username survives a failed login');
    t.equal(await page.inputValue('#login-password'), '', 'the password is cleared');
    // Registering signs in: the app opens without a second form.
    await page.fill('#register-username', aliceName);
    await page.fill('#register-password', PASSWORD);
    await page.click('#register-form button[type=submit]');
    await page.locator('#app').waitFor();
    await page.locator('#connection-bar').waitFor({ state: 'hidden' });
    t.ok(await sessionOf(alice, server.url), 'registered and signed in at once');
    t.equal(await page.locator('#me-button .me-name').textContent(), aliceName, 'the user panel names her');
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

    const md = [
      '**bold** _italic_ `inline code` ||the butler|| https://example.org/page',
      '> a quote',
      '```',
      'const x = 1;',
      '```',
      `${XSS} ![pic](https://example.org/x.png) [js](javascript:alert(1))`,
    ].join('\n');
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

  await step('D9: a signed-out invitee signs in from the invite page and comes back to it; members see "Open"', async (t) => {
    const { page } = alice;
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Invite people' }).click();
    await page.locator('#invite-dialog[open]').waitFor();
    inviteUrl = await page.inputValue('#invite-url');
    t.match(inviteUrl, `${server.url}/invites/`, 'the invite dialog shows the link to share');
    await page.click('#invite-dialog button[type=submit]');

    // Carol (a phone) has no account yet: the invite page sends her to register and back.
    await carol.page.goto(inviteUrl);
    await carol.page.locator('#signin:not([hidden])').waitFor();
    t.match(await carol.page.textContent('#invite-heading'), 'Book club', 'the invite page names the server');
    await Promise.all([carol.page.waitForURL(/\/\?next=/), carol.page.click('#signin-link')]);
    await carol.page.fill('#register-username', carolName);
    await carol.page.fill('#register-password', PASSWORD);
    await Promise.all([carol.page.waitForURL(/\/invites\//), carol.page.click('#register-form button[type=submit]')]);
    await carol.page.locator('#join:not([hidden])').waitFor();
    t.pass('after registering, carol is back on the invitation');
    await Promise.all([carol.page.waitForURL(/\/\?server=/), carol.page.click('#join')]);
    await message(carol.page, 'hello from alice').waitFor();

    await bob.page.goto(inviteUrl);
    await Promise.all([bob.page.waitForURL(/\/\?server=/), bob.page.click('#join:not([hidden])')]);
    await message(bob.page, 'hello from alice').waitFor();
    t.notOk(await bob.page.isVisible('#new-channel'), 'a plain member is not offered "Create a channel"');
    await bob.page.goto(inviteUrl);
    await bob.page.locator('#open:not([hidden])').waitFor();
    t.notOk(await bob.page.isVisible('#join'), 'a member opening the invite again sees "Open", not "Join"');
    await Promise.all([bob.page.waitForURL(/\/\?server=/), bob.page.click('#open')]);
    await message(bob.page, 'hello from alice').waitFor();
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
    t.pass('the new channel appears live in bob\'s sidebar');
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

  await step('issue 16: a friend request and a DM arrive live with badges; reading clears them; presence dots', async (t) => {
    await alice.page.click('#home-button');
    await alice.page.fill('#friend-name', bobName);
    await alice.page.click('#friend-form button[type=submit]');
    await alice.page.locator('#request-list li', { hasText: 'request sent' }).waitFor();
    await bob.page.locator('#home-button').click();
    await bob.page.locator('#request-badge', { hasText: '1' }).waitFor();
    t.pass('the request shows up live on bob\'s Friends badge');
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

  await step('D1: roles are created and assigned in server settings, and shown in the member list', async (t) => {
    const { page } = alice;
    await bob.page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await bob.page.locator('#members .member-name', { hasText: bobName }).waitFor();
    await page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await page.locator('#channel-list button', { hasText: 'general' }).click();
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.locator('#settings-dialog[open]').waitFor();
    await page.click('#settings-tab-roles');
    await page.fill('#role-name', 'mods');
    await page.check('#role-admin');
    await page.click('.role-form button[type=submit]');
    await page.locator('#settings-panel .role-row', { hasText: 'mods' }).waitFor();
    await page.click('#settings-tab-members');
    await page.selectOption(`#settings-panel select[aria-label="Role of ${bobName}"]`, 'mods');
    await page.locator('#toast', { hasText: 'now has the role mods' }).waitFor();
    await shot(page, 'settings');
    await page.click('#settings-close');
    const group = page.locator('#members .member-group', { hasText: 'mods — 1' });
    await group.locator('.member-name', { hasText: bobName }).waitFor();
    t.pass("bob is listed under the role mods beside the room");
    // Bob's tab learns it live (member_updated): as a full server administrator he may create channels.
    await bob.page.locator('#members .member-group', { hasText: 'mods — 1' }).waitFor();
    await bob.page.locator('#new-channel').waitFor();
    t.pass('bob sees his role live, and the channel button it grants');
    // The member menu names the role.
    await page.locator('#members .member-button', { hasText: bobName }).click();
    await page.locator('#member-menu', { hasText: 'Role: mods' }).waitFor();
    await page.keyboard.press('Escape');
  });

  await step('D5, D9: every message action is reachable from the keyboard; Escape cancels a reply and closes the picker', async (t) => {
    const { page } = bob;
    const target = message(page, 'are you there, bob?');
    const more = target.getByRole('button', { name: 'More actions' });
    await more.focus();
    t.ok(await more.evaluate((node: any) => node === (globalThis as any).document.activeElement), 'the "More actions" button takes keyboard focus without hovering');
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
    await picker.getByRole('gridcell', { name: 'thumbs up', exact: true }).click();
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
    await picker.locator('.emoji-heading', { hasText: 'Recently used' }).waitFor();
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
    t.ok(await page.isVisible('#form-reason'), 'a moderator deleting another\'s message may give a reason');
    await page.click('#form-dialog button[data-cancel]');
    t.equal(await alices.count(), 1, 'cancelling keeps the message');
  });

  await step('D3, D4, D11: file checks before sending, chips, progress and cancel, typing goes on during an upload, drop, paste, lightbox, icons', async (t) => {
    const { page } = bob;
    // Too big and too many are refused at once, before anything is sent.
    // 25 MiB crosses the DevTools pipe in one piece: on a busy machine that outlasts WAIT.
    await page.setInputFiles('#composer-files', { name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(25 * 1024 * 1024 + 1) }, { timeout: 60_000 });
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
    await until(page, 'upload progress', async () => Number(await page.locator('#uploads progress').first().getAttribute('value').catch(() => '100')) > 0);
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
    const files = message(page, 'dropped').or(page.locator('#messages > li.msg').filter({ has: page.locator('.attachment.file', { hasText: 'pasted.txt' }) }));
    await files.first().waitFor();
    const card = page.locator('.attachment.file', { hasText: 'dropped.txt' });
    await card.waitFor();
    t.equal(await card.locator('svg.download-icon').count(), 1, 'D11: the download sign is an SVG icon, not a font glyph');
    t.equal(await page.locator('.attachments').first().evaluate((node: any) => (globalThis as any).getComputedStyle(node).alignItems), 'flex-start', 'D11: attachments do not stretch beside each other');

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
  });

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

  await step('D2: signed out elsewhere, the tab says so, signs in again in place and keeps the room and the draft', async (t) => {
    const { page } = bob;
    await page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await page.locator('#channel-list button', { hasText: 'random' }).click();
    await page.locator('#room-title', { hasText: 'random' }).waitFor();
    await page.fill('#composer-text', 'half a thought');
    await page.waitForTimeout(50); // the draft is saved on input
    const other = new Client(server.url);
    other.cookie = `app_session=${await sessionOf(bob, server.url)}`;
    t.equal((await other.post('/api/logout')).status, 204, 'the session is ended from elsewhere');
    await page.locator('#signin-dialog[open]', { hasText: 'You were signed out' }).waitFor();
    await page.locator('#connection-bar', { hasText: 'You were signed out' }).waitFor();
    t.ok(await page.isDisabled('#composer-text'), 'the composer waits');
    t.equal(await page.inputValue('#signin-username'), bobName, 'the name is filled in');
    await page.fill('#signin-password', PASSWORD);
    await page.click('#signin-form button[type=submit]');
    await page.locator('#signin-dialog').waitFor({ state: 'hidden' });
    await page.locator('#connection-bar').waitFor({ state: 'hidden' });
    t.equal(await page.textContent('#room-title'), 'random', 'the same room is open');
    t.equal(await page.inputValue('#composer-text'), 'half a thought', 'the draft is kept');
    await page.press('#composer-text', 'Enter');
    await message(page, 'half a thought').waitFor();
    t.pass('and sending works again');
  });

  await step('reports of users and servers from their menus', async (t) => {
    const { page } = bob;
    await page.locator('#members .member-button', { hasText: carolName }).click();
    await page.getByRole('menuitem', { name: 'Report user' }).click();
    await page.fill('#ask-input', 'spams everyone');
    await page.click('#ask-submit');
    await page.locator('#toast', { hasText: 'Reported' }).waitFor();
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Report server' }).click();
    await page.fill('#ask-input', 'whole server is spam');
    await page.click('#ask-submit');
    await page.locator('#toast', { hasText: 'Reported' }).waitFor();
    t.pass('a user and a server are reported from their menus');
  });

  // ---- issues 18 and 19 in the browser: community tools, names and pictures, search ----------

  const daveName = uniqueName('dave');
  const daveShown = 'Dávid the Diver';
  let dave: Client;

  await step('issue 18: a channel is renamed and given a topic in server settings; everyone sees it live', async (t) => {
    const { page } = alice;
    await page.locator(`#server-list button[data-id="${serverId}"]`).click();
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.locator('#settings-dialog[open]').waitFor();
    await page.click('#settings-tab-channels');
    await page.locator('#settings-panel').getByRole('button', { name: 'Edit #history' }).click();
    await page.locator('#form-dialog[open]', { hasText: 'Edit #history' }).waitFor();
    await page.fill('#form-name', 'archive');
    await page.fill('#form-topic', 'Old messages live here');
    await page.click('#form-submit');
    await page.locator('#channel-settings-list .row-title', { hasText: 'archive' }).waitFor();
    t.equal(await page.locator('#channel-settings-list .row-sub', { hasText: 'Old messages live here' }).count(), 1, 'the settings list shows the new name with its topic');
    await page.click('#settings-close');
    t.equal(await page.locator('#channel-list button', { hasText: 'history' }).count(), 0, 'the old name is gone from the sidebar');
    await page.locator('#channel-list button', { hasText: 'archive' }).click();
    await page.locator('#room-title', { hasText: 'archive' }).waitFor();
    t.equal(await page.textContent('#room-topic'), 'Old messages live here', 'the topic is shown in the room header');
    t.ok(await page.isVisible('#room-topic'), 'and visible');
    const bobs = bob.page.locator('#channel-list button', { hasText: 'archive' });
    await bobs.waitFor();
    t.equal(await bob.page.locator('#channel-list button', { hasText: 'history' }).count(), 0, 'bob\'s sidebar follows the rename live');
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
    t.equal(await page.locator('#members .member-button', { hasText: daveShown }).locator('img.avatar').count(), 1, 'the member list follows: name and picture');
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
    t.equal(await message(page, 'dave says hi').count(), 0, 'the blocked user\'s message is collapsed');
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

  await step('issue 18: a ban from the member menu with a reason; the bans list; the audit log; unban', async (t) => {
    const { page } = alice;
    await page.locator('#members .member-button', { hasText: daveShown }).click();
    await page.locator('#member-menu').getByRole('menuitem', { name: `Ban ${daveShown}…` }).click();
    await page.locator('#form-dialog[open]', { hasText: `Ban ${daveShown}?` }).waitFor();
    await page.fill('#form-reason', 'spam links\neverywhere');
    await page.click('#form-submit');
    await page.locator('#toast', { hasText: 'was banned' }).waitFor();
    await page.locator('#members .member-button', { hasText: daveShown }).waitFor({ state: 'detached' });
    t.equal(await page.locator('#members .member-button', { hasText: daveShown }).count(), 0, 'the banned member leaves the member list');
    const token = inviteUrl.split('/invites/')[1];
    t.equal((await dave.post(`/api/invites/${token}/accept`)).status, 403, 'the invite refuses him now');

    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.click('#settings-tab-bans');
    const ban = page.locator('#ban-list li', { hasText: daveShown });
    await ban.waitFor();
    t.match(await ban.textContent(), 'spam links', 'the bans list shows him with the reason');

    await page.click('#settings-tab-audit');
    const banned = page.locator('#audit-list li[data-action="member_ban"]');
    await banned.waitFor();
    t.match(await banned.textContent(), daveShown, 'the audit log names who was banned');
    t.match(await banned.textContent(), 'Reason: spam links everywhere', 'with the reason the header carried (one line)');
    t.match(await banned.locator('.audit-line').textContent(), aliceName, 'and who did it');
    t.match(await page.locator('#audit-list li[data-action="channel_update"]').first().textContent(), 'Old messages live here', 'the channel change is there, with what changed');
    t.equal(await page.locator('#audit-list li[data-action="message_pin"]').count(), 1, 'and the pin');
    await shot(page, 'audit-log');

    await page.click('#settings-tab-bans');
    await page.locator('#ban-list li', { hasText: daveShown }).getByRole('button', { name: 'Unban' }).click();
    await page.locator('#ban-list li').waitFor({ state: 'detached' });
    t.equal(await page.locator('#ban-list li').count(), 0, 'Unban empties the list');
    t.equal((await dave.post(`/api/invites/${token}/accept`)).status, 200, 'and the invite works for him again');
    await page.click('#settings-close');
  });

  await step('issue 18: invites limited in uses and time, listed and revoked; a timeout from the member menu reaches the member\'s tab', async (t) => {
    const { page } = alice;
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.click('#settings-tab-invites');
    await page.selectOption('#invite-max-uses', '1');
    await page.selectOption('#invite-expiry', '3600');
    await page.click('.invite-form button[type=submit]');
    const limited = page.locator('#invite-list li', { hasText: '0 / 1 use' });
    await limited.waitFor();
    t.match(await limited.textContent(), /expires in (59|60) min/, 'the new invite is listed with its uses and expiry');
    t.match(await limited.textContent(), `by ${aliceName}`, 'and its creator');
    const token = (await limited.getAttribute('data-token'))!;
    t.equal((await dave.get(`/api/invites/${token}`)).status, 200, 'it works');
    await limited.getByRole('button', { name: 'Revoke' }).click();
    await page.locator('#ask-dialog[open]', { hasText: 'Revoke this invite?' }).waitFor();
    await page.click('#ask-submit');
    await page.locator(`#invite-list li[data-token="${token}"]`).waitFor({ state: 'detached' });
    t.equal((await dave.get(`/api/invites/${token}`)).status, 404, 'revoked, it answers 404');
    await page.click('#settings-close');

    await page.locator('#members .member-button', { hasText: carolName }).click();
    await page.locator('#member-menu').getByRole('menuitem', { name: 'Time out…' }).click();
    await page.locator('#form-dialog[open]', { hasText: `Time out ${carolName}` }).waitFor();
    await page.selectOption('#form-seconds', '600');
    await page.click('#form-submit');
    await page.locator('#members .member-button', { hasText: carolName }).locator('.timeout-mark').waitFor();
    t.match(await page.getAttribute(`#members .member-button:has-text("${carolName}")`, 'aria-label'), 'timed out', 'the member list marks the timeout');
    await carol.page.locator('#composer-notice', { hasText: 'You are timed out' }).waitFor();
    t.ok(await carol.page.isDisabled('#composer-text'), 'carol\'s composer closes live, saying until when');
    await page.locator('#members .member-button', { hasText: carolName }).click();
    await page.locator('#member-menu').getByRole('menuitem', { name: 'Remove timeout' }).click();
    await carol.page.locator('#composer-notice').waitFor({ state: 'hidden' });
    t.notOk(await carol.page.isDisabled('#composer-text'), 'and opens again when the timeout is lifted');
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
    t.notMatch(await bob.page.textContent('#room-sub'), aliceName, 'bob\'s group no longer lists alice');
  });

  await step('D7, D8: report cards name people and quote the message; actions say what they change; the target tab follows', async (t) => {
    await bob.page.goto(`${server.url}/admin`);
    await bob.page.locator('#problem', { hasText: 'administrators only' }).waitFor();
    t.pass('a non-administrator is told the page is for administrators only');

    const { page } = alice;
    await page.goto(`${server.url}/admin`);
    const card = page.locator('#report-list > li').filter({ hasText: 'not nice' });
    await card.waitFor();
    const text = (await card.textContent()) ?? '';
    t.match(text, bobName, 'the reporter is named');
    t.match(text, aliceName, 'the author is named');
    t.match(text, 'hello from alice', 'the reported message is quoted');
    t.notMatch(text, /[0-9a-f]{8}-[0-9a-f]{4}-/, 'no raw UUIDs');
    const userCard = page.locator('#report-list > li').filter({ hasText: 'spams everyone' });
    t.match(await userCard.textContent(), carolName, 'a user report names the user');
    t.match(await page.locator('#report-list > li').filter({ hasText: 'whole server is spam' }).textContent(), 'Book club', 'a server report names the server');
    await shot(page, 'admin');

    // Warn carol from the report: the confirmation says what the standing becomes.
    await userCard.getByRole('button', { name: 'Warn' }).click();
    const confirm = page.locator('#ask-dialog[open]');
    await confirm.waitFor();
    t.match(await confirm.textContent(), `This sets ${carolName}'s standing from 0 to 1`, 'the warning says what it changes');
    await page.click('#ask-submit');
    await page.locator('#notice', { hasText: 'was warned' }).waitFor();
    await carol.page.locator('#standing-banner', { hasText: 'Limited (1)' }).waitFor();
    t.ok(await carol.page.isVisible('#standing-banner a[href="/account/warnings"]'), 'D8: carol\'s open tab names the standing, with a link to the account page');

    await userCard.locator('select').selectOption('3');
    await userCard.getByRole('button', { name: 'Apply' }).click();
    await confirm.waitFor();
    t.match(await confirm.textContent(), `This sets ${carolName}'s standing from 1 to 3`, 'setting a standing says what it changes');
    await page.click('#ask-submit');
    await page.locator('#notice', { hasText: 'now 3' }).waitFor();
    await carol.page.locator('#standing-banner', { hasText: 'At risk (3)' }).waitFor();
    t.ok(await carol.page.isDisabled('#composer-text'), 'D8: at standing 3 the composer is disabled');
    t.match(await carol.page.getAttribute('#composer-text', 'placeholder'), 'does not allow sending', 'and says why');
    await shot(carol.page, 'phone-standing');

    // Removing a warning asks first.
    const row = page.locator('#user-list > li').filter({ hasText: carolName });
    await page.fill('#user-prefix', carolName);
    await until(page, 'the filtered user list', async () => (await page.locator('#user-list > li').count()) === 1);
    await row.locator('.warning-list').getByRole('button', { name: 'Remove' }).click();
    await confirm.waitFor();
    t.match(await confirm.textContent(), 'standing is recalculated', 'removing a warning asks first');
    await page.click('#ask-dialog button[data-cancel]');

    // Suspension reaches the open tab.
    await row.locator('select').selectOption('4');
    await row.getByRole('button', { name: 'Apply' }).click();
    await page.click('#ask-submit');
    await carol.page.locator('#standing-banner', { hasText: 'Suspended (4)' }).waitFor();
    await carol.page.locator('#connection-bar', { hasText: 'suspended' }).waitFor({ state: 'attached' });
    t.ok(await carol.page.isDisabled('#composer-text'), 'the composer is closed');
    t.pass('a suspension closes the stream with a banner naming it, not "no access to this server"');

    await userCard.getByRole('button', { name: 'Resolve' }).click();
    await userCard.locator('.badge.resolved').waitFor();
    t.pass('resolving a report updates its status');
  });

  await step('D10: styled pages for unknown paths and used or expired links; the account page; log out', async (t) => {
    const { page } = bob;
    await page.goto(`${server.url}/no-such-page`);
    await page.locator('h2', { hasText: 'There is no page here' }).waitFor();
    t.ok(await page.isVisible('a[href="/"]'), 'an unknown path gets a styled page with a way on');
    await page.goto(`${server.url}/api/verify-email?token=not-a-real-token`);
    await page.waitForURL(/\/email-verified\?error=used$/);
    await page.locator('#verify-title', { hasText: 'already used' }).waitFor();
    t.equal(await page.getAttribute('#verify-primary', 'href'), '/', 'a used verification link offers to open chat');
    await page.goto(`${server.url}/email-verified?error=expired`);
    await page.locator('#verify-primary', { hasText: 'Send a new link' }).waitFor();
    t.pass('an expired link offers to send a new one');
    await page.goto(`${server.url}/reset-password?token=not-a-real-token`);
    await page.fill('#password', 'a new horse');
    await page.fill('#confirm', 'a new horse');
    await page.click('#reset-form button[type=submit]');
    await page.locator('#status', { hasText: 'already used' }).waitFor();
    t.ok(await page.isVisible('#request-form'), 'a used reset link offers to send a new one');

    await page.goto(`${server.url}/account/warnings`);
    await page.locator('#standing', { hasText: '0 · All good' }).waitFor();
    await page.fill('#email', 'bob@example.org');
    await page.click('#email-form button[type=submit]');
    await page.locator('#email-state', { hasText: 'bob@example.org' }).waitFor();
    t.match(await page.textContent('#email-state'), 'not verified yet');
    await shot(page, 'account');
    await Promise.all([page.waitForURL(`${server.url}/`), page.click('form[action="/api/logout"] button[type=submit]')]);
    await page.locator('#login-username').waitFor();
    t.notOk(await sessionOf(bob, server.url), 'log out ends the session');
  });

  for (const b of everyone) t.same(b.problems, [], `no console error, page error, CSP violation or dialog for ${b.name}`);
  t.comment(`browser test took ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
