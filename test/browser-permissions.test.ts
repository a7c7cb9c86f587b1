// Channel permissions in Chromium (issue 30): the owner makes a private channel and a read-only
// one in server settings → Permissions; a plain member, at desktop and at phone width, does not
// see the private one, and finds the read-only one's composer muted with the reason; a member of
// the role that is let in sees it, with a lock.
import t from 'tap';
import type { Page } from 'playwright-core';
import { startServer } from './helpers/server';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { EXPECTED_REFUSALS, SKIP, launchChromium, openWindow } from './helpers/browser';

t.test('a private and a read-only channel, made in settings, as a plain member sees them', { skip: SKIP }, async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const guild = (await must(owner.post('/api/servers', { name: 'guild' }), 201)).body;
  const base = `/api/servers/${guild.id}`;
  const mods = (await must(owner.post(`${base}/channels`, { name: 'mods' }), 201)).body;
  const news = (await must(owner.post(`${base}/channels`, { name: 'news' }), 201)).body;
  await must(owner.post(`${base}/roles`, { name: 'team' }), 201);
  const token = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const [plain, teammate] = [await signUp(server.url), await signUp(server.url)];
  for (const member of [plain, teammate]) await must(member.post(`/api/invites/${token}/accept`), 200);
  await must(owner.put(`${base}/members/${teammate.userId}/role`, { role: 'team' }), 200);
  await must(owner.post(`${base}/channels/${news.id}/messages`, { content: 'welcome, read this' }), 201);

  const browser = await launchChromium(t);
  const signedIn = async (name: string, cookie: string, phone = false) => {
    const w = await openWindow(t, browser, name, EXPECTED_REFUSALS, phone);
    await w.context.addCookies([{ name: 'app_session', value: cookie.split('=')[1], url: server.url }]);
    await w.page.goto(`${server.url}/?server=${guild.id}`);
    await w.page.locator('#sidebar .channel', { hasText: 'general' }).waitFor({ state: 'attached' });
    return w;
  };
  const ownerWindow = await signedIn('owner', owner.cookie!);
  const memberDesk = await signedIn('member-desktop', plain.cookie!);
  const memberPhone = await signedIn('member-phone', plain.cookie!, true);
  const teamWindow = await signedIn('teammate', teammate.cookie!);
  for (const w of [memberDesk, memberPhone, teamWindow]) await w.page.locator('#sidebar .channel', { hasText: 'mods' }).waitFor({ state: 'attached' });

  // The owner: settings → Permissions → #mods: deny "See the channel" to everyone, allow it to team.
  const page = ownerWindow.page;
  await page.click('#server-menu-button');
  await page.getByRole('menuitem', { name: 'Server settings' }).click();
  await page.click('#settings-tab-permissions');
  await page.selectOption('#permissions-scope', `channel:${mods.id}`);
  const row = (name: string) => page.locator('.overwrite-row').filter({ has: page.locator('.overwrite-name', { hasText: name }) });
  await row('@everyone').waitFor();
  await row('@everyone').getByRole('button', { name: 'Deny see the channel for @everyone' }).click();
  await page.locator('.overwrite-row').first().getByRole('button', { name: 'Deny see the channel for @everyone', pressed: true }).waitFor();
  await row('team').getByRole('button', { name: 'Allow see the channel for team' }).click();
  await row('team').getByRole('button', { name: 'Allow see the channel for team', pressed: true }).waitFor();
  // #news: deny "Send messages" to everyone.
  await page.selectOption('#permissions-scope', `channel:${news.id}`);
  await row('@everyone').getByRole('button', { name: 'Deny send messages for @everyone' }).click();
  await row('@everyone').getByRole('button', { name: 'Deny send messages for @everyone', pressed: true }).waitFor();
  t.same(
    (await must(owner.get(`${base}/channels/${mods.id}/overwrites`), 200)).body.map((o: { kind: string; allow: string[]; deny: string[] }) => [
      o.kind,
      o.allow,
      o.deny,
    ]),
    [
      ['everyone', [], ['view_channel']],
      ['role', ['view_channel'], []],
    ],
    'the toggles saved the overwrites',
  );
  await page.click('#settings-close');
  await page.locator('#sidebar .channel', { hasText: 'mods' }).locator('svg').first().waitFor();
  t.ok(await page.locator('#sidebar .channel[aria-label^="mods, private"]').count(), 'the owner sees #mods, marked private');

  // The plain member, live: #mods goes from the sidebar at both widths; #news mutes the composer.
  const readOnly = async (p: Page, what: string) => {
    await p.locator('#sidebar .channel', { hasText: 'mods' }).waitFor({ state: 'detached' });
    t.pass(`${what}: the private channel left the sidebar`);
    // On a phone the room fills the screen: back to the list first.
    if (await p.locator('#room-back').isVisible()) await p.click('#room-back');
    await p.locator('#sidebar .channel', { hasText: 'news' }).click();
    await p.locator('#messages .content', { hasText: 'welcome, read this' }).waitFor();
    await p.locator('#composer-text[disabled]').waitFor();
    t.equal(
      await p.getAttribute('#composer-text', 'placeholder'),
      'This channel is read-only for you: you can read it, not write in it.',
      `${what}: the composer says why`,
    );
    t.ok(await p.locator('#composer-notice').isHidden(), `${what}: in one notice, not two (issue 47 #9)`);
  };
  await readOnly(memberDesk.page, 'desktop');
  await readOnly(memberPhone.page, 'phone');
  // A reload starts from ready, which agrees.
  await memberDesk.page.reload();
  await memberDesk.page.locator('#sidebar .channel', { hasText: 'general' }).waitFor({ state: 'attached' });
  t.equal(await memberDesk.page.locator('#sidebar .channel', { hasText: 'mods' }).count(), 0, 'after a reload too');

  // A member of the role sees #mods, with a lock, and may write there.
  const team = teamWindow.page;
  await team.locator('#sidebar .channel[aria-label^="mods, private"]').click();
  await team.fill('#composer-text', 'team only');
  await team.press('#composer-text', 'Enter');
  await team.locator('#messages .content', { hasText: 'team only' }).waitFor();
  t.pass('the team writes in the private channel');

  for (const w of [ownerWindow, memberDesk, memberPhone, teamWindow]) t.same(w.problems, [], `${w.name}: no console error, page error or CSP violation`);
});
