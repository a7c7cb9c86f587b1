// @ts-check
// The home page. Signed out, it shows the register/login forms: plain form posts that work
// without this script, which (when it runs) sends them as JSON instead so a failed login keeps
// the username, registering signs the user in, and both return to where the user was going
// (?next=/invites/… from an invite page, or the room of a tab that was signed out). An account
// with two-factor sign-in on is asked for its code in the same form (signin.js). Beside the form:
// a passkey (a button, and the username field's autofill: the conditional UI, passkeys.js) and a
// button per OpenID Provider (docs/sso.md), whose sign-in comes back here with ?sso=code when the
// account's two-factor code is still needed. Signed in, it loads and starts the chat app: the
// signed-out page downloads none of it.
import './theme.js';
import { api } from './api.js';
import { $, el, showText, toast, standingLabel, submitButton } from './ui.js';
import { logIn, codeStep, passkeysSupported, CODE_REQUIRED, CODE_WRONG } from './signin.js';

// Set while this browser has a signed-in app open: the next visit starts fetching the app's
// modules and style sheet at once, beside the account request, instead of after it.
const SIGNED_IN_HINT = 'chat.app';
let appModule = null;

/** The chat app's code and its style sheet, fetched once; resolves when both are ready. */
function loadApp() {
  appModule ??= Promise.all([
    import('./app.js'),
    new Promise((resolve, reject) => {
      const sheet = document.createElement('link');
      sheet.rel = 'stylesheet';
      sheet.href = new URL('../css/app.css', import.meta.url).href;
      sheet.onload = resolve;
      sheet.onerror = () => reject(new Error('The app could not load. Reload the page.'));
      document.head.append(sheet);
    }),
  ]).then(([app]) => app);
  return appModule;
}
if (localStorage.getItem(SIGNED_IN_HINT)) loadApp().catch(() => {});

// What a failed form post comes back with: /?error=<code>. The page words each code itself, so
// no one can put a sentence of their own on this page through a link.
const FORM_ERRORS = {
  username_rule: 'Usernames are 3 to 32 letters, digits, _ or -.',
  password_rule: 'Passwords are 8 to 72 characters.',
  username_taken: 'That username is taken. Pick another one.',
  missing_fields: 'Enter a username and a password.',
  login_failed: 'Wrong username or password.',
  two_factor_required: 'Two-factor sign-in is on for this account: enter your password again, and the code from your authenticator app.',
  two_factor_failed: 'That code is not right. Try the current one, or a recovery code.',
  rate_limited: 'Too many attempts. Wait a little, then try again.',
  signed_out: 'You were signed out. Sign in again.',
  too_slow: 'The form took too long to arrive. Try again.',
  too_large: 'That was too much to send at once.',
};
const GENERIC_ERROR = 'That did not work. Check what you entered and try again.';
const NEXT_KEY = 'chat:next';

/** Only a path on this site: "/invites/x", never "//elsewhere" or "https://…". */
export function safeNext(value) {
  return typeof value === 'string' && /^\/(?![/\\])[^\s\\]*$/.test(value) ? value : null;
}

const params = new URLSearchParams(location.search);
const next = safeNext(params.get('next'));
// A sign-in through a provider waits for the account's two-factor code (POST /api/auth/oidc/two-factor).
const ssoCode = params.get('sso') === 'code';
if (next) sessionStorage.setItem(NEXT_KEY, next);
if (params.has('registered')) showText('notice', 'Registered. You can log in now.');
if (params.has('logged_in')) toast('Logged in.', false);
if (params.has('deleted')) showText('notice', 'Your account is deleted. Your messages stay, shown as written by “Deleted user”.');
const errorCode = params.get('error');
if (errorCode) showText('problem', Object.hasOwn(FORM_ERRORS, errorCode) ? FORM_ERRORS[errorCode] : GENERIC_ERROR);
// The message has been read: a reload should not show it again. ?server= stays.
const READ_ONCE = ['registered', 'logged_in', 'deleted', 'error', 'next', 'sso'];
if (READ_ONCE.some((key) => params.has(key))) {
  for (const key of READ_ONCE) params.delete(key);
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + (rest ? `?${rest}` : ''));
}

/** After signing in: where the user was going, or the page as it is (its ?server= and so on). */
function goOn(suspended) {
  if (!suspended) localStorage.setItem(SIGNED_IN_HINT, '1');
  const target = safeNext(sessionStorage.getItem(NEXT_KEY));
  sessionStorage.removeItem(NEXT_KEY);
  if (suspended) location.replace('/account/warnings');
  else if (target && target !== '/') location.replace(target);
  else location.replace(location.pathname + location.search);
}

