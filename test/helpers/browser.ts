import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Test } from 'tap';
import type { Browser, BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { Client, signUp } from './client';
import { must } from './community';
import { startServer, type TestServer } from './server';

/**
 * What the browser tests share: the system Chromium and its flags, the watch that turns any
 * console error, page error, CSP violation or dialog into a problem, bounded waits, screenshots,
 * steps that skip the rest after one fails, and the chat scenarios' cast: a server, one browser
 * per user, users signed up through the API, a server to meet in. playwright-core only drives
 * the browser; it downloads nothing.
 */
export const CHROMIUM = '/usr/bin/chromium';
// CI sets REQUIRE_BROWSER=1 (.ci/run installs Chromium): there a missing browser fails the run
// instead of skipping the proof that the pages work.
export const SKIP =
  fs.existsSync(CHROMIUM) || process.env.REQUIRE_BROWSER === '1' ? false : `${CHROMIUM} is not installed (apt-get install chromium); the browser test needs it`;
export const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
];
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
 * The functions a test hands a page (evaluate, init scripts) are compiled by tsx, whose esbuild
 * keeps their names with calls to a helper `__name` of the test's module; in the page they need
 * one too (it need do nothing there). Every context gets it first, before any other init script.
 */
export const KEEP_NAMES = 'globalThis.__name = (target) => target;';

/**
 * Watches a context's page. Chromium logs every 4xx answer as a console error; `expected` lists
 * the [status, path] pairs a test asks for on purpose, any other is a problem.
 */
