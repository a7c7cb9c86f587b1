import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';

/**
 * What the browser tests share: the system Chromium and its flags, the watch that turns any
 * console error, page error, CSP violation or dialog into a problem, bounded waits, screenshots,
 * and steps that skip the rest after one fails. playwright-core only drives the browser; it
 * downloads nothing.
 */
export const CHROMIUM = '/usr/bin/chromium';
// CI sets REQUIRE_BROWSER=1 (.ci/run installs Chromium): there a missing browser fails the run
// instead of skipping the proof that the pages work.
export const SKIP = fs.existsSync(CHROMIUM) || process.env.REQUIRE_BROWSER === '1' ? false : `${CHROMIUM} is not installed (apt-get install chromium); the browser test needs it`;
export const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'];
/** Every wait of the browser tests is bounded by this. */
export const WAIT = 10_000;
const SHOTS = path.join(__dirname, '..', '..', '.tap', 'screenshots');

export const DESKTOP = { viewport: { width: 1280, height: 800 }, colorScheme: 'light' as const };
/** A phone: 390×844 with touch, preferring dark. */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'dark' as const };

export interface Watched {
  name: string;
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors, CSP violations and dialogs: all must stay empty. */
  problems: string[];
  /** While false (a deliberate script block), console noise is not counted. */
  watching: boolean;
}

/**
 * Watches a context's page. Chromium logs every 4xx answer as a console error; `expected` lists
 * the [status, path] pairs a test asks for on purpose, any other is a problem.
 */
export async function watch(name: string, context: BrowserContext, page: Page, expected: [number, string][]): Promise<Watched> {
  context.setDefaultTimeout(WAIT);
  // The browser reports CSP violations to the page; make each one loud.
  await context.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI));",
  });
  const watched: Watched = { name, context, page, problems: [], watching: true };
  page.on('console', (msg: ConsoleMessage) => {
    if (msg.type() !== 'error' || !watched.watching) return;
    const url = msg.location().url;
    if (expected.some(([status, p]) => msg.text().includes(`status of ${status}`) && new URL(url, 'http://x').pathname === p)) return;
    watched.problems.push(`console: ${msg.text()} (${url})`);
  });
  page.on('pageerror', (err) => watched.problems.push(`page error: ${err.message}`));
  page.on('dialog', async (dialog) => {
    watched.problems.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    await dialog.dismiss();
  });
  return watched;
}

/** Polls a condition (the page CSP refuses the eval a waitForFunction would need), bounded. */
export async function until(page: Page, what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + WAIT;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(40);
  }
}

/** A screenshot under .tap/screenshots, kept as the views' picture. */
export async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

/**
 * Steps that build on each other: after a failed one, the rest are skipped, not failed too, and
 * every window's screen at the failure is saved as `<prefix>-failed-<name>.png` in the temp dir.
 */
export function stepper(t: Test, windows: Watched[], prefix: string): (title: string, fn: (t: Test) => Promise<void>) => Promise<unknown> {
  let broken = false;
  return (title, fn) =>
    t.test(title, { skip: broken && 'an earlier step failed' }, async (t) => {
      let threw = true;
      try {
        await fn(t);
        threw = false;
      } finally {
        if (threw || !t.passing()) {
          broken = true;
          for (const w of windows) await w.page.screenshot({ path: path.join(os.tmpdir(), `${prefix}-failed-${w.name}.png`) }).catch(() => {});
          t.comment(`screenshots: ${os.tmpdir()}/${prefix}-failed-*.png; problems so far: ${JSON.stringify(windows.flatMap((w) => w.problems))}`);
        }
      }
    });
}