const LOGIN_ERRORS = { 401: FORM_ERRORS.login_failed, 429: FORM_ERRORS.rate_limited };

function wireForms() {
  const login = $('login-form', HTMLFormElement);
  const code = codeStep('login');
  // A form posted before this script ran came back as ?error=two_factor_required: the code field
  // shows now, and the password has to be typed again.
  if (errorCode === 'two_factor_required' || errorCode === 'two_factor_failed') code.show();
  login.addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = submitButton(login);
    button.disabled = true;
    showText('problem', '');
    try {
      const result = await logIn(login.username.value, login.password.value, code.value(), $('login-remember', HTMLInputElement).checked);
      goOn(result.suspended);
    } catch (err) {
      button.disabled = false;
      if (err.status === 401 && err.reason === CODE_REQUIRED) {
        // The password was right: ask for the code, keeping what was typed.
        code.show();
        code.retry();
        return;
      }
      if (err.status === 401 && err.reason === CODE_WRONG) {
        showText('problem', FORM_ERRORS.two_factor_failed);
        code.retry();
        return;
      }
      showText('problem', LOGIN_ERRORS[err.status] || err.message);
      // The username stays; only the password is cleared for another try.
      if (err.status === 401) code.hide();
      login.password.value = '';
      login.password.focus();
    }
  });
  const register = $('register-form', HTMLFormElement);
  register.addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = submitButton(register);
    button.disabled = true;
    showText('problem', '');
    const credentials = { username: register.username.value, password: register.password.value };
    try {
      await api('POST', '/api/register', credentials);
      // Registered: sign in straight away rather than asking for the same two fields again, and
      // remember this device as signing in does (on by default), so a restart signs nobody out.
      const result = await logIn(credentials.username, credentials.password, undefined, $('register-remember', HTMLInputElement).checked);
      goOn(result.suspended);
    } catch (err) {
      showText('problem', err.status === 409 ? FORM_ERRORS.username_taken : err.message);
      button.disabled = false;
    }
  });
}

/** A passkey, and the providers' buttons (GET /api/auth/providers); register is hidden when PASSWORD_SIGNUP is off. */
async function wireOtherWays() {
  const remember = () => $('login-remember', HTMLInputElement).checked;
  /** @type {AbortController | null} the autofill's request, waiting for the person to pick a passkey */
  let waiting = null;
  const withPasskey = async (conditional) => {
    waiting?.abort();
    waiting = conditional ? new AbortController() : null;
    try {
      const { signInWithPasskey } = await import('./passkeys.js');
      const result = await signInWithPasskey({ conditional, signal: waiting?.signal, remember: remember() });
      goOn(result.suspended);
    } catch (err) {
      if (err instanceof DOMException) {
        // Aborted (the button took over), or the person closed the browser's prompt.
        if (!conditional && err.name !== 'AbortError') showText('problem', 'No passkey was used. Try again, or sign in with your password.');
      } else if (err.status === 401) {
        showText('problem', 'That passkey did not sign you in.');
      } else if (!conditional) {
        // The autofill's own trouble (no options: too many asks from this address) stays quiet.
        showText('problem', err.status === 429 ? FORM_ERRORS.rate_limited : err.message);
      }
      // After the button's prompt, the autofill offers the passkeys again (after a refused
      // autofill pick it does not: the button is there, and no loop asks the server again and again).
      if (!conditional) listen();
    }
  };
  const listen = () => {
    // (passkeys.js loads only where passkeys can be used: the app page of a signed-in user never needs it.)
    import('./passkeys.js')
      .then((passkeys) => passkeys.conditionalSupported())
      .then((ok) => {
        if (ok) withPasskey(true);
      });
  };
  $('other-ways').hidden = false;
  // A recovery code alone signs in an account without a password (the server refuses it for one that has a password).
  const recovery = $('recovery-form', HTMLFormElement);
  recovery.addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = submitButton(recovery);
    button.disabled = true;
    showText('problem', '');
    try {
      const code = $('recovery-code', HTMLInputElement).value.replace(/\s+/g, '');
      goOn((await logIn($('recovery-username', HTMLInputElement).value, '', code, remember())).suspended);
    } catch (err) {
      button.disabled = false;
      showText(
        'problem',
        err.status === 401 ? 'That did not sign you in: check the username and the code (each code works once).' : LOGIN_ERRORS[err.status] || err.message,
      );
      $('recovery-code', HTMLInputElement).value = '';
    }
  });
  if (passkeysSupported()) {
    $('passkey-signin').hidden = false;
    $('passkey-signin').addEventListener('click', () => withPasskey(false));
    listen();
  }
  let options;
  try {
    options = await api('GET', '/api/auth/providers');
  } catch {
    return; // the password form still works
  }
  $('register-panel').hidden = !options.password_signup;
  const back = safeNext(sessionStorage.getItem(NEXT_KEY)) || '/';
  $('sso-buttons').replaceChildren(
    ...options.providers.map((p) =>
      el('a', {
        class: 'sso-button',
        text: `Sign in with ${p.name}`,
        href: `/api/auth/oidc/${encodeURIComponent(p.id)}/start?return_to=${encodeURIComponent(back)}`,
        // "Remember this device" as the form's box says at the moment of the click.
        onclick: (/** @type {MouseEvent} */ e) => {
          const link = /** @type {HTMLAnchorElement} */ (e.currentTarget);
          link.href = `${link.href.replace(/&remember=on$/, '')}${remember() ? '&remember=on' : ''}`;
        },
      }),
    ),
  );
}

