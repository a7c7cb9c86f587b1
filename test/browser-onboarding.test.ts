import t from 'tap';
import { SKIP, addChannel, bookClub, closeScene, openChannel, openScene, shot, signIn } from './helpers/browser';
import { uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * A community that protects itself, end to end in the browser (issue 53): the owner (a desktop)
 * has a keyword rule that alerts #mod-alerts (set in Server settings → AutoMod: its own test,
 * browser-automod, drives that form), and writes the rules and a question in Server settings →
 * Onboarding, whose answer gives a role that opens a private channel; a newcomer (a phone) joins
 * by invite, reads the rules, cannot write (the composer says why), accepts with that answer, gets
 * the role and sees the channel, where a message with the rule's word is blocked with its reason;
 * the alert appears for the owner. Machines without /usr/bin/chromium skip this.
 */
t.test('an owner sets a screening; a newcomer reads the rules, accepts, the channel opens, and AutoMod blocks a word', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-onboarding', [{ name: 'owner' }, { name: 'newcomer-phone', phone: true, expected: [[403, '/api/servers/*']] }]);
  const { server, step } = scene;
  const [owner, newcomer] = scene.windows;
  const ownerApi = await signIn(scene, owner, uniqueName('owner'));
  const newcomerApi = await signIn(scene, newcomer, uniqueName('new'));
  const { serverId, generalId } = await bookClub(ownerApi, []);
  const base = `/api/servers/${serverId}`;
  const gamers = (await must(ownerApi.post(`${base}/roles`, { name: 'Gamers' }), 201)).body.id;
  const games = (await must(ownerApi.post(`${base}/channels`, { name: 'games' }), 201)).body.id;
  await must(ownerApi.put(`${base}/channels/${games}/overwrites/${serverId}`, { deny: ['view_channel'] }), 200);
  await must(ownerApi.put(`${base}/channels/${games}/overwrites/${gamers}`, { allow: ['view_channel'] }), 200);
  const alertsId = await addChannel(ownerApi, serverId, 'mod-alerts');
  await must(ownerApi.put(`${base}/channels/${alertsId}/overwrites/${serverId}`, { deny: ['view_channel'] }), 200);
  const rule = {
    name: 'No spoilers',
    trigger: { type: 'keyword', keyword_filter: ['spoiler*'] },
    actions: [
      { type: 'block_message', custom_message: 'No spoilers here, please.' },
      { type: 'send_alert_message', channel_id: alertsId },
    ],
  };
  await must(ownerApi.post(`${base}/automod/rules`, rule), 201);
  await openChannel(owner, server.url, serverId, generalId, 'general');
  const { page } = owner;

  await step('the owner writes the rules and a question in Server settings → Onboarding', async (t) => {
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.click('#settings-tab-onboarding');
    await page.locator('#onboarding-form').waitFor();
    await page.fill('#onboarding-rules', 'Be kind.\nNo spam.');
    await page.check('#onboarding-enabled');
    await page.click('#onboarding-add-question');
    const question = page.locator('#onboarding-questions .onboarding-question').first();
    await question.locator('.onboarding-question-title').fill('Which games do you play?');
    await question.locator('.onboarding-required').check();
    await question.locator('.onboarding-single').check();
    await question.locator('.onboarding-answer-title').first().fill('Video games');
    await question.locator('.onboarding-answer-roles').first().selectOption({ label: 'Gamers' });
    await question.locator('.onboarding-answer-channels').first().selectOption({ label: '#games' });
    await shot(page, 'onboarding-settings-desktop');
    await page.click('#onboarding-form button[type=submit]');
    await page.locator('#toast', { hasText: 'Onboarding saved.' }).waitFor();
    const saved = (await must(ownerApi.get(`${base}/onboarding`), 200)).body;
    t.same(saved.rules, ['Be kind.', 'No spam.']);
    t.equal(saved.enabled, true);
    t.same(saved.questions[0].answers[0].role_ids, [gamers], 'the answer gives Gamers');
    await page.click('#settings-close');
  });

  await step('a newcomer who joins by invite reads the rules and cannot write before accepting', async (t) => {
    const token = (await must(ownerApi.post(`${base}/invites`), 201)).body.token;
    await must(newcomerApi.post(`/api/invites/${token}/accept`), 200);
    await newcomer.page.goto(`${server.url}/?server=${serverId}&channel=${generalId}`);
    const dialog = newcomer.page.locator('#onboarding-dialog[open]');
    await dialog.waitFor();
    t.match(await dialog.locator('#onboarding-rule-list').textContent(), /Be kind\.No spam\./, 'the rules are listed');
    await shot(newcomer.page, 'onboarding-rules-phone');
    await newcomer.page.click('#onboarding-later');
    t.match(await newcomer.page.getAttribute('#composer-text', 'placeholder'), /Accept this server's rules first/, 'the composer says why');
    t.ok(await newcomer.page.locator('#composer-text').isDisabled(), 'and takes no words');
    t.equal((await newcomerApi.post(`${base}/channels/${generalId}/messages`, { content: 'hi' })).status, 403, 'the server refuses too');
    await page.locator('#members .member-button', { hasText: newcomerApi.username }).locator('.pending-tag').waitFor();
    t.pass('the member list marks them');
  });

  await step('they accept with an answer: the role comes and the channel it opens appears', async (t) => {
    await newcomer.page.goto(`${server.url}/?server=${serverId}&channel=${generalId}`);
    const dialog = newcomer.page.locator('#onboarding-dialog[open]');
    await dialog.waitFor();
    await dialog.getByLabel('Video games').check();
    await dialog.locator('#onboarding-agree').check();
    await dialog.locator('#onboarding-accept').click();
    await newcomer.page.locator('#room-title', { hasText: 'games' }).waitFor();
    t.equal(await newcomer.page.locator('#onboarding-dialog').count(), 0, 'the dialog is gone');
    await newcomer.page.locator('#composer-text:not([disabled])').waitFor();
    await shot(newcomer.page, 'onboarding-accepted-phone');
    const me = (await must(ownerApi.get(`${base}/members`), 200)).body.find((m: { user_id: string }) => m.user_id === newcomerApi.userId);
    t.same(me.roles, ['Gamers']);
    t.equal(me.pending, false);
    await page.locator('#members .member-button', { hasText: newcomerApi.username }).locator('.pending-tag').waitFor({ state: 'detached' });
  });

  await step('in the channel that opened, a word of the rule is blocked with its reason; the owner sees the alert', async (t) => {
    await newcomer.page.fill('#composer-text', 'SPOILERS: the dragon wins');
    await newcomer.page.click('#send-button');
    await newcomer.page.locator('#toast', { hasText: 'No spoilers here, please.' }).waitFor();
    t.equal(await newcomer.page.inputValue('#composer-text'), 'SPOILERS: the dragon wins', 'the text is back in the composer');
    t.equal(await newcomer.page.locator('#messages li.msg', { hasText: 'the dragon wins' }).count(), 0, 'nothing was posted');
    await shot(newcomer.page, 'onboarding-blocked-phone');
    await openChannel(owner, server.url, serverId, alertsId, 'mod-alerts');
    const alert = page.locator('#messages li.msg .embed', { hasText: 'AutoMod blocked a message' });
    await alert.waitFor();
    t.match(await alert.textContent(), 'SPOILERS: the dragon wins', 'the alert shows what was said, to moderators');
  });

  closeScene(t, scene);
});
