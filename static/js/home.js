// The home page. Signed out, it shows the plain register/login forms (they work without this
// script) and the outcome of the last form post. Signed in, it starts the chat app.
import { api } from './api.js';
import { $, notify, showText, STANDING_NAMES } from './ui.js';
import { startChat } from './chat.js';

const params = new URLSearchParams(location.search);
if (params.has('registered')) showText('notice', 'Registered. You can log in now.');
if (params.has('logged_in')) notify('Logged in.', false); // a passing toast: the app takes the page
if (params.get('error')) showText('problem', params.get('error'));
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
