import t from 'tap';
import { SKIP, addChannel, bookClub, closeScene, message, openChannel, openScene, post, shot, signIn, until } from './helpers/browser';
import { Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Running a server and moderating, end to end through the system Chromium under the page CSP:
 * roles, a channel renamed and given a topic, a ban with a reason, the bans list and the audit
 * log, invites limited in uses and time, a timeout that reaches the member's tab; reports of users
 * and servers from their menus, and the administration page, whose report cards name people and
 * quote the message and whose warnings and standings say what they change and reach the target's
 * open tab. Alice owns the server and is an administrator (ADMIN_USERS applies at registration);
 * Bob and Carol (a phone: 390×844 with touch, preferring dark) are members, each in a window of
 * their own; Dave, a member with a display name, uses the API only. Machines without
 * /usr/bin/chromium skip this.
 *
 * Each step names the issue-17 defect (D1…D11) or the issue it proves.
 */
t.test('server settings, moderation and the administration page work in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  const bobName = uniqueName('bob');
  const carolName = uniqueName('carol');
  const daveName = uniqueName('dave');
  const daveShown = 'Dávid the Diver';
  const scene = await openScene(t, 'browser-moderation', [{ name: 'alice' }, { name: 'bob' }, { name: 'carol', phone: true }], { ADMIN_USERS: aliceName });
  const { server, step } = scene;
  const [alice, bob, carol] = scene.windows;
  let dave: Client;
  let serverId = '';
  let inviteUrl = '';

  await step(
    '(set-up) alice\'s server, with #history and a pinned message, and a message of hers bob reported as "not nice"; bob, carol and dave (with a display name) are members',
    async () => {
      const [aliceApi, bobApi, carolApi] = await Promise.all([signIn(scene, alice, aliceName), signIn(scene, bob, bobName), signIn(scene, carol, carolName)]);
      dave = await signUp(server.url, daveName);
      await must(dave.request('PATCH', '/api/account', { display_name: daveShown }), 200);
      const club = await bookClub(aliceApi, [bobApi, carolApi, dave]);
      serverId = club.serverId;
      inviteUrl = `${server.url}/invites/${club.token}`;
      await addChannel(aliceApi, serverId, 'history');
      const hello = await post(aliceApi, serverId, club.generalId, 'hello from alice\nsecond line');
      await must(bobApi.post('/api/reports', { type: 'server_message', target: hello.id, reason: 'not nice' }), 201);
      const pinned = await post(aliceApi, serverId, club.generalId, 'are you there, bob?');
      await must(aliceApi.put(`/api/servers/${serverId}/channels/${club.generalId}/pins/${pinned.id}`), 200);
      await Promise.all([alice, bob, carol].map((w) => openChannel(w, server.url, serverId, club.generalId, 'general')));
      await Promise.all([alice, bob, carol].map((w) => message(w.page, 'are you there, bob?').waitFor()));
    },
  );

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
    await page.check('#role-hoist');
    await page.click('.role-form button[type=submit]');
    await page.locator('#settings-panel .role-row', { hasText: 'mods' }).waitFor();
    await page.click('#settings-tab-members');
    await page.selectOption(`#settings-panel select[aria-label="Give ${bobName} a role"]`, { label: 'mods' });
    await page.locator('#toast', { hasText: 'now has the role mods' }).waitFor();
    // The role shows as a chip that can take it again.
    await page.getByRole('button', { name: `Take the role mods from ${bobName}` }).waitFor();
    await shot(page, 'settings');
    await page.click('#settings-close');
    const group = page.locator('#members .member-group', { hasText: 'mods — 1' });
    await group.locator('.member-name', { hasText: bobName }).waitFor();
    t.pass('bob is listed under the role mods beside the room');
    // Bob's tab learns it live (member_updated): as a full server administrator he may create channels.
    await bob.page.locator('#members .member-group', { hasText: 'mods — 1' }).waitFor();
    await bob.page.locator('#new-channel').waitFor();
    t.pass('bob sees his role live, and the channel button it grants');
    // The member menu names the role.
    await page.locator('#members .member-button', { hasText: bobName }).click();
    await page.locator('#member-menu', { hasText: 'Role: mods' }).waitFor();
    await page.keyboard.press('Escape');
  });

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
    t.equal(
      await page.locator('#channel-settings-list .row-sub', { hasText: 'Old messages live here' }).count(),
      1,
      'the settings list shows the new name with its topic',
    );
    await page.click('#settings-close');
    t.equal(await page.locator('#channel-list button', { hasText: 'history' }).count(), 0, 'the old name is gone from the sidebar');
    await page.locator('#channel-list button', { hasText: 'archive' }).click();
    await page.locator('#room-title', { hasText: 'archive' }).waitFor();
    t.equal(await page.textContent('#room-topic'), 'Old messages live here', 'the topic is shown in the room header');
    t.ok(await page.isVisible('#room-topic'), 'and visible');
    const bobs = bob.page.locator('#channel-list button', { hasText: 'archive' });
    await bobs.waitFor();
    t.equal(await bob.page.locator('#channel-list button', { hasText: 'history' }).count(), 0, "bob's sidebar follows the rename live");
  });

  await step('issue 18: a ban from the member menu with a reason; the bans list; the audit log; unban', async (t) => {
    const { page } = alice;
    await page.locator('#members .member-button', { hasText: daveShown }).click();
    await page
      .locator('#member-menu')
      .getByRole('menuitem', { name: `Ban ${daveShown}…` })
      .click();
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
    t.match(
      await page.locator('#audit-list li[data-action="channel_update"]').first().textContent(),
      'Old messages live here',
      'the channel change is there, with what changed',
    );
    t.equal(await page.locator('#audit-list li[data-action="message_pin"]').count(), 1, 'and the pin');
    await shot(page, 'audit-log');

    await page.click('#settings-tab-bans');
    await page.locator('#ban-list li', { hasText: daveShown }).getByRole('button', { name: 'Unban' }).click();
    await page.locator('#ban-list li').waitFor({ state: 'detached' });
    t.equal(await page.locator('#ban-list li').count(), 0, 'Unban empties the list');
    t.equal((await dave.post(`/api/invites/${token}/accept`)).status, 200, 'and the invite works for him again');
    await page.click('#settings-close');
  });

  await step("issue 18: invites limited in uses and time, listed and revoked; a timeout from the member menu reaches the member's tab", async (t) => {
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
    t.match(
      await page.locator('#members .member-button', { hasText: carolName }).locator('.visually-hidden').textContent(),
      'timed out',
      'the member list marks the timeout',
    );
    await carol.page.locator('#composer-notice', { hasText: 'You are timed out' }).waitFor();
    t.ok(await carol.page.isDisabled('#composer-text'), "carol's composer closes live, saying until when");
    await page.locator('#members .member-button', { hasText: carolName }).click();
    await page.locator('#member-menu').getByRole('menuitem', { name: 'Remove timeout' }).click();
    await carol.page.locator('#composer-notice').waitFor({ state: 'hidden' });
    t.notOk(await carol.page.isDisabled('#composer-text'), 'and opens again when the timeout is lifted');
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
    t.ok(
      await carol.page.isVisible('#standing-banner a[href="/account/warnings"]'),
      "D8: carol's open tab names the standing, with a link to the account page",
    );

    await userCard.locator('select').selectOption('3');
    await userCard.getByRole('button', { name: 'Apply' }).click();
    await confirm.waitFor();
    t.match(await confirm.textContent(), `This sets ${carolName}'s standing from 1 to 3`, 'setting a standing says what it changes');
    t.match(
      await confirm.textContent(),
      'It stays until an administrator changes it: warnings can raise it, never lower it',
      'issue 35 #3: and that warnings will not lower it',
    );
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

  closeScene(t, scene);
});
