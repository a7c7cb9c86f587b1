import { badRequest } from './http/errors';

/**
 * A rich card under a message: Discord's embed object
 * (https://discord.com/developers/docs/resources/message#embed-object) reduced to the parts we
 * show. Webhooks and bots send `rich` ones (no `type` stored); the server makes the others, link
 * previews (src/parts/messages/previews.ts): `link`, `image` (a link to an image) and `video`
 * (a page of a video: its thumbnail and a play mark that links out). Icon URLs are dropped, and
 * `image` and `thumbnail` are shown only through the media proxy (`proxy_url`, added as a record
 * is read), so a reader's browser never loads anything from another host.
 */
export type EmbedType = 'rich' | 'link' | 'image' | 'video';

/** An image of an embed: the URL as given, and where our media proxy serves it (added when read). */
export interface EmbedMedia {
  url: string;
  proxy_url?: string;
}

export interface Embed {
  /** Absent in storage for `rich`; every record says it. */
  type?: EmbedType;
  /** The site a preview came from (og:site_name, oEmbed's provider). */
  provider?: { name: string; url?: string };
  title?: string;
  description?: string;
  url?: string;
  /** ISO 8601 in UTC, as `Date.prototype.toISOString` writes it. */
  timestamp?: string;
  /** 0xRRGGBB. */
  color?: number;
  footer?: { text: string };
  author?: { name: string; url?: string };
  fields?: { name: string; value: string; inline: boolean }[];
  image?: EmbedMedia;
  thumbnail?: EmbedMedia;
}

/** A link preview (made by the server), as opposed to a webhook's or bot's own embed. */
export const isPreview = (embed: Embed): boolean => embed.type !== undefined && embed.type !== 'rich';

export const MAX_EMBEDS = 10;
/** Text of all of a message's embeds together, counted as embedChars counts it (Discord's rule). */
export const MAX_EMBED_CHARS = 6000;
/** Discord's limits on each part, in characters (code points). */
export const EMBED_LIMITS = {
  title: 256,
  description: 4096,
  url: 2048,
  footerText: 2048,
  authorName: 256,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
} as const;
export const MAX_COLOR = 0xffffff;

// Every control character but line feed and tab (carriage returns are turned into line feeds first).
const CONTROL = /[^\P{Cc}\n\t]/u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

type Obj = Record<string, unknown>;

/** Length in characters as a reader counts them: an emoji is one, not two UTF-16 units. */
export const charCount = (text: string): number => {
  let count = 0;
  for (const _ of text) count++;
  return count;
};

export const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An own property only: request bodies are plain data, and `constructor` or `__proto__` must read as absent. */
export const own = (obj: Obj, key: string): unknown => (Object.hasOwn(obj, key) ? obj[key] : undefined);

/**
 * An http: or https: URL as the WHATWG parser reads it, or null. The parsed form is what is
 * stored, so a client that renders it sees exactly what we checked (no `javascript:`, no
 * `https:\\evil.example` read one way here and another way there).
 */
