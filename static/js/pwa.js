// @ts-check
// The installed app's side of the page (docs/ui.md "The installed app"), loaded once the app has
// started: it registers the service worker (sw.js), which keeps the app's files for a quick and an
// offline start; says when a newer version is ready, and restarts into it when asked; opens the
// message of a notification the worker was told about; and, on an iPhone, offers notifications
// (possible only in the app added to the Home Screen).
import { el, toast } from './ui.js';
import { appleDevice, installed, addToHomeScreen, pushSupported, subscribeThisDevice } from './push-setup.js';

// Its style sheet comes with it, not with the app page.
document.head.append(el('link', { rel: 'stylesheet', href: new URL('../css/pwa.css', import.meta.url).href }));

/** @type {ServiceWorkerRegistration | null} */
let registration = null;
const OFFER_DISMISSED = 'chat:push-offer';

/**
 * @param {(address: string) => void} open opens an address of the app (a message link) in place
 */
export async function initPwa(open) {
  if (!('serviceWorker' in navigator)) return;
  const workers = navigator.serviceWorker;
  let controlled = Boolean(workers.controller);
  workers.addEventListener('controllerchange', () => {
    // The first worker taking the page over changes nothing. A newer one serves other files than
    // the ones this page runs: it loads again rather than run with two versions.
    if (controlled) location.reload();
    controlled = true;
  });
  workers.addEventListener('message', (e) => {
    if (e.data?.type === 'open' && typeof e.data.url === 'string') open(e.data.url);
  });
  workers.startMessages();
  try {
    registration = await workers.register('/sw.js');
  } catch {
    return; // a browser that refuses workers here (a private window): the app works as before
  }
  const waiting = () => {
    if (registration.waiting && workers.controller) showBar(updateBar());
  };
  waiting();
  registration.addEventListener('updatefound', () => {
    const next = registration.installing;
    next?.addEventListener('statechange', () => {
      if (next.state === 'installed') waiting();
    });
  });
  offerPush();
}

/**
 * Asks the server whether the app's files changed (a new worker script is a new version): after
 * a reconnect, when the server may have been upgraded while away. The browser checks by itself
 * too, at start and once a day.
 */
export function checkForUpdate() {
  registration?.update().catch(() => {});
}

/** A bar over the top of the app (css/app.css .app-bar), shown once. */
function showBar(bar) {
  if (!bar.isConnected) document.body.append(bar);
}

let update = null;
/** "A new version of chat is ready." with Restart now and Later. */
function updateBar() {
  update ??= el(
    'div',
    { id: 'update-bar', class: 'app-bar', role: 'status' },
    el('span', { text: 'A new version of chat is ready.' }),
    el('button', { type: 'button', class: 'primary small', onclick: restart }, 'Restart now'),
    el('button', { type: 'button', class: 'small', onclick: () => update.remove() }, 'Later'),
  );
  return update;
}

/** "Restart now": the waiting version takes over; the page loads again under it (controllerchange). */
function restart() {
  const next = registration?.waiting;
  if (next) next.postMessage({ type: 'restart' });
  else location.reload();
}

/**
 * An iPhone or iPad has pushes only in the app added to the Home Screen: there it is offered once
 * (Turn on, or Not now, which is remembered); in Safari, the page says how to add it.
 */
function offerPush() {
  const device = appleDevice();
  if (!device || localStorage.getItem(OFFER_DISMISSED)) return;
  const inApp = installed();
  if (inApp && (!pushSupported() || Notification.permission !== 'default')) return;
  const turnOn = async () => {
    offer.remove();
    try {
      // Straight from the click: iOS asks for permission only then.
      await subscribeThisDevice(false);
      toast('Notifications are on for this device. The account page sets whether they show the text.', false);
    } catch (err) {
      toast(err.message || 'This device could not subscribe to notifications.');
    }
  };
  const later = () => {
    localStorage.setItem(OFFER_DISMISSED, 'later');
    offer.remove();
  };
  const offer = el(
    'div',
    { id: 'push-offer', class: 'app-bar', role: 'region', 'aria-label': `Notifications on this ${device}` },
    el('span', { text: inApp ? `Get notifications on this ${device} when chat is closed.` : addToHomeScreen(device) }),
    inApp ? el('button', { type: 'button', class: 'primary small', onclick: turnOn }, 'Turn on') : null,
    el('button', { type: 'button', class: 'small', onclick: later }, 'Not now'),
  );
  showBar(offer);
}
