// @ts-check
// Rich cards (embeds) under a message, as webhooks and bots send them in Discord's shape: a left
// border in the card's colour, author, title (a link when it has one), description, fields in a
// grid (inline ones side by side), image and thumbnail, footer and time. Loaded by message.js on
// the first message that carries one. Text goes in as text; the description and field values go
// through markdown.js like a message body. Images are other sites' addresses: the page CSP loads
// none, so they are shown as links only, never as <img>.
import { el, formatTime } from './ui.js';
import { renderMarkdown } from './markdown.js';

/** Only http(s) addresses become links; anything else stays text. */
const webUrl = (url) => (typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null);
const str = (value) => (typeof value === 'string' ? value : '');

/** `text` as a link to `url` opening in a new tab, or as plain text when the URL is no web address. */
function link(url, text, cls) {
  const href = webUrl(url);
  return href ? el('a', { class: cls, href, target: '_blank', rel: 'noopener noreferrer', text }) : el('span', { class: cls, text });
}

/** An embed colour (an integer 0xRRGGBB) as #rrggbb, or null. */
export function embedColor(color) {
  return Number.isInteger(color) && color >= 0 && color <= 0xffffff ? `#${color.toString(16).padStart(6, '0')}` : null;
}

/** The cards of a message; `mention(name)` as for the message body (markdown.js). */
export function buildEmbeds(embeds, mention) {
  return embeds.filter((e) => e && typeof e === 'object').map((e) => buildEmbed(e, mention));
}

function buildEmbed(e, mention) {
  const card = el('article', { class: 'embed' });
  const color = embedColor(e.color);
  // A CSSOM property, not a style attribute: allowed under style-src 'self'.
  if (color) card.style.setProperty('--embed-color', color);
  const main = el('div', { class: 'embed-main' });
  const authorName = str(e.author?.name);
  if (authorName) main.append(el('div', { class: 'embed-author' }, link(e.author.url, authorName)));
  const title = str(e.title);
  if (title) main.append(el('div', { class: 'embed-title' }, link(e.url, title)));
  else if (webUrl(e.url)) main.append(el('div', { class: 'embed-title' }, link(e.url, e.url)));
  const description = str(e.description);
  if (description) main.append(el('div', { class: 'embed-description embed-text' }, renderMarkdown(description, mention)));
  const fields = Array.isArray(e.fields) ? e.fields.filter((f) => f && (str(f.name) || str(f.value))) : [];
  if (fields.length) {
    main.append(
      el(
        'div',
        { class: 'embed-fields' },
        fields.map((f) =>
          el(
            'div',
            { class: f.inline ? 'embed-field inline' : 'embed-field' },
            el('div', { class: 'embed-field-name', text: str(f.name) }),
            el('div', { class: 'embed-field-value embed-text' }, renderMarkdown(str(f.value), mention)),
          ),
        ),
      ),
    );
  }
  const media = [
    ['image', 'Image'],
    ['thumbnail', 'Thumbnail'],
  ]
    .filter(([key]) => webUrl(e[key]?.url))
    .map(([key, label]) => link(e[key].url, `${label}: ${hostOf(e[key].url)}`, 'embed-media-link'));
  if (media.length) main.append(el('div', { class: 'embed-media' }, media));
  const footer = str(e.footer?.text);
  const when = typeof e.timestamp === 'string' && !Number.isNaN(Date.parse(e.timestamp)) ? e.timestamp : null;
  if (footer || when) {
    main.append(
      el(
        'div',
        { class: 'embed-footer' },
        footer ? el('span', { text: footer }) : null,
        footer && when ? el('span', { class: 'embed-dot', 'aria-hidden': 'true', text: ' • ' }) : null,
        when ? el('time', { dateTime: when, title: new Date(when).toLocaleString(), text: formatTime(when) }) : null,
      ),
    );
  }
  card.append(main);
  return card;
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
