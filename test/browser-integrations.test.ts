import t from 'tap';
import type { Page } from 'playwright-core';
import { SKIP, XSS, bookClub, closeScene, message, openChannel, openScene, sessionOf, shot, signIn, until } from './helpers/browser';
import { type Client, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Webhooks and bots, the browser side: the owner makes a webhook in Server settings →
 * Integrations (reached from a channel's Webhooks button) and reads its URL, shown once, from
 * the page; a Discord payload with a card posted to that URL shows in the channel live, with the
 * BOT tag and the card (its colour as the left border, title link, fields side by side, footer),
 * remote images only through our media proxy and markup as text; a new URL stops the old one; deleting the
 * webhook with its messages takes them away. On the account page a bot is made, its token shown
 * once, and reset; the owner adds it to her server in Integrations (the member list tags it);
 * it is deleted. Alice on a desktop and a phone (the same session). Machines without
 * /usr/bin/chromium skip this.
 */

/** The clipboard's text (run in the page; the tests are compiled without the DOM's types). */
const readClipboard = () => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText();

/** A webhook call as any program would make it, outside the browser. */
async function callWebhook(url: string, payload: object): Promise<number> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  await res.arrayBuffer();
  return res.status;
}

/** Opens Server settings on a tab. */
async function openSettingsTab(page: Page, tab: string) {
  await page.click('#server-menu-button');
  await page.getByRole('menuitem', { name: 'Server settings' }).click();
  await page.click(`#settings-tab-${tab}`);
}

t.test('webhooks in server settings, their cards in the channel, and bots on the account page, in Chromium under the page CSP', { skip: SKIP }, async (t) => {
  const scene = await openScene(t, 'browser-integrations', [{ name: 'alice' }, { name: 'alice-phone', phone: true }]);
  const { server, step } = scene;
  const [alice, phone] = scene.windows;
  let aliceApi: Client;
  let serverId = '';
  let generalId = '';
  let hookUrl = '';
  let hookId = '';
  let botName = '';

  await step("(set-up) alice's server with #general, open on her desktop and her phone", async () => {
    aliceApi = await signIn(scene, alice, uniqueName('alice'));
    ({ serverId, generalId } = await bookClub(aliceApi, []));
    await phone.context.addCookies([{ name: 'app_session', value: (await sessionOf(alice, server.url))!, url: server.url }]);
    await Promise.all([alice, phone].map((w) => openChannel(w, server.url, serverId, generalId, 'general')));
    await alice.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  });

  await step("the owner makes a webhook from a channel's Webhooks button; its URL is shown once and copies", async (t) => {
    const { page } = alice;
    await openSettingsTab(page, 'channels');
    await page.getByRole('button', { name: 'Webhooks of #general' }).waitFor();
    await shot(page, 'settings-channels');
    await page.getByRole('button', { name: 'Webhooks of #general' }).click();
    await page.locator('#settings-tab-integrations[aria-selected="true"]').waitFor();
    await page.locator('#settings-panel .empty-note', { hasText: 'No webhooks in this channel yet.' }).waitFor();
    t.equal(await page.locator('#webhook-channel').inputValue(), generalId, 'the Integrations tab opens on that channel');
    await page.fill('#new-webhook-name', `Deploys ${XSS}`);
    await page.click('.webhook-form button[type=submit]');
    await page.locator('#webhook-url').waitFor();
    hookUrl = await page.locator('#webhook-url').inputValue();
    t.match(hookUrl, new RegExp(`^${server.url}/api/webhooks/[^/]+/[^/]+$`), 'the URL is shown, on this server');
    const row = page.locator('#webhook-list .webhook-row');
    await row.waitFor();
    hookId = (await row.getAttribute('data-id'))!;
    t.equal(await row.locator('.row-title').textContent(), `Deploys ${XSS}`, 'the webhook is listed, its name as text');
    t.notOk((await row.textContent())!.includes(hookUrl.split('/').pop()!), 'the list shows no token');
    await page.locator('#webhook-reveal').getByRole('button', { name: 'Copy' }).click();
    await page.locator('#webhook-reveal button', { hasText: 'Copied' }).waitFor();
    t.equal(await page.evaluate(readClipboard), hookUrl, 'Copy copies the URL');
    await shot(page, 'settings-integrations');
    // Shown once: the tab opened again lists the webhook without its URL.
    await page.click('#settings-tab-overview');
    await page.click('#settings-tab-integrations');
    await page.locator('#webhook-list .webhook-row').waitFor();
    t.equal(await page.locator('#webhook-url').count(), 0, 'the URL is not shown again');
    await page.click('#settings-close');

    // The phone lists it too, in the same tab.
    await phone.page.locator('#room-back').click();
    await openSettingsTab(phone.page, 'channels');
    await phone.page.getByRole('button', { name: 'Webhooks of #general' }).waitFor();
    await shot(phone.page, 'settings-channels-phone');
    await phone.page.getByRole('button', { name: 'Webhooks of #general' }).click();
    await phone.page.locator('#webhook-list .webhook-row').waitFor();
    t.equal(await phone.page.locator('#webhook-url').count(), 0, 'another page lists it without its URL');
    await shot(phone.page, 'settings-integrations-phone');
    await phone.page.click('#settings-close');
    await phone.page.locator(`#channel-list button.channel[data-id="${generalId}"]`).click();
    await phone.page.locator('#room-title', { hasText: 'general' }).waitFor();
  });

  await step('a Discord payload posted to the URL shows live with the BOT tag and its card; remote images only through our proxy', async (t) => {
    const status = await callWebhook(hookUrl, {
      content: 'Deploy finished',
      username: 'CI',
      avatar_url: 'https://ci.example/avatar.png',
      embeds: [
        {
          title: 'Build #42 passed',
          url: 'https://ci.example/builds/42',
          description: `All **312** tests passed. ${XSS}`,
          color: 0x3ba55d,
          fields: [
            { name: 'Branch', value: '`main`', inline: true },
            { name: 'Duration', value: '4 min 12 s', inline: true },
          ],
          footer: { text: 'ci.example' },
          timestamp: new Date().toISOString(),
          image: { url: 'https://ci.example/chart.png' },
        },
      ],
    });
    t.equal(status, 204, 'the webhook call is accepted');
    for (const { page } of [alice, phone]) {
      const item = message(page, 'Deploy finished');
      await item.locator('.embed').waitFor();
      t.equal(await item.locator('.msg-head .author').textContent(), 'CI', 'the message shows the name the payload gave');
      t.equal(await item.locator('.bot-tag').textContent(), 'BOT', 'with the BOT tag');
      const card = item.locator('.embed');
      const title = card.locator('.embed-title a');
      t.equal(await title.textContent(), 'Build #42 passed', "the card's title");
      t.equal(await title.getAttribute('href'), 'https://ci.example/builds/42', 'links to its URL');
      t.equal(await title.getAttribute('rel'), 'noopener noreferrer', 'with rel="noopener noreferrer"');
      t.equal(await title.getAttribute('target'), '_blank', 'in a new tab');
      t.equal(await card.locator('.embed-description strong').textContent(), '312', 'the description is markdown');
      t.match(await card.locator('.embed-description').textContent(), XSS, 'markup in it stays text');
      t.equal(await card.locator('.embed-field').count(), 2, 'two fields');
      t.equal(await card.locator('.embed-field.inline').first().locator('.embed-field-name').textContent(), 'Branch');
      t.equal(await card.locator('.embed-field.inline').first().locator('.embed-field-value code').textContent(), 'main', 'a field value is markdown too');
      t.match(await card.locator('.embed-footer').textContent(), 'ci.example', 'the footer');
      t.equal(await card.locator('.embed-footer time').count(), 1, 'and the time');
      const border = await card.evaluate(
        (node) => (globalThis as unknown as { getComputedStyle(n: unknown): { borderLeftColor: string } }).getComputedStyle(node).borderLeftColor,
      );
      t.equal(border, 'rgb(59, 165, 93)', "the left border is the card's colour");
      // Issue 51: remote images show through our media proxy only (this one cannot be fetched: a 404 there).
      t.equal(await item.locator('img[src^="https:"], img[src^="http:"], img[src^="//"]').count(), 0, 'no image is loaded from elsewhere');
      t.match(await card.locator('img.embed-image').getAttribute('src'), /^\/api\/media\//, 'the image only through our media proxy');
      t.match(await item.locator('.msg-gutter img').getAttribute('src'), /^\/api\/media\//, "and the webhook's avatar");
    }
    // Side by side: the two inline fields share a row on the desktop.
    const fields = message(alice.page, 'Deploy finished').locator('.embed-field');
    const [a, b] = [await fields.nth(0).boundingBox(), await fields.nth(1).boundingBox()];
    t.ok(a && b && Math.abs(a.y - b.y) < 2 && b.x > a.x, 'inline fields sit side by side');
    await shot(alice.page, 'integrations-embed');
    await shot(phone.page, 'integrations-embed-phone');
  });

  await step('a new URL stops the old one; a GitHub secret is set; deleting the webhook with its messages takes them away', async (t) => {
    const { page } = alice;
    await openSettingsTab(page, 'integrations');
    await page.getByRole('button', { name: `New URL for the webhook Deploys ${XSS}` }).click();
    await page.click('#ask-submit');
    await page.locator('#webhook-url').waitFor();
    const fresh = await page.locator('#webhook-url').inputValue();
    t.not(fresh, hookUrl, 'a different URL is shown');
    t.equal(await callWebhook(hookUrl, { content: 'through the old URL' }), 401, 'the old URL is refused');
    t.equal(await callWebhook(fresh, { content: 'through the new URL' }), 204, 'the new one works');
    await message(page, 'through the new URL').waitFor();

    // A GitHub secret: set in a dialog, shown in the list, never its value.
    await page.getByRole('button', { name: `GitHub secret of the webhook Deploys ${XSS}` }).click();
    await page.fill('#form-secret', 'a shared secret');
    await page.click('#form-submit');
    await page.locator('#webhook-list .webhook-row .row-sub', { hasText: 'GitHub secret set' }).waitFor();
    t.notOk((await page.locator('#settings-panel').textContent())!.includes('a shared secret'), 'the list says a GitHub secret is set, not what it is');

    await page.getByRole('button', { name: `Delete the webhook Deploys ${XSS}` }).click();
    await page.locator('#form-dialog[open]').waitFor();
    await page.getByLabel('Also delete the messages it sent').check();
    await page.click('#form-submit');
    await page.locator('#settings-panel .empty-note', { hasText: 'No webhooks in this channel yet.' }).waitFor();
    const left = (await must(aliceApi.get(`/api/servers/${serverId}/channels/${generalId}/messages`), 200)).body;
    const list = Array.isArray(left) ? left : left.messages;
    t.notOk(
      list.some((m: { webhook_id?: string }) => m.webhook_id === hookId),
      'its messages are deleted',
    );
    t.equal(await callWebhook(fresh, { content: 'after the deletion' }), 404, 'its URL is refused');
    await page.click('#settings-close');
    await page.reload();
    await page.locator('#room-title', { hasText: 'general' }).waitFor();
    t.equal(await message(page, 'Deploy finished').count(), 0, 'the channel no longer shows them');
  });

  await step('the account page makes a bot and shows its token once; reset and delete', async (t) => {
    const { page } = alice;
    await page.goto(`${server.url}/account#bots`);
    await page.locator('#bots-heading').waitFor();
    await page.locator('#no-bots').waitFor();
    const name = uniqueName('helper');
    await page.fill('#bot-name', name);
    await page.click('#bot-form button[type=submit]');
    await page.locator('#bot-token-box').waitFor();
    const token = (await page.locator('#bot-token').textContent())!;
    t.ok(token.length >= 20, 'the token is shown');
    const row = page.locator('#bot-list .bot-row', { hasText: name });
    await row.waitFor();
    t.pass('the bot is listed');
    // The token works: the bot reads its own profile with it.
    const botId = (await row.getAttribute('data-id'))!;
    const asBot = (key: string) => fetch(`${server.url}/api/users/${botId}`, { headers: { authorization: `Bot ${key}` } });
    const me = await asBot(token);
    t.equal(me.status, 200, 'the token signs the bot in');
    if (me.status === 200) t.equal(((await me.json()) as { username: string }).username, name, 'as the bot');
    await page.locator('#bot-token-copy').click();
    await page.locator('#bot-token-copy', { hasText: 'Copied' }).waitFor();
    t.equal(await page.evaluate(readClipboard), token, 'Copy copies the token');
    await shot(page, 'account-bots');

    await phone.page.goto(`${server.url}/account#bots`);
    await phone.page.locator('#bot-list .bot-row', { hasText: name }).waitFor();
    t.ok(await phone.page.locator('#bot-token-box').isHidden(), 'another page lists the bot without its token');
    t.notOk((await phone.page.locator('body').textContent())!.includes(token), 'the token is nowhere on it');
    await shot(phone.page, 'account-bots-phone');

    await row.getByRole('button', { name: `New token for ${name}` }).click();
    await page.click('#ask-submit');
    await until(page, 'a new token', async () => (await page.locator('#bot-token').textContent()) !== token);
    t.pass('Reset token shows a new token');
    const old = await asBot(token);
    await old.arrayBuffer();
    t.equal(old.status, 401, 'the old token is refused');
    botName = name;
  });

  await step('the owner adds the bot to her server by its name; the member list shows it with the BOT tag', async (t) => {
    const { page } = alice;
    await openChannel(alice, server.url, serverId, generalId, 'general');
    await openSettingsTab(page, 'integrations');
    await page.fill('#add-bot-name', botName);
    await page.click('.add-bot-form button[type=submit]');
    await page.locator('#toast', { hasText: `${botName} is a member now.` }).waitFor();
    await page.click('#settings-close');
    const member = page.locator('#members .member-button', { hasText: botName });
    await member.waitFor();
    t.equal(await member.locator('.bot-tag').textContent(), 'BOT', 'the bot is listed as a member, tagged');
    t.match(await member.locator('.visually-hidden').textContent(), ', bot', 'and read out as a bot');
    await shot(page, 'integrations-bot-member');
  });

  await step('the bot is deleted from the account page', async (t) => {
    const { page } = alice;
    const name = botName;
    await page.goto(`${server.url}/account#bots`);
    const row = page.locator('#bot-list .bot-row', { hasText: name });
    await row.waitFor();
    await row.getByRole('button', { name: `Delete the bot ${name}` }).click();
    await page.click('#ask-submit');
    await row.waitFor({ state: 'detached' });
    await page.locator('#no-bots').waitFor();
    t.pass('it leaves the list');
  });

  closeScene(t, scene);
});