export async function watch(name: string, context: BrowserContext, page: Page, expected: [number, string][]): Promise<Watched> {
  context.setDefaultTimeout(WAIT);
  // The browser reports CSP violations to the page; make each one loud.
  await context.addInitScript({ content: KEEP_NAMES });
  await context.addInitScript({
    content:
      "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI));",
  });
  const watched: Watched = { name, context, page, problems: [], watching: true };
  page.on('console', (msg: ConsoleMessage) => {
    if (msg.type() !== 'error' || !watched.watching) return;
    const url = msg.location().url;
    const path = new URL(url, 'http://x').pathname;
    // A path ending in * stands for every path it begins.
    if (expected.some(([status, p]) => msg.text().includes(`status of ${status}`) && (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p))) return;
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
 * A screen as it is (`<name>-desktop.png`), then at phone width (`<name>-phone.png`, after
 * `onPhone`, which opens the screen there when the phone layout shows something else first), and
 * the window back at its size.
 */
export async function shotsAtBothWidths(page: Page, name: string, onPhone?: () => Promise<void>): Promise<void> {
  await shot(page, `${name}-desktop`);
  const size = page.viewportSize()!;
  await page.setViewportSize(PHONE.viewport);
  await page.waitForTimeout(150);
  await onPhone?.();
  await shot(page, `${name}-phone`);
  await page.setViewportSize(size);
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

// ---- the chat scenarios (test/browser-*.test.ts) ---------------------------------------------

/** Every user of the browser tests has this password. */
export const PASSWORD = 'correct horse';
/** Markup that must stay text wherever a user can put it. */
export const XSS = '<img src=x onerror=alert(1)>';
/** A message with every kind of markdown the app draws, and markup and links that must stay harmless. */
export const MARKDOWN = [
  '**bold** _italic_ `inline code` ||the butler|| https://example.org/page',
  '> a quote',
  '```',
  'const x = 1;',
  '```',
  `${XSS} ![pic](https://example.org/x.png) [js](javascript:alert(1))`,
].join('\n');

/**
 * Chromium logs every 4xx answer as a console error. These are answers the pages ask for on
 * purpose, so they are expected; any other is a fault: how the pages learn who is looking
 * (signed out; not an administrator), a wrong password, the styled 404 page, a used reset link,
 * a remembered browser refused a sign-in of its own.
 */
export const EXPECTED_REFUSALS: [number, string][] = [
  [401, '/api/account'],
  [401, '/api/login'],
  [403, '/api/admin/me'],
  [404, '/no-such-page'],
  [400, '/api/password-reset'],
  // A browser that signed in with "remember this device" tries to sign in again by itself when
  // its session ends; signed out elsewhere (its device ended too), it is refused.
  [401, '/api/session/resume'],
  // A remote image our media proxy could not fetch (a host that does not answer, a refused address).
  [404, '/api/media/*'],
];

/** One Chromium for the windows of a test (closed after it). */
export async function launchChromium(t: Test): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true, timeout: 30_000 });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * One user's window: a context of its own (a fresh profile: cookies, storage, permissions), a
 * desktop or a phone, watched for problems.
 */
export async function openWindow(t: Test, browser: Browser, name: string, expected: [number, string][], phone = false): Promise<Watched> {
  const context = await browser.newContext({ ...(phone ? PHONE : DESKTOP), acceptDownloads: true });
  t.teardown(() => context.close());
  return watch(name, context, await context.newPage(), expected);
}

export const sessionOf = async (w: Watched, url: string) => (await w.context.cookies(url)).find((c) => c.name === 'app_session')?.value;

/** A client of the API holding the same session as the window, to set things up or check them. */
export async function clientOf(w: Watched, url: string): Promise<Client> {
  const client = new Client(url);
  client.cookie = `app_session=${await sessionOf(w, url)}`;
  return client;
}

/** The message whose text contains `text`. */
export const message = (page: Page, text: string) => page.locator('#messages > li.msg').filter({ has: page.locator('.content', { hasText: text }) });

export async function send(page: Page, text: string) {
  await page.fill('#composer-text', text);
  await page.press('#composer-text', 'Enter');
  await message(page, text.split('\n')[0]).last().waitFor();
}

/** A small RGB gradient as a PNG file, so the screenshot shows a real picture. */
export function gradientPng(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes: Buffer) => {
    let c = 0xffffffff;
    for (const byte of bytes) c = crcTable[(c ^ byte) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      rows.set([60 + (x * 160) / width, 110 + (y * 120) / height, 210], y * (width * 3 + 1) + 1 + x * 3);
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

export interface Scene {
  server: TestServer;
  /** The users' windows, in the order asked for. */
  windows: Watched[];
  step: ReturnType<typeof stepper>;
  started: number;
}

/**
 * A chat scenario: the real server under the page CSP and one window per user, each its own
 * fresh profile, named as given (a `phone` one is 390×844 with touch, preferring dark). The users
 * start signed out: a step signs them up in the page, or signIn() does it through the API.
 */
/** `expected`: refusals a window's user meets on purpose in this scene (an AutoMod block), as path patterns of watch(). */
export async function openScene(
  t: Test,
  prefix: string,
  users: { name: string; phone?: boolean; expected?: [number, string][] }[],
  env: Record<string, string> = {},
): Promise<Scene> {
  const started = Date.now();
  const server = await startServer({ env });
  t.teardown(server.close);
  const browser = await launchChromium(t);
  // (The shared list itself where a window has no refusals of its own: a test may add to it later.)
  const windows = await Promise.all(
    users.map((u) => openWindow(t, browser, u.name, u.expected ? [...EXPECTED_REFUSALS, ...u.expected] : EXPECTED_REFUSALS, u.phone)),
  );
  return { server, windows, step: stepper(t, windows, prefix), started };
}

/** Registers `username` through the API and gives the window its session; the client holds it too. */
export async function signIn(scene: Scene, w: Watched, username: string): Promise<Client> {
  const client = await signUp(scene.server.url, username, PASSWORD);
  await w.context.addCookies([{ name: 'app_session', value: client.cookie!.replace(/^app_session=/, ''), url: scene.server.url }]);
  return client;
}

/** The server the chat scenarios meet in, made through the API: "Book club" (with markup in its name) and its #general. */
export async function bookClub(owner: Client, members: Client[]): Promise<{ serverId: string; generalId: string; token: string }> {
  const serverId: string = (await must(owner.post('/api/servers', { name: `Book club ${XSS}` }), 201)).body.id;
  const generalId: string = (await must(owner.get(`/api/servers/${serverId}/channels`), 200)).body[0].id;
  return { serverId, generalId, token: await join(owner, serverId, members) };
}

/** The members join the owner's server through an invite of the owner's; its token. */
export async function join(owner: Client, serverId: string, members: Client[]): Promise<string> {
  const token: string = (await must(owner.post(`/api/servers/${serverId}/invites`), 201)).body.token;
  for (const member of members) await must(member.post(`/api/invites/${token}/accept`), 200);
  return token;
}

/** A channel made through the API; its id. */
export async function addChannel(owner: Client, serverId: string, name: string): Promise<string> {
  return (await must(owner.post(`/api/servers/${serverId}/channels`, { name }), 201)).body.id;
}

/** Posts `content` in a channel through the API; the message record. */
export async function post(client: Client, serverId: string, channelId: string, content: string) {
  return (await must(client.post(`/api/servers/${serverId}/channels/${channelId}/messages`, { content }), 201)).body;
}

/** Opens a channel in the window's app and waits for its title. */
export async function openChannel(w: Watched, url: string, serverId: string, channelId: string, name: string): Promise<void> {
  await w.page.goto(`${url}/?server=${serverId}&channel=${channelId}`);
  await w.page.locator('#room-title', { hasText: name }).waitFor();
}

/** The end of every scenario: no window met a problem; how long it took. */
export function closeScene(t: Test, scene: Scene): void {
  for (const b of scene.windows) t.same(b.problems, [], `no console error, page error, CSP violation or dialog for ${b.name}`);
  t.comment(`browser test took ${((Date.now() - scene.started) / 1000).toFixed(1)} s`);
}
