// Categories and several roles in Chromium (issue 30): the sidebar lists channels under their
// categories and folds them; server settings make categories; the member menu gives and takes
// roles, and the member list groups by hoisted roles in their colours.
import t from 'tap';
import { startServer } from './helpers/server';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { EXPECTED_REFUSALS, SKIP, launchChromium, openWindow } from './helpers/browser';
import { openSocket } from './helpers/ws';

t.test('categories in the sidebar and settings; roles in the member menu and list', { skip: SKIP }, async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const guild = (await must(owner.post('/api/servers', { name: 'guild' }), 201)).body;
  const base = `/api/servers/${guild.id}`;
  const category = (await must(owner.post(`${base}/categories`, { name: 'Projects' }), 201)).body;
  const inside = (await must(owner.post(`${base}/channels`, { name: 'inside' }), 201)).body;
  await must(owner.request('PATCH', `${base}/channels/${inside.id}`, { category_id: category.id }), 200);
  await must(owner.post(`${base}/roles`, { name: 'artists', color: 0x3ba55d, hoist: true }), 201);
  const token = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const guest = await signUp(server.url);
  await must(guest.post(`/api/invites/${token}/accept`), 200);
  // The guest is online (a stream open), so a hoisted role groups them: offline members are listed under Offline.
  const guestStream = await openSocket(server.url, '/api/ws', { client: guest });
  t.teardown(() => guestStream.close());

  const browser = await launchChromium(t);
  const w = await openWindow(t, browser, 'owner', EXPECTED_REFUSALS);
  await w.context.addCookies([{ name: 'app_session', value: owner.cookie!.split('=')[1], url: server.url }]);
  const { page } = w;
  await page.goto(`${server.url}/?server=${guild.id}`);
  await page.locator('.category-head', { hasText: 'Projects' }).waitFor();
  t.equal(await page.locator('.category .channel', { hasText: 'inside' }).count(), 1, 'a channel is listed under its category');
  await page.click('.category-head');
  t.equal(await page.locator('.category .channel', { hasText: 'inside' }).count(), 0, 'a folded category hides its read channels');
  t.equal(await page.locator('.category-head').getAttribute('aria-expanded'), 'false');
  await page.reload();
  await page.locator('.category-head', { hasText: 'Projects' }).waitFor();
  t.equal(await page.locator('.category-head').getAttribute('aria-expanded'), 'false', 'and stays folded after a reload');

  // A category made in settings appears in the sidebar live.
  await page.click('#server-menu-button');
  await page.getByRole('menuitem', { name: 'Server settings' }).click();
  await page.click('#settings-tab-channels');
  await page.fill('#new-category-name', 'Archive');
  await page.click('.categories-settings button[type=submit]');
  await page.locator('.categories-settings .row-title', { hasText: 'Archive' }).waitFor();
  await page.click('#settings-close');
  await page.locator('.category-head', { hasText: 'Archive' }).waitFor();
  t.pass('a new category shows in the sidebar');

  // Roles: the member menu gives one, the list groups the member under it in its colour.
  await page.locator('#members .member-button', { hasText: guest.username }).click();
  await page.getByRole('menuitemcheckbox', { name: 'artists' }).click();
  const group = page.locator('#members .member-group', { hasText: 'artists — 1' });
  await group.locator('.member-name', { hasText: guest.username }).waitFor();
  // The role's colour with the contrast floor of names.js (issue 47 #17): custom properties per theme, no inline colour.
  t.match(
    await group.locator('.member-name').evaluate((n: any) => `${n.className} ${n.style.getPropertyValue('--role-light')}`),
    /role-colored .*#[0-9a-f]{6}/,
    'in the role colour',
  );
  await page.locator('#members .member-button', { hasText: guest.username }).click();
  t.equal(await page.getByRole('menuitemcheckbox', { name: 'artists' }).getAttribute('aria-checked'), 'true', 'the menu shows the role held');
  await page.getByRole('menuitemcheckbox', { name: 'artists' }).click();
  await page.locator('#members .member-group', { hasText: 'artists' }).waitFor({ state: 'detached' });
  t.pass('taking the role takes the member out of its group');

  // The owner drags a role onto another's place in settings.
  await must(owner.post(`${base}/roles`, { name: 'second' }), 201);
  await page.click('#server-menu-button');
  await page.getByRole('menuitem', { name: 'Server settings' }).click();
  await page.click('#settings-tab-roles');
  const rows = page.locator('#settings-panel .role-row');
  // The role arrives by the live event (roles_updated): on a busy machine it took over 10 s.
  await rows.filter({ hasText: 'second' }).waitFor({ timeout: 30_000 });
  await rows.filter({ hasText: 'second' }).dragTo(rows.filter({ hasText: 'artists' }));
  await rows.first().filter({ hasText: 'second' }).waitFor();
  t.same(
    (await must(owner.get(`${base}/roles`), 200)).body.map((r: { name: string }) => r.name),
    ['second', 'artists'],
    'dragging a role moves it',
  );
  await page.click('#settings-close');
  t.same(w.problems, [], 'no console error, page error or CSP violation');
});
