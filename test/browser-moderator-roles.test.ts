// Moderator roles in Chromium (issue 53): a member whose role has manage_roles and ban_members
// finds the Permissions and Bans tabs, may edit only the roles below theirs (without the
// full-administrator switch), and the role editor offers the moderators' flags.
import t from 'tap';
import { startServer } from './helpers/server';
import { signUp } from './helpers/client';
import { must } from './helpers/community';
import { EXPECTED_REFUSALS, SKIP, launchChromium, openWindow } from './helpers/browser';

t.test('a moderator edits the roles below theirs in server settings', { skip: SKIP }, async (t) => {
  const server = await startServer();
  t.teardown(server.close);
  const owner = await signUp(server.url);
  const guild = (await must(owner.post('/api/servers', { name: 'guild' }), 201)).body;
  const base = `/api/servers/${guild.id}`;
  await must(owner.post(`${base}/roles`, { name: 'Keepers', permissions: ['manage_roles', 'ban_members'] }), 201);
  const helpers = (await must(owner.post(`${base}/roles`, { name: 'Helpers' }), 201)).body;
  const token = (await must(owner.post(`${base}/invites`), 201)).body.token;
  const moderator = await signUp(server.url);
  await must(moderator.post(`/api/invites/${token}/accept`), 200);
  await must(owner.put(`${base}/members/${moderator.userId}/role`, { role: 'Keepers' }), 200);

  const browser = await launchChromium(t);
  const w = await openWindow(t, browser, 'moderator', EXPECTED_REFUSALS);
  await w.context.addCookies([{ name: 'app_session', value: moderator.cookie!.split('=')[1], url: server.url }]);
  const page = w.page;
  await page.goto(`${server.url}/?server=${guild.id}`);
  await page.locator('#sidebar .channel', { hasText: 'general' }).waitFor({ state: 'attached' });
  await page.click('#server-menu-button');
  await page.getByRole('menuitem', { name: 'Server settings' }).click();
  await page.locator('#settings-dialog[open]').waitFor();
  t.equal(await page.locator('#settings-tab-permissions').count(), 1, 'manage_roles shows the Permissions tab');
  t.equal(await page.locator('#settings-tab-bans').count(), 1, 'ban_members shows the Bans tab');
  t.equal(await page.locator('#settings-tab-audit').count(), 0, 'no Audit log tab without view_audit_log');
  await page.click('#settings-tab-roles');
  await page.getByRole('button', { name: 'Edit role Helpers' }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Edit role Keepers' }).count(), 0, 'not their own highest role');
  await page.getByRole('button', { name: 'Edit role Helpers' }).click();
  await page.locator('#form-dialog[open]').waitFor();
  t.equal(await page.locator('#form-dialog input#form-admin').count(), 0, 'no full-administrator switch');
  t.equal(await page.locator('#form-dialog input#form-kick_members').count(), 1, "the moderators' flags are offered");
  await page.check('#form-dialog input#form-ban_members');
  await page.click('#form-submit');
  await page.locator('#toast', { hasText: 'Role saved.' }).waitFor();
  const saved = (await must(owner.get(`${base}/roles`), 200)).body.find((r: { id: string }) => r.id === helpers.id);
  t.same(saved.permissions, ['ban_members'], 'a flag the moderator holds is granted');
  t.same(w.problems, [], 'no console error, page error or CSP violation');
});
