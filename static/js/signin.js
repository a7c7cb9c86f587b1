// @ts-check
// Signing in to an account with two-factor sign-in on. POST /api/login answers a right password
// without a code with 401 "two-factor code required" (and no session); the form then shows its
// code field and sends the username, the password (still typed) and the code again. Shared by
// the home page's log-in form and the app's sign-in dialog.
import { api, markRemembered } from './api.js';
import { $ } from './ui.js';

/** Whether this browser can make and use passkeys at all (passkeys.js does the rest). */
export const passkeysSupported = () => typeof window.PublicKeyCredential === 'function' && Boolean(navigator.credentials);

export const CODE_REQUIRED = 'two-factor code required';
export const CODE_WRONG = 'invalid two-factor code';

/**
 * POST /api/login, with the code when there is one. `remember` ("remember this device", on by
 * default in the forms) keeps the browser signed in across server restarts. Resolves to
 * {user_id, suspended}.
 */
export async function logIn(username, password, code, remember = true) {
  const result = await api('POST', '/api/login', { username, password, remember, ...(code ? { code } : {}) });
  markRemembered(remember);
  return result;
}

/** Signing out on purpose: this browser stops trying to sign in again by itself. */
export const forgetRemembered = () => markRemembered(false);

/**
 * The code step of a sign-in form, made of `<prefix>-code-step` (hidden until asked for),
 * `<prefix>-code`, `<prefix>-code-label` and `<prefix>-code-switch`, which switches between a
 * 6-digit code from the app and a recovery code (`abcde-fghij`).
 */
export function codeStep(prefix) {
  const step = $(`${prefix}-code-step`);
  const input = $(`${prefix}-code`, HTMLInputElement);
  const label = $(`${prefix}-code-label`);
  const toggle = $(`${prefix}-code-switch`);
  let recovery = false;
  const draw = () => {
    label.textContent = recovery ? 'Recovery code' : '6-digit code from your authenticator app';
    input.inputMode = recovery ? 'text' : 'numeric';
    input.autocomplete = recovery ? 'off' : 'one-time-code';
    input.maxLength = recovery ? 11 : 7; // "123 456" as some apps show it
    input.placeholder = recovery ? 'abcde-fghij' : '123456';
    toggle.textContent = recovery ? 'Use a code from the app instead' : 'Use a recovery code instead';
  };
  toggle.addEventListener('click', () => {
    recovery = !recovery;
    input.value = '';
    draw();
    input.focus();
  });
  draw();
  return {
    show() {
      step.hidden = false;
      input.required = true;
    },
    hide() {
      step.hidden = true;
      input.required = false;
      input.value = '';
      recovery = false;
      draw();
    },
    /** Empties the field and puts the cursor there, for another try. */
    retry() {
      input.value = '';
      input.focus();
    },
    /** The code as typed, without spaces; undefined while the step is hidden. */
    value: () => (step.hidden ? undefined : input.value.replace(/\s+/g, '')),
  };
}
