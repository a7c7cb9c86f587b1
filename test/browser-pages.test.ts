import t from 'tap';
import { SKIP, PASSWORD, XSS, bookClub, clientOf, closeScene, message, openChannel, openScene, post, sessionOf, shot, addChannel } from './helpers/browser';
import { Client, uniqueName } from './helpers/client';
import { APP_MAX_KB, loadOnce } from '../bench/page-load';

/**
 * Signing in, invitations and the simple pages, end to end through the system Chromium under the
 * page CSP: the forms with and without JavaScript, an invitee who registers from the invite page
 * and comes back to it, a tab signed out from elsewhere that signs in again in place, the styled
 * pages for unknown paths and used links, the account page, logging out. Alice and Bob on
 * desktops, Carol on a phone (390×844 with touch, preferring dark), each in a browser of their
 * own. Machines without /usr/bin/chromium skip this.
 *
 * Each step names the issue-17 defect (D1…D11) or the feature it proves.
 */
t.test('signing in, invitations and the simple pages work in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  const carolName = uniqueName('carol');
  const scene = await openScene(t, 'browser-pages', [{ name: 'alice' }, { name: 'bob' }, { name: 'carol', phone: true }]);
  const { server, step } = scene;
  const [alice, bob, carol] = scene.windows;
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
    t.notMatch(await page.textContent('#problem'), 'img', "text from the URL is never shown: an unknown code gets the page's own words");
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

  await step('(set-up) alice has a server with a message in #general, open in her tab', async () => {
    const api = await clientOf(alice, server.url);
    ({ serverId, generalId } = await bookClub(api, []));
    await post(api, serverId, generalId, 'hello from alice\nsecond line');
    await openChannel(alice, server.url, serverId, generalId, 'general');
    await message(alice.page, 'hello from alice').waitFor();
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

  await step('(set-up) the server gets a second channel, #random', async () => {
    await addChannel(await clientOf(alice, server.url), serverId, 'random');
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

  await step('the app page weighs at most 160 KB on a cold load (the figure is printed, so growth is seen)', async (t) => {
    // As bench/page-weight.ts measures it: a fresh context, every response's bytes on the wire.
    const cookie = `app_session=${await sessionOf(alice, server.url)}`;
    const browser = alice.context.browser()!;
    const ready = async (page: import('playwright-core').Page) => {
      await message(page, 'hello from alice').waitFor();
      await page.locator('#composer-text').waitFor({ state: 'visible' });
    };
    const load = await loadOnce(browser, server.url, `/?server=${serverId}&channel=${generalId}`, { cookie, identity: false, throttle: false, ready });
    t.comment(`page weight: app page, cold, ${(load.bytes / 1000).toFixed(1)} KB in ${load.requests} responses (target <= ${APP_MAX_KB} KB)`);
    t.ok(load.bytes <= APP_MAX_KB * 1000, `the app page is ${(load.bytes / 1000).toFixed(1)} KB, at most ${APP_MAX_KB} KB`);
  });

  closeScene(t, scene);
});
