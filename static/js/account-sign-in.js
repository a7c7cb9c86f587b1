// @ts-check
// The account page's other ways in (#sign-in-methods): passkeys (added on this device with the
// current password, renamed, removed), identities at OpenID Providers (linked through the
// provider's own sign-in page, unlinked), the password removed once another way in exists, and
// the one change of a username made from a provider's claim. The server keeps the last way in
// (409); the page says so in words.
import { api } from './api.js';
import { passkeysSupported, registerPasskey } from './passkeys.js';
import { $, el, ask, confirmAction, formatTime, showNotice, submitButton } from './ui.js';

let account = null;
/** @type {(changes: object) => void} */
let update = () => {};
/** @type {{id: string, name: string}[]} */
let providers = [];
/** Passkeys and identities, as last loaded: the password may go once there is one. */
let otherWays = 0;
const drawRemovePassword = () => {
  $('remove-password').hidden = !account?.has_password || otherWays === 0;
};

const say = (text, isError = false) => showNotice('methods-result', text, isError);
/** The current password typed in the section (an account without one gives none). */
const currentPassword = () => $('methods-password', HTMLInputElement).value;

/** What a refusal means here, in words. */
function words(err) {
  if (err instanceof DOMException) return 'No passkey was made: the browser prompt was closed, or this device already holds one for this account.';
  if (err.reason === 'last_way_in' || /last way into the account/.test(err.message)) return 'That is your last way into this account: add another one first.';
  if (err.status === 403 && /sign in again/.test(err.message)) return 'To change how you sign in, sign in again first (within 10 minutes).';
  if (err.status === 403 && /two-factor code required/.test(err.message)) return 'Type a code from your authenticator app too.';
  if (err.status === 403) return 'The current password is wrong.';
  if (err.status === 429) return 'Too many attempts. Wait a minute, then try again.';
  return err.message;
}

function passkeyItem(passkey) {
  return el(
    'li',
    { class: 'session', 'data-id': passkey.id },
    el(
      'div',
      { class: 'session-text' },
      el('span', { class: 'session-device', text: passkey.name }),
      el('span', {
        class: 'session-meta muted',
        text: `added ${formatTime(passkey.created_at)} · ${passkey.last_used_at ? `last used ${formatTime(passkey.last_used_at)}` : 'not used yet'}${passkey.backed_up ? ' · synced' : ''}`,
      }),
    ),
    el('button', { type: 'button', class: 'small', onclick: () => renamePasskey(passkey), 'aria-label': `Rename ${passkey.name}` }, 'Rename'),
    el('button', { type: 'button', class: 'small danger', onclick: () => removePasskey(passkey), 'aria-label': `Remove ${passkey.name}` }, 'Remove'),
  );
}

function identityItem(identity) {
  const name = identity.provider_name || `${identity.provider_id} (no longer offered here)`;
  return el(
    'li',
    { class: 'session', 'data-id': identity.id },
    el(
      'div',
      { class: 'session-text' },
      el('span', { class: 'session-device', text: name }),
      el('span', { class: 'session-meta muted', text: `${identity.email ? `${identity.email} · ` : ''}linked ${formatTime(identity.created_at)}` }),
    ),
    el('button', { type: 'button', class: 'small danger', onclick: () => unlink(identity, name), 'aria-label': `Unlink ${name}` }, 'Unlink'),
  );
}

async function load() {
  try {
    const [passkeys, identities] = await Promise.all([api('GET', '/api/account/passkeys'), api('GET', '/api/account/identities')]);
    $('passkey-list').replaceChildren(...passkeys.map(passkeyItem));
    $('no-passkeys').hidden = passkeys.length > 0;
    $('identity-list').replaceChildren(...identities.map(identityItem));
    $('no-identities').hidden = identities.length > 0;
    const linked = new Set(identities.map((i) => i.provider_id));
    $('link-buttons').replaceChildren(
      ...providers
        .filter((p) => !linked.has(p.id))
        .map((p) => el('button', { type: 'button', onclick: () => link(p), 'data-provider': p.id }, `Link ${p.name}`)),
    );
    otherWays = passkeys.length + identities.length;
    drawRemovePassword();
  } catch (err) {
    say(err.message, true);
  }
}