export function httpUrl(raw: string): string | null {
  if (charCount(raw) > EMBED_LIMITS.url || /[\s\p{Cc}]/u.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return charCount(url.href) > EMBED_LIMITS.url ? null : url.href;
}

/**
 * An ISO 8601 date, or date and time, as UTC `toISOString()`; null if it is not one or names no
 * real day (2024-02-30). A time without a zone is read as UTC, never as the server's local time.
 */
export function isoTimestamp(raw: string): string | null {
  const m = ISO_8601.exec(raw);
  if (!m) return null;
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = m;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const ms = Date.parse(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction.slice(0, 4)}${offset}`);
  if (Number.isNaN(ms)) return null;
  // Date.parse rolls 2024-02-30 over into March: the day must survive the round trip.
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) return null;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  const iso = new Date(ms).toISOString();
  // Outside years 0000-9999 toISOString writes six digits and a sign, which this parser refuses.
  return ISO_8601.test(iso) ? iso : null;
}

/** The text MAX_EMBED_CHARS limits: title, description, footer, author name, field names and values. */
export function embedChars(embed: Embed): number {
  const parts = [embed.title, embed.description, embed.footer?.text, embed.author?.name, ...(embed.fields ?? []).flatMap((f) => [f.name, f.value])];
  return parts.reduce((sum, part) => sum + (part ? charCount(part) : 0), 0);
}

/** All visible text, one part a line, for the search index. */
export function embedText(embeds: Embed[]): string {
  return embeds
    .flatMap((e) => [e.title, e.description, e.author?.name, ...(e.fields ?? []).flatMap((f) => [f.name, f.value]), e.footer?.text])
    .filter((part): part is string => part !== undefined && part !== '')
    .join('\n');
}

/**
 * Discord-style embeds as a client sent them, checked and rebuilt: only the keys of Embed, no
 * undefined values, URLs in parsed form, timestamps in UTC. Unknown keys are ignored and null
 * reads as absent (client libraries send both). Whitespace-only text reads as absent, and an
 * embed left with no text at all is dropped. Anything else wrong is a 400 naming the field.
 */
export function checkEmbeds(raw: unknown): Embed[] {
  if (!Array.isArray(raw)) throw badRequest('embeds must be an array of embed objects');
  if (raw.length > MAX_EMBEDS) throw badRequest(`embeds must hold at most ${MAX_EMBEDS} embeds; this holds ${raw.length}`);
  // Array.from: a hole in a sparse array (a caller's object, never JSON) is checked as undefined, not skipped.
  const embeds = Array.from(raw, (value, i) => checkEmbed(value, `embeds[${i}]`)).filter((e) => embedChars(e) > 0);
  const total = embeds.reduce((sum, e) => sum + embedChars(e), 0);
  if (total > MAX_EMBED_CHARS) {
    throw badRequest(
      `embeds must hold at most ${MAX_EMBED_CHARS} characters of text in all (titles, descriptions, author names, field names and values, footers); these hold ${total}`,
    );
  }
  return embeds;
}

function checkEmbed(raw: unknown, path: string): Embed {
  if (!isObject(raw)) throw badRequest(`${path} must be an object`);
  const embed: Embed = {};
  const title = optionalText(raw, 'title', path, EMBED_LIMITS.title);
  if (title !== undefined) embed.title = title;
  const description = optionalText(raw, 'description', path, EMBED_LIMITS.description);
  if (description !== undefined) embed.description = description;
  const url = optionalUrl(raw, 'url', path);
  if (url !== undefined) embed.url = url;
  const timestamp = optionalTimestamp(raw, path);
  if (timestamp !== undefined) embed.timestamp = timestamp;
  const color = optionalColor(raw, path);
  if (color !== undefined) embed.color = color;
  const footer = part(raw, 'footer', path);
  const footerText = footer && optionalText(footer, 'text', `${path}.footer`, EMBED_LIMITS.footerText);
  if (footerText !== undefined) embed.footer = { text: footerText };
  const author = checkAuthor(raw, path);
  if (author) embed.author = author;
  const fields = checkFields(raw, path);
  if (fields.length > 0) embed.fields = fields;
  for (const key of ['image', 'thumbnail'] as const) {
    const media = part(raw, key, path);
    const mediaUrl = media && optionalUrl(media, 'url', `${path}.${key}`);
    if (mediaUrl !== undefined) embed[key] = { url: mediaUrl };
  }
  return embed;
}

function checkAuthor(raw: Obj, path: string): Embed['author'] {
  const author = part(raw, 'author', path);
  if (!author) return undefined;
  const name = optionalText(author, 'name', `${path}.author`, EMBED_LIMITS.authorName);
  const url = optionalUrl(author, 'url', `${path}.author`);
  // Discord requires the name; a link with nothing to click on is no author.
  if (name === undefined) return undefined;
  return url === undefined ? { name } : { name, url };
}

function checkFields(raw: Obj, path: string): NonNullable<Embed['fields']> {
  const value = own(raw, 'fields');
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw badRequest(`${path}.fields must be an array of fields`);
  if (value.length > EMBED_LIMITS.fields) throw badRequest(`${path}.fields must hold at most ${EMBED_LIMITS.fields} fields; this holds ${value.length}`);
  const fields = Array.from(value, (field, i) => {
    const at = `${path}.fields[${i}]`;
    if (!isObject(field)) throw badRequest(`${at} must be an object with a name and a value`);
    const name = requiredText(field, 'name', at, EMBED_LIMITS.fieldName);
    const fieldValue = requiredText(field, 'value', at, EMBED_LIMITS.fieldValue);
    const inline = own(field, 'inline');
    if (inline !== undefined && inline !== null && typeof inline !== 'boolean') throw badRequest(`${at}.inline must be true or false`);
    return { name, value: fieldValue, inline: inline === true };
  });
  return fields.filter((f) => f.name.trim() !== '' || f.value.trim() !== '');
}

/** A nested object (footer, author, image, thumbnail), or undefined when absent or null. */
function part(raw: Obj, key: string, path: string): Obj | undefined {
  const value = own(raw, key);
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw badRequest(`${path}.${key} must be an object`);
  return value;
}

/** A string as typed, line breaks made line feeds; 400 for control characters or broken Unicode. */
function cleanString(value: unknown, path: string, max: number): string {
  if (typeof value !== 'string') throw badRequest(`${path} must be a string`);
  const text = value.replace(/\r\n?/g, '\n');
  // A lone surrogate cannot be stored as UTF-8: it would come back as U+FFFD.
  if (LONE_SURROGATE.test(text)) throw badRequest(`${path} is not valid Unicode text`);
  if (CONTROL.test(text)) throw badRequest(`${path} contains control characters; only line breaks and tabs are allowed`);
  if (charCount(text) > max) throw badRequest(`${path} must be at most ${max} characters`);
  return text;
}

function optionalText(raw: Obj, key: string, path: string, max: number): string | undefined {
  const value = own(raw, key);
  if (value === undefined || value === null) return undefined;
  const text = cleanString(value, `${path}.${key}`, max);
  return text.trim() === '' ? undefined : text;
}

function requiredText(raw: Obj, key: string, path: string, max: number): string {
  const value = own(raw, key);
  if (value === undefined || value === null) throw badRequest(`${path}.${key} is missing`);
  return cleanString(value, `${path}.${key}`, max);
}

function optionalUrl(raw: Obj, key: string, path: string): string | undefined {
  const value = own(raw, key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw badRequest(`${path}.${key} must be a string`);
  const url = httpUrl(value);
  if (url === null) throw badRequest(`${path}.${key} must be an http or https URL of at most ${EMBED_LIMITS.url} characters`);
  return url;
}

function optionalTimestamp(raw: Obj, path: string): string | undefined {
  const value = own(raw, 'timestamp');
  if (value === undefined || value === null) return undefined;
  const iso = typeof value === 'string' ? isoTimestamp(value) : null;
  if (iso === null) throw badRequest(`${path}.timestamp must be an ISO 8601 date and time, like 2024-05-01T12:30:00Z`);
  return iso;
}

function optionalColor(raw: Obj, path: string): number | undefined {
  const value = own(raw, 'color');
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_COLOR) {
    throw badRequest(`${path}.color must be an integer from 0 to ${MAX_COLOR} (0xFFFFFF)`);
  }
  return value;
}
