// @ts-check
// The service worker (docs/ui.md "The installed app"). It keeps the app shell, the app page and
// every file it can load, under one asset version, so the app starts at once and starts offline;
// it shows the pushes the server sends (docs/api.md "Push notifications") and opens the message
// when one is tapped; it takes what another app shares to the installed app. API answers,
// uploads, pictures and the other pages are never cached: the worker leaves them to the network.
//
// Upgrades: the server writes the BUILD line below (src/core/http/static.ts), so a new version of
// the files is a new worker script. The browser installs it beside the running one, which goes on
// serving its own version to the open pages; the new one takes over when the app next starts (no
// page of the old one left), or at once when the page's "Restart" asks it to. A page never runs
// with files of two versions.

/** @type {ServiceWorkerGlobalScope} */
const worker = /** @type {any} */ (self);

// Written by the server: the asset version and the app shell's addresses under it (the page as "/").
const BUILD = { version: 'dev', shell: ['/'] };

const SHELL_CACHE = `shell-${BUILD.version}`;
/** What another app shared, kept until the page takes it (static/js/share.js reads it). */
const SHARE_CACHE = 'share';
/** The page's last unread count, which a push adds to while the app is closed (static/js/alerts.js writes it). */
const BADGE_CACHE = 'badge';
/** The addresses that are the app page (src/api/links.ts, src/api/web-app.ts). */
const APP_PAGE = /^\/(?:$|channels\/|share$)/;

worker.addEventListener('install', (event) => event.waitUntil(keepShell()));

/**
 * Fetches the shell into this version's cache. What the page loaded already comes from the HTTP
 * cache. Every file must be of this version: had the server been upgraded again since this script
 * was fetched, it would answer an older version's address with today's file (marked no-cache, not
 * immutable) and a page with other addresses; then the install fails, and the next check installs
 * the newer worker instead.
 */
async function keepShell() {
  const cache = await caches.open(SHELL_CACHE);
  await Promise.all(
    BUILD.shell.map(async (address) => {
      const response = await fetch(address, { credentials: 'same-origin' });
      const ours =
        address === '/' ? (await response.clone().text()).includes(`/a/${BUILD.version}/`) : /\bimmutable\b/.test(response.headers.get('Cache-Control') || '');
      if (!response.ok || !ours) throw new Error(`${address} is not of version ${BUILD.version}`);
      await cache.put(address, response);
    }),
  );
}

worker.addEventListener('activate', (event) =>
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith('shell-') && name !== SHELL_CACHE) await caches.delete(name);
      }
      await worker.clients.claim();
    })(),
  ),
);

worker.addEventListener('message', (event) => {
  // The page's "Restart": this waiting worker takes over now, and the pages load again.
  if (event.data?.type === 'restart') worker.skipWaiting();
});

worker.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (url.origin !== worker.location.origin) return;
  if (request.method === 'POST' && url.pathname === '/share') return event.respondWith(receiveShare(request));
  if (request.method !== 'GET') return;
  if (request.mode === 'navigate' && APP_PAGE.test(url.pathname)) return event.respondWith(appPage(request));
  if (url.pathname.startsWith('/a/')) return event.respondWith(fromShell(request));
  // Anything else goes to the network as if there were no worker, and is never kept.
});

/** The app page from the shell: at once, online or not. The page itself says when it is offline. */
async function appPage(request) {
  return (await caches.match('/', { cacheName: SHELL_CACHE })) || fetch(request);
}

/** A versioned file from whichever version's shell holds it (a version's addresses are its own). */
async function fromShell(request) {
  return (await caches.match(request)) || fetch(request);
}

// ---- what another app shares -----------------------------------------------------------

/**
 * The manifest's share_target posts here (multipart: title, text, url, files). The worker keeps
 * it and sends the app to /share, which asks where it goes and fills the composer. One share at a
 * time: a new one replaces one the page has not taken.
 */
async function receiveShare(request) {
  const form = await request.formData();
  const files = form.getAll('files').filter((value) => typeof value !== 'string');
  const field = (name) => {
    const value = form.get(name);
    return typeof value === 'string' ? value : '';
  };
  await caches.delete(SHARE_CACHE);
  const cache = await caches.open(SHARE_CACHE);
  const shared = {
    title: field('title'),
    text: field('text'),
    url: field('url'),
    files: files.map((file) => ({ name: /** @type {File} */ (file).name, type: file.type })),
  };
  await cache.put('/share/fields', new Response(JSON.stringify(shared), { headers: { 'Content-Type': 'application/json' } }));
  await Promise.all(files.map((file, i) => cache.put(`/share/files/${i}`, new Response(file))));
  return Response.redirect('/share?shared=1', 303);
}

// ---- pushes ------------------------------------------------------------------------------

worker.addEventListener('push', (event) => {
  /** @type {{ sender?: string, room?: string, text?: string, count?: number, tag?: string, url?: string }} */
  let push = {};
  try {
    push = event.data ? event.data.json() : {};
  } catch {
    // A push that is not ours shows as a plain notice.
  }
  const title = push.sender ? `${push.sender} (${push.room || 'chat'})` : 'chat';
  const body = push.text || (push.count > 1 ? `${push.count} new messages` : 'New message');
  event.waitUntil(
    Promise.all([
      // One notification per room (its tag): a later push for the room replaces the earlier one.
      worker.registration.showNotification(
        title,
        /** @type {NotificationOptions} */ ({ body, tag: push.tag || 'chat', renotify: true, data: { url: push.url || '/' }, icon: '/icons/icon-192.png' }),
      ),
      addToBadge(Number(push.count) || 1),
    ]),
  );
});

/**
 * The app's icon counts what is unread (static/js/alerts.js sets it while the app runs). A push
 * arrives only while no page of the app is in view: its messages are added to the last count.
 */
async function addToBadge(count) {
  const nav = worker.navigator;
  if (!('setAppBadge' in nav)) return;
  const cache = await caches.open(BADGE_CACHE);
  const last = Number(await (await cache.match('/badge'))?.text()) || 0;
  await cache.put('/badge', new Response(String(last + count)));
  await nav.setAppBadge(last + count).catch(() => {});
}

worker.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(openMessage(event.notification.data?.url || '/'));
});

/**
 * A tap on a notification: an open app page opens the message in place (and comes to the front);
 * another page of ours goes there; otherwise the app starts at it. Only addresses of this site.
 */
async function openMessage(address) {
  const url = new URL(address, worker.location.origin);
  const target = url.origin === worker.location.origin ? url.pathname + url.search : '/';
  const windows = await worker.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const app = windows.find((client) => APP_PAGE.test(new URL(client.url).pathname));
  if (app) {
    app.postMessage({ type: 'open', url: target });
    return app.focus();
  }
  if (windows[0]) {
    await windows[0].focus();
    // A page this worker does not control (opened before it) cannot be sent elsewhere: a new window then.
    return windows[0].navigate(target).catch(() => worker.clients.openWindow(target));
  }
  return worker.clients.openWindow(target);
}
