// @ts-check
// The account page's security sections: the password, the sessions (where the account is
// signed in) and two-factor sign-in (TOTP: set up with a QR code, confirm with a code, recovery
// codes shown once, turn off with a code).
import { api } from './api.js';
import { $, el, showNotice, formatTime, codePointLength, confirmAction, submitButton } from './ui.js';

let account = null;
/** @type {(changes: object) => void} what the page does when the account changed */
let update = () => {};

// ---- password ---------------------------------------------------------------------------

async function changePassword(e) {
  e.preventDefault();
  const form = $('password-form', HTMLFormElement);
  const next = $('new-password', HTMLInputElement).value;
  if (codePointLength(next) < 8 || codePointLength(next) > 72) return void showNotice('password-result', 'The new password must be 8 to 72 characters.', true);
  if (next !== $('confirm-password', HTMLInputElement).value) return void showNotice('password-result', 'The two new passwords are not the same.', true);
  const button = submitButton(form);
  button.disabled = true;
  try {
    await api('PUT', '/api/account/password', { current_password: $('current-password', HTMLInputElement).value, new_password: next });
    form.reset();
    showNotice('password-result', 'Your password is changed. Every other session was signed out; this one stays signed in.');
    loadSessions();
  } catch (err) {
    const words = { 403: 'The current password is wrong.', 429: 'Too many wrong passwords. Wait a minute, then try again.' };
    showNotice('password-result', words[err.status] || err.message, true);
    $('current-password', HTMLInputElement).value = '';
    $('current-password').focus();
  } finally {
    button.disabled = false;
  }
}

// ---- sessions ---------------------------------------------------------------------------

/** @type {[RegExp, string][]} */
const BROWSERS = [
  [/Edg(?:e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/Firefox\/|FxiOS/, 'Firefox'],
  [/SamsungBrowser/, 'Samsung Internet'],
  [/Chrome\/|CriOS|Chromium/, 'Chrome'],
  [/Safari\//, 'Safari'],
];
/** @type {[RegExp, string][]} */
const SYSTEMS = [
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Android/, 'Android'],
  [/CrOS/, 'ChromeOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Linux|X11/, 'Linux'],
];

/** "Firefox on Windows", from a User-Agent header; a program (curl, a script) by its first word. */
export function describeDevice(userAgent) {
  if (!userAgent) return 'An unknown device';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser || system) return browser || `A browser on ${system}`;
  return `A program (${userAgent.split(/[\s/]/)[0].slice(0, 40)})`;
}

/** "just now", "5 minutes ago", "3 hours ago", or the date and time. */
function formatAgo(isoText) {
  const minutes = Math.round((Date.now() - Date.parse(isoText)) / 60000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'} ago`;
  if (minutes < 24 * 60) return `${Math.round(minutes / 60)} hour${Math.round(minutes / 60) === 1 ? '' : 's'} ago`;
  return formatTime(isoText);
}

function sessionItem(session) {
  const device = describeDevice(session.user_agent);
  return el(
    'li',
    { class: `session${session.current ? ' current' : ''}`, 'data-id': session.id },
    el(
      'div',
      { class: 'session-text' },
      el('span', { class: 'session-device' }, device, session.current ? el('span', { class: 'badge current-badge', text: 'This device' }) : null),
      el('span', {
        class: 'session-meta muted',
        text: `${session.device ? 'remembered: stays signed in across restarts · ' : ''}${session.address || 'unknown address'} · signed in ${formatTime(session.created_at)} · last active ${session.current ? 'now' : formatAgo(session.last_seen_at)}`,
      }),
    ),
    session.current
      ? null
      : el(
          'button',
          { type: 'button', class: 'small', onclick: () => endSession(session.id, device), 'aria-label': `Sign out ${device}, ${session.address || ''}` },
          'Sign out',
        ),
  );
}

async function loadSessions() {
  try {
    const sessions = await api('GET', '/api/account/sessions');
    $('session-list').replaceChildren(...sessions.map(sessionItem));
    $('end-other-sessions').hidden = !sessions.some((s) => !s.current);
  } catch (err) {
    showNotice('sessions-result', err.message, true);
  }
}

async function endSession(id, device) {
  try {
    await api('DELETE', `/api/account/sessions/${id}`);
    showNotice('sessions-result', `${device} is signed out.`);
  } catch (err) {
    showNotice('sessions-result', err.status === 404 ? 'That session had already ended.' : err.message, err.status !== 404);
  }
  loadSessions();
}

async function endOtherSessions() {
  if (
    !(await confirmAction(
      'Sign out everywhere else?',
      'Every other browser and device where you are signed in will have to sign in again. This one stays signed in.',
      'Sign out the others',
    ))
  )
    return;
  try {
    await api('DELETE', '/api/account/sessions');
    showNotice('sessions-result', 'Every other session is signed out.');
  } catch (err) {
    showNotice('sessions-result', err.message, true);
  }
  loadSessions();
}

// ---- two-factor sign-in -----------------------------------------------------------------

let tfaStep = 'idle'; // 'setup' while a secret waits for its first code, 'codes' while recovery codes show
let recoveryCodes = [];

/** A code as typed: spaces dropped ("123 456" from some apps). */
const typedCode = (id) => $(id, HTMLInputElement).value.replace(/\s+/g, '');

/**
 * The otpauth:// URL as a QR code on the canvas, drawn module by module from qrcode's matrix
 * (its own toCanvas sets an inline style, which this site's scripts never do). Dark on white
 * with the 4-module quiet zone the standard asks for, in either theme.
 */
function drawQr(canvas, text) {
  const { modules } = window.QRCode.create(text, { errorCorrectionLevel: 'M' });
  const scale = 5;
  const quiet = 4;
  const side = (modules.size + quiet * 2) * scale;
  canvas.width = side;
  canvas.height = side;
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, side, side);
  ctx.fillStyle = '#000000';
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (modules.get(row, col)) ctx.fillRect((col + quiet) * scale, (row + quiet) * scale, scale, scale);
    }
  }
}

