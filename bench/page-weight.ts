/**
 * Page weight (issue 29): what a browser downloads, on a cold cache, for the signed-out sign-in
 * page and for the signed-in app page, and how long the app takes to be usable. Real Chromium
 * (Debian's, through playwright-core), counting every response's bytes on the wire as the
 * browser's network layer reports them (CDP `Network.loadingFinished.encodedDataLength`: headers
 * and body, compressed as sent), WebSocket frames counted apart.
 *
 * Each page is loaded twice in fresh browser contexts: as Chromium asks for it (Accept-Encoding:
 * gzip, deflate, br, zstd) and with `Accept-Encoding: identity` forced, which is how the app was
 * delivered before this issue (no compression). Time to a usable app page (from navigation to
 * the channel's messages shown and the composer ready) is measured both ways on loopback and on
 * a throttled link (10 Mbit/s down, 40 ms round trip), median of READS loads each.
 *
 * Targets: sign-in page <= 40 KB, app page <= 160 KB transferred; time to a usable app page no
 * slower than without compression.
 *
 * Run alone: node dist-bench/bench/page-weight.js
 */
import type { Page } from 'playwright-core';
import { type Row, call, login, median, ms, ownerWithChannel, printTable, runAlone, startChat, tempDir, verdict } from './lib';
import { APP_MAX_KB, type Load, SIGN_IN_MAX_KB, loadOnce } from './page-load';

export { APP_MAX_KB, SIGN_IN_MAX_KB, loadOnce };

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const READS = 5;
const MESSAGES = 60;

export interface PageWeightFigures {
  signIn: { br: Load; identity: Load };
  app: { br: Load; identity: Load };
  usable: { loopback: { br: number; identity: number }; throttled: { br: number; identity: number } };
  acceptEncoding: string;
}

export async function measurePageWeight(): Promise<PageWeightFigures> {
  const server = await startChat(tempDir('chat-bench-weight-'));
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
  try {
    const owner = await ownerWithChannel(server.base, 'weigher');
    for (let i = 0; i < MESSAGES; i++) {
      await call(
        server.base,
        'POST',
        owner.messagesUrl,
        { content: `message **${i}** with a [link](https://example.com/${i}) and some words to read` },
        owner.cookie,
      );
    }
    const cookie = await login(server.base, 'weigher');
    // The app opens the server's channel from the address, as a shared link or a reload does.
    const appPath = `/?server=${owner.serverId}&channel=${owner.channelId}`;
    const signInReady = (page: Page) => page.locator('#login-form button[type=submit]').waitFor({ state: 'visible' });
    const appReady = async (page: Page) => {
      // The newest page of history (50 messages) shown.
      await page.locator('#messages > li.msg').nth(49).waitFor({ state: 'attached' });
      await page.locator('#composer-text').waitFor({ state: 'visible' });
    };
    const signIn = {
      br: await loadOnce(browser, server.base, '/', { identity: false, throttle: false, ready: signInReady }),
      identity: await loadOnce(browser, server.base, '/', { identity: true, throttle: false, ready: signInReady }),
    };
    const app = {
      br: await loadOnce(browser, server.base, appPath, { cookie, identity: false, throttle: false, ready: appReady }),
      identity: await loadOnce(browser, server.base, appPath, { cookie, identity: true, throttle: false, ready: appReady }),
    };
    const usableMs = async (identity: boolean, throttle: boolean) => {
      const times: number[] = [];
      // Each load is cold: a new context starts with an empty cache.
      for (let i = 0; i < READS; i++) times.push((await loadOnce(browser, server.base, appPath, { cookie, identity, throttle, ready: appReady })).ms);
      return median(times);
    };
    const usable = {
      loopback: { br: await usableMs(false, false), identity: await usableMs(true, false) },
      throttled: { br: await usableMs(false, true), identity: await usableMs(true, true) },
    };
    // What Chromium asks for over plain http://127.0.0.1 (Brotli is offered on secure origins; loopback counts as one).
    const page = await browser.newPage();
    const asked = page.waitForRequest(() => true);
    await page.goto(`${server.base}/healthz`);
    const acceptEncoding = (await (await asked).allHeaders())['accept-encoding'] ?? '(none)';
    await page.close();
    return { signIn, app, usable, acceptEncoding };
  } finally {
    await browser.close();
    await server.stop();
  }
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;

export function pageWeightRows(f: PageWeightFigures): Row[] {
  return [
    ['Chromium asks for Accept-Encoding', f.acceptEncoding, '', ''],
    [
      'sign-in page, cold: transferred',
      `${kb(f.signIn.br.bytes)} in ${f.signIn.br.requests} responses`,
      `<= ${SIGN_IN_MAX_KB} KB`,
      verdict(f.signIn.br.bytes <= SIGN_IN_MAX_KB * 1000),
    ],
    ['sign-in page, uncompressed (before)', `${kb(f.signIn.identity.bytes)} in ${f.signIn.identity.requests} responses`, '', ''],
    [
      'app page, cold: transferred',
      `${kb(f.app.br.bytes)} in ${f.app.br.requests} responses (+ ${kb(f.app.br.wsBytes)} of WebSocket frames)`,
      `<= ${APP_MAX_KB} KB`,
      verdict(f.app.br.bytes <= APP_MAX_KB * 1000),
    ],
    ['app page, uncompressed (before)', `${kb(f.app.identity.bytes)} in ${f.app.identity.requests} responses`, '', ''],
    [
      'time to a usable app page, loopback: compressed / uncompressed',
      `${ms(f.usable.loopback.br)} / ${ms(f.usable.loopback.identity)}`,
      'no slower',
      verdict(f.usable.loopback.br <= f.usable.loopback.identity * 1.1),
    ],
    [
      'time to a usable app page, 10 Mbit/s 40 ms: compressed / uncompressed',
      `${ms(f.usable.throttled.br)} / ${ms(f.usable.throttled.identity)}`,
      'no slower',
      verdict(f.usable.throttled.br <= f.usable.throttled.identity * 1.1),
    ],
  ];
}

runAlone(module, 'page-weight', async () => {
  printTable('12. Page weight: cold cache, real Chromium', pageWeightRows(await measurePageWeight()));
});
