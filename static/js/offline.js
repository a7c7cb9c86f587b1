// @ts-check
// The app started with no connection (docs/ui.md "The installed app"): the service worker gave the
// page and the app's files from its cache, but the server does not answer. The page says so,
// "You are offline", and asks the server again (after 1 s, 2 s, 4 s … up to 30 s; at once when the
// browser says it is back online, or on "Retry now"). Once the server answers, the page loads
// again and the app starts as usual, where the user left off.
import { $, el } from './ui.js';

const retryText = el('span', { id: 'offline-retry', text: 'Reconnecting…' });
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
  retryText.textContent = 'Reconnecting…';
  if (await serverAnswers()) {
    location.reload();
    return;
  }
  const delay = Math.min(30_000, 1000 * 2 ** retries);
  retries += 1;
  let left = Math.round(delay / 1000);
  const say = () => {
    retryText.textContent = `Reconnecting in ${left} s…`;
  };
  say();
  countdown = setInterval(() => {
    left = Math.max(0, left - 1);
    say();
  }, 1000);
  timer = setTimeout(tryNow, delay);
}

/** Shows the app's frame in its offline state and waits for the server (the page then reloads). */
export async function startOffline() {
  await new Promise((resolve) => {
    document.head.append(el('link', { rel: 'stylesheet', href: new URL('../css/pwa.css', import.meta.url).href, onload: resolve, onerror: resolve }));
  });
  const app = $('app');
  app.classList.add('offline-start', 'pane-room');
  app.classList.remove('pane-nav');
  $('signed-out').hidden = true;
  $('no-room').hidden = true;
  const retryNow = el(
    'button',
    {
      type: 'button',
      class: 'link-button',
      onclick: () => {
        retries = 0;
        tryNow();
      },
    },
    'Retry now',
  );
  $('main').append(
    el(
      'div',
      { id: 'offline-state', class: 'empty-state offline-state', role: 'status' },
      el('h2', { text: 'You are offline' }),
      el('p', { class: 'muted', text: 'Chat opens where you left off as soon as the connection is back.' }),
      el('p', {}, retryText, ' ', retryNow),
    ),
  );
  app.hidden = false;
  document.body.classList.add('in-app');
  window.addEventListener('online', () => {
    retries = 0;
    tryNow();
  });
  tryNow();
}
