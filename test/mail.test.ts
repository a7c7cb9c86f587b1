import fs from 'node:fs';
import t, { type Test } from 'tap';
import { FakeClock, startServer, type TestServer } from './helpers/server';
import { Client, signUp, uniqueName } from './helpers/client';
import { SmtpSink, closedPort, linkIn, readOutbox, silentServer, tokenOf, type ReceivedMail } from './helpers/mail';
import { MAX_EMAIL_LENGTH, RESET_TOKEN_LIFETIME_MS, VERIFY_TOKEN_LIFETIME_MS } from '../src/api/email';
import { createMailer } from '../src/parts/accounts/mail';
import { MINUTE } from '../src/core/clock';

const uniqueEmail = (domain = 'example.com') => `${uniqueName('mail')}@${domain}`;

/** Every token a test saw in a message: none of them may ever reach a log line. */
const seenTokens = new Set<string>();

function noTokenInLogs(t: Test, server: TestServer): void {
  const leaked = server.logs.filter((line) => [...seenTokens].some((token) => line.includes(token)));
  t.same(leaked, [], 'no log line carries a token');
}

/** Follows a link from a message as a fresh client (no session): links work in any browser. */
function open(server: TestServer, link: URL, headers: Record<string, string> = {}) {
  return new Client(server.url).get(link.pathname + link.search, headers);
}

function verifyLink(t: Test, server: TestServer, mail: ReceivedMail): URL {
  const link = linkIn(mail, '/api/verify-email');
  t.equal(link.origin, server.url, 'the link is absolute, built from BASE_URL');
  seenTokens.add(tokenOf(link));
  return link;
}

function resetToken(t: Test, server: TestServer, mail: ReceivedMail): string {
  const link = linkIn(mail, '/reset-password');
  t.equal(link.origin, server.url, 'the link is absolute, built from BASE_URL');
  seenTokens.add(tokenOf(link));
  return tokenOf(link);
}

/** A signed-in user whose address is verified through the emailed link. */
async function verifiedUser(t: Test, server: TestServer, sink: SmtpSink, email = uniqueEmail()): Promise<Client> {
  const user = await signUp(server.url);
  t.equal((await user.put('/api/account/email', { email })).status, 200);
  const link = verifyLink(t, server, await sink.next(email));
  t.equal((await open(server, link)).status, 200);
  return user;
}

