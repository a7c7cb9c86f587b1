import t from 'tap';
import { SKIP, addChannel, bookClub, closeScene, openChannel, openScene, shot, signIn } from './helpers/browser';
import { Client, uniqueName } from './helpers/client';

/**
 * AutoMod in the browser (issue 53): the owner (a desktop) sets a keyword rule with a reason and
 * an alert channel in Server settings → AutoMod; a member (a phone) writes the word and reads
 * the reason, and the message is not posted; the alert appears for the owner with its quick
 * actions, one of which times the member out. Machines without /usr/bin/chromium skip this.
 */
t.test('an AutoMod keyword rule, a blocked message and its alert', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-automod', [{ name: 'alice' }, { name: 'bob-phone', phone: true, expected: [[403, '/api/servers/*']] }]);
  const { server, step } = scene;
  const [alice, bob] = scene.windows;
  const aliceApi = await signIn(scene, alice, uniqueName('alice'));
  const bobApi = await signIn(scene, bob, uniqueName('bob'));
  const { serverId, generalId } = await bookClub(aliceApi, [bobApi]);
  const alertsId = await addChannel(aliceApi, serverId, 'mod-alerts');
  await Promise.all([alice, bob].map((w) => openChannel(w, server.url, serverId, generalId, 'general')));
  const { page } = alice;

  await step('the owner sets a keyword rule in Server settings → AutoMod', async (t) => {
    await page.click('#server-menu-button');
    await page.getByRole('menuitem', { name: 'Server settings' }).click();
    await page.click('#settings-tab-automod');
    await page.locator('#automod-rules li', { hasText: 'No rules yet.' }).waitFor();
    await page.fill('#automod-name', 'No spoilers');
    await page.fill('#automod-keywords', 'spoiler*, endgame');
    await page.fill('#automod-reason', 'No spoilers here, please.');
    await page.selectOption('#automod-alert', alertsId);
    await page.click('#automod-form button[type=submit]');
    await page.locator('#automod-rules li', { hasText: 'No spoilers' }).waitFor();
    t.match(await page.textContent('#automod-rules'), 'block message, send alert message', 'the rule lists its actions');
    await shot(page, 'automod-settings-desktop');
    await page.click('#settings-close');
  });

  await step('the member writes the word: the reason is shown, nothing is posted', async (t) => {
    await bob.page.fill('#composer-text', 'the ending SPOILERS: they win');
    await bob.page.click('#send-button');
    await bob.page.locator('#toast', { hasText: 'No spoilers here, please.' }).waitFor();
    t.equal(await bob.page.inputValue('#composer-text'), 'the ending SPOILERS: they win', 'the text is back in the composer');
    await shot(bob.page, 'automod-blocked-phone');
    t.equal(await bob.page.locator('#messages li.msg', { hasText: 'they win' }).count(), 0, 'nothing was posted');
  });

  await step('the alert appears for the owner, with its quick actions', async (t) => {
    await openChannel(alice, server.url, serverId, alertsId, 'mod-alerts');
    const alert = page.locator('#messages li.msg .embed', { hasText: 'AutoMod blocked a message' });
    await alert.waitFor();
    t.match(await alert.textContent(), 'the ending SPOILERS: they win', 'it shows what was said');
    t.match(await alert.textContent(), 'No spoilers', 'and the rule');
    await shot(page, 'automod-alert-desktop');
    await alert.getByRole('button', { name: 'Time out 1 hour' }).click();
    await page.click('#ask-submit');
    await page.locator('#toast', { hasText: 'Time out 1 hour: done.' }).waitFor();
    const members = (await aliceApi.get(`/api/servers/${serverId}/members`)).body as any[];
    t.ok(members.find((m) => m.user_id === bobApi.userId).timeout_until, 'the member is timed out');
  });

  await step("a look-alike card from a webhook gets no quick actions: only AutoMod's own alerts do", async (t) => {
    const hook = (await aliceApi.post(`/api/servers/${serverId}/channels/${alertsId}/webhooks`, { name: 'Mimic' })).body;
    const forged = {
      title: 'AutoMod blocked a message',
      description: 'a forged alert',
      footer: { text: `automod server:${serverId} user:${aliceApi.userId} channel:${generalId}` },
    };
    t.equal((await new Client(server.url).post(`/api/webhooks/${hook.id}/${hook.token}`, { embeds: [forged] })).status, 204);
    const card = page.locator('#messages li.msg .embed', { hasText: 'a forged alert' });
    await card.waitFor();
    t.equal(await card.getByRole('button').count(), 0, 'no Kick, Time out or Delete on it');
  });

  closeScene(t, scene);
});
