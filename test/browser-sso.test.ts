import type { CDPSession, Page } from 'playwright-core';
import t from 'tap';
import { ARGS, CHROMIUM, SKIP, WAIT, clientOf, openWindow, shot, stepper, until } from './helpers/browser';
import { Secret, TOTP } from 'otpauth';
import { createSecretBox, loadSecretKey } from '../src/core/secret-box';
import { listenProvider } from './helpers/oidc-provider';
import { FakeClock, startServer } from './helpers/server';

/**
 * Signing in with an organisation and with a passkey (issue 55) end to end in the system
 * Chromium, under the page CSP: from the sign-in page through the provider's own login and
 * consent pages (oidc-provider on loopback) into a new account; a passkey registered on the
 * account page with Chromium's virtual authenticator (DevTools protocol WebAuthn.*); the
 * provider unlinked and linked again from the account page; and signing in with the passkey,
 * by its button and by the username field's autofill (the conditional UI), without a username;
 * with two-factor sign-in on, the provider's sign-in finished by the code on the sign-in page;
 * the app's sign-in dialog's passkey; a recovery code alone for an account without a password.
 *
 * WebAuthn needs a domain for its relying party (never an IP address), so the page is served as
 * http://localhost:<port> (a secure context): BASE_URL says so, and Chromium maps localhost to
 * the loopback address the server listens on.
 */
const EXPECTED_REFUSALS: [number, string][] = [
  // How the sign-in page learns it is signed out.
  [401, '/api/account'],
  // The passkey removed at the end, offered by the authenticator still.
  [401, '/api/login/passkey'],
  // Signed out by the server, the app asks to sign in again by itself and is refused (its device ended).
  [401, '/api/session/resume'],
  // The provider's pages ask for a favicon it does not have.
  [404, '/favicon.ico'],
];