async function addPasskey(e) {
  e.preventDefault();
  const form = $('methods-form', HTMLFormElement);
  const button = submitButton(form);
  button.disabled = true;
  try {
    const passkey = await registerPasskey(currentPassword(), $('passkey-name', HTMLInputElement).value.trim());
    form.reset();
    say(`Passkey “${passkey.name}” added: you can sign in with it now, without your username.`);
    await load();
  } catch (err) {
    say(words(err), true);
  } finally {
    button.disabled = false;
  }
}

async function renamePasskey(passkey) {
  const name = await ask({ title: 'Rename passkey', label: 'Name', value: passkey.name, submit: 'Rename', maxLength: 64 });
  if (name === null || name.trim() === '') return;
  try {
    await api('PATCH', `/api/account/passkeys/${passkey.id}`, { name: name.trim() });
    await load();
  } catch (err) {
    say(words(err), true);
  }
}

async function removePasskey(passkey) {
  if (!(await confirmAction('Remove passkey?', `“${passkey.name}” will no longer sign you in.`, 'Remove'))) return;
  try {
    await api('DELETE', `/api/account/passkeys/${passkey.id}`);
    say(`“${passkey.name}” is removed.`);
  } catch (err) {
    say(words(err), true);
  }
  await load();
}

/** The provider's sign-in page, then back here with the identity linked (/account?linked=1#sign-in-methods). */
async function link(provider) {
  try {
    const started = await api('POST', '/api/account/identities', { provider_id: provider.id, current_password: currentPassword() });
    location.assign(started.authorization_url);
  } catch (err) {
    say(words(err), true);
  }
}

async function unlink(identity, name) {
  if (!(await confirmAction(`Unlink ${name}?`, `Signing in with ${name} will no longer open this account.`, 'Unlink'))) return;
  try {
    await api('DELETE', `/api/account/identities/${identity.id}`);
    say(`${name} is unlinked.`);
  } catch (err) {
    say(words(err), true);
  }
  await load();
}

async function removePassword() {
  if (
    !(await confirmAction(
      'Remove your password?',
      'You will sign in with your passkeys or your organisation only. Every other session ends.',
      'Remove password',
    ))
  )
    return;
  const code = $('remove-password-code', HTMLInputElement).value.replace(/\s+/g, '');
  try {
    await api('DELETE', '/api/account/password', { current_password: currentPassword(), ...(code ? { code } : {}) });
    say('Your password is removed. Sign in with a passkey from now on (or a recovery code, with an empty password).');
    update({ has_password: false });
  } catch (err) {
    say(words(err), true);
  }
}

async function changeUsername(e) {
  e.preventDefault();
  try {
    const user = await api('PUT', '/api/account/username', { username: $('new-username', HTMLInputElement).value });
    say(`Your username is ${user.username} now.`);
    update({ username: user.username, username_changeable: false });
  } catch (err) {
    say(err.status === 409 ? 'That username is taken (or yours cannot change any more).' : err.message, true);
  }
}

export async function initSignIn(onChange) {
  update = onChange;
  $('methods-form').addEventListener('submit', addPasskey);
  $('remove-password-button').addEventListener('click', removePassword);
  $('username-form').addEventListener('submit', changeUsername);
  if (!passkeysSupported()) {
    $('passkey-add').hidden = true;
    $('passkey-name').hidden = true;
  }
  try {
    providers = (await api('GET', '/api/auth/providers')).providers;
  } catch {
    providers = [];
  }
  if (new URLSearchParams(location.search).has('linked')) say('Linked: you can sign in with it now.');
  await load();
}

export function showSignIn(current) {
  account = current;
  // An account without a password proves itself by a recent sign-in instead.
  $('methods-password-field').hidden = !account.has_password;
  $('remove-password-code').hidden = !account.two_factor;
  $('remove-password-code-label').hidden = !account.two_factor;
  $('username-form').hidden = !account.username_changeable;
  drawRemovePassword();
}
