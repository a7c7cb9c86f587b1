// @ts-check
// Message text → DOM. markdown-it parses (configured to emit no raw HTML: `html: false`, and no
// images, which would load from other sites), DOMPurify sanitizes its output into a
// DocumentFragment, and only that fragment reaches the page. This is the one place in static/
// where HTML is parsed; test/unit/static-safety.test.ts holds it to exactly one call.
import MarkdownIt from '/vendor/markdown-it.js';
import DOMPurify from '/vendor/purify.js';
import { el } from './ui.js';
import { icon } from './icons.js';

const md = new MarkdownIt('default', { html: false, linkify: true, breaks: true, typographer: false });
md.disable(['image', 'lheading']);
md.linkify.set({ fuzzyEmail: true });

// markdown-it's own text rule, with '|' as one more stop so the spoiler rule below gets a look.
const STOPS = new Set([10, 33, 35, 36, 37, 38, 42, 43, 45, 58, 60, 61, 62, 64, 91, 92, 93, 94, 95, 96, 123, 124, 125, 126]);
md.inline.ruler.at('text', (state, silent) => {
  let pos = state.pos;
  while (pos < state.posMax && !STOPS.has(state.src.charCodeAt(pos))) pos++;
  if (pos === state.pos) return false;
  if (!silent) state.pending += state.src.slice(state.pos, pos);
  state.pos = pos;
  return true;
});

// ||spoiler||: hidden until clicked (as Discord writes it).
md.inline.ruler.before('emphasis', 'spoiler', (state, silent) => {
  const start = state.pos;
  if (state.src.charCodeAt(start) !== 124 || state.src.charCodeAt(start + 1) !== 124) return false;
  const end = state.src.indexOf('||', start + 2);
  if (end < 0 || end > state.posMax || end === start + 2) return false;
  if (!silent) {
    const open = state.push('spoiler_open', 'span', 1);
    open.attrSet('class', 'spoiler');
    const max = state.posMax;
    state.pos = start + 2;
    state.posMax = end;
    state.md.inline.tokenize(state);
    state.posMax = max;
    state.push('spoiler_close', 'span', -1);
  }
  state.pos = end + 2;
  return true;
});

// @username (the server's rule: 3 to 32 of A-Z a-z 0-9 _ -, not inside a word or an address).
const NAME = /^@([A-Za-z0-9_-]{3,32})(?![A-Za-z0-9_-])/;
md.inline.ruler.before('emphasis', 'mention', (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 64) return false;
  const before = state.pos > 0 ? state.src[state.pos - 1] : ' ';
  if (/[A-Za-z0-9_.@+-]/.test(before)) return false;
  const match = NAME.exec(state.src.slice(state.pos, state.posMax));
  if (!match) return false;
  if (!silent) {
    const token = state.push('mention', 'span', 0);
    token.content = match[1];
  }
  state.pos += match[0].length;
  return true;
});
md.renderer.rules.mention = (tokens, idx) => {
  const name = md.utils.escapeHtml(tokens[idx].content);
  return `<span class="mention" data-name="${name}">@${name}</span>`;
};

// <:name:id> and <a:name:id>: a server's custom emoji, as Discord writes it (issue 50); drawn from
// /emojis/{id} below, its :name: as text when the image is gone (the emoji was deleted).
const CUSTOM_EMOJI = /^<(a?):([A-Za-z0-9_]{2,32}):([0-9a-fA-F-]{36})>/;
/** A message of custom emoji alone (and spaces): drawn large. */
const ONLY_CUSTOM_EMOJI = /^\s*(?:<a?:[A-Za-z0-9_]{2,32}:[0-9a-fA-F-]{36}>\s*){1,27}$/;
md.inline.ruler.before('emphasis', 'custom_emoji', (state, silent) => {
  if (state.src.charCodeAt(state.pos) !== 60) return false;
  const match = CUSTOM_EMOJI.exec(state.src.slice(state.pos, state.posMax));
  if (!match) return false;
  if (!silent) {
    const token = state.push('custom_emoji', 'span', 0);
    token.content = match[2];
    token.meta = { id: match[3].toLowerCase() };
  }
  state.pos += match[0].length;
  return true;
});
md.renderer.rules.custom_emoji = (tokens, idx) => {
  const name = md.utils.escapeHtml(tokens[idx].content);
  return `<span class="custom-emoji" data-name="${name}" data-emoji="${md.utils.escapeHtml(tokens[idx].meta.id)}">:${name}:</span>`;
};

