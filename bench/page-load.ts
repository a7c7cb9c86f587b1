/**
 * One cold load of a page as the browser's network layer counts it (bench/page-weight.ts, and the
 * browser test that keeps the app page's figure in its output: test/browser-pages.test.ts). Apart
 * from bench/lib.ts so that a test can use it without the bench's process handlers.
 */
import type { Browser, CDPSession, Page } from 'playwright-core';

export const SIGN_IN_MAX_KB = 40;
export const APP_MAX_KB = 160;
const THROTTLED = { offline: false, latency: 40, downloadThroughput: (10 * 1024 * 1024) / 8, uploadThroughput: (5 * 1024 * 1024) / 8 };

export interface Load {
  bytes: number;
  requests: number;
  wsBytes: number;
  ms: number;
}

/** One cold load of `path` in a fresh context; resolves when `ready` holds on the page. */
export async function loadOnce(
  browser: Browser,
  base: string,
  path: string,
  opts: { cookie?: string; identity: boolean; throttle: boolean; ready: (page: Page) => Promise<unknown> },
): Promise<Load> {
  const context = await browser.newContext();
  try {
    if (opts.cookie) {
      const [name, value] = opts.cookie.split('=');
      await context.addCookies([{ name, value, url: base }]);
    }
    const page = await context.newPage();
    const cdp: CDPSession = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    if (opts.identity) await cdp.send('Network.setExtraHTTPHeaders', { headers: { 'Accept-Encoding': 'identity' } });
    if (opts.throttle) await cdp.send('Network.emulateNetworkConditions', THROTTLED);
    let bytes = 0;
    let requests = 0;
    let wsBytes = 0;
    const urls = new Map<string, string>();
    const sizes: [string, number][] = [];
    cdp.on('Network.requestWillBeSent', (e: { requestId: string; request: { url: string } }) => urls.set(e.requestId, e.request.url));
    cdp.on('Network.loadingFinished', (e: { requestId: string; encodedDataLength: number }) => {
      bytes += e.encodedDataLength;
      requests++;
      sizes.push([new URL(urls.get(e.requestId) ?? 'http://x/?').pathname, e.encodedDataLength]);
    });
    cdp.on('Network.webSocketFrameReceived', (e: { response: { payloadData: string } }) => (wsBytes += Buffer.byteLength(e.response.payloadData)));
    const started = performance.now();
    await page.goto(base + path, { waitUntil: 'commit' });
    await opts.ready(page);
    const took = performance.now() - started;
    await page.waitForLoadState('networkidle');
    // PAGE_WEIGHT_DETAIL=1 lists what each response weighed, heaviest first.
    if (process.env.PAGE_WEIGHT_DETAIL)
      console.log(
        path,
        opts.identity ? 'identity' : 'compressed',
        sizes
          .sort((a, b) => b[1] - a[1])
          .map(([u, n]) => `${u} ${n}`)
          .join(', '),
      );
    return { bytes, requests, wsBytes, ms: took };
  } finally {
    await context.close();
  }
}
