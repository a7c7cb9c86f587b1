// @ts-check
// The installed app's side of the page (docs/ui.md "The installed app"), loaded once the app has
// started: it registers the service worker (sw.js), which keeps the app's files for a quick and an
// offline start; says when a newer version is ready, and restarts into it when asked; opens the
// message of a notification the worker was told about; and, on an iPhone, offers notifications
// (possible only in the app added to the Home Screen).
import { $, toast } from './ui.js';
import { appleDevice, installed, addToHomeScreen, pushSupported, subscribeThisDevice } from './push-setup.js';

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
  $('update-restart').addEventListener('click', restart);
  $('update-later').addEventListener('click', () => { $('update-bar').hidden = true; });
  try {
    registration = await workers.register('/sw.js');
  } catch {
    return; // a browser that refuses workers here (a private window): the app works as before
  }
  const waiting = () => {
    if (registration.waiting && workers.controller) $('update-bar').hidden = false;
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
  $('push-offer-text').textContent = inApp ? `Get notifications on this ${device} when chat is closed.` : addToHomeScreen(device);
  $('push-offer-on').hidden = !inApp;
  $('push-offer-on').addEventListener('click', async () => {
    $('push-offer').hidden = true;
    try {
      // Straight from the click: iOS asks for permission only then.
      await subscribeThisDevice(false);
      toast('Notifications are on for this device. The account page sets whether they show the text.', false);
    } catch (err) {
      toast(err.message || 'This device could not subscribe to notifications.');
    }
  });
  $('push-offer-later').addEventListener('click', () => {
    localStorage.setItem(OFFER_DISMISSED, 'later');
    $('push-offer').hidden = true;
  });
  $('push-offer').hidden = false;
}