/** ?sso=code: the code step of a sign-in through a provider (its session opens when the code is right). */
function wireSsoCode() {
  $('login-panel').hidden = true;
  $('register-panel').hidden = true;
  $('sso-code-panel').hidden = false;
  const form = $('sso-code-form', HTMLFormElement);
  $('sso-code').focus();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const button = submitButton(form);
    button.disabled = true;
    showText('problem', '');
    try {
      const result = await api('POST', '/api/auth/oidc/two-factor', { code: $('sso-code', HTMLInputElement).value.replace(/\s+/g, '') });
      if (!result.suspended) localStorage.setItem(SIGNED_IN_HINT, '1');
      location.replace(result.suspended ? '/account/warnings' : result.return_to);
    } catch (err) {
      button.disabled = false;
      const words = {
        400: 'This sign-in is no longer waiting (it took more than 5 minutes). Start again.',
        401: FORM_ERRORS.two_factor_failed,
        429: FORM_ERRORS.rate_limited,
      };
      showText('problem', words[err.status] || err.message);
      $('sso-code', HTMLInputElement).value = '';
      $('sso-code').focus();
    }
  });
}

async function start() {
  // GET /api/account answers suspended accounts too (GET /api/users/me would be 403), so one
  // request tells signed out, suspended and signed in apart.
  let account;
  try {
    account = await api('GET', '/api/account');
  } catch (err) {
    // No answer at all, in a browser that had the app open before: the service worker gave this
    // page from its cache (docs/ui.md "The installed app"), and the app's frame says it is offline.
    if (err.status === 0 && localStorage.getItem(SIGNED_IN_HINT)) {
      try {
        await loadApp();
        await (await import('./offline.js')).startOffline();
        return;
      } catch {
        // The app's files are not kept in this browser: the sign-in page says what happened.
      }
    }
    if (err.status !== 401) showText('problem', err.message);
    else localStorage.removeItem(SIGNED_IN_HINT);
    $('next-note').hidden = !sessionStorage.getItem(NEXT_KEY);
    if (ssoCode) return wireSsoCode();
    wireForms();
    wireOtherWays();
    // Where a person starts: the username of the sign-in form (its password when the browser filled the name).
    ($('login-username', HTMLInputElement).value ? $('login-password') : $('login-username')).focus();
    return; // the sign-in forms stay
  }
  // Signed in while a ?next= was waiting (signed in through the no-script form): go there now.
  const target = safeNext(sessionStorage.getItem(NEXT_KEY));
  if (target && target !== '/') {
    sessionStorage.removeItem(NEXT_KEY);
    location.replace(target);
    return;
  }
  $('signed-out').hidden = true;
  if (account.account_standing >= 4) {
    $('suspended-text').textContent = `Your account standing is ${standingLabel(4)}. You can read your warnings and log out; everything else is closed.`;
    $('suspended').hidden = false;
    return;
  }
  localStorage.setItem(SIGNED_IN_HINT, '1');
  let app;
  try {
    app = await loadApp();
  } catch (err) {
    showText('problem', err.message);
    $('signed-out').hidden = false;
    return;
  }
  $('app').hidden = false;
  document.body.classList.add('in-app');
  await app.startApp(account);
}

start();
