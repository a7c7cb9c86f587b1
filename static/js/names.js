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

// ---- role colours -----------------------------------------------------------------------------

/**
 * The backgrounds a role-coloured name or mention is drawn on, by theme: the page, the sidebar
 * and member list, a message that mentions the reader, and a role mention's pill (site.css
 * --bg, --side, --mention-bg, --line-soft).
 */
const ROLE_BACKGROUNDS = { light: [0xffffff, 0xf0f1f4, 0xfff4d2, 0xeceef2], dark: [0x25272d, 0x1f2126, 0x3d3622, 0x2f3239] };
/** WCAG AA for text: what axe holds every page to. */
const MIN_CONTRAST = 4.5;

const channel = (n, shift) => (n >> shift) & 255;
/** @param {number} rgb */
function luminance(rgb) {
  const [r, g, b] = [16, 8, 0].map((shift) => {
    const c = channel(rgb, shift) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
/** @param {number} a @param {number} b */
function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
/** `rgb` moved a fraction `t` of the way towards `to`. @param {number} rgb @param {number} to @param {number} t */
function mix(rgb, to, t) {
  return [16, 8, 0].reduce((n, shift) => n | (Math.round(channel(rgb, shift) + (channel(to, shift) - channel(rgb, shift)) * t) << shift), 0);
}
const hex = (rgb) => `#${rgb.toString(16).padStart(6, '0')}`;

/**
 * A role's colour as drawn in a theme, with a contrast floor as Discord has: darkened (light
 * theme) or lightened (dark theme) just enough to be read on every background it is drawn on.
 * @param {number} color 0xRRGGBB
 * @param {'light' | 'dark'} theme
 */
export function readableRoleColor(color, theme) {
  const backgrounds = ROLE_BACKGROUNDS[theme];
  const towards = theme === 'light' ? 0x000000 : 0xffffff;
  for (let step = 0; step <= 20; step++) {
    const shown = mix(color, towards, step / 20);
    if (backgrounds.every((bg) => contrast(shown, bg) >= MIN_CONTRAST)) return hex(shown);
  }
  return hex(towards);
}

/**
 * Draws `node`'s text in a role's colour (none: left as it is), for both themes: the style
 * sheet picks `--role-light` or `--role-dark` (site.css `.role-colored`), so a theme switch
 * needs no redraw.
 * @template {HTMLElement} T
 * @param {T} node
 * @param {number | null | undefined} color
 * @returns {T}
 */
export function paintRole(node, color) {
  if (color === null || color === undefined) return node;
  node.classList.add('role-colored');
  node.style.setProperty('--role-light', readableRoleColor(color, 'light'));
  node.style.setProperty('--role-dark', readableRoleColor(color, 'dark'));
  return node;
}
