// @ts-check
// Every call to the server goes through api(): JSON in and out, and the server's plain-text
// reason turned into an ApiError whose message can be shown to the user as it is: forPeople()
// rewords the reasons a person meets in the app and makes every other one a sentence.

/**
 * The server's reasons are written for API clients ("you are already friends with bob", "too
 * many requests; try again in 3 s"). These are the ones a person meets by using the app, said
 * the way the app speaks; the rest get a capital letter and a full stop.
 */
/** @type {[RegExp, (m: RegExpExecArray) => string][]} */
const REWORDED = [
  [/^you are already friends with (.+)$/, (m) => `You and ${m[1]} are already friends.`],
  [/^you already sent a friend request to (.+)$/, (m) => `You already asked ${m[1]} to be friends; they have not answered yet.`],
  [/^no user named (.+)$/, (m) => `Nobody here is called ${m[1]}. Check the spelling of the username.`],
  [/^you cannot send a friend request to yourself$/, () => 'That is your own username: ask someone else to be friends.'],
  [/^you cannot block yourself$/, () => 'You cannot block yourself.'],
  [/^(friend request not found|not a friend|not blocked)$/, () => 'That has changed in the meantime; the list is up to date now.'],
  [/^invite not found or expired$/, () => 'This invite has expired or does not exist. Ask for a new one.'],
  [/^username is already taken$/, () => 'That username is taken: try another one.'],
  [/^invalid username or password$/, () => 'The username or the password is wrong.'],
  [/^sign in required$/, () => 'You are signed out. Sign in again.'],
  [/^too many (.+); try again in (\d+) s$/, (m) => `You are doing that too often. Try again in ${m[2]} ${m[2] === '1' ? 'second' : 'seconds'}.`],
  [/^request body is larger than (\d+) bytes$/, (m) => `That is too large to send: the limit is ${Math.max(1, Math.floor(Number(m[1]) / 1048576))} MB.`],
  [/^(.+) not found$/, (m) => `That ${m[1]} no longer exists.`],
];

