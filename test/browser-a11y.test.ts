import t from 'tap';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';
import { SKIP, bookClub, closeScene, openScene, post, shot, signIn } from './helpers/browser';
import { type Client, signUp, uniqueName } from './helpers/client';
import { must } from './helpers/community';

/**
 * Issue 35, keyboard and accessibility: axe-core (from node_modules, injected into a context made
 * with bypassCSP for these checks only) on the home, app (light, dark, phone), account, admin
 * (light, dark), import and invite pages, and on the account and admin pages signed out, finds no
 * critical or serious violation. The app shows what issue 47 #17 found failing: a muted channel,
 * an offline member in a pale hoisted role, mentions of a person and a role, a webhook's BOT tag,
 * the New messages divider; the admin page an administrator badge. Machines without
 * /usr/bin/chromium skip this.
 */
const AXE = path.join(process.cwd(), 'node_modules/axe-core/axe.min.js');

interface Violation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

async function axe(page: Page): Promise<Violation[]> {
  await page.addScriptTag({ path: AXE });
  const result = await page.evaluate(async () =>
    (globalThis as unknown as { axe: { run: (o: object) => Promise<{ violations: Violation[] }> } }).axe.run({ resultTypes: ['violations'] }),
  );
  return result.violations.filter((v) => v.impact === 'critical' || v.impact === 'serious');
}
const describe = (vs: Violation[]) =>
  vs
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} at ${v.nodes
          .slice(0, 5)
          .map((n) => `${n.target.join(' ')} (${n.failureSummary ?? ''})`)
          .join(', ')}`,
    )
    .join('\n');

t.test('axe finds no critical or serious violation on the pages', { skip: SKIP }, async (t) => {
  const aliceName = uniqueName('alice');
  // Alice administers the instance: the admin page lists users with their badges.
  const scene = await openScene(t, 'browser-a11y', [{ name: 'alice' }], { ADMIN_USERS: aliceName });
  const { server, step } = scene;
  const [alice] = scene.windows;
  const browser = alice.context.browser()!;
  let serverId = '';
  let generalId = '';
  let token = '';
  let bob: Client;

  await step('(set-up) alice signs up, has a server with 15 messages (a screenful: every kind of row axe checks), the last one edited', async () => {
    const api = await signIn(scene, alice, aliceName);
    // Bob is offline (he never opens the app) and holds a pale role shown as its own group (issue 47 #17).
    bob = await signUp(server.url, uniqueName('bob'));
    ({ serverId, generalId, token } = await bookClub(api, [bob]));
    const role = (await must(api.post(`/api/servers/${serverId}/roles`, { name: 'Helpers', mentionable: true, color: 0xf1c40f, hoist: true }), 201)).body;
    await must(api.put(`/api/servers/${serverId}/members/${bob.userId}/role`, { role: 'Helpers' }), 200);
    await must(api.put(`/api/servers/${serverId}/members/${api.userId}/role`, { role: role.name }), 200);
    // A muted channel in the sidebar.
    const quiet = (await must(api.post(`/api/servers/${serverId}/channels`, { name: 'quiet' }), 201)).body.id;
    await must(api.put(`/api/account/notifications/${quiet}`, { level: 'all', muted_until: '2099-01-01T00:00:00Z' }), 200);
    let last = { id: '' };
    for (let i = 0; i < 12; i++) last = await post(api, serverId, generalId, `message number ${i}`);
    // An edited message: its "(edited)" is checked too.
    await must(api.put(`/api/servers/${serverId}/channels/${generalId}/messages/${last.id}`, { content: 'message number 11, edited' }), 200);
    // A webhook's message (its BOT tag), then bob's mentions of alice and of the role: unread, so the New messages divider shows.
    const hook = (await must(api.post(`/api/servers/${serverId}/channels/${generalId}/webhooks`, { name: 'Deploys' }), 201)).body;
    const sent = await fetch(`${server.url}/api/webhooks/${hook.id}/${hook.token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'deployed' }),
    });
    if (!sent.ok) throw new Error(`the webhook refused: ${sent.status} ${await sent.text()}`);
    await post(bob, serverId, generalId, `@${aliceName} have a look`);
    await post(bob, serverId, generalId, '@Helpers anyone?');
  });

  const cookies = async () => alice.context.cookies(server.url);
  const check = async (t: Test, name: string, url: string, opts: { phone?: boolean; dark?: boolean; signedOut?: boolean; ready: string }) => {
    const context = await browser.newContext({
      bypassCSP: true,
      viewport: opts.phone ? { width: 390, height: 844 } : { width: 1280, height: 800 },
      isMobile: !!opts.phone,
      hasTouch: !!opts.phone,
      colorScheme: opts.dark ? 'dark' : 'light',
    });
    t.teardown(() => context.close());
    if (!opts.signedOut) await context.addCookies(await cookies());
    const page = await context.newPage();
    await page.goto(url);
    await page.locator(opts.ready).first().waitFor();
    // In a room, the pointer rests on the newest message: what hovering shows (its time) is checked too.
    if (opts.ready.startsWith('#messages')) await page.locator('#messages > li.msg').last().hover();
    await page.waitForTimeout(300);
    const vs = await axe(page);
    t.same(
      vs.map((v) => v.id),
      [],
      `${name}: no critical or serious axe violation\n${describe(vs)}`,
    );
    await shot(page, `a11y-${name}`);
    await context.close();
  };

  await step('axe: home, app (light, dark, phone), account, admin and invite pages', async (t) => {
    const app = `${server.url}/?server=${serverId}&channel=${generalId}`;
    await check(t, 'home', `${server.url}/`, { signedOut: true, ready: '#login-form' });
    await check(t, 'app-light', app, { ready: '#messages > li.msg' });
    await check(t, 'app-dark', app, { dark: true, ready: '#messages > li.msg' });
    // Something unread again (the checks above read the channel): the phone shows the New messages divider.
    await post(bob, serverId, generalId, 'one more, unread');
    await check(t, 'app-phone', app, { phone: true, ready: '#messages > li.new-divider' });
    await post(bob, serverId, generalId, 'and another, unread');
    await check(t, 'app-phone-dark', app, { phone: true, dark: true, ready: '#messages > li.new-divider' });
    await check(t, 'account', `${server.url}/account`, { ready: 'main' });
    await check(t, 'admin', `${server.url}/admin`, { ready: '#user-list .badge.admin' });
    await check(t, 'admin-dark', `${server.url}/admin`, { dark: true, ready: '#user-list .badge.admin' });
    await check(t, 'import', `${server.url}/import`, { ready: '#import:not([hidden])' });
    // Signed out, both offer a sign-in that comes back to them.
    await check(t, 'admin-signed-out', `${server.url}/admin`, { signedOut: true, ready: '#signed-out:not([hidden])' });
    await check(t, 'account-signed-out', `${server.url}/account`, { signedOut: true, ready: '#signed-out:not([hidden])' });
    await check(t, 'invite', `${server.url}/invites/${token}`, { ready: 'main' });
  });

  closeScene(t, scene);
});
