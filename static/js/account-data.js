// @ts-check
// The account page's data sections: the export (a zip built in the background: start it, watch
// it, download it) and deleting the account (password, a code when two-factor sign-in is on).
import { api } from './api.js';
import { $, el, showText, formatTime, formatSize, confirmAction, submitButton } from './ui.js';

const EXPORT_POLL_MS = 1500;

let account = null;
let pollTimer = 0;

// ---- export -----------------------------------------------------------------------------

function showExport(status) {
  const running = status.status === 'running';
  const ready = status.status === 'ready';
  $('export-state').textContent = running
    ? 'Preparing your export… You can leave this page: it goes on without you.'
    : ready
      ? `Your export from ${formatTime(status.created_at)} is ready (${formatSize(status.size)}). It is deleted 7 days after it was made.`
      : 'No export yet.';
  $('export-progress').hidden = !running;
  $('export-download').hidden = !ready;
  if (ready) {
    $('export-download', HTMLAnchorElement).href = status.url;
    $('export-download').textContent = `Download (zip, ${formatSize(status.size)})`;
  }
  $('export-start').hidden = running;
  $('export-start').textContent = ready ? 'Make a new export' : 'Start an export';
}

/** Asks for the status; while the export runs, asks again in a moment. */
async function loadExport() {
  clearTimeout(pollTimer);
  try {
    const status = await api('GET', '/api/account/export');
    showExport(status);
    if (status.status === 'running') pollTimer = setTimeout(loadExport, EXPORT_POLL_MS);
  } catch (err) {
    showText('export-result', err.message);
  }
}

async function startExport() {
  $('export-start', HTMLButtonElement).disabled = true;
  showText('export-result', '');
  try {
    await api('POST', '/api/account/export');
    showExport({ status: 'running' });
    pollTimer = setTimeout(loadExport, EXPORT_POLL_MS);
  } catch (err) {
    const words = { 409: 'An export is being prepared already.', 429: 'You made several exports recently: the next one can start within the hour.' };
    showText('export-result', words[err.status] || err.message);
    loadExport();
  } finally {
    $('export-start', HTMLButtonElement).disabled = false;
  }
}

// ---- deletion ---------------------------------------------------------------------------

/** The servers the user owns, as links to open them; from the 409's names when the list is closed (suspended). */
async function showOwnedServers(message) {
  let items;
  try {
    const servers = await api('GET', '/api/servers');
    items = servers
      .filter((s) => s.owner_id === account.user_id)
      .map((s) => el('li', {}, el('a', { href: `/?server=${encodeURIComponent(s.id)}`, text: s.name })));
  } catch {
    items = [el('li', { text: message.replace(/^[^:]*:\s*/, '') })];
  }
  $('owned-servers').replaceChildren(...items);
  $('delete-blocked').hidden = false;
}

async function deleteAccount(e) {
  e.preventDefault();
  showText('delete-result', '');
  $('delete-blocked').hidden = true;
  const body = { password: $('delete-password', HTMLInputElement).value };
  if (account.two_factor) body.code = $('delete-code', HTMLInputElement).value.replace(/\s+/g, '');
  if (account.two_factor && !body.code) return void showText('delete-result', 'Two-factor sign-in is on: enter a code from your app, or a recovery code.');
  const sure = await confirmAction(
    'Delete your account for good?',
    `${account.username} and everything that identifies you are erased. Your messages stay, shown as written by “Deleted user”. This cannot be undone.`,
    'Delete my account',
  );
  if (!sure) return;
  const button = submitButton($('delete-form'));
  button.disabled = true;
  try {
    await api('DELETE', '/api/account', body);
    // The session ended with the account; the home page says what happened.
    location.replace('/?deleted=1');
  } catch (err) {
    button.disabled = false;
    if (err.status === 409) return void showOwnedServers(err.message);
    const words = {
      'password is wrong': 'The password is wrong.',
      'two-factor code required': 'Two-factor sign-in is on: enter a code from your app, or a recovery code.',
      'invalid two-factor code': 'That two-factor code is not right.',
    };
    showText('delete-result', words[err.reason] || (err.status === 429 ? 'Too many wrong attempts. Wait a minute, then try again.' : err.message));
    $('delete-password', HTMLInputElement).value = '';
    $('delete-code', HTMLInputElement).value = '';
  }
}

// ---- wiring -----------------------------------------------------------------------------

export function initData() {
  $('export-start').addEventListener('click', startExport);
  $('delete-form').addEventListener('submit', deleteAccount);
  loadExport();
}

export function showData(current) {
  account = current;
  $('delete-username', HTMLInputElement).value = account.username;
  $('delete-code-field').hidden = !account.two_factor;
  $('delete-code', HTMLInputElement).required = account.two_factor;
}