export function forPeople(reason) {
  for (const [pattern, say] of REWORDED) {
    const m = pattern.exec(reason);
    if (m) return say(m);
  }
  const sentence = reason.charAt(0).toUpperCase() + reason.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

export class ApiError extends Error {
  constructor(status, message, retryAfter = null, reason = message) {
    super(message);
    this.status = status;
    /** The server's own words, for code that tells reasons apart; `message` is for people. */
    this.reason = reason;
    /** For a 429: how many seconds the server asked us to wait (its Retry-After), else null. */
    this.retryAfter = retryAfter;
  }
}

/**
 * api('GET', '/api/servers'), api('POST', path, {name}), api('POST', path, formData).
 * Resolves to the parsed JSON body, or null for 204. Rejects with ApiError.
 */
export function api(method, path, body) {
  return request(method, path, body, {});
}

/**
 * A moderation call with its optional reason, which the server stores in the audit log. The
 * header carries ASCII only, so the reason is percent-encoded (the server decodes it); line
 * breaks, which the server refuses there, become spaces.
 */
export function apiWithReason(method, path, body, reason) {
  const text = (reason || '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return request(method, path, body, text ? { 'X-Audit-Log-Reason': encodeURIComponent(text) } : {});
}

/** The server's reason when a request has no session, and the window event that says so. */
const SIGNED_OUT = 'sign in required';
export const SIGNED_OUT_EVENT = 'chat:signed-out';

/** Calls that must not set off a resume: the sign-in calls themselves. */
const NO_RESUME = new Set(['/api/login', '/api/logout', '/api/session/resume', '/api/register']);
let resuming = null;
let resumes = 0;
/** Set while this browser signed in with "remember this device": only then is a resume worth a try. */
const REMEMBERED = 'chat.remembered';
const RESUMED_AT = 'chat.resumedAt';
export const markRemembered = (on) => (on ? localStorage.setItem(REMEMBERED, '1') : localStorage.removeItem(REMEMBERED));
/** Whether this browser may sign in again by itself (it signed in with "remember this device"). */
export const mayResume = () => Boolean(localStorage.getItem(REMEMBERED));
/** How many times this tab has signed in again by itself (the stream reconnects at once after one). */
export const resumeCount = () => resumes;

/**
 * A remembered browser signs in again by itself (after a restart ended its session): true when
 * it did. One attempt at a time, across this browser's tabs too (the device secret rotates at
 * every use, so two tabs must not spend it at once): a tab that waited goes on with the session
 * another one just opened.
 */
export function resumeSession() {
  if (!mayResume()) return Promise.resolve(false);
  resuming ??= (async () => {
    const attempt = async () => {
      // Another tab signed in again while this one waited for the lock: the cookies are shared.
      if (Date.now() - Number(localStorage.getItem(RESUMED_AT) || 0) < 10_000) return true;
      const res = await fetch('/api/session/resume', { method: 'POST', credentials: 'same-origin' }).catch(() => null);
      // Refused: this browser is not remembered (any more); a server that did not answer may be later.
      if (res && res.status === 401) markRemembered(false);
      if (res?.ok) localStorage.setItem(RESUMED_AT, String(Date.now()));
      return Boolean(res?.ok);
    };
    try {
      const done = navigator.locks ? await navigator.locks.request('chat-resume', attempt) : await attempt();
      if (done) resumes += 1;
      return done;
    } finally {
      resuming = null;
    }
  })();
  return resuming;
}

async function request(method, path, body, headers, resumed = false) {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { method, credentials: 'same-origin', headers: { ...headers } };
  if (body instanceof FormData) {
    init.body = body; // the browser sets the multipart boundary itself
  } else if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    throw new ApiError(0, 'The server could not be reached. Check the connection and try again.');
  }
  // A session that ended with a restart: a remembered browser signs in again and goes on.
  if (res.status === 401 && !resumed && !NO_RESUME.has(path) && (await resumeSession())) {
    return request(method, path, body, headers, true);
  }
  if (!res.ok) {
    const text = (await res.text().catch(() => '')).trim();
    // The session is gone (and could not be resumed): a page that offers a sign-in listens.
    if (res.status === 401 && text === SIGNED_OUT) window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
    const wait = Number(res.headers.get('Retry-After'));
    throw new ApiError(res.status, text ? forPeople(text) : `The server answered ${res.status}.`, Number.isFinite(wait) && wait > 0 ? wait : null, text);
  }
  if (res.status === 204) return null;
  return res.json();
}

/** Builds a query string from the non-empty values: query({before: id, limit: 50}). */
export function query(params) {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') q.set(key, String(value));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

/**
 * A multipart POST with upload progress (fetch cannot report it): {promise, abort}.
 * onProgress(sent, total) is called as bytes leave. Rejects with ApiError; abort() rejects
 * with status -1.
 */
export function upload(path, formData, onProgress) {
  const xhr = new XMLHttpRequest();
  const promise = new Promise((resolve, reject) => {
    xhr.open('POST', path);
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) onProgress(e.loaded, e.total);
    });
    xhr.addEventListener('load', () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        try {
          resolve(JSON.parse(xhr.responseText));
        } catch {
          reject(new ApiError(xhr.status, 'The server sent an answer that could not be read.'));
        }
      } else {
        const wait = Number(xhr.getResponseHeader('Retry-After'));
        const text = (xhr.responseText || '').trim();
        reject(new ApiError(xhr.status, text ? forPeople(text) : `The server answered ${xhr.status}.`, Number.isFinite(wait) && wait > 0 ? wait : null, text));
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, 'The upload was cut off. Check the connection and try again.')));
    xhr.addEventListener('abort', () => reject(new ApiError(-1, 'Upload cancelled.')));
    xhr.send(formData);
  });
  return { promise, abort: () => xhr.abort() };
}

// A log-out form posts without script; this browser stops trying to sign in again by itself.
document.addEventListener('submit', (e) => {
  if (e.target instanceof HTMLFormElement && e.target.getAttribute('action') === '/api/logout') markRemembered(false);
});
