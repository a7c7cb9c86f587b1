import { logFailure } from '../../core/callbacks';
import { type Clock, DAY } from '../../core/clock';
import { type Embed, EMBED_LIMITS, httpUrl } from '../../core/embed';
import { FetchRefused, type FetchRules, safeFetch } from '../../core/net/safe-fetch';
import type { Container, Log } from '../../core/types';
import type { Limits } from '../../rules/limits';
import type { Hub } from '../delivery/hub';
import type { MessageStore } from './message-store';

/**
 * Link previews (docs/api.md "Link previews"): once a message with http(s) links has committed
 * and been announced (posting never waits for this), up to MAX_LINKS distinct links of it are
 * fetched under the fetch rules (src/core/net/safe-fetch.ts) and what they say of themselves
 * (OpenGraph, Twitter card, `<title>` and description, oEmbed) becomes embeds on the message,
 * announced as message_updated. An edit fetches the links that changed (the others come from
 * the cache). Nothing a page holds runs anywhere: we read tags, keep text and URLs, and the
 * images go through the media proxy.
 *
 * Bounded everywhere: results and failures cached per URL for CACHE_MS; one fetch per URL at a
 * time however many messages name it; a queue of MAX_WAITING fetches, MAX_ACTIVE at once and
 * MAX_PER_HOST per host (one slow site holds only its own); per-user and per-server budgets
 * (src/rules/limits.ts), past which links go without a card.
 */
export const MAX_LINKS = 5;
export const CACHE_MS = DAY;
export const MAX_CACHED = 10_000;
export const MAX_WAITING = 500;
export const MAX_ACTIVE = 8;
export const MAX_PER_HOST = 2;
/** Discord cuts a preview's description about here. */
export const PREVIEW_DESCRIPTION_CHARS = 350;

export interface LinkPreviewParts {
  clock: Clock;
  log: Log;
  hub: Pick<Hub, 'onMessage'>;
  messages: Pick<MessageStore, 'setPreviews'>;
  limits: Pick<Limits, 'previewFetchesPerUser' | 'previewFetchesPerServer'>;
  /** LINK_PREVIEWS. */
  enabled: boolean;
  /** A server's own switch. */
  serverAllows: (serverId: string) => boolean;
  rules: FetchRules;
}

export interface LinkPreviews {
  /** Fetches waiting and under way (for tests and metrics). */
  readonly pending: number;
  /** At shutdown: nothing new is fetched, and what finishes later is not written (the database is closing). */
  close(): void;
}

type Result = Embed | null;

export function createLinkPreviews({ clock, log, hub, messages, limits, enabled, serverAllows, rules }: LinkPreviewParts): LinkPreviews {
  const cache = new Map<string, { until: number; result: Result }>();
  const inFlight = new Map<string, Promise<Result>>();
  const waiting: { url: string; host: string; start: () => void }[] = [];
  const activeByHost = new Map<string, number>();
  let active = 0;
  let closed = false;

  const cached = (url: string): Result | undefined => {
    const hit = cache.get(url);
    if (!hit) return undefined;
    if (hit.until > clock.now()) return hit.result;
    cache.delete(url);
    return undefined;
  };
  const remember = (url: string, result: Result) => {
    // A Map keeps insertion order: past the cap the oldest entry goes.
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(url, { until: clock.now() + CACHE_MS, result });
  };

  /** Starts what may start: the first waiting fetches whose host is under its share. */
  const pump = () => {
    for (let i = 0; i < waiting.length && active < MAX_ACTIVE;) {
      const job = waiting[i];
      if ((activeByHost.get(job.host) ?? 0) >= MAX_PER_HOST) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      job.start();
    }
  };

  /** One fetch of a URL at a time, through the queue; null when it fails, is refused, or the queue is full. */
  const fetchOnce = (url: string): Promise<Result> => {
    const known = inFlight.get(url);
    if (known) return known;
    if (waiting.length >= MAX_WAITING) return Promise.resolve(null);
    const host = new URL(url).hostname;
    const promise = new Promise<Result>((resolve) => {
      waiting.push({
        url,
        host,
        start: () => {
          active++;
          activeByHost.set(host, (activeByHost.get(host) ?? 0) + 1);
          previewOf(url, rules)
            .catch((err: unknown) => {
              if (!(err instanceof FetchRefused)) logFailure(log, `link preview of a page on ${host}`)(err);
              return null;
            })
            .then((result) => {
              remember(url, result);
              active--;
              const left = activeByHost.get(host)! - 1;
              if (left === 0) activeByHost.delete(host);
              else activeByHost.set(host, left);
              inFlight.delete(url);
              resolve(result);
              pump();
            });
        },
      });
    });
    inFlight.set(url, promise);
    pump();
    return promise;
  };

  const consider = (container: Container, message: { id: string; author_id: string; content: string; embeds?: Embed[] }) => {
    if (closed || !enabled || (container.kind === 'channel' && !serverAllows(container.serverId))) return;
    const links = linksOf(message.content);
    const shown = (message.embeds ?? []).filter((e) => e.type !== undefined && e.type !== 'rich').map((e) => e.url);
    if (links.length === 0 && shown.length === 0) return;
    // A preview's write announces the message again: nothing to do when every link has its answer.
    if (
      links.every((url) => cached(url) !== undefined) &&
      sameAs(
        links.map((url) => cached(url)!).filter((e) => e !== null),
        message.embeds,
      )
    )
      return;
    const results = links.map((url) => {
      const hit = cached(url);
      if (hit !== undefined) return Promise.resolve(hit);
      if (inFlight.has(url)) return inFlight.get(url)!;
      // Budgets: a flood of links from one user or into one server fetches a few and skips the rest.
      const serverKey = container.kind === 'channel' ? container.serverId : container.id;
      if (limits.previewFetchesPerUser.waitMs(message.author_id) > 0 || limits.previewFetchesPerServer.waitMs(serverKey) > 0) return Promise.resolve(null);
      limits.previewFetchesPerUser.spend(message.author_id);
      limits.previewFetchesPerServer.spend(serverKey);
      return fetchOnce(url);
    });
    Promise.all(results)
      .then((found) => {
        const previews = found.filter((e): e is Embed => e !== null);
        if (!closed) messages.setPreviews(container, message.id, message.content, previews);
      })
      .catch(logFailure(log, `link previews of message ${message.id}`));
  };

  hub.onMessage((container, change) => {
    if (change.kind === 'created' || change.kind === 'edited') consider(container, change.message);
  });

  return {
    get pending() {
      return active + waiting.length;
    },
    close() {
      closed = true;
      waiting.length = 0;
    },
  };
}

