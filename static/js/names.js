// @ts-check
// How people are shown: their display name (else their username), with @username on hover,
// and their picture (a same-origin /avatars/… URL) or initials. Always from the newest record
// the store holds, so a user_updated event redraws everyone's name and picture.
import { el, avatarClass } from './ui.js';
import { userRecord, displayName } from './store.js';

export { displayName };

/** "Ada Lovelace (@ada)" or "ada": for labels read aloud and tooltips. */
export function fullName(user) {
  const u = userRecord(user);
  if (!u) return 'unknown';
  return u.display_name && u.display_name !== u.username ? `${u.display_name} (@${u.username})` : u.username;
}

/** A deleted account keeps its id and shows as "Deleted user", with no @name to offer. */
export const isDeletedUser = (user) => userRecord(user)?.username === 'deleted-user';

/** The name as text, with @username as its tooltip. */
export function nameText(user, className = '') {
  const u = userRecord(user);
  return el('span', { class: className, text: displayName(u), title: u && !isDeletedUser(u) ? `@${u.username}` : null });
}

/** "Ada Lovelace" → "AL", "bob_42" → "BO": letters and digits of any script. */
export function initialsOf(name) {
  const words = String(name || '')
    .split(/\s+/)
    .map((w) => w.replace(/[^\p{L}\p{N}]/gu, ''))
    .filter(Boolean);
  if (!words.length) return '?';
  const text = words.length > 1 ? [...words[0]][0] + [...words[1]][0] : [...words[0]].slice(0, 2).join('');
  return text.toUpperCase();
}

/** The user's picture, or their initials on a colour picked from their id. */
export function userAvatar(user, small = false) {
  const u = userRecord(user) || user;
  // Only our own avatar route: a record can never make the page load from elsewhere.
  if (u && typeof u.avatar_url === 'string' && u.avatar_url.startsWith('/avatars/')) {
    return el('img', {
      class: `avatar picture${small ? ' small' : ''}`,
      src: u.avatar_url,
      alt: '',
      'aria-hidden': 'true',
      loading: 'lazy',
      decoding: 'async',
    });
  }
  return el('span', { class: `${avatarClass(u?.user_id || '?')}${small ? ' small' : ''}`, 'aria-hidden': 'true', text: initialsOf(u ? displayName(u) : '?') });
}
