// @ts-check
// The account page (/account; its old address /account/warnings serves the same page):
// profile, email, password, passkeys and providers, two-factor sign-in, sessions, standing and warnings, bots, Discord
// history, export and deletion. GET /api/account answers suspended accounts too, so this is
// also where a suspended user learns why. Each area is its own module; this one holds the
// account record and redraws the sections when one of them changes it.
import './theme.js';
import { api, SIGNED_OUT_EVENT } from './api.js';
import { $, el, showText, showNotice, formatTime, STANDING_NAMES, STANDING_HELP } from './ui.js';
import { initProfile, showProfile } from './account-profile.js';
import { initSecurity, showSecurity } from './account-security.js';
import { initSignIn, showSignIn } from './account-sign-in.js';
import { initData, showData } from './account-data.js';
import { initDiscord, showDiscord } from './account-discord.js';
import { initPush } from './account-push.js';
import { initBots } from './account-bots.js';

let account = null;

function warningItem(warning) {
  return el(
    'li',
    {},
    el('span', { text: warning.reason }),
    el('span', { class: 'meta', text: `from ${warning.issued_by} on ${formatTime(warning.created_at)}` }),
  );
}

function showEmail(email, verified) {
  $('email-state').textContent = !email ? 'No email address yet.' : `${email} · ${verified ? 'verified' : 'not verified yet: open the link sent to it'}`;
}

$('email-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const button = $('email-form').querySelector('button');
  button.disabled = true;
  try {
    const result = await api('PUT', '/api/account/email', { email: $('email', HTMLInputElement).value.trim() });
    showEmail(result.email, result.email_verified);
    showNotice(
      'email-result',
      result.email_verified ? 'That address is already verified.' : `A confirmation link is on its way to ${result.email}. It is valid for 24 hours.`,
    );
    $('email', HTMLInputElement).value = '';
  } catch (err) {
    showNotice('email-result', err.message, true);
  } finally {
    button.disabled = false;
  }
});

function showStanding() {
  const standing = account.account_standing;
  $('standing').textContent = `${standing} · ${STANDING_NAMES[standing] || 'unknown'}`;
  $('standing-help').textContent = STANDING_HELP[standing] || '';
  $('suspended').hidden = standing < 4;
  $('suspended-top').hidden = standing < 4;
  $('warnings').replaceChildren(...account.warnings.map(warningItem));
  $('no-warnings').hidden = account.warnings.length > 0;
}

/** Redraws every section from the account record. */
function render() {
  const suspended = account.account_standing >= 4;
  $('who').textContent = `Signed in as ${account.display_name ? `${account.display_name} (${account.username})` : account.username}.`;
  $('who').hidden = false;
  showProfile(account);
  showEmail(account.email, account.email_verified);
  $('email-form').hidden = suspended;
  $('email-closed').hidden = !suspended;
  showSecurity(account);
  showSignIn(account);
  showStanding();
  showDiscord(account);
  showData(account);
}

/** A section changed part of the account ({display_name}, {two_factor}, …): redraw. */
function update(changes) {
  Object.assign(account, changes);
  render();
}

/** Signed out (no session, or it ended while the page was open): a sign-in that comes back here, section included. */
function showSignedOut() {
  $('signin-link', HTMLAnchorElement).href = `/?next=${encodeURIComponent(location.pathname + location.hash)}`;
  $('signed-out').hidden = false;
  // Sections, links to them and a log out with nothing to end would only mislead.
  $('account').hidden = true;
  $('account-nav').hidden = true;
  $('logout-form').hidden = true;
  $('signin-link').focus();
}

async function start() {
  window.addEventListener(SIGNED_OUT_EVENT, showSignedOut);
  try {
    account = await api('GET', '/api/account');
  } catch (err) {
    if (err.status !== 401) showText('problem', err.message);
    return;
  }
  initProfile(update);
  initSecurity(update);
  initSignIn(update);
  initDiscord();
  initData();
  initPush();
  initBots();
  render();
  $('account').hidden = false;
  // The sections were hidden while the page loaded, so the browser could not scroll to #export.
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
}

start();