/** "JBSW Y3DP EHPK 3PXP": groups of four are easier to type; apps ignore the spaces. */
const groupsOfFour = (secret) => secret.replace(/(.{4})(?=.)/g, '$1 ');

async function copyText(text, resultId, what) {
  try {
    await navigator.clipboard.writeText(text);
    showNotice(resultId, `${what} copied.`);
  } catch {
    showNotice(resultId, `The browser did not allow copying: select the ${what.toLowerCase()} and copy it by hand.`, true);
  }
}

/** The password typed to start a setup, kept in this page only until the setup ends: turning it on asks again. */
let setupPassword = '';

const PASSWORD_WORDS = {
  400: 'Type your current password first.',
  403: 'The current password is wrong.',
  429: 'Too many wrong passwords. Wait a minute, then try again.',
};

async function startSetup(e) {
  e.preventDefault();
  $('tfa-start', HTMLButtonElement).disabled = true;
  try {
    setupPassword = $('tfa-password', HTMLInputElement).value;
    const { secret, otpauth_url: url } = await api('POST', '/api/account/2fa/setup', { current_password: setupPassword });
    $('tfa-password', HTMLInputElement).value = '';
    drawQr($('tfa-qr'), url);
    $('tfa-secret').textContent = groupsOfFour(secret);
    $('tfa-enable-code', HTMLInputElement).value = '';
    tfaStep = 'setup';
    showNotice('tfa-result', '');
    showTwoFactor();
    $('tfa-enable-code').focus();
  } catch (err) {
    setupPassword = '';
    showNotice('tfa-result', PASSWORD_WORDS[err.status] || err.message, true);
    $('tfa-password', HTMLInputElement).select();
  } finally {
    $('tfa-start', HTMLButtonElement).disabled = false;
  }
}

async function enable(e) {
  e.preventDefault();
  const code = typedCode('tfa-enable-code');
  if (!/^\d{6}$/.test(code)) return void showNotice('tfa-result', 'The code is the 6 digits your app shows for this account.', true);
  try {
    const result = await api('POST', '/api/account/2fa/enable', { code, current_password: setupPassword });
    setupPassword = '';
    recoveryCodes = result.recovery_codes;
    $('tfa-codes-intro').textContent = 'Two-factor sign-in is on. From now on, signing in asks for a code from your app. Your other sessions were signed out.';
    tfaStep = 'codes';
    showNotice('tfa-result', '');
    update({ two_factor: true });
    $('tfa-codes-done').focus();
  } catch (err) {
    const words = {
      403: 'That code does not match. Check that the app shows this account, and that the time on your phone is right, then try the current code.',
    };
    showNotice('tfa-result', words[err.status] || err.message, true);
    $('tfa-enable-code', HTMLInputElement).select();
  }
}