/** Whether a message's previews are these already (in order; the proxy URLs records add aside). */
function sameAs(previews: Embed[], embeds: Embed[] | undefined): boolean {
  const shown = (embeds ?? []).filter((e) => e.type !== undefined && e.type !== 'rich');
  const bare = (e: Embed) =>
    JSON.stringify({
      ...e,
      image: e.image && { url: e.image.url },
      thumbnail: e.thumbnail && { url: e.thumbnail.url },
    });
  return shown.length === previews.length && shown.every((e, i) => bare(e) === bare(previews[i]));
}

/**
 * The links of a message a preview is made for: http(s) URLs in its text, in order, distinct, at
 * most MAX_LINKS; not one in `<…>` (Discord's way of saying "no preview"), nor one in code.
 */
export function linksOf(content: string): string[] {
  // Code blocks and spans are blanked (same length), so nothing in them is a link.
  const text = content.replace(/```[\s\S]*?```|`[^`\n]*`/g, (code) => ' '.repeat(code.length));
  const links: string[] = [];
  for (const m of text.matchAll(/https?:\/\/[^\s<>"]+/gi)) {
    let raw = m[0];
    if (text[m.index - 1] === '<' && text[m.index + raw.length] === '>') continue;
    // Trailing punctuation ends a sentence, not a URL; a ")" closes one only if the URL opened it.
    for (;;) {
      const last = raw[raw.length - 1];
      if (/[.,:;!?'*_~|]/.test(last)) raw = raw.slice(0, -1);
      else if (last === ')' && (raw.match(/\(/g) ?? []).length < (raw.match(/\)/g) ?? []).length) raw = raw.slice(0, -1);
      else break;
    }
    const url = httpUrl(raw);
    if (url !== null && !links.includes(url)) links.push(url);
    if (links.length === MAX_LINKS) break;
  }
  return links;
}

/** A link's preview: what its page says of itself (or that it is an image); null when it says nothing. */
async function previewOf(url: string, rules: FetchRules): Promise<Result> {
  const page = await safeFetch(url, 'page', rules);
  if (page.contentType.startsWith('image/')) {
    // SVG can hold scripts and is never shown; the proxy refuses it too.
    return page.contentType === 'image/svg+xml' ? null : { type: 'image', url, image: { url: page.url } };
  }
  const tags = readPage(decode(page.body, page.charset), page.url);
  let oembed: OEmbed | null = null;
  if (tags.oembed)
    oembed = await safeFetch(tags.oembed, 'json', rules).then(
      (answer) => readOEmbed(answer.body),
      () => null,
    );
  return toEmbed(url, tags, oembed);
}

function decode(body: Buffer, charset: string | null): string {
  const head = body.subarray(0, 2048).toString('latin1');
  const declared = charset ?? /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(head)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(declared).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** What a page says of itself, as read from its tags. */
export interface PageTags {
  meta: Map<string, string>;
  title: string | null;
  /** Its oEmbed endpoint (JSON only), absolute. */
  oembed: string | null;
}

/**
 * The `<meta>` and `<link>` tags and the `<title>` of a page's head, read by a scanner of tags (no
 * DOM, nothing run): the first value of each property wins, as OpenGraph says.
 */
export function readPage(html: string, base: string): PageTags {
  const end = html.search(/<\/head\s*>|<body[\s>]/i);
  const head = end === -1 ? html : html.slice(0, end);
  const meta = new Map<string, string>();
  let oembed: string | null = null;
  for (const tag of head.matchAll(/<(meta|link)\b([^>]*)>/gi)) {
    const attrs = attributes(tag[2]);
    if (tag[1].toLowerCase() === 'meta') {
      const key = (attrs.get('property') ?? attrs.get('name'))?.toLowerCase();
      const value = attrs.get('content');
      if (key && value !== undefined && !meta.has(key)) meta.set(key, value);
    } else if (
      oembed === null &&
      (attrs.get('rel') ?? '').toLowerCase().split(/\s+/).includes('alternate') &&
      (attrs.get('type') ?? '').toLowerCase() === 'application/json+oembed'
    ) {
      oembed = absolute(attrs.get('href'), base);
    }
  }
  const title = /<title[^>]*>([\s\S]*?)<\/title\s*>/i.exec(head)?.[1];
  return { meta, title: title === undefined ? null : entities(title), oembed };
}

function attributes(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of text.matchAll(/([^\s"'=<>/]+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g)) {
    const name = m[1].toLowerCase();
    if (!found.has(name)) found.set(name, entities(m[2] ?? m[3] ?? m[4] ?? ''));
  }
  return found;
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };
/** The character references a tag's text uses (named: the common few; numeric: all). */
function entities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+\d*);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

function absolute(href: string | undefined, base: string): string | null {
  if (!href) return null;
  try {
    return httpUrl(new URL(href.trim(), base).href);
  } catch {
    return null;
  }
}

interface OEmbed {
  type?: string;
  title?: string;
  author_name?: string;
  provider_name?: string;
  provider_url?: string;
  thumbnail_url?: string;
}

function readOEmbed(body: Buffer): OEmbed | null {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
    const read: OEmbed = {};
    for (const key of ['type', 'title', 'author_name', 'provider_name', 'provider_url', 'thumbnail_url'] as const) {
      const v = (value as Record<string, unknown>)[key];
      if (typeof v === 'string') read[key] = v;
    }
    return read;
  } catch {
    return null;
  }
}

/** Text as a card shows it: one line, no control characters, at most `max` characters. */
function clean(text: string | undefined | null, max: number): string | undefined {
  if (text === undefined || text === null) return undefined;
  const line = text
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (line === '') return undefined;
  const chars = [...line];
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : line;
}

/** The card, from the tags and the oEmbed answer; null for a page that says nothing of itself. */
export function toEmbed(url: string, tags: PageTags, oembed: OEmbed | null): Result {
  const m = (key: string) => tags.meta.get(key);
  const title = clean(m('og:title') ?? m('twitter:title') ?? oembed?.title ?? tags.title, EMBED_LIMITS.title);
  const description = clean(m('og:description') ?? m('twitter:description') ?? m('description'), PREVIEW_DESCRIPTION_CHARS);
  const siteName = clean(m('og:site_name') ?? oembed?.provider_name, EMBED_LIMITS.authorName);
  const base = url;
  const picture = absolute(m('og:image') ?? m('og:image:url') ?? m('twitter:image') ?? m('twitter:image:src') ?? oembed?.thumbnail_url, base);
  const video = (m('og:type') ?? '').startsWith('video') || m('og:video') !== undefined || oembed?.type === 'video';
  if (title === undefined && description === undefined && picture === null) return null;
  const embed: Embed = { type: video ? 'video' : 'link', url };
  if (siteName !== undefined) {
    const providerUrl = absolute(oembed?.provider_url, base);
    embed.provider = providerUrl ? { name: siteName, url: providerUrl } : { name: siteName };
  }
  if (title !== undefined) embed.title = title;
  if (description !== undefined) embed.description = description;
  const author = clean(oembed?.author_name, EMBED_LIMITS.authorName);
  if (author !== undefined) embed.author = { name: author };
  if (picture !== null) {
    // One large image at most: a video's thumbnail or a card that asks for it; otherwise beside the text.
    if (video || m('twitter:card') === 'summary_large_image') embed.image = { url: picture };
    else embed.thumbnail = { url: picture };
  }
  return embed;
}
