import {
  EMBED_LIMITS,
  type Embed,
  MAX_COLOR,
  MAX_EMBEDS,
  MAX_EMBED_CHARS,
  charCount,
  embedChars,
  httpUrl,
  isObject,
  isoTimestamp,
  own,
} from '../../../core/embed';
import { badRequest } from '../../../core/http/errors';

/*
 * What the formats (discord.ts, slack.ts, github.ts) share: the one message shape they all make,
 * reading a foreign payload, and embeds built to fit our limits.
 */

/** A webhook call's message, whichever format it came in. */
export interface IncomingMessage {
  /** May be '' when there are embeds. */
  content: string;
  /** This message's name in place of the webhook's. */
  username?: string;
  /** An http(s) URL, shown as a link only. */
  avatar_url?: string;
  embeds: Embed[];
  /** Discord's allowed_mentions, reduced: which mention kinds may notify. Absent: all parsed mentions notify (Discord's default). */
  allowed_mentions?: AllowedMentions;
}

export interface AllowedMentions {
  parse: MentionKind[];
  users: string[];
  roles: string[];
}

export type MentionKind = 'users' | 'roles' | 'everyone';
export type Obj = Record<string, unknown>;

/** Discord's limit on the name a message gives itself; the same as a webhook's own name (WEBHOOK_NAME_MAX). */
export const WEBHOOK_USERNAME_MAX = 80;

/** Slack's named attachment colours; GitHub states borrow the same green and red. */
export const COLORS = { green: 0x2eb67d, yellow: 0xecb22e, red: 0xe01e5a, purple: 0x8957e5, grey: 0x6e7681 } as const;

const LONE_SURROGATES = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const CONTROLS = /[^\P{Cc}\n\t]/gu;

// --- Reading payloads --------------------------------------------------------------------------

export function payloadObject(body: unknown, what: string): Obj {
  if (!isObject(body)) throw badRequest(`${what} must be a JSON object`);
  return body;
}

/** The value at a path of own properties, or undefined where the path breaks. */
export function at(obj: Obj, ...path: string[]): unknown {
  let value: unknown = obj;
  for (const key of path) {
    if (!isObject(value)) return undefined;
    value = own(value, key);
  }
  return value;
}

export function stringAt(obj: Obj, ...path: string[]): string | undefined {
  const value = at(obj, ...path);
  return typeof value === 'string' ? value : undefined;
}

// Array.from: a hole in a sparse array (not JSON, but a caller's object) reads as undefined, never skipped.
export const asList = (value: unknown): unknown[] => (Array.isArray(value) ? Array.from(value) : []);
export const listAt = (obj: Obj, key: string): unknown[] => asList(own(obj, key));

// --- Building embeds that fit ------------------------------------------------------------------

export interface DraftField {
  name: string;
  value: string;
  inline: boolean;
}

/** An embed as read from a foreign payload: text of any length, links and times not yet checked. */
export interface Draft {
  title?: string;
  description?: string;
  url?: unknown;
  /** ISO 8601, or Unix seconds (Slack's `ts`, GitHub's `pushed_at`). */
  timestamp?: unknown;
  color?: number;
  footer?: string;
  author?: { name?: string; url?: unknown };
  fields?: (DraftField | null)[];
  image?: unknown;
  thumbnail?: unknown;
}

/** The draft as an embed checkEmbeds accepts: text cleaned and cut to each part's limit, bad links and times left out. Null when no text is left. */
export function buildEmbed(draft: Draft): Embed | null {
  const embed: Embed = {};
  const title = oneLine(draft.title, EMBED_LIMITS.title);
  if (title !== undefined) embed.title = title;
  const description = fitText(draft.description, EMBED_LIMITS.description);
  if (description !== undefined) embed.description = description;
  const url = linkOf(draft.url);
  if (url !== undefined) embed.url = url;
  const timestamp = timestampOf(draft.timestamp);
  if (timestamp !== undefined) embed.timestamp = timestamp;
  if (draft.color !== undefined && Number.isInteger(draft.color) && draft.color >= 0 && draft.color <= MAX_COLOR) embed.color = draft.color;
  const footer = fitText(draft.footer, EMBED_LIMITS.footerText);
  if (footer !== undefined) embed.footer = { text: footer };
  const authorName = oneLine(draft.author?.name, EMBED_LIMITS.authorName);
  const authorUrl = linkOf(draft.author?.url);
  if (authorName !== undefined) embed.author = authorUrl === undefined ? { name: authorName } : { name: authorName, url: authorUrl };
  const fields = (draft.fields ?? []).flatMap((field) => fitField(field)).slice(0, EMBED_LIMITS.fields);
  if (fields.length > 0) embed.fields = fields;
  const image = linkOf(draft.image);
  if (image !== undefined) embed.image = { url: image };
  const thumbnail = linkOf(draft.thumbnail);
  if (thumbnail !== undefined) embed.thumbnail = { url: thumbnail };
  return embedChars(embed) > 0 ? embed : null;
}

