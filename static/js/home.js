// The home page. Signed out, it shows the plain register/login forms (they work without this
// script) and the outcome of the last form post. Signed in, it starts the chat app.
import { api } from './api.js';
import { $, notify, showText, STANDING_NAMES } from './ui.js';
import { startChat } from './chat.js';

// What a failed form post comes back with: /?error=<code>. The page words each code itself, so
// no one can put a sentence of their own on this page through a link.
const FORM_ERRORS = {
  username_rule: 'Usernames are 3 to 32 letters, digits, _ or -.',
  password_rule: 'Passwords are 8 to 72 characters.',
  username_taken: 'That username is taken. Pick another one.',
  missing_fields: 'Enter a username and a password.',
  login_failed: 'Wrong username or password.',
  two_factor_required: 'Enter the code from your authenticator app.',
  two_factor_failed: 'That code is not right. Try the current one, or a recovery code.',
  rate_limited: 'Too many attempts. Wait a little, then try again.',
  signed_out: 'You were signed out. Sign in again.',
  too_slow: 'The form took too long to arrive. Try again.',
  too_large: 'That was too much to send at once.',
};
const GENERIC_ERROR = 'That did not work. Check what you entered and try again.';

const params = new URLSearchParams(location.search);
if (params.has('registered')) showText('notice', 'Registered. You can log in now.');
if (params.has('logged_in')) notify('Logged in.', false); // a passing toast: the app takes the page
const errorCode = params.get('error');
if (errorCode) showText('problem', Object.hasOwn(FORM_ERRORS, errorCode) ? FORM_ERRORS[errorCode] : GENERIC_ERROR);
// The message has been read: a reload should not show it again. ?server= stays.
if (params.has('registered') || params.has('logged_in') || params.has('error')) {
  for (const key of ['registered', 'logged_in', 'error']) params.delete(key);
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + (rest ? `?${rest}` : ''));
}

function signedInHeader(account) {
  showText('who', `signed in as ${account.username}`);
  $('account-link').hidden = false;
  $('admin-link').hidden = !account.is_admin;
  $('logout-form').hidden = false;
}

async function start() {
  // GET /api/account answers suspended accounts too (GET /api/users/me would be 403), so one
  // request tells signed out, suspended and signed in apart.
  let account;
  try {
    account = await api('GET', '/api/account');
  } catch (err) {
    if (err.status !== 401) showText('problem', err.message);
    return; // the sign-in forms stay
  }
  $('signed-out').hidden = true;
  signedInHeader(account);
  if (account.account_standing >= 4) {
    $('suspended-text').textContent =
      `Your account standing is ${account.account_standing} (${STANDING_NAMES[4]}). You can read your warnings and log out; everything else is closed.`;
    $('suspended').hidden = false;
    return;
  }
  $('app').hidden = false;
  document.body.classList.add('in-app');
  await startChat({ user_id: account.user_id, username: account.username });
}

start();
