// Raid protection and self-assigned roles in Chromium (issue 53): a newcomer below the server's
// verification level finds the composer closed with the reason and the time, and open again as
// soon as the level drops; from the server menu's Roles page they take a self-assignable role,
// and the channel that role opens (through its overwrite) appears in the sidebar; made a
// moderator, they are alerted when joins pass the server's rate.
import t from 'tap';
import { must } from './helpers/community';
import { signUp } from './helpers/client';
import { PASSWORD, SKIP, addChannel, closeScene, join, openChannel, openScene, shotsAtBothWidths, signIn } from './helpers/browser';

t.test('a newcomer waits out the verification level, then takes a role that opens a channel', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'raid', [{ name: 'newcomer' }]);
  const { server, step } = scene;
  const [w] = scene.windows;
  const page = w.page;
  const owner = await signUp(server.url, 'raidowner', PASSWORD);
  const serverId: string = (await must(owner.post('/api/servers', { name: 'Raid-safe' }), 201)).body.id;
  const base = `/api/servers/${serverId}`;
  const generalId: string = (await must(owner.get(`${base}/channels`), 200)).body[0].id;
  const gamers = (await must(owner.post(`${base}/roles`, { name: 'Gamers', self_assignable: true }), 201)).body;
  const gamesId = await addChannel(owner, serverId, 'games');
  await must(owner.put(`${base}/channels/${gamesId}/overwrites/${serverId}`, { deny: ['view_channel'] }), 200);
  await must(owner.put(`${base}/channels/${gamesId}/overwrites/${gamers.id}`, { allow: ['view_channel'] }), 200);
  await must(owner.request('PATCH', base, { verification_level: 2 }), 200);
  const newcomer = await signIn(scene, w, 'raidnewcomer');
  // Level 2 asks a verified email too (mailed links are test/mail.test.ts's): this one has it.
  server.app.db.prepare("UPDATE users SET email = 'new@example.com', email_verified = 1 WHERE id = ?").run(newcomer.userId);
  await join(owner, serverId, [newcomer]);

  await step('the composer says why the newcomer cannot post yet, and until when', async (t) => {
    await openChannel(w, server.url, serverId, generalId, 'general');
    await page.locator('#composer-text[disabled]').waitFor();
    const words = /verification level asks that your account be older than 5 minutes: you can post and react here in 5 min/;
    t.match(await page.locator('#composer-text').getAttribute('placeholder'), words, 'the composer is closed with the reason');
    await page.locator('#composer-notice:not([hidden])').waitFor();
    t.match(await page.locator('#composer-notice').textContent(), words, 'and the notice above it says until when');
    await shotsAtBothWidths(page, 'raid-gate');
  });

  await step('the owner lowers the level: the composer opens by itself', async (t) => {
    await must(owner.request('PATCH', base, { verification_level: 0 }), 200);
    await page.locator('#composer-text:not([disabled])').waitFor();
    t.ok(await page.locator('#composer-notice').isHidden(), 'the notice is gone');
    t.pass('the composer is enabled');
  });

  await step('the Roles page of the server menu: taking Gamers opens #games', async (t) => {
    t.equal(await page.locator('#sidebar .channel', { hasText: 'games' }).count(), 0, 'the channel is hidden without the role');
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Roles' }).click();
    await page.locator('#self-roles-dialog[open]').waitFor();
    await page.getByRole('button', { name: 'Take the role Gamers' }).click();
    await page.getByRole('button', { name: 'Drop the role Gamers' }).waitFor();
    await page.locator('#sidebar .channel', { hasText: 'games' }).waitFor();
    const held = (await must(owner.get(`${base}/members`), 200)).body.find((m: { user_id: string }) => m.user_id === newcomer.userId);
    t.same(held.roles, ['Gamers'], 'the role is taken');
    await shotsAtBothWidths(page, 'raid-self-roles');
  });

  await step('a moderator is told of a wave of joins, and new joins are paused', async (t) => {
    await must(owner.post(`${base}/roles`, { name: 'Wardens', permissions: ['kick_members'] }), 201);
    await must(owner.put(`${base}/members/${newcomer.userId}/role`, { role: 'Wardens' }), 200);
    await must(owner.request('PATCH', base, { join_rate_threshold: 1, join_rate_action: 'pause' }), 200);
    await join(owner, serverId, [await signUp(server.url), await signUp(server.url)]);
    await page.locator('#toast', { hasText: 'Raid-safe: 2 joins in a minute. New joins are paused' }).waitFor();
    t.pass('the alert is shown');
  });

  closeScene(t, scene);
});
