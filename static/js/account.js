// The account page (/account/warnings): standing, warnings and the email address. GET
// /api/account works for suspended accounts too, so this is where a suspended user learns why.
import './theme.js';
import { api } from './api.js';
import { $, el, showText, formatTime, STANDING_NAMES, STANDING_HELP } from './ui.js';


function warningItem(warning) {
  return el('li', {},
    el('span', { text: warning.reason }),
    el('span', { class: 'meta', text: `from ${warning.issued_by} on ${formatTime(warning.created_at)}` }));
}

function showEmail(email, verified) {
  $('email-state').textContent = !email
    ? 'No email address yet.'
    : `${email} · ${verified ? 'verified' : 'not verified yet: open the link sent to it'}`;
}

function showResult(text, isError) {
  showText('email-result', text);
  $('email-result').classList.toggle('error', isError);
}

$('email-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const button = $('email-form').querySelector('button');
  button.disabled = true;
  try {
    const result = await api('PUT', '/api/account/email', { email: $('email').value });
    showEmail(result.email, result.email_verified);
    showResult(result.email_verified
      ? 'That address is already verified.'
      : `A confirmation link is on its way to ${result.email}. It is valid for 24 hours.`, false);
    $('email').value = '';
  } catch (err) {
    showResult(err.message, true);
  } finally {
    button.disabled = false;
  }
});

async function start() {
  let account;
  try {
    account = await api('GET', '/api/account');
  } catch (err) {
    showText('problem', err.status === 401 ? 'You are not signed in. Log in on the home page first.' : err.message);
    return;
  }
  showText('who', `signed in as ${account.username}`);
  const standing = account.account_standing;
  $('standing').textContent = `${standing} · ${STANDING_NAMES[standing] || 'unknown'}`;
  $('standing-help').textContent = STANDING_HELP[standing] || '';
  $('suspended').hidden = standing < 4;
  $('warnings').replaceChildren(...account.warnings.map(warningItem));
  $('no-warnings').hidden = account.warnings.length > 0;
  showEmail(account.email, account.email_verified);
  $('email-form').hidden = standing >= 4;
  $('email-closed').hidden = standing < 4;
  $('account').hidden = false;
}

start();
