// @ts-check
// Turning pushes on for this browser (docs/api.md "Push notifications"): the account page's
// "Turn on for this device" and, on an iPhone, the installed app's own offer (pwa.js). And where
// pushes can be had at all: on an iPhone or iPad only in the app added to the Home Screen.
import { api } from './api.js';

export const pushSupported = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

/** An iPhone or iPad (iPadOS says it is a Mac, with a touch screen). */
export function appleDevice() {
  if (/iPad/.test(navigator.userAgent) || (/Macintosh/.test(navigator.userAgent) && navigator.maxTouchPoints > 1)) return 'iPad';
  return /iPhone|iPod/.test(navigator.userAgent) ? 'iPhone' : null;
}

/** Started from the home screen rather than in a browser's tab. */
export const installed = () => matchMedia('(display-mode: standalone)').matches || /** @type {{ standalone?: boolean }} */ (navigator).standalone === true;

/** What to tell someone on an iPhone or iPad in Safari: pushes need the app on the Home Screen. */
export const addToHomeScreen = (device) =>
  `On an ${device}, notifications come to chat added to the Home Screen: in Safari tap Share, then “Add to Home Screen”, open chat from there and turn them on.`;

/** How long the browser's push service has to answer before we say it did not (issue 47 #12). */
export const SUBSCRIBE_LIMIT_MS = 20_000;

/** The browser's subscription, within the time limit, its failures said in plain words. */
async function subscribeWithin(registration, key) {
  let timer = 0;
  const late = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`The browser's push service did not answer within ${SUBSCRIBE_LIMIT_MS / 1000} seconds. Try again later, or in another browser.`)),
      SUBSCRIBE_LIMIT_MS,
    );
  });
  try {
    return await Promise.race([registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }), late]);
  } catch (err) {
    if (err instanceof DOMException)
      // "Registration failed - push service error" and the like: the browser's words, not the user's.
      throw new Error('This browser could not reach its push service (some browsers have none, or it is blocked). Try again later, or in another browser.');
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Asks the browser for permission, registers the service worker and sends the subscription made
 * with the server's key to the server. Call it straight from a click: iOS asks only then. Fails
 * with plain words, within SUBSCRIBE_LIMIT_MS for the push service.
 * @param {boolean} showText whether pushes to this device carry the message text
 */
export async function subscribeThisDevice(showText) {
  if ((await Notification.requestPermission()) !== 'granted')
    throw new Error('The browser was not allowed to show notifications: allow them in its site settings, then try again.');
  const registration = await navigator.serviceWorker.register('/sw.js');
  const { key } = await api('GET', '/api/push/key');
  const subscription = await subscribeWithin(registration, key);
  await api('POST', '/api/account/push-subscriptions', { ...subscription.toJSON(), show_text: showText });
}

/** Whether this browser already has pushes on (a subscription of our worker). */
export async function pushOnHere() {
  if (!pushSupported()) return false;
  const registration = await navigator.serviceWorker.getRegistration('/');
  return Boolean(await registration?.pushManager.getSubscription());
}