t.test('sign in through the provider, register a passkey, sign in with it (button and autofill)', { skip: SKIP }, async (t) => {
  const listening = await listenProvider();
  t.teardown(listening.close);
  // A clock the test moves a TOTP step at a time (the provider's tokens carry real times: it starts at now).
  const clock = new FakeClock(Date.now());
  const server = await startServer({ clock, env: { OIDC_PROVIDERS: JSON.stringify([listening.entry({ allow_signup: true })]) } });
  t.teardown(server.close);
  const base = server.url.replace('127.0.0.1', 'localhost');
  server.app.config.baseUrl = base;
  const provider = await listening.configure(`${base}/api/auth/oidc/test/callback`);

  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...ARGS, '--host-resolver-rules=MAP localhost 127.0.0.1'],
    headless: true,
    timeout: 30_000,
  });
  t.teardown(() => browser.close());
  // The account page's own loads (blocks, friend requests) may still be under way when the test
  // signs the page out by clearing its cookie; refused then, they are no fault of the page.
  const signedOutLoads: [number, string][] = [
    [401, '/api/blocks'],
    [401, '/api/friends/requests'],
  ];
  const w = await openWindow(t, browser, 'laptop', [...EXPECTED_REFUSALS, ...signedOutLoads]);
  const { page } = w;
  const step = stepper(t, [w], 'browser-sso');
  let cdp: CDPSession;
  let authenticatorId = '';
  let userId = '';
  let recoveryCodes: string[] = [];

  /**
   * Walks the provider's own pages (its login form, then its consent) until it sends the browser
   * back. Its pages are not ours: what they log (a web font they cannot fetch here) is not watched.
   */
  async function throughProvider(p: Page, login: string) {
    w.watching = false;
    for (let i = 0; i < 4 && p.url().startsWith(provider.issuer); i++) {
      const form = p.locator('input[name=login]');
      if (await form.count()) {
        await form.fill(login);
        await p.fill('input[name=password]', 'any password');
      }
      await Promise.all([p.waitForEvent('load', { timeout: WAIT }), p.locator('button[type=submit]').first().click()]);
    }
    w.watching = true;
  }

  /**
   * Signed out: the browser forgets its cookies and storage, as a new browser would (the
   * authenticator keeps its passkey). `autofill` false: a browser without the conditional UI.
   */
  async function signOut(autofill: boolean) {
    await page.evaluate((off) => {
      localStorage.clear();
      sessionStorage.clear();
      if (off) localStorage.setItem('test.no-autofill', '1');
    }, !autofill);
    // Leave the app first (for a file of the site, where the test's scripts still run): what
    // the app still loads would meet a 401 once the cookie is gone.
    await page.goto(`${base}/manifest.webmanifest`);
    await w.context.clearCookies();
    await page.goto(`${base}/`);
  }

  const sessionOfPage = async () => (await w.context.cookies(base)).find((c) => c.name === 'app_session')?.value;

  /** How the page called navigator.credentials.get() since the sign-out: "conditional" or "modal", in order. */
  const mediations = async () => JSON.parse((await page.evaluate(() => sessionStorage.getItem('test.mediations'))) ?? '[]') as string[];

  await step('the sign-in page offers the provider; its own login page signs in and makes the account', async (t) => {
    await page.goto(`${base}/`);
    const button = page.getByRole('link', { name: 'Sign in with Test Org' });
    await button.waitFor();
    t.ok(await page.isVisible('#passkey-signin'), 'and a passkey button');
    await shot(page, 'sso-sign-in-page');
    w.watching = false;
    await Promise.all([page.waitForURL((url) => url.href.startsWith(provider.issuer)), button.click()]);
    t.ok(await page.locator('input[name=login]').isVisible(), "the provider's own login page");
    await throughProvider(page, 'zed');
    await page.waitForURL(`${base}/`, { waitUntil: 'commit' });
    await page.locator('#me-button').waitFor();
    const account = (await (await clientOf(w, base)).get('/api/account')).body;
    t.equal(account.username, 'zed', 'the username from the claim');
    t.equal(account.has_password, false, 'an account made through the provider has no password');
    userId = account.user_id;
  });

  await step('the account page registers a passkey with the virtual authenticator', async (t) => {
    cdp = await w.context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
    await page.goto(`${base}/account#sign-in-methods`);
    await page.locator('#identity-list li', { hasText: 'Test Org' }).waitFor();
    t.notOk(await page.isVisible('#methods-password'), 'no password to give: the sign-in was just now');
    await page.fill('#passkey-name', 'This laptop');
    await page.click('#passkey-add');
    await page.locator('#passkey-list li', { hasText: 'This laptop' }).waitFor();
    await page.locator('#methods-result', { hasText: 'added' }).waitFor();
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    t.equal(credentials.length, 1, 'the authenticator holds the passkey');
    t.equal(credentials[0].isResidentCredential, true, 'discoverable');
    t.equal(credentials[0].rpId, 'localhost', "the relying party is BASE_URL's host");
    await shot(page, 'sso-account-methods', true);
  });

  await step('the provider is unlinked and linked again from the account page', async (t) => {
    page.once('dialog', () => {}); // none expected: the page asks in its own dialog
    await page
      .locator('#identity-list li', { hasText: 'Test Org' })
      .getByRole('button', { name: /Unlink/ })
      .click();
    await page.locator('#ask-dialog').getByRole('button', { name: 'Unlink' }).click();
    await page.locator('#methods-result', { hasText: 'Test Org is unlinked' }).waitFor();
    await page.locator('#no-identities').waitFor();
    t.same((await (await clientOf(w, base)).get('/api/account/identities')).body, [], 'the server forgot it');
    // The provider may still know the person (its own session): then it sends the browser straight back.
    w.watching = false;
    await page.getByRole('button', { name: 'Link Test Org' }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer) || url.pathname === '/account', { waitUntil: 'commit' });
    await page.waitForLoadState();
    await throughProvider(page, 'zed');
    w.watching = true;
    await page.waitForURL(/\/account\?linked=1/, { waitUntil: 'commit' });
    await page.locator('#identity-list li', { hasText: 'Test Org' }).waitFor();
    t.pass('linked again through the provider');
  });

  await step('signed out, the passkey button signs in without a username', async (t) => {
    // Each call of navigator.credentials.get() is noted (the virtual authenticator answers a
    // conditional request at once, as if the person picked the passkey in the autofill).
    await w.context.addInitScript({
      content: `{
        const get = navigator.credentials.get.bind(navigator.credentials);
        navigator.credentials.get = (options) => {
          const seen = JSON.parse(sessionStorage.getItem('test.mediations') || '[]');
          sessionStorage.setItem('test.mediations', JSON.stringify([...seen, (options && options.mediation) || 'modal']));
          return get(options);
        };
        if (localStorage.getItem('test.no-autofill')) PublicKeyCredential.isConditionalMediationAvailable = async () => false;
      }`,
    });
    await signOut(false);
    await page.locator('#login-form').waitFor();
    await page.click('#passkey-signin');
    await page.locator('#me-button').waitFor();
    const sessions = server.app.sessions.listForUser(userId);
    t.ok(
      sessions.some((s) => s.method === 'passkey'),
      'a session opened by the passkey',
    );
    t.same(await mediations(), ['modal'], "the button's prompt");
  });

  await step("signed out, the username field's autofill (conditional UI) signs in with the passkey", async (t) => {
    const before = server.app.sessions.listForUser(userId).filter((s) => s.method === 'passkey').length;
    // Nothing is clicked: the page's waiting request (mediation "conditional") is answered when the
    // person picks the passkey in the field's autofill, which the virtual authenticator does at once.
    await signOut(true);
    await page.locator('#me-button').waitFor();
    await until(page, 'the passkey session', async () => server.app.sessions.listForUser(userId).filter((s) => s.method === 'passkey').length > before);
    t.same(await mediations(), ['conditional'], 'signed in from the autofill, no button pressed');
  });

  await step('with two-factor sign-in on, a sign-in through the provider asks the code on the sign-in page', async (t) => {
    // Set up through the API (browser-account.test.ts walks the page), with a secret the test knows.
    const api = await clientOf(w, base);
    await api.post('/api/account/2fa/setup', {});
    const secret = new Secret({ size: 20 }).base32;
    const box = createSecretBox(loadSecretKey(server.dataDir, null));
    server.app.db.prepare('UPDATE users SET totp_pending = ? WHERE id = ?').run(box.seal(secret, userId), userId);
    const code = () => {
      clock.advance(30_000);
      return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: clock.now() });
    };
    const enabled = await api.post('/api/account/2fa/enable', { code: code() });
    t.equal(enabled.status, 200, 'two-factor sign-in on');
    recoveryCodes = enabled.body.recovery_codes;
    await signOut(false);
    await page.locator('#login-form').waitFor();
    w.watching = false;
    await page.getByRole('link', { name: 'Sign in with Test Org' }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer) || url.search === '?sso=code', { waitUntil: 'commit' });
    await page.waitForLoadState();
    await throughProvider(page, 'zed');
    await page.locator('#sso-code-panel').waitFor();
    t.notOk(await page.isVisible('#login-panel'), 'only the code step shows');
    t.notOk(await sessionOfPage(), 'no session yet');
    await page.fill('#sso-code', code());
    await page.click('#sso-code-form button[type=submit]');
    await page.locator('#me-button').waitFor();
    t.ok(
      server.app.sessions.listForUser(userId).some((s) => s.method === 'oidc'),
      'signed in through the provider and the code',
    );
  });

  await step("signed out while in the app, the sign-in dialog's passkey button signs in again", async (t) => {
    server.app.accountChanges.endDevices(userId);
    server.app.sessions.endAllForUser(userId);
    await page.locator('#signin-dialog').waitFor();
    t.ok(await page.isVisible('#signin-passkey'), 'the dialog offers a passkey (this account has no password)');
    await page.click('#signin-passkey');
    await page.locator('#signin-dialog').waitFor({ state: 'hidden' });
    t.ok(
      server.app.sessions.listForUser(userId).some((s) => s.method === 'passkey'),
      'a new session, opened by the passkey',
    );
  });

  await step('an account without a password signs in with a recovery code alone from the sign-in page', async (t) => {
    await signOut(false);
    await page.locator('#login-form').waitFor();
    await page.click('#recovery-signin summary');
    await page.fill('#recovery-username', 'zed');
    await page.fill('#recovery-code', recoveryCodes[0]);
    await page.click('#recovery-form button[type=submit]');
    await page.locator('#me-button').waitFor();
    t.ok(
      server.app.sessions.listForUser(userId).some((s) => s.method === 'recovery'),
      'a session opened by the recovery code',
    );
  });

  await step('a passkey removed on the account page no longer signs in', async (t) => {
    await page.goto(`${base}/account#sign-in-methods`);
    await page
      .locator('#passkey-list li', { hasText: 'This laptop' })
      .getByRole('button', { name: /Remove/ })
      .click();
    await page.locator('#ask-dialog').getByRole('button', { name: 'Remove' }).click();
    await page.locator('#no-passkeys').waitFor();
    t.same((await (await clientOf(w, base)).get('/api/account/passkeys')).body, [], 'the server forgot it');
    await signOut(true);
    await page.locator('#problem', { hasText: 'That passkey did not sign you in' }).waitFor();
    t.ok(await page.isVisible('#login-form'), 'the page stays signed out');
    t.same(await mediations(), ['conditional'], 'offered once by the autofill, not asked again and again');
    t.same(w.problems, [], 'no console error, page error or CSP violation');
  });
});