/** @type {import('dompurify').Config & { RETURN_DOM_FRAGMENT: true }} */
const PURIFY = {
  ALLOWED_TAGS: [
    'p',
    'br',
    'strong',
    'em',
    's',
    'del',
    'code',
    'pre',
    'blockquote',
    'ul',
    'ol',
    'li',
    'a',
    'span',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'hr',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
  ],
  ALLOWED_ATTR: ['href', 'class', 'data-name', 'data-emoji', 'start', 'title'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  RETURN_DOM_FRAGMENT: true,
};
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

/**
 * @typedef {object} Shown How a mention is drawn: `me` (the viewer: highlighted), `text` (what
 * it reads, e.g. "@Ada Lovelace" for @ada), `title` (its tooltip) and `paint` (drawing it in a
 * role's colour, for a role mention).
 * @property {boolean} [me]
 * @property {string} [text]
 * @property {string} [title]
 * @property {(span: HTMLElement) => void} [paint]
 */

/**
 * The message body as a DocumentFragment. `mention(name)` says how to show @name: 'me' (the
 * viewer), 'user' (someone the server recognised), a Shown, or null (plain text).
 * @param {string} text
 * @param {(name: string) => 'me' | 'user' | Shown | null} mention
 */
export function renderMarkdown(text, mention) {
  const fragment = DOMPurify.sanitize(md.render(text), PURIFY);
  const jumbo = ONLY_CUSTOM_EMOJI.test(text);
  for (const span of /** @type {NodeListOf<HTMLElement>} */ (fragment.querySelectorAll('span.custom-emoji'))) {
    const name = span.dataset.name || '';
    const img = document.createElement('img');
    img.className = jumbo ? 'custom-emoji jumbo' : 'custom-emoji';
    img.alt = `:${name}:`;
    img.title = `:${name}:`;
    img.src = `/emojis/${span.dataset.emoji}`;
    // Deleted (404): its name as text, as Discord shows an emoji it no longer has.
    img.addEventListener('error', () => img.replaceWith(document.createTextNode(`:${name}:`)), { once: true });
    span.replaceWith(img);
  }
  for (const span of /** @type {NodeListOf<HTMLElement>} */ (fragment.querySelectorAll('span.mention'))) {
    const kind = mention(span.dataset.name || '');
    if (!kind) {
      span.replaceWith(document.createTextNode(span.textContent));
      continue;
    }
    const shown = typeof kind === 'string' ? { me: kind === 'me' } : kind;
    if (shown.me) span.classList.add('me');
    if (shown.text) span.textContent = shown.text;
    if (shown.title) span.title = shown.title;
    shown.paint?.(span);
  }
  for (const spoiler of /** @type {NodeListOf<HTMLElement>} */ (fragment.querySelectorAll('span.spoiler'))) {
    spoiler.tabIndex = 0;
    spoiler.setAttribute('role', 'button');
    spoiler.setAttribute('aria-label', 'Spoiler: press to reveal');
    const reveal = () => {
      spoiler.classList.add('revealed');
      spoiler.removeAttribute('role');
      spoiler.removeAttribute('aria-label');
      spoiler.removeAttribute('tabindex');
    };
    spoiler.addEventListener('click', reveal);
    spoiler.addEventListener('keydown', (/** @type {KeyboardEvent} */ e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        reveal();
      }
    });
  }
  for (const pre of fragment.querySelectorAll('pre')) {
    const code = pre.textContent;
    const copy = el(
      'button',
      { type: 'button', class: 'copy-code', 'aria-label': 'Copy code', title: 'Copy code' },
      icon('copy'),
      el('span', { text: 'Copy' }),
    );
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(code.replace(/\n$/, ''));
        copy.lastChild.textContent = 'Copied';
        copy.classList.add('done');
      } catch {
        copy.lastChild.textContent = 'Select and copy';
      }
    });
    const block = el('div', { class: 'code-block' });
    pre.replaceWith(block);
    block.append(pre, copy);
  }
  return fragment;
}
