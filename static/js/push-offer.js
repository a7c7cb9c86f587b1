// @ts-check
// Pushes offered from the app (issue 47 #12): a phone's browser in the background shows no
// desktop notification, so the status menu offers "Notify me on this device", and the first
// mention while pushes are off asks once. Plain words for what happens and for a failure, which
// comes within the push service's time limit (push-setup.js). Loaded on first use.
import { el, toast } from './ui.js';
import { subscribeThisDevice } from './push-setup.js';

const OFFERED = 'chat:push-offered';

/** Turns pushes on for this device and says how it went; true when on. */
export async function turnOnPush() {
  try {
    await subscribeThisDevice(false);
    toast('Notifications are on for this device, even when chat is closed. Choose what they say on the account page.', false);
    return true;
  } catch (err) {
    toast(`Notifications could not be turned on: ${err.message}`);
    return false;
  }
}

/** The one offer after a first mention: a bar above the composer (covering nothing) with Turn on and Not now, never shown again. */
export function offerPushOnce() {
  if (localStorage.getItem(OFFERED) || document.getElementById('push-offer')) return;
  localStorage.setItem(OFFERED, '1');
  const close = () => bar.remove();
  const bar = el(
    'div',
    { id: 'push-offer', class: 'push-offer', role: 'region', 'aria-label': 'Notifications on this device' },
    el('p', { text: 'You were mentioned. Be notified on this device when chat is closed or in the background?' }),
    el(
      'div',
      { class: 'button-row' },
      el(
        'button',
        {
          type: 'button',
          class: 'primary small',
          onclick: async () => {
            close();
            await turnOnPush();
          },
        },
        'Turn on',
      ),
      el('button', { type: 'button', class: 'small', onclick: close }, 'Not now'),
    ),
  );
  const composer = document.querySelector('.composer-wrap');
  if (composer) composer.prepend(bar);
  else document.body.append(bar);
}
