import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { uniqueName } from './helpers/client';
import { startServer, type TestServer } from './helpers/server';

/**
 * End to end through the system Chromium: the pages under the real page CSP, two users in two
 * separate browsers (each its own fresh profile), live delivery between them. playwright-core
 * only drives the browser; it downloads nothing. Machines without /usr/bin/chromium skip this.
 */
const CHROMIUM = '/usr/bin/chromium';
const SKIP = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install chromium); the browser test needs it`;
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'];
const WAIT = 10_000; // every wait below is bounded by this
const PASSWORD = 'correct horse';
const XSS = '<img src=x onerror=alert(1)>';
// A 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * Chromium logs every 4xx answer as a console error. These two are how the pages learn who is
 * looking (signed out; not an administrator), so they are expected; any other is a fault.
 */
const EXPECTED_REFUSALS: [number, string][] = [
  [401, '/api/account'],
  [403, '/api/admin/me'],
];

interface Browser {
  name: string;
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors, CSP violations and dialogs: all must stay empty. */
  problems: string[];
  /** While false (a deliberate script block), console noise is not counted. */
  watching: boolean;
}

async function openBrowser(t: Test, name: string): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), `chat-browser-${name}-`));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 800 },
    timeout: 30_000,
  });
  t.teardown(async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });
  context.setDefaultTimeout(WAIT);
  // The browser reports CSP violations to the page; make each one loud.
  await context.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI));",
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const browser: Browser = { name, context, page, problems: [], watching: true };
  page.on('console', (msg: ConsoleMessage) => {
    if (msg.type() !== 'error' || !browser.watching) return;
    const url = msg.location().url;
    if (EXPECTED_REFUSALS.some(([status, path]) => msg.text().includes(`status of ${status}`) && url.endsWith(path))) return;
    browser.problems.push(`console: ${msg.text()} (${url})`);
  });
  page.on('pageerror', (err) => browser.problems.push(`page error: ${err.message}`));
  page.on('dialog', async (dialog) => {
    browser.problems.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    await dialog.dismiss();
  });
  return browser;
}

/** Registers and logs in through the plain HTML forms. */
async function registerAndLogin(t: Test, b: Browser, url: string, username: string) {
  const { page } = b;
  await page.goto(`${url}/`);
  await page.fill('#register-username', username);
  await page.fill('#register-password', PASSWORD);
  await Promise.all([page.waitForURL(/\/\?registered=1$|\/$/), page.click('form[action="/api/register"] button[type=submit]')]);
  await page.fill('#login-username', username);
  await page.fill('#login-password', PASSWORD);
  await Promise.all([page.waitForURL(/\/\?logged_in=1$|\/(\?.*)?$/), page.click('form[action="/api/login"] button[type=submit]')]);
  const cookies = await b.context.cookies(url);
  t.ok(cookies.some((c) => c.name === 'app_session' && c.httpOnly), `${b.name} holds the HttpOnly session cookie after the form login`);
}

const message = (page: Page, text: string) => page.locator('#messages > li.msg').filter({ has: page.locator('.content', { hasText: text }) });

t.test('the chat works end to end in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  // Alice is an administrator (ADMIN_USERS applies at registration): she sees the admin page.
  const server: TestServer = await startServer({ env: { ADMIN_USERS: aliceName } });
  t.teardown(server.close);
  const alice = await openBrowser(t, 'alice');
  const bob = await openBrowser(t, 'bob');
  // The steps build on each other: after a failed one, the rest are skipped, not failed too.
  let broken = false;
  const step = (name: string, fn: (t: Test) => Promise<void>) =>
    t.test(name, { skip: broken && 'an earlier step failed' }, async (t) => {
      let threw = true;
      try {
        await fn(t);
        threw = false;
      } finally {
        if (threw || !t.passing()) {
          broken = true;
          // What each browser showed when the step failed, to see why.
          for (const b of [alice, bob]) await b.page.screenshot({ path: path.join(os.tmpdir(), `browser-test-failed-${b.name}.png`) }).catch(() => {});
          t.comment(`screenshots: ${os.tmpdir()}/browser-test-failed-*.png; problems so far: ${JSON.stringify([...alice.problems, ...bob.problems])}`);
        }
      }
    });

  await step('register and log in through the HTML forms, without JavaScript', async (t) => {
    // Bob's first visit runs no script at all: the forms are plain posts answered by redirects.
    bob.watching = false;
    await bob.page.route('**/*.js', (route) => route.abort());
    await bob.page.goto(`${server.url}/`);
    await bob.page.fill('#register-username', bobName);
    await bob.page.fill('#register-password', PASSWORD);
    await Promise.all([bob.page.waitForURL(`${server.url}/?registered=1`), bob.page.click('form[action="/api/register"] button[type=submit]')]);
    await bob.page.fill('#login-username', bobName);
    await bob.page.fill('#login-password', 'wrong password');
    await Promise.all([bob.page.waitForURL(/\?error=/), bob.page.click('form[action="/api/login"] button[type=submit]')]);
    t.match(decodeURIComponent(bob.page.url()), /error=invalid username or password/, 'a wrong password comes back as ?error=');
    await bob.page.fill('#login-username', bobName);
    await bob.page.fill('#login-password', PASSWORD);
    await Promise.all([bob.page.waitForURL(`${server.url}/?logged_in=1`), bob.page.click('form[action="/api/login"] button[type=submit]')]);
    t.ok((await bob.context.cookies(server.url)).some((c) => c.name === 'app_session'), 'the form login set the session cookie');
    await bob.page.unroute('**/*.js');
    bob.watching = true;

    // Alice, with JavaScript: the page shows the outcome and then the app.
    await alice.page.goto(`${server.url}/?error=${encodeURIComponent(XSS)}`);
    await alice.page.locator('#problem').waitFor();
    t.equal(await alice.page.textContent('#problem'), XSS, '?error= is shown as text');
    t.equal(await alice.page.locator('#problem img').count(), 0, 'and creates no element');
    t.ok(await alice.page.isVisible('a[href="/reset-password"]'), 'signed out, a "Forgot your password?" link is shown');
    await registerAndLogin(t, alice, server.url, aliceName);
    await alice.page.locator('#app').waitFor();
    t.equal(await alice.page.textContent('#who'), `signed in as ${aliceName}`);
  });

  let inviteUrl = '';
  await step('create a server and send a message through the UI', async (t) => {
    const { page } = alice;
    await page.click('#new-server');
    await page.fill('#ask-input', `Book club ${XSS}`);
    await page.click('#ask-submit');
    await page.locator('#server-list button', { hasText: 'Book club' }).waitFor();
    t.equal(await page.textContent('#server-name'), `Book club ${XSS}`, 'the server name is shown as literal text');
    t.equal(await page.locator('#server-list img, #server-name img, #room-title img').count(), 0, 'no element comes from the name');
    await page.locator('#channel-list button', { hasText: '# general' }).waitFor();
    t.ok(await page.isVisible('#new-channel'), 'the owner is offered "New channel"');
    await page.locator('#live-state', { hasText: 'live' }).waitFor();

    await page.fill('#composer-text', 'hello from alice\nsecond line');
    await page.press('#composer-text', 'Enter');
    await message(page, 'hello from alice').waitFor();
    t.equal(await message(page, 'hello from alice').locator('.content').textContent(), 'hello from alice\nsecond line', 'newlines are kept');
    t.equal(await message(page, 'hello from alice').locator('.author').textContent(), aliceName);
    t.equal(await page.inputValue('#composer-text'), '', 'the composer is cleared');

    await page.click('#invite-button');
    await page.locator('#invite-dialog[open]').waitFor();
    inviteUrl = await page.inputValue('#invite-url');
    t.match(inviteUrl, `${server.url}/invites/`, 'the invite dialog shows the link to share');
    await page.click('#invite-dialog button[type=submit]');
  });

  await step('a second user joins through the invite page and sees messages arrive live', async (t) => {
    const { page } = bob;
    await page.goto(inviteUrl);
    await page.locator('#join:not([hidden])').waitFor();
    t.match(await page.textContent('#invite-status'), 'Book club', 'the invite page names the server');
    await Promise.all([page.waitForURL(/\/\?server=/), page.click('#join')]);
    await message(page, 'hello from alice').waitFor();
    t.notOk(await page.isVisible('#new-channel'), 'a plain member is not offered "New channel"');
    await page.locator('#live-state', { hasText: 'live' }).waitFor();

    await alice.page.fill('#composer-text', 'are you there, bob?');
    await alice.page.press('#composer-text', 'Enter');
    await message(page, 'are you there, bob?').waitFor();
    t.pass("bob sees alice's new message without reloading");
  });

  await step('a reaction shows up live for the other user', async (t) => {
    const target = message(bob.page, 'are you there, bob?');
    await target.hover();
    await target.getByRole('button', { name: 'React', exact: true }).click();
    await target.getByRole('button', { name: 'React with 👍' }).click();
    await target.locator('.reaction.reacted', { hasText: '👍 1' }).waitFor();
    t.equal(await target.locator('.reaction').getAttribute('aria-pressed'), 'true', 'bob sees his reaction highlighted');

    const seen = message(alice.page, 'are you there, bob?').locator('.reaction', { hasText: '👍 1' });
    await seen.waitFor();
    t.equal(await seen.getAttribute('aria-pressed'), 'false', 'alice sees the count, not highlighted for her');
    // Alice adds hers by clicking the count: both see 2.
    await seen.click();
    await message(alice.page, 'are you there, bob?').locator('.reaction.reacted', { hasText: '👍 2' }).waitFor();
    await message(bob.page, 'are you there, bob?').locator('.reaction', { hasText: '👍 2' }).waitFor();
    t.pass('the count reaches 2 on both sides');
  });

  await step('an attached PNG renders as an image, for the sender and live for the other', async (t) => {
    const { page } = bob;
    await page.fill('#composer-text', 'a picture');
    await page.setInputFiles('#composer-files', { name: 'dot.png', mimeType: 'image/png', buffer: PNG });
    await page.click('#send-button');
    for (const b of [bob, alice]) {
      const img = message(b.page, 'a picture').locator('.attachments img');
      await img.waitFor();
      t.match(await img.getAttribute('src'), /^\/uploads\/[0-9a-f-]{36}$/, `${b.name} sees an <img> of the upload`);
      await b.page.waitForFunction((img: any) => img.complete && img.naturalWidth === 1, await img.elementHandle(), { timeout: WAIT });
    }
    t.equal(await page.inputValue('#composer-files'), '', 'the file input is cleared after sending');
  });

  await step('replying shows the preview of the message answered', async (t) => {
    const { page } = alice;
    const original = message(page, 'a picture');
    await original.hover();
    await original.getByRole('button', { name: 'Reply', exact: true }).click();
    t.match(await page.textContent('#reply-text'), `Replying to ${bobName}: a picture`);
    await page.fill('#composer-text', 'nice picture');
    await page.press('#composer-text', 'Enter');
    for (const b of [alice, bob]) {
      const preview = message(b.page, 'nice picture').locator('.reply-preview');
      await preview.waitFor();
      t.match(await preview.textContent(), `${bobName} a picture`, `${b.name} sees the reply preview`);
    }
    t.notOk(await page.isVisible('#reply-bar'), 'the reply indicator is gone after sending');
  });

  await step('user text that looks like HTML stays text', async (t) => {
    await alice.page.fill('#composer-text', XSS);
    await alice.page.press('#composer-text', 'Enter');
    for (const b of [alice, bob]) {
      const item = message(b.page, 'onerror');
      await item.waitFor();
      t.equal(await item.locator('.content').textContent(), XSS, `${b.name} sees the literal text`);
      t.equal(await b.page.locator('img[src="x"]').count(), 0, `${b.name}'s page has no element made from it`);
      t.equal(await b.page.locator('#messages img').count(), 1, `${b.name}'s only image is the PNG attachment`);
    }
    await alice.page.screenshot({ path: '/tmp/chat.png' });
  });

  await step('a report filed in the UI is listed on the admin page', async (t) => {
    const target = message(bob.page, 'onerror');
    await target.hover();
    await target.getByRole('button', { name: 'Report', exact: true }).click();
    await bob.page.fill('#ask-input', 'posts markup');
    await bob.page.click('#ask-submit');
    await bob.page.locator('#toast', { hasText: 'Reported' }).waitFor();

    await bob.page.goto(`${server.url}/admin`);
    await bob.page.locator('#problem', { hasText: 'administrators only' }).waitFor();
    t.pass('a non-administrator is told the page is for administrators only');

    const { page } = alice;
    t.ok(await page.isVisible('#admin-link'), 'an administrator sees the Admin link');
    await page.goto(`${server.url}/admin`);
    const report = page.locator('#report-list > li').filter({ hasText: 'posts markup' });
    await report.waitFor();
    const text = (await report.textContent()) ?? '';
    for (const part of ['server_message', bobName, aliceName, XSS, 'pending']) t.match(text, part, `the report shows ${part}`);
    t.equal(await report.locator('img').count(), 0, 'the snapshot content is text');
    await report.getByRole('button', { name: 'Resolve' }).click();
    await report.locator('.badge.resolved').waitFor();
    t.pass('resolving the report updates its status');

    const row = page.locator('#user-list > li').filter({ hasText: bobName });
    await page.fill('#user-prefix', bobName);
    await row.waitFor();
    await row.locator('input[name=reason]').fill('be nice');
    await row.getByRole('button', { name: 'Warn' }).click();
    await page.locator('#user-list > li').filter({ hasText: 'be nice' }).waitFor();
    await page.locator('#warning-list > li').filter({ hasText: 'be nice' }).waitFor();
    t.equal(await page.locator('#user-list > li').filter({ hasText: bobName }).locator('select').inputValue(), '1', 'one warning: standing 1');
  });

  await step('the account page shows the standing, the warnings and the email form', async (t) => {
    const { page } = bob;
    await page.goto(`${server.url}/account/warnings`);
    await page.locator('#warnings li', { hasText: 'be nice' }).waitFor();
    t.match(await page.textContent('#standing'), '1 · Limited');
    t.equal(await page.textContent('#email-state'), 'No email address yet.');
    await page.fill('#email', 'bob@example.org');
    await page.click('#email-form button[type=submit]');
    await page.locator('#email-state', { hasText: 'bob@example.org' }).waitFor();
    t.match(await page.textContent('#email-state'), 'not verified yet');
  });

  t.same(alice.problems, [], 'no console error, page error, CSP violation or dialog for alice');
  t.same(bob.problems, [], 'no console error, page error, CSP violation or dialog for bob');
});
