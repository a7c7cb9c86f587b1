// @ts-check
// The user stream: one WebSocket (GET /api/ws) for everything the user can see. It feeds the
// store; on a drop it reconnects with backoff and the next ready frame says what changed.
import { api, mayResume, resumeCount, resumeSession } from './api.js';
import { state, applyReady, applyEvent, setConnection, setStanding } from './store.js';

let socket = null;
let retries = 0;
let timer = 0;
let countdown = 0;
let stopped = false;
/** Called after every ready frame (first and reconnects): the open room catches up. */
let onReadyHooks = [];

export function onReady(fn) {
  onReadyHooks.push(fn);
}

/**
 * The server pushes to phones only when none of the user's streams is visible: each stream says
 * whether its page is (docs/api.md "What clients send"), at open and whenever that changes.
 */
function tellVisibility() {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ op: 'visibility', visible: document.visibilityState === 'visible' }));
}
document.addEventListener('visibilitychange', tellVisibility);

export function connect() {
  stopped = false;
  clearTimeout(timer);
  clearInterval(countdown);
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  // A big account's `ready` is hundreds of KB of JSON: asked for gzip, it comes as one binary
  // frame about a fifth of that, which the browser's own DecompressionStream unpacks.
  const gzip = typeof DecompressionStream === 'function';
  const ws = new WebSocket(`${scheme}//${location.host}/api/ws${gzip ? '?compress=gzip' : ''}`);
  ws.binaryType = 'blob';
  socket = ws;
  // Frames are handled one after another, in order, even while a binary one is being unpacked.
  let handled = Promise.resolve();
  let opened = false;
  setConnection('connecting');

  ws.addEventListener('open', () => {
    opened = true;
    tellVisibility();
  });

  ws.addEventListener('message', (e) => {
    // An error in a handler surfaces as an uncaught one would, and the frames after it go on.
    handled = handled.then(() => handleFrame(e.data)).catch(reportError);
  });

  async function handleFrame(data) {
    let frame;
    try {
      const text = typeof data === 'string' ? data : await new Response(data.stream().pipeThrough(new DecompressionStream('gzip'))).text();
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (!frame || typeof frame.event !== 'string') return;
    if (frame.event === 'ready') {
      retries = 0;
      applyReady(frame);
      setConnection('live');
      for (const fn of onReadyHooks) fn(frame);
      return;
    }
    applyEvent(frame);
  }

  ws.addEventListener('close', async (e) => {
    if (socket !== ws || stopped) return;
    socket = null;
    // The session ended (a restart ends them all). A remembered browser signs in again and
    // reconnects. Otherwise the server is asked (checkSession) before the user is: during a
    // restart it is away, and the page says "reconnecting" until it answers.
    if (e.code === 4001) {
      if (mayResume() && (await resumeSession())) return connect();
      return checkSession();
    }
    if (e.code === 4003) {
      setStanding(4);
      return setConnection('suspended');
    }
    // A socket that never opened may have been refused (401 after a restart ended the session,
    // 403 when suspended): ask once rather than retrying a dead cookie forever.
    if (!opened) return checkSession();
    scheduleRetry();
  });
}

/**
 * Asks the server whether this tab is still signed in: only its 401 means signed out. A remembered
 * browser signs in again on that 401 (api() does it) and the stream goes on at once; a server
 * that does not answer (restarting) is tried again with the backoff, the bar saying so.
 */
async function checkSession() {
  try {
    const resumed = resumeCount();
    const account = await api('GET', '/api/account');
    if (account.account_standing >= 4) {
      setStanding(4);
      return setConnection('suspended');
    }
    if (resumeCount() !== resumed) {
      retries = 0;
      return connect();
    }
  } catch (err) {
    if (err.status === 401) return setConnection('signed-out');
  }
  scheduleRetry();
}

function scheduleRetry() {
  // Backoff with jitter: 1 s, 2 s, 4 s … up to 30 s.
  const delay = Math.min(30000, 1000 * 2 ** retries) * (0.75 + Math.random() / 4);
  retries += 1;
  let left = Math.round(delay / 1000);
  setConnection('offline', left);
  clearInterval(countdown);
  countdown = setInterval(() => {
    left = Math.max(0, left - 1);
    if (state.connection === 'offline') setConnection('offline', left);
  }, 1000);
  timer = setTimeout(() => {
    clearInterval(countdown);
    connect();
  }, delay);
}

/** Reconnect now (the "Retry now" button, the browser coming back online, a new sign-in). */
export function reconnectNow() {
  if (socket && socket.readyState <= WebSocket.OPEN) return;
  retries = 0;
  connect();
}

/** Closes the stream for good (signing out of this tab). */
export function stop() {
  stopped = true;
  clearTimeout(timer);
  clearInterval(countdown);
  if (socket && socket.readyState === WebSocket.OPEN) socket.close(1000);
  socket = null;
}

window.addEventListener('online', () => {
  if (state.connection === 'offline') reconnectNow();
});
