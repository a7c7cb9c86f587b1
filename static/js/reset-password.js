// @ts-check
// Reset page. /reset-password?token=... (the link in the email) sets a new password;
// /reset-password alone asks for the address to send a link to.
import './theme.js';
import { api } from './api.js';
import { $, showNotice } from './ui.js';

const UNREACHABLE = 'The server could not be reached; try again.';

const TOKEN_KEY = 'chat.reset-token';
const requestForm = $('request-form', HTMLFormElement);
const resetForm = $('reset-form', HTMLFormElement);

// The token opens the account: keep it out of the history and address bar once read, but keep
// it in this tab (sessionStorage) until it is used, so that a reload still resets the password.
const token = new URLSearchParams(location.search).get('token') || sessionStorage.getItem(TOKEN_KEY);
if (token) {
  sessionStorage.setItem(TOKEN_KEY, token);
  history.replaceState(null, '', location.pathname);
}
const forgetToken = () => sessionStorage.removeItem(TOKEN_KEY);

const show = (text, isError) => showNotice('status', text, isError);

/** The reason for a refusal, or ours when the server could not be asked. */
const reasonOf = (err) => (err.status === 0 ? UNREACHABLE : err.message);

requestForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const button = requestForm.querySelector('button');
  button.disabled = true;
  try {
    await api('POST', '/api/password-reset/request', { email: requestForm.email.value.trim() });
    requestForm.hidden = true;
    show('If an account has this address verified, a reset link is on its way. Check your mailbox.', false);
  } catch (err) {
    show(reasonOf(err), true);
  }
  button.disabled = false;
});

resetForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const password = resetForm.password.value;
  if (password !== resetForm.confirm.value) {
    show('The two passwords differ.', true);
    return;
  }
  const button = resetForm.querySelector('button');
  button.disabled = true;
  try {
    await api('POST', '/api/password-reset', { token, password });
    forgetToken();
    resetForm.hidden = true;
    show('Your password is changed and every session of the account has ended. Sign in with the new password.', false);
  } catch (err) {
    // A used or expired link cannot be retried: offer to send a new one right here.
    if (err.status === 400 && /expired|invalid|already been used/.test(err.reason)) {
      forgetToken();
      resetForm.hidden = true;
      requestForm.hidden = false;
      show(
        /expired/.test(err.reason)
          ? 'This reset link has expired (links last one hour). Enter your address to get a new one.'
          : 'This reset link was already used. Enter your address to get a new one.',
        true,
      );
    } else {
      show(reasonOf(err), true);
    }
  }
  button.disabled = false;
});

if (token) resetForm.hidden = false;
else requestForm.hidden = false;
