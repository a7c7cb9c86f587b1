// @ts-check
// The account page's "Notifications on your devices" (docs/api.md "Push notifications"): turn
// pushes on for this browser (a service worker, /sw.js, shows them), and see, change or remove
// the subscription of each device.
import { api } from './api.js';
import { $, el, showNotice, formatTime } from './ui.js';
import { describeDevice } from './account-security.js';
import { pushSupported as supported, subscribeThisDevice, appleDevice, installed, addToHomeScreen } from './push-setup.js';

/** This browser's subscription, if it has one. */
async function ownSubscription() {
  const registration = await navigator.serviceWorker.getRegistration('/');
  return registration ? registration.pushManager.getSubscription() : null;
}

function subscriptionItem(subscription, ownEndpoint) {
  const device = describeDevice(subscription.user_agent);
  const mine = subscription.endpoint === ownEndpoint;
  const showText = el('input', {
    type: 'checkbox',
    checked: subscription.show_text,
    onchange: async (e) => {
      try {
        await api('PATCH', `/api/account/push-subscriptions/${subscription.id}`, { show_text: e.target.checked });
      } catch (err) {
        e.target.checked = !e.target.checked;
        showNotice('push-result', err.message, true);
      }
    },
  });
  return el(
    'li',
    { class: 'session' },
    el(
      'div',
      { class: 'session-text' },
      el('span', { class: 'session-device' }, device, mine ? el('span', { class: 'badge current-badge', text: 'This device' }) : null),
      el('span', { class: 'session-meta muted', text: `on since ${formatTime(subscription.created_at)}` }),
      el('label', { class: 'check' }, showText, ' Show the message text'),
    ),
    el(
      'button',
      { type: 'button', class: 'small', 'aria-label': `Turn off notifications on ${device}`, onclick: () => remove(subscription, mine) },
      'Turn off',
    ),
  );
}

async function load() {
  try {
    const [subscriptions, own] = await Promise.all([api('GET', '/api/account/push-subscriptions'), supported() ? ownSubscription() : null]);
    $('push-list').replaceChildren(...subscriptions.map((s) => subscriptionItem(s, own?.endpoint)));
    $('push-on').hidden = !supported() || subscriptions.some((s) => s.endpoint === own?.endpoint);
  } catch (err) {
    showNotice('push-result', err.message, true);
  }
}

async function remove(subscription, mine) {
  try {
    await api('DELETE', `/api/account/push-subscriptions/${subscription.id}`);
    if (mine) await (await ownSubscription())?.unsubscribe();
    showNotice('push-result', 'Notifications turned off on that device.');
  } catch (err) {
    showNotice('push-result', err.message, true);
  }
  load();
}

async function turnOn() {
  $('push-on', HTMLButtonElement).disabled = true;
  try {
    await subscribeThisDevice($('push-show-text', HTMLInputElement).checked);
    showNotice('push-result', 'Notifications are on for this device.');
  } catch (err) {
    showNotice('push-result', err.message || 'This browser could not subscribe to notifications.', true);
  } finally {
    $('push-on', HTMLButtonElement).disabled = false;
  }
  load();
}

export function initPush() {
  const device = appleDevice();
  // Safari on an iPhone has no pushes in a tab, only in the app added to the Home Screen.
  if (device && !installed()) showNotice('push-result', addToHomeScreen(device));
  else if (!supported()) showNotice('push-result', 'This browser cannot receive push notifications.');
  $('push-on').addEventListener('click', turnOn);
  load();
}
