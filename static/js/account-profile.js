// @ts-check
// The account page's profile: the display name (PATCH /api/account) and the picture
// (PUT/DELETE /api/account/avatar). A chosen picture is previewed from a blob: URL before it
// is sent; the server crops it to a square and re-encodes it.
import { api } from './api.js';
import { $, el, showText, showNotice, avatarClass, initials, codePointLength } from './ui.js';

const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const MAX_AVATAR_BYTES = 8 * 1024 * 1024;
const MAX_NAME_LENGTH = 32;

let account = null;
/** @type {(changes: object) => void} what the page does when the account changed */
let update = () => {};
let chosen = null; // {file, url} while a picked picture waits to be saved

/** The big circle: the picture being previewed, the saved one, or the initials. */
function drawAvatar() {
  const box = $('avatar-preview');
  const src = chosen?.url || account.avatar_url;
  box.className = src ? 'avatar large has-picture' : `${avatarClass(account.user_id)} large`;
  box.replaceChildren(src ? el('img', { src, alt: '', width: 96, height: 96 }) : initials(account.display_name || account.username));
  showText(
    'avatar-state',
    chosen ? `${chosen.file.name}: save it to use it, or cancel.` : account.avatar_url ? '' : 'No picture yet: others see your initials.',
  );
  $('avatar-save').hidden = !chosen;
  $('avatar-cancel').hidden = !chosen;
  $('avatar-remove').hidden = Boolean(chosen) || !account.avatar_url;
  $('avatar-choose').textContent = account.avatar_url || chosen ? 'Choose another picture…' : 'Choose a picture…';
}

function forgetChosen() {
  if (chosen) URL.revokeObjectURL(chosen.url);
  chosen = null;
}

/** Checks the file here first, so a wrong one is refused before 8 MB travel. */
function pickAvatar() {
  const file = $('avatar-file', HTMLInputElement).files[0];
  $('avatar-file', HTMLInputElement).value = '';
  if (!file) return;
  if (!AVATAR_TYPES.includes(file.type)) {
    showNotice('profile-result', `${file.name} is not a PNG, JPEG, GIF or WebP picture.`, true);
    return;
  }
  if (file.size > MAX_AVATAR_BYTES) {
    showNotice('profile-result', `${file.name} is larger than 8 MB.`, true);
    return;
  }
  forgetChosen();
  chosen = { file, url: URL.createObjectURL(file) };
  showNotice('profile-result', '');
  drawAvatar();
}

async function saveAvatar() {
  const form = new FormData();
  form.append('avatar', chosen.file);
  $('avatar-save', HTMLButtonElement).disabled = true;
  try {
    const result = await api('PUT', '/api/account/avatar', form);
    forgetChosen();
    update({ avatar_url: result.avatar_url });
    showNotice('profile-result', 'Your picture is saved.');
  } catch (err) {
    showNotice('profile-result', err.status === 413 ? 'That picture is larger than 8 MB.' : err.message, true);
  } finally {
    $('avatar-save', HTMLButtonElement).disabled = false;
  }
}

async function removeAvatar() {
  try {
    await api('DELETE', '/api/account/avatar');
    update({ avatar_url: null });
    showNotice('profile-result', 'Your picture is removed: others see your initials.');
  } catch (err) {
    showNotice('profile-result', err.message, true);
  }
}

async function saveName(displayName) {
  try {
    const result = await api('PATCH', '/api/account', { display_name: displayName });
    update({ display_name: result.display_name });
    showNotice(
      'profile-result',
      result.display_name ? `Others now see you as ${result.display_name}.` : `Name cleared: others see your username, ${result.username}.`,
    );
  } catch (err) {
    showNotice('profile-result', err.message, true);
  }
}

export function initProfile(onChange) {
  update = onChange;
  $('avatar-choose').addEventListener('click', () => $('avatar-file').click());
  $('avatar-file').addEventListener('change', pickAvatar);
  $('avatar-cancel').addEventListener('click', () => {
    forgetChosen();
    showNotice('profile-result', '');
    drawAvatar();
  });
  $('avatar-save').addEventListener('click', saveAvatar);
  $('avatar-remove').addEventListener('click', removeAvatar);
  $('name-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const name = $('display-name', HTMLInputElement).value.trim();
    if (!name) return void showNotice('profile-result', 'Type a name first, or use Clear to show your username.', true);
    if (codePointLength(name) > MAX_NAME_LENGTH) return void showNotice('profile-result', `A display name is at most ${MAX_NAME_LENGTH} characters.`, true);
    saveName(name);
  });
  $('name-clear').addEventListener('click', () => saveName(null));
}

export function showProfile(current) {
  account = current;
  const suspended = account.account_standing >= 4;
  $('profile-username').textContent = account.username;
  $('display-name', HTMLInputElement).value = account.display_name || '';
  $('display-name', HTMLInputElement).placeholder = account.username;
  $('name-clear').hidden = !account.display_name;
  $('name-form').hidden = suspended;
  $('avatar-choose').closest('.button-row').toggleAttribute('hidden', suspended);
  $('profile-closed').hidden = !suspended;
  drawAvatar();
}