function downloadCodes() {
  const text = `Recovery codes for ${account.username} on ${location.host}\nEach one signs you in once in place of a code from your authenticator app.\n\n${recoveryCodes.join('\n')}\n`;
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const link = el('a', { href: url, download: `chat-recovery-codes-${account.username}.txt` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

async function disable(e) {
  e.preventDefault();
  try {
    await api('DELETE', '/api/account/2fa', { code: typedCode('tfa-disable-code'), current_password: $('tfa-disable-password', HTMLInputElement).value });
    $('tfa-disable-code', HTMLInputElement).value = '';
    $('tfa-disable-password', HTMLInputElement).value = '';
    update({ two_factor: false });
    showNotice('tfa-result', 'Two-factor sign-in is off. Signing in takes only your password now.');
  } catch (err) {
    showNotice('tfa-result', codeWords(err), true);
    $('tfa-disable-code', HTMLInputElement).select();
  }
}

/** What a refused password-and-code call says, in words for the person. */
function codeWords(err) {
  if (err.status === 403 && /password/.test(err.reason)) return PASSWORD_WORDS[403];
  const words = {
    400: 'Type your current password and a code.',
    403: 'That code is not right. Use the current code from your app, or an unused recovery code.',
    429: 'Too many wrong tries. Wait a minute, then try again.',
  };
  return words[err.status] || err.message;
}

/** New recovery codes in place of the old ones: the same password and code as turning it off. */
async function renewCodes() {
  if (!$('tfa-disable-form', HTMLFormElement).reportValidity()) return;
  try {
    const result = await api('POST', '/api/account/2fa/recovery-codes', {
      code: typedCode('tfa-disable-code'),
      current_password: $('tfa-disable-password', HTMLInputElement).value,
    });
    $('tfa-disable-code', HTMLInputElement).value = '';
    $('tfa-disable-password', HTMLInputElement).value = '';
    recoveryCodes = result.recovery_codes;
    $('tfa-codes-intro').textContent = 'Your new recovery codes: the old ones no longer work.';
    tfaStep = 'codes';
    showNotice('tfa-result', '');
    showTwoFactor();
    $('tfa-codes-done').focus();
  } catch (err) {
    showNotice('tfa-result', codeWords(err), true);
  }
}

function showTwoFactor() {
  const on = account.two_factor;
  if (on && tfaStep === 'setup') tfaStep = 'idle'; // turned on from another tab
  $('tfa-badge').textContent = on ? 'On' : 'Off';
  $('tfa-badge').classList.toggle('resolved', on);
  $('tfa-off').hidden = on || tfaStep === 'setup';
  $('tfa-setup').hidden = on || tfaStep !== 'setup';
  $('tfa-codes').hidden = tfaStep !== 'codes';
  $('tfa-on').hidden = !on || tfaStep === 'codes';
  $('tfa-code-list').replaceChildren(...recoveryCodes.map((code) => el('li', {}, el('code', { text: code }))));
}

// ---- wiring -----------------------------------------------------------------------------

export function initSecurity(onChange) {
  update = onChange;
  $('password-form').addEventListener('submit', changePassword);
  $('end-other-sessions').addEventListener('click', endOtherSessions);
  $('refresh-sessions').addEventListener('click', loadSessions);
  $('tfa-start-form').addEventListener('submit', startSetup);
  $('tfa-renew').addEventListener('click', renewCodes);
  $('tfa-cancel').addEventListener('click', () => {
    setupPassword = '';
    tfaStep = 'idle';
    showNotice('tfa-result', 'Nothing changed: two-factor sign-in stays off.');
    showTwoFactor();
  });
  $('tfa-enable-form').addEventListener('submit', enable);
  $('tfa-copy-secret').addEventListener('click', () => copyText($('tfa-secret').textContent.replace(/\s/g, ''), 'tfa-result', 'Key'));
  $('tfa-copy-codes').addEventListener('click', () => copyText(recoveryCodes.join('\n'), 'tfa-result', 'Recovery codes'));
  $('tfa-download-codes').addEventListener('click', downloadCodes);
  $('tfa-codes-done').addEventListener('click', () => {
    tfaStep = 'idle';
    recoveryCodes = [];
    showNotice('tfa-result', '');
    showTwoFactor();
  });
  $('tfa-disable-form').addEventListener('submit', disable);
  loadSessions();
}

export function showSecurity(current) {
  account = current;
  $('password-username', HTMLInputElement).value = account.username;
  // An account without a password (a passkey or a provider replaced it) sets one without the
  // current one: the server asks for a sign-in of the last 10 minutes instead.
  const currentField = $('current-password', HTMLInputElement);
  currentField.hidden = !account.has_password;
  currentField.required = account.has_password;
  $('current-password-label').hidden = !account.has_password;
  $('tfa-password').hidden = !account.has_password;
  $('tfa-password', HTMLInputElement).required = account.has_password;
  showTwoFactor();
}
