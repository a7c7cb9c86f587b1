// @ts-check
// Cards (embeds) under a message, in Discord's shape: a webhook's or bot's own (`rich`) and the
// server's link previews (`link`, `video`, `image`): a left border in the card's colour, the
// site's name, author, title (a link when it has one), description, fields in a grid (inline ones
// side by side), a thumbnail beside the text or one large image below it (a play mark on a video's,
// linking out: nothing plays here), footer and time; a link to an image is the image alone.
// Loaded by message.js on the first message that carries one. Text goes in as text; the
// description and field values go through markdown.js like a message body. Images load only from
// our media proxy (`proxy_url`, /api/media/…: the page CSP allows nothing else), lazily, in boxes
// of a fixed shape so the list does not jump when they arrive.
import { el, formatTime, toast, confirmAction } from './ui.js';
import { api } from './api.js';
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

/** The cards of a message; `mention(name)` as for the message body (markdown.js); `fromAutomod`: the message is AutoMod's (its alerts get their quick actions). */
export function buildEmbeds(embeds, mention, fromAutomod = false) {
  return embeds.filter((e) => e && typeof e === 'object').map((e) => buildEmbed(e, mention, fromAutomod));
}

/** An image of a card through our proxy, in a box that keeps its place, or null. */
function picture(media, cls) {
  const src = media?.proxy_url;
  if (typeof src !== 'string' || !src.startsWith('/api/media/')) return null;
  return el('img', { class: cls, src, alt: '', loading: 'lazy', decoding: 'async' });
}

function buildEmbed(e, mention, fromAutomod) {
  // A link to an image: the image alone, opening the original in a new tab.
  if (e.type === 'image') {
    const image = picture(e.image, 'embed-image');
    if (image) return imageOnly(e, image);
  }
  const card = el('article', { class: `embed${e.type && e.type !== 'rich' ? ' embed-preview' : ''}` });
  const color = embedColor(e.color);
  // A CSSOM property, not a style attribute: allowed under style-src 'self'.
  if (color) card.style.setProperty('--embed-color', color);
  const main = el('div', { class: 'embed-main' });
  const provider = str(e.provider?.name);
  if (provider) main.append(el('div', { class: 'embed-provider' }, link(e.provider.url, provider)));
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
  // One large image at most; a thumbnail sits beside the text.
  const large = picture(e.image, 'embed-image');
  if (large) {
    const target = webUrl(e.url) || webUrl(e.image?.url);
    const box = el('a', { class: `embed-image-link${e.type === 'video' ? ' video' : ''}`, href: target, target: '_blank', rel: 'noopener noreferrer' }, large);
    if (e.type === 'video') box.append(el('span', { class: 'play-mark', 'aria-hidden': 'true' }));
    box.setAttribute('aria-label', e.type === 'video' ? `Play on ${hostOf(target || '')}` : 'Open the image');
    main.append(box);
  } else if (webUrl(e.image?.url)) {
    main.append(el('div', { class: 'embed-media' }, link(e.image.url, `Image: ${hostOf(e.image.url)}`, 'embed-media-link')));
  }
  const footer = str(e.footer?.text);
  const alert = fromAutomod && /^automod server:(\S+) user:(\S+) channel:(\S+)(?: message:(\S+))?$/.exec(footer);
  if (alert) {
    main.append(automodActions(...alert.slice(1)));
    card.append(main);
    return card;
  }
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
  const thumbnail = picture(e.thumbnail, 'embed-thumbnail');
  if (thumbnail) card.append(thumbnail);
  return card;
}

/** A link preview of an image: the picture alone, a link to the original. */
function imageOnly(e, image) {
  const href = webUrl(e.url);
  return el('a', { class: 'embed-bare', href, target: '_blank', rel: 'noopener noreferrer', 'aria-label': `Image from ${hostOf(e.url)}` }, image);
}

function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * An AutoMod alert's quick actions (docs/moderation.md "AutoMod"): delete the message (when it
 * was let through), time its author out for an hour, kick them. Each calls the moderators' own
 * route; who lacks the power is told so by the server.
 */
function automodActions(serverId, userId, channelId, messageId) {
  const S = `/api/servers/${serverId}`;
  const act = (label, ask, method, path, body) =>
    el('button', {
      type: 'button',
      class: 'small',
      text: label,
      onclick: async () => {
        if (!(await confirmAction(`${label}?`, ask, label))) return;
        api(method, path, body).then(
          () => toast(`${label}: done.`, false),
          (err) => toast(err.message),
        );
      },
    });
  return el(
    'div',
    { class: 'embed-footer automod-actions' },
    messageId ? act('Delete message', 'The flagged message is deleted.', 'DELETE', `${S}/channels/${channelId}/messages/${messageId}`) : null,
    userId !== '-'
      ? act('Time out 1 hour', 'The author may read but not write for an hour.', 'PUT', `${S}/members/${userId}/timeout`, { seconds: 3600 })
      : null,
    userId !== '-' ? act('Kick', 'The author is removed from the server (an invite brings them back).', 'DELETE', `${S}/members/${userId}`) : null,
  );
}