function fitField(field: DraftField | null | undefined): DraftField[] {
  if (!field) return [];
  const name = oneLine(field.name, EMBED_LIMITS.fieldName) ?? '';
  const value = fitText(field.value, EMBED_LIMITS.fieldValue) ?? '';
  return name === '' && value === '' ? [] : [{ name, value, inline: field.inline }];
}

/**
 * At most MAX_EMBEDS embeds with MAX_EMBED_CHARS of text between them, in order: the embed that
 * would overflow loses fields from the end, then the end of its description, and when even its
 * title and author do not fit, it and those after it are left out.
 */
export function fitEmbeds(candidates: (Embed | null | undefined)[]): Embed[] {
  const fitted: Embed[] = [];
  let room = MAX_EMBED_CHARS;
  for (const candidate of candidates) {
    if (!candidate) continue;
    if (fitted.length === MAX_EMBEDS) break;
    const embed = shrinkTo(candidate, room);
    if (!embed) break;
    fitted.push(embed);
    room -= embedChars(embed);
  }
  return fitted;
}

function shrinkTo(embed: Embed, room: number): Embed | null {
  if (embedChars(embed) <= room) return embed;
  const smaller: Embed = { ...embed };
  const fields = [...(embed.fields ?? [])];
  while (fields.length > 0 && embedChars({ ...smaller, fields }) > room) fields.pop();
  if (fields.length > 0) smaller.fields = fields;
  else delete smaller.fields;
  const over = embedChars(smaller) - room;
  if (over > 0 && smaller.description !== undefined) {
    const keep = charCount(smaller.description) - over;
    const description = keep >= 1 ? fitText(smaller.description, keep) : undefined;
    if (description !== undefined) smaller.description = description;
    else delete smaller.description;
  }
  const size = embedChars(smaller);
  return size > 0 && size <= room ? smaller : null;
}

/**
 * Foreign text made storable and cut to `max` characters: line breaks as \n, other control
 * characters dropped, broken surrogate halves as U+FFFD, the ends trimmed; undefined when empty.
 */
export function fitText(value: string | undefined, max: number): string | undefined {
  if (value === undefined) return undefined;
  const text = clean(value).trim();
  if (text === '') return undefined;
  if (charCount(text) <= max) return text;
  return `${[...text]
    .slice(0, max - 1)
    .join('')
    .trimEnd()}…`;
}

/** As fitText, on one line: names and titles. */
export function oneLine(value: string | undefined, max: number): string | undefined {
  return fitText(value?.replace(/\s+/g, ' '), max);
}

export function clean(text: string): string {
  return text.replace(LONE_SURROGATES, '\ufffd').replace(/\r\n?/g, '\n').replace(CONTROLS, '');
}

export const linkOf = (value: unknown): string | undefined => (typeof value === 'string' ? (httpUrl(value) ?? undefined) : undefined);

/** Seconds since 1970 up to the end of year 9999: the range an ISO 8601 timestamp of four-digit years can write. */
const MAX_UNIX_SECONDS = 253402300799;

export function timestampOf(value: unknown): string | undefined {
  const seconds = typeof value === 'number' ? value : typeof value === 'string' && /^\d{1,12}(\.\d+)?$/.test(value) ? Number(value) : undefined;
  if (seconds !== undefined)
    return Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_UNIX_SECONDS ? new Date(Math.floor(seconds * 1000)).toISOString() : undefined;
  return typeof value === 'string' ? (isoTimestamp(value) ?? undefined) : undefined;
}