t.test('email through a real SMTP server', async (t) => {
  const sink = await new SmtpSink().start();
  const server = await startServer({ env: { SMTP_URL: sink.url } });
  t.teardown(async () => {
    await server.close();
    await sink.close();
  });
  t.afterEach(() => noTokenInLogs(t, server));

  t.test('setting an address stores it unverified and mails a link that verifies it', async (t) => {
    const user = await signUp(server.url);
    const email = uniqueEmail();
    const put = await user.put('/api/account/email', { email });
    t.equal(put.status, 200);
    t.same(put.body, { email, email_verified: false });
    t.match((await user.get('/api/account')).body, { email, email_verified: false });

    const mail = await sink.next(email);
    t.equal(mail.subject, 'Confirm your email address');
    t.match(mail.text, user.username);
    const link = verifyLink(t, server, mail);
    t.match(tokenOf(link), /^[A-Za-z0-9_-]{43}$/, 'a 256-bit base64url token');

    const verified = await open(server, link);
    t.equal(verified.status, 200);
    t.same(verified.body, { email, email_verified: true });
    t.match((await user.get('/api/account')).body, { email, email_verified: true });
    t.ok(server.logs.some((line) => line.includes(`mail to ${email} "Confirm your email address" sent by SMTP`)));
  });

  t.test('a verification link works once', async (t) => {
    const user = await signUp(server.url);
    const email = uniqueEmail();
    await user.put('/api/account/email', { email });
    const link = verifyLink(t, server, await sink.next(email));
    t.equal((await open(server, link)).status, 200);
    const again = await open(server, link);
    t.equal(again.status, 400);
    t.match(again.text, 'invalid or has already been used');
  });

  t.test('a browser opening the verification link lands on the email-verified page', async (t) => {
    const user = await signUp(server.url);
    const email = uniqueEmail();
    await user.put('/api/account/email', { email });
    const link = verifyLink(t, server, await sink.next(email));
    const res = await open(server, link, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    t.equal(res.status, 303);
    t.equal(res.headers.get('location'), '/email-verified');
    t.match((await user.get('/api/account')).body, { email_verified: true });
    const page = await new Client(server.url).get('/email-verified');
    t.equal(page.status, 200);
    t.match(page.headers.get('content-type'), 'text/html');
    t.match(page.text, 'Email address verified');
  });

  t.test('a browser opening a used, bad or contested verification link lands on a page that says so', async (t) => {
    const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
    const user = await signUp(server.url);
    const email = uniqueEmail();
    await user.put('/api/account/email', { email });
    const link = verifyLink(t, server, await sink.next(email));
    t.equal((await open(server, link, html)).status, 303, 'the first opening verifies');
    const used = await open(server, link, html);
    t.equal(used.status, 303, 'a used link is not a plain-text page for a browser');
    t.equal(used.headers.get('location'), '/email-verified?error=used');
    const missing = await new Client(server.url).get('/api/verify-email', html);
    t.equal(missing.headers.get('location'), '/email-verified?error=missing', 'a link without its token');
    const bogus = await new Client(server.url).get('/api/verify-email?token=nothing-like-a-token', html);
    t.equal(bogus.headers.get('location'), '/email-verified?error=used', 'an unknown token');

    // Two accounts set one address; the second to open its link finds it taken.
    const shared = uniqueEmail();
    const first = await signUp(server.url);
    const second = await signUp(server.url);
    await first.put('/api/account/email', { email: shared });
    const firstLink = verifyLink(t, server, await sink.next(shared));
    await second.put('/api/account/email', { email: shared });
    const secondLink = verifyLink(t, server, await sink.next(shared));
    t.equal((await open(server, firstLink)).status, 200);
    const taken = await open(server, secondLink, html);
    t.equal(taken.headers.get('location'), '/email-verified?error=conflict', 'an address verified on another account');

    // API clients keep the plain-text answers.
    const api = await open(server, link);
    t.equal(api.status, 400);
    t.match(api.headers.get('content-type'), /^text\/plain/);
    const page = await new Client(server.url).get('/email-verified?error=used');
    t.equal(page.status, 200, 'the page is served for any code (its script words the code)');
    t.match(page.text, 'email-verified.js');
  });

  t.test('changing the address unverifies it and only the newest link verifies', async (t) => {
    const first = uniqueEmail();
    const user = await verifiedUser(t, server, sink, first);

    const second = uniqueEmail();
    const moved = await user.put('/api/account/email', { email: second });
    t.equal(moved.status, 400, 'an address in place of another needs the current password');
    t.match(moved.text, /current_password is required/);
    t.equal((await user.put('/api/account/email', { email: second, current_password: 'wrong password' })).status, 403, 'and the right one');
    t.match((await user.get('/api/account')).body, { email: first, email_verified: true }, 'unchanged');
    t.same((await user.put('/api/account/email', { email: second, current_password: 'correct horse' })).body, { email: second, email_verified: false });
    t.match((await user.get('/api/account')).body, { email: second, email_verified: false });
    const secondLink = verifyLink(t, server, await sink.next(second));

    const third = uniqueEmail();
    await user.put('/api/account/email', { email: third, current_password: 'correct horse' });
    const thirdLink = verifyLink(t, server, await sink.next(third));

    const stale = await open(server, secondLink);
    t.equal(stale.status, 400, 'the older link no longer works');
    t.match((await user.get('/api/account')).body, { email: third, email_verified: false });

    t.same((await open(server, thirdLink)).body, { email: third, email_verified: true });
    t.match((await user.get('/api/account')).body, { email: third, email_verified: true });
  });

  t.test('setting the same unverified address again sends a new link and retires the old one', async (t) => {
    const user = await signUp(server.url);
    const email = uniqueEmail();
    await user.put('/api/account/email', { email });
    const oldLink = verifyLink(t, server, await sink.next(email));
    await user.put('/api/account/email', { email });
    const newLink = verifyLink(t, server, await sink.next(email));
    t.equal((await open(server, oldLink)).status, 400);
    t.equal((await open(server, newLink)).status, 200);
  });

  t.test('setting the address that is already verified changes nothing and sends nothing', async (t) => {
    const email = uniqueEmail();
    const user = await verifiedUser(t, server, sink, email);
    const before = sink.received.length;
    const res = await user.put('/api/account/email', { email });
    t.equal(res.status, 200);
    t.same(res.body, { email, email_verified: true });
    await server.app.mailer.idle?.();
    t.equal(sink.received.length, before);
  });

  t.test('the domain is lower-cased and the local part kept as typed', async (t) => {
    const user = await signUp(server.url);
    const local = uniqueName('Mixed');
    const res = await user.put('/api/account/email', { email: `${local}@Example.ORG` });
    t.same(res.body, { email: `${local}@example.org`, email_verified: false });
    const mail = await sink.next(`${local}@example.org`);
    t.ok(mail.to.includes(`${local}@example.org`));
    verifyLink(t, server, mail);
  });

  t.test('an address verified on one account cannot be attached to another', async (t) => {
    const email = uniqueEmail();
    await verifiedUser(t, server, sink, email);
    const other = await signUp(server.url);
    const res = await other.put('/api/account/email', { email: email.toUpperCase().replace('EXAMPLE.COM', 'example.com') });
    t.equal(res.status, 409);
    t.match(res.text, 'verified on another account');
    t.match((await other.get('/api/account')).body, { email: null, email_verified: false });
  });

  t.test('of two accounts holding the same unverified address, the first to verify wins', async (t) => {
    const email = uniqueEmail();
    const first = await signUp(server.url);
    const second = await signUp(server.url);
    await first.put('/api/account/email', { email });
    const firstLink = verifyLink(t, server, await sink.next(email));
    await second.put('/api/account/email', { email });
    const secondLink = verifyLink(t, server, await sink.next(email));
    t.equal((await open(server, secondLink)).status, 200);
    const late = await open(server, firstLink);
    t.equal(late.status, 409);
    t.match(late.text, 'verified on another account');
    t.match((await first.get('/api/account')).body, { email, email_verified: false });
  });

  t.test('setting an address needs a session and a JSON body', async (t) => {
    t.equal((await new Client(server.url).put('/api/account/email', { email: uniqueEmail() })).status, 401);
    const user = await signUp(server.url);
    const form = await user.put('/api/account/email', 'email=a%40example.com', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    t.equal(form.status, 415);
  });

  t.test('verification without a token, or with an unknown one, is a clear 400', async (t) => {
    const anon = new Client(server.url);
    const missing = await anon.get('/api/verify-email');
    t.equal(missing.status, 400);
    t.match(missing.text, 'token is required');
    const unknown = await anon.get('/api/verify-email?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    t.equal(unknown.status, 400);
    t.match(unknown.text, 'invalid or has already been used');
  });

  t.test('password reset: the mailed link sets a new password and ends every session', async (t) => {
    const email = uniqueEmail();
    const user = await verifiedUser(t, server, sink, email);
    const otherDevice = new Client(server.url);
    t.equal((await otherDevice.post('/api/login', { username: user.username, password: 'correct horse' })).status, 200);
    const oldCookies = [user.cookie, otherDevice.cookie];

    const anon = new Client(server.url);
    const req = await anon.post('/api/password-reset/request', { email: email.toUpperCase() });
    t.equal(req.status, 202);
    t.same(req.body, { ok: true });
    const mail = await sink.next(email);
    t.equal(mail.subject, 'Reset your password');
    const token = resetToken(t, server, mail);

    const page = await anon.get(`/reset-password?token=${token}`);
    t.equal(page.status, 200);
    t.match(page.headers.get('content-type'), 'text/html');
    t.match(page.text, /<script src="\/a\/[0-9a-f]{12}\/js\/reset-password\.js"/);

    t.equal((await user.get('/api/users/me')).status, 200, 'sessions live until the reset is done');
    const done = await anon.post('/api/password-reset', { token, password: 'a new horse' });
    t.equal(done.status, 204);

    for (const cookie of oldCookies) {
      const res = await anon.get('/api/users/me', { cookie: cookie! });
      t.equal(res.status, 401, 'an old session cookie is refused');
    }
    const oldLogin = await anon.post('/api/login', { username: user.username, password: 'correct horse' });
    t.equal(oldLogin.status, 401, 'the old password no longer works');
    const newLogin = await anon.post('/api/login', { username: user.username, password: 'a new horse' });
    t.equal(newLogin.status, 200, 'the new password works');
    t.match((await anon.get('/api/account')).body, { email, email_verified: true }, 'the address stays verified');

    const reuse = await anon.post('/api/password-reset', { token, password: 'a third horse' });
    t.equal(reuse.status, 400);
    t.match(reuse.text, 'invalid or has already been used');
  });

  t.test('an invalid new password is refused and the token stays usable', async (t) => {
    const email = uniqueEmail();
    const user = await verifiedUser(t, server, sink, email);
    await new Client(server.url).post('/api/password-reset/request', { email });
    const token = resetToken(t, server, await sink.next(email));
    const anon = new Client(server.url);
    for (const [name, password] of [
      ['7 characters', '1234567'],
      ['73 characters', 'x'.repeat(73)],
      ['not a string', 12345678],
      ['missing', undefined],
    ] as const) {
      const res = await anon.post('/api/password-reset', { token, password });
      t.equal(res.status, 400, name);
      t.match(res.text, 'password must be', name);
    }
    t.equal((await user.get('/api/users/me')).status, 200, 'a refused reset ends no session');
    t.equal((await anon.post('/api/password-reset', { token, password: 'x'.repeat(72) })).status, 204);
    t.equal((await anon.post('/api/login', { username: user.username, password: 'x'.repeat(72) })).status, 200);
  });

  t.test('a successful reset retires the other reset links of the account', async (t) => {
    const email = uniqueEmail();
    await verifiedUser(t, server, sink, email);
    const anon = new Client(server.url);
    await anon.post('/api/password-reset/request', { email });
    const first = resetToken(t, server, await sink.next(email));
    await anon.post('/api/password-reset/request', { email });
    const second = resetToken(t, server, await sink.next(email));
    t.not(first, second);
    t.equal((await anon.post('/api/password-reset', { token: second, password: 'brand new pw' })).status, 204);
    t.equal((await anon.post('/api/password-reset', { token: first, password: 'other new pw' })).status, 400);
  });

  t.test('reset requests answer the same for unknown and unverified addresses, and mail nothing', async (t) => {
    const unverified = uniqueEmail();
    const user = await signUp(server.url);
    await user.put('/api/account/email', { email: unverified });
    verifyLink(t, server, await sink.next(unverified));
    const unknown = uniqueEmail();
    const before = sink.received.length;
    for (const email of [unknown, unverified]) {
      const res = await new Client(server.url).post('/api/password-reset/request', { email });
      t.equal(res.status, 202, email);
      t.same(res.body, { ok: true }, email);
    }
    await server.app.mailer.idle?.();
    t.equal(sink.received.length, before, 'no message sent');
    const invalid = await new Client(server.url).post('/api/password-reset/request', { email: 'not an address' });
    t.equal(invalid.status, 400, 'a malformed address is still a 400');
  });

  t.test('reset and verification tokens are not interchangeable', async (t) => {
    const email = uniqueEmail();
    const user = await signUp(server.url);
    await user.put('/api/account/email', { email });
    const verify = tokenOf(verifyLink(t, server, await sink.next(email)));
    const asReset = await new Client(server.url).post('/api/password-reset', { token: verify, password: 'some password' });
    t.equal(asReset.status, 400);
    t.equal((await new Client(server.url).get(`/api/verify-email?token=${verify}`)).status, 200, 'still a working verify link');

    await new Client(server.url).post('/api/password-reset/request', { email });
    const reset = resetToken(t, server, await sink.next(email));
    t.equal((await new Client(server.url).get(`/api/verify-email?token=${reset}`)).status, 400);
    t.equal((await new Client(server.url).post('/api/password-reset', { token: reset, password: 'some password' })).status, 204);
  });

  t.test('a reset without a token is a clear 400', async (t) => {
    const res = await new Client(server.url).post('/api/password-reset', { password: 'long enough' });
    t.equal(res.status, 400);
    t.match(res.text, 'token is required');
  });

  t.test('the reset page has no inline script and asks for an address when opened without a token', async (t) => {
    const page = await new Client(server.url).get('/reset-password');
    t.equal(page.status, 200);
    t.match(page.headers.get('content-security-policy'), "script-src 'self'");
    t.notMatch(page.text, /<script(?![^>]*\ssrc=)[^>]*>/, 'every script has a src');
    t.notMatch(page.text, /\son[a-z]+=/i, 'no inline event handlers');
    t.match(page.text, 'id="request-form"');
    const script = await new Client(server.url).get('/js/reset-password.js');
    t.equal(script.status, 200);
    t.match(script.text, "'/api/password-reset'");
  });
});

t.test('invalid addresses are refused with 400', async (t) => {
  // The outbox default: a real SMTP server may refuse the longest valid address (smtp-server does).
  const server = await startServer();
  t.teardown(server.close);
  const user = await signUp(server.url);
  const long = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(MAX_EMAIL_LENGTH - 64 - 1 - 63 - 1 - 63 - 1)}`;
  t.equal(long.length, MAX_EMAIL_LENGTH);
  const cases: [string, unknown, string][] = [
    ['no @', 'alice.example.com', 'one email address'],
    ['two @', 'alice@bob@example.com', 'one email address'],
    ['nothing before @', '@example.com', 'one email address'],
    ['no dot in the domain', 'alice@localhost', 'one email address'],
    ['an empty domain label', 'alice@example..com', 'one email address'],
    ['a space inside', 'ali ce@example.com', 'one email address'],
    ['surrounding spaces', ' alice@example.com ', 'one email address'],
    ['a control character', 'alice\u0001@example.com', 'one email address'],
    ['a newline (header injection)', 'alice@example.com\r\nBcc: x@example.com', 'one email address'],
    ['two addresses', 'alice@example.com,bob@example.com', 'one email address'],
    ['a display name', 'Alice <alice@example.com>', 'one email address'],
    ['a bidi control in the domain', 'alice@exa\u202emple.com', 'one email address'],
    ['an invisible character in the domain', 'alice@exa\u200bmple.com', 'one email address'],
    ['a label starting with a hyphen', 'alice@-example.com', 'one email address'],
    ['a local part over 64 characters', `${'a'.repeat(65)}@example.com`, 'one email address'],
    ['255 characters', `${long}d`, `at most ${MAX_EMAIL_LENGTH}`],
    ['empty', '', 'one email address'],
    ['a number', 42, 'must be a string'],
    ['null', null, 'must be a string'],
  ];
  for (const [name, email, reason] of cases) {
    const res = await user.put('/api/account/email', { email });
    t.equal(res.status, 400, name);
    t.match(res.text, reason, name);
  }
  t.equal((await user.put('/api/account/email', {})).status, 400, 'missing');
  t.equal(
    (await user.put('/api/account/email', { email: 'someone@example.org', current_password: 42 })).status,
    400,
    'a current_password that is not a string, even where none is needed (found by the fuzzer)',
  );
  const idn = await user.put('/api/account/email', { email: 'Juergen@BÜCHER.example' });
  t.same(idn.body, { email: 'Juergen@bücher.example', email_verified: false }, 'an internationalised domain, lower-cased');
  const ok = await user.put('/api/account/email', { email: long, current_password: 'correct horse' });
  t.equal(ok.status, 200, 'exactly 254 characters is accepted');
  t.match((await user.get('/api/account')).body, { email: long, email_verified: false });
});

t.test('tokens expire (verification after 24 h, reset after 1 h)', async (t) => {
  const sink = await new SmtpSink().start();
  const clock = new FakeClock();
  const server = await startServer({ env: { SMTP_URL: sink.url }, clock });
  t.teardown(async () => {
    await server.close();
    await sink.close();
  });
  t.afterEach(() => noTokenInLogs(t, server));

  t.test('a verification link works until its 24 hours are up', async (t) => {
    const user = await signUp(server.url);
    const early = uniqueEmail();
    await user.put('/api/account/email', { email: early });
    const earlyLink = verifyLink(t, server, await sink.next(early));
    clock.advance(VERIFY_TOKEN_LIFETIME_MS - MINUTE);
    t.equal((await open(server, earlyLink)).status, 200, 'a minute before expiry');

    const late = uniqueEmail();
    await user.put('/api/account/email', { email: late, current_password: 'correct horse' });
    const lateLink = verifyLink(t, server, await sink.next(late));
    clock.advance(VERIFY_TOKEN_LIFETIME_MS);
    const res = await open(server, lateLink);
    t.equal(res.status, 400);
    t.match(res.text, 'expired');
    const page = await open(server, lateLink, { accept: 'text/html' });
    t.equal(page.headers.get('location'), '/email-verified?error=expired', 'a browser lands on the page offering a new link');
    t.match((await user.get('/api/account')).body, { email: late, email_verified: false });
  });

  t.test('a reset link works until its hour is up', async (t) => {
    const email = uniqueEmail();
    const user = await verifiedUser(t, server, sink, email);
    const anon = new Client(server.url);
    await anon.post('/api/password-reset/request', { email });
    const token = resetToken(t, server, await sink.next(email));
    clock.advance(RESET_TOKEN_LIFETIME_MS);
    const res = await anon.post('/api/password-reset', { token, password: 'never applied' });
    t.equal(res.status, 400);
    t.match(res.text, 'expired');
    t.equal((await user.get('/api/users/me')).status, 200, 'sessions are untouched');

    await anon.post('/api/password-reset/request', { email });
    const fresh = resetToken(t, server, await sink.next(email));
    clock.advance(RESET_TOKEN_LIFETIME_MS - MINUTE);
    t.equal((await anon.post('/api/password-reset', { token: fresh, password: 'applied in time' })).status, 204);
  });
});

t.test('reset requests are rate limited per address and per client', async (t) => {
  const sink = await new SmtpSink().start();
  const server = await startServer({ env: { SMTP_URL: sink.url, RATE_LIMIT: 'on' } });
  t.teardown(async () => {
    await server.close();
    await sink.close();
  });
  const anon = new Client(server.url);
  const email = uniqueEmail();

  // emailsPerAddress allows 3, emailsPerClient 10 (src/rules/limits.ts); an unknown address counts too.
  for (let i = 0; i < 3; i++) {
    t.equal((await anon.post('/api/password-reset/request', { email })).status, 202);
  }
  const limited = await anon.post('/api/password-reset/request', { email: email.toUpperCase() });
  t.equal(limited.status, 429, 'the same address in other letter case is the same address');
  t.match(limited.text, 'emails to this address');
  t.ok(Number(limited.headers.get('retry-after')) > 0, 'Retry-After is set');

  for (let i = 0; i < 6; i++) {
    t.equal((await anon.post('/api/password-reset/request', { email: uniqueEmail() })).status, 202);
  }
  const perClient = await anon.post('/api/password-reset/request', { email: uniqueEmail() });
  t.equal(perClient.status, 429);
  t.match(perClient.text, 'email requests from this client');
  t.ok(Number(perClient.headers.get('retry-after')) > 0);
});

t.test('without SMTP_URL, messages are written to DATA_DIR/outbox', async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const email = uniqueEmail();
  const user = await signUp(server.url);
  t.equal((await user.put('/api/account/email', { email })).status, 200);
  await server.app.mailer.idle?.();

  const outbox = readOutbox(server.dataDir);
  t.equal(outbox.length, 1);
  const [mail] = outbox;
  t.ok(mail.to.includes(email));
  t.equal(mail.subject, 'Confirm your email address');
  t.match(mail.raw, /^From: chat <no-reply@/m, 'MAIL_FROM is the sender');
  t.equal(fs.statSync(mail.file).mode & 0o777, 0o600, 'readable by the service only');
  t.ok(
    server.logs.some((line) => line.includes(`mail to ${email}`) && line.includes(mail.file)),
    'the log says where the file is',
  );

  const text = fs.readFileSync(mail.file.replace(/\.eml$/, '.txt'), 'utf8');
  t.equal(fs.statSync(mail.file.replace(/\.eml$/, '.txt')).mode & 0o777, 0o600, 'the .txt too');
  t.match(text, new RegExp(`^To: ${email.replace(/[.+]/g, '\\$&')}\nSubject: Confirm your email address\n\n`), 'the .txt starts with who and what');
  const plainLink = /http:\/\/\S+\/api\/verify-email\?token=\S+/.exec(text)?.[0];
  t.ok(plainLink, 'the .txt has the link whole, on one line, as it can be copied');
  const link = verifyLink(t, server, mail);
  t.equal(plainLink, link.toString(), 'the same link as in the .eml');
  t.same((await open(server, link)).body, { email, email_verified: true });

  await new Client(server.url).post('/api/password-reset/request', { email });
  await server.app.mailer.idle?.();
  const reset = readOutbox(server.dataDir).find((m) => m.subject === 'Reset your password');
  t.ok(reset, 'the reset message is in the outbox too');
  const token = resetToken(t, server, reset!);
  t.equal((await new Client(server.url).post('/api/password-reset', { token, password: 'outbox horse' })).status, 204);
  t.equal((await new Client(server.url).post('/api/login', { username: user.username, password: 'outbox horse' })).status, 200);
  noTokenInLogs(t, server);
});

t.test('a mail server that is down', async (t) => {
  const port = await closedPort();
  // Short retry delays so the tests see every attempt; the default waits minutes between them.
  const server = await startServer({ env: { SMTP_URL: `smtp://127.0.0.1:${port}` }, mailerOptions: { retryDelaysMs: [1, 1] } });
  t.teardown(server.close);

  t.test('the request still succeeds, and each failed attempt is logged until the mailer gives up', async (t) => {
    const email = uniqueEmail();
    const user = await signUp(server.url);
    const res = await user.put('/api/account/email', { email });
    t.equal(res.status, 200);
    t.same(res.body, { email, email_verified: false });
    await server.app.mailer.idle?.();
    const lines = server.logs.filter((line) => line.startsWith(`mail to ${email}`));
    t.equal(lines.length, 3);
    t.match(lines[0], 'failed (attempt 1 of 3), retrying in 1 s');
    t.match(lines[1], 'failed (attempt 2 of 3)');
    t.match(lines[2], 'failed, giving up after 3 attempt(s)');
    t.match(lines[2], 'ECONNREFUSED');
  });

  t.test('reset requests still answer 202', async (t) => {
    const email = uniqueEmail();
    const user = await signUp(server.url);
    await user.put('/api/account/email', { email });
    // Mark the address verified directly: no link can arrive from a mail server that is down.
    server.app.db.prepare('UPDATE users SET email_verified = 1 WHERE id = ?').run(user.userId);
    const res = await new Client(server.url).post('/api/password-reset/request', { email });
    t.equal(res.status, 202);
    await server.app.mailer.idle?.();
    t.ok(server.logs.some((line) => line.startsWith(`mail to ${email} "Reset your password" failed`)));
  });

  t.test('closing the mailer drops pending retries at once', async (t) => {
    const mailer = createMailer(server.app, { retryDelaysMs: [10 * MINUTE] });
    const email = uniqueEmail();
    mailer.send({ to: email, subject: 'never delivered', text: 'body' });
    while (!server.logs.some((line) => line.includes('never delivered" failed (attempt 1 of 2)'))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    mailer.close?.();
    await mailer.idle?.();
    t.ok(server.logs.includes(`mail to ${email} "never delivered" retry dropped: shutting down`));
    mailer.send({ to: email, subject: 'after close', text: 'body' });
    t.ok(server.logs.includes(`mail to ${email} "after close" not sent: shutting down`));
  });
});

t.test('a mail server that accepts connections and never answers does not hold up the request', async (t) => {
  const silent = await silentServer();
  const server = await startServer({ env: { SMTP_URL: `smtp://127.0.0.1:${silent.port}` } });
  t.teardown(async () => {
    await server.close();
    await silent.close();
  });
  const user = await signUp(server.url);
  const email = uniqueEmail();
  const res = await user.put('/api/account/email', { email });
  t.equal(res.status, 200);
  t.same(res.body, { email, email_verified: false });
  await silent.connected;
  t.notOk(
    server.logs.some((line) => line.startsWith(`mail to ${email}`)),
    'the delivery is still waiting on the server',
  );
});

t.test('a message the SMTP server refuses once is delivered by a retry', async (t) => {
  const sink = await new SmtpSink().start();
  const server = await startServer({ env: { SMTP_URL: sink.url }, mailerOptions: { retryDelaysMs: [1, 1] } });
  t.teardown(async () => {
    await server.close();
    await sink.close();
  });
  sink.rejectNext = 1;
  const email = uniqueEmail();
  const user = await signUp(server.url);
  await user.put('/api/account/email', { email });
  const mail = await sink.next(email);
  const link = verifyLink(t, server, mail);
  t.equal((await open(server, link)).status, 200);
  await server.app.mailer.idle?.();
  const lines = server.logs.filter((line) => line.startsWith(`mail to ${email}`));
  t.match(lines[0], 'failed (attempt 1 of 3)');
  t.match(lines[0], 'try again later');
  t.match(lines[1], 'sent by SMTP');
  noTokenInLogs(t, server);
});
