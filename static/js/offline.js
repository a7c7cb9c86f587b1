// @ts-check
// The app started with no connection (docs/ui.md "The installed app"): the service worker gave the
// page and the app's files from its cache, but the server does not answer. The page says so,
// "You are offline", and asks the server again (after 1 s, 2 s, 4 s … up to 30 s; at once when the
// browser says it is back online, or on "Retry now"). Once the server answers, the page loads
// again and the app starts as usual, where the user left off.
import { $ } from './ui.js';

let retries = 0;
let timer = 0;
let countdown = 0;

async function serverAnswers() {
  try {
    await fetch('/healthz', { cache: 'no-store' });
    return true;
  } catch {
    return false;
  }
}

async function tryNow() {
  clearTimeout(timer);
  clearInterval(countdown);
  $('offline-retry').textContent = 'Reconnecting…';
  if (await serverAnswers()) {
    location.reload();
    return;
  }
  const delay = Math.min(30_000, 1000 * 2 ** retries);
  retries += 1;
  let left = Math.round(delay / 1000);
  const say = () => { $('offline-retry').textContent = `Reconnecting in ${left} s…`; };
  say();
  countdown = setInterval(() => {
    left = Math.max(0, left - 1);
    say();
  }, 1000);
  timer = setTimeout(tryNow, delay);
}

/** Shows the app's frame in its offline state and waits for the server (the page then reloads). */
export function startOffline() {
  const app = $('app');
  app.classList.add('offline-start', 'pane-room');
  app.classList.remove('pane-nav');
  $('signed-out').hidden = true;
  $('no-room').hidden = true;
  $('offline-state').hidden = false;
  app.hidden = false;
  document.body.classList.add('in-app');
  $('offline-now').addEventListener('click', () => {
    retries = 0;
    tryNow();
  });
  window.addEventListener('online', () => {
    retries = 0;
    tryNow();
  });
  tryNow();
}
