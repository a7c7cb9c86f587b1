import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { AddressRefused, publicAddressOf } from './address-guard';

/**
 * The fetch rules: every GET the server makes of a URL someone else chose (link previews, their
 * oEmbed answers, the media proxy) goes through `safeFetch`, so that the server cannot be made a
 * tool against its own network (SSRF) nor held up by a hostile site. docs/security.md "Fetching
 * a URL someone chose" states them for readers.
 *
 * - The name is resolved once and every address it has must be public (address-guard.ts: no
 *   private, loopback, link-local, multicast, reserved, IPv4-mapped or -compatible address, in
 *   any notation); the connection goes to the address that was checked (our own `lookup`), so a
 *   second answer of the DNS cannot send it elsewhere (DNS rebinding).
 * - Redirects are followed by hand, at most MAX_REDIRECTS, and each one is checked as the first
 *   URL was. http and https on any port, but never our own listener, and never a URL carrying a
 *   user name or password.
 * - FETCH_TIMEOUT_MS for the whole of it, redirects included; the body is read as a stream and
 *   stopped at its cap, counted after decoding (a gzip bomb stops at the cap, as a plain body).
 * - Only the content types the caller asks for; a `User-Agent` that names us and a contact URL.
 */
export const FETCH_TIMEOUT_MS = 5_000;
export const MAX_REDIRECTS = 3;
/** What is read of a page: its head, where the tags are, is at the start. */
export const MAX_PAGE_BYTES = 2 * 1024 * 1024;
export const MAX_IMAGE_BYTES = 8 * 1024 * 1024;
/** An oEmbed answer is a small JSON object. */
export const MAX_JSON_BYTES = 256 * 1024;

/** What a fetch is for: the types it takes and how much it reads. */
export type FetchKind = 'page' | 'image' | 'json';
const KINDS: Record<FetchKind, { accept: string; types: RegExp; cap: number; truncate: boolean }> = {
  // A link may point at an image: its type is all a preview needs, the image comes through the proxy.
  page: {
    accept: 'text/html,application/xhtml+xml,image/*;q=0.8',
    types: /^(?:text\/html|application\/xhtml\+xml|image\/[a-z0-9.+-]+)$/,
    cap: MAX_PAGE_BYTES,
    truncate: true,
  },
  image: { accept: 'image/*', types: /^image\/[a-z0-9.+-]+$/, cap: MAX_IMAGE_BYTES, truncate: false },
  json: { accept: 'application/json', types: /^(?:application\/json|text\/json|application\/json\+oembed)$/, cap: MAX_JSON_BYTES, truncate: false },
};

export interface FetchRules {
  /** Hosts let through whatever their address (PREVIEW_INSECURE_HOSTS): a testing aid, never for production. */
  allow: ReadonlySet<string>;
  /** Whether an address and port is our own listener (which is never fetched, even under the aid). */
  isSelf: (address: string, port: number) => boolean;
  userAgent: string;
  timeoutMs?: number;
}

export interface Fetched {
  /** The URL that answered, after redirects. */
  url: string;
  /** Its media type, lower case, without parameters. */
  contentType: string;
  /** The charset its Content-Type names, if any. */
  charset: string | null;
  /** The decoded body, up to the cap (empty for an image a page fetch found). */
  body: Buffer;
  /** The body was longer than the cap (a page: the start was kept). */
  truncated: boolean;
}

/** The URL was refused, or the fetch failed: the message says why (for a log line or a 4xx). */
export class FetchRefused extends Error {}

/** The User-Agent of every fetch: the product and where its operators are found (the server's own address). */
export const fetchUserAgent = (product: string, baseUrl: string): string => `Mozilla/5.0 (compatible; ${product}-preview/1.0; +${baseUrl})`;

export async function safeFetch(raw: string, kind: FetchKind, rules: FetchRules): Promise<Fetched> {
  const signal = AbortSignal.timeout(rules.timeoutMs ?? FETCH_TIMEOUT_MS);
  let url = parseUrl(raw);
  for (let hop = 0; ; hop++) {
    const answer = await getOnce(url, kind, rules, signal);
    if ('location' in answer) {
      if (hop >= MAX_REDIRECTS) throw new FetchRefused(`more than ${MAX_REDIRECTS} redirects`);
      url = parseUrl(answer.location, url);
      continue;
    }
    return answer;
  }
}

function parseUrl(raw: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new FetchRefused('not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new FetchRefused('only http and https URLs are fetched');
  if (url.username !== '' || url.password !== '') throw new FetchRefused('a URL with a user name or password is not fetched');
  url.hash = '';
  return url;
}

const defaultPort = (url: URL) => Number(url.port || (url.protocol === 'https:' ? 443 : 80));

async function getOnce(url: URL, kind: FetchKind, rules: FetchRules, signal: AbortSignal): Promise<Fetched | { location: string }> {
  let to: { address: string; family: 4 | 6 };
  try {
    to = await publicAddressOf(url.hostname, { allow: rules.allow });
  } catch (err) {
    if (err instanceof AddressRefused) throw new FetchRefused(err.message);
    throw err;
  }
  if (rules.isSelf(to.address, defaultPort(url))) throw new FetchRefused('the URL points at this server');
  if (signal.aborted) throw new FetchRefused('no answer in time');
  const spec = KINDS[kind];
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'GET',
      headers: { 'User-Agent': rules.userAgent, Accept: spec.accept, 'Accept-Encoding': 'gzip, deflate, br', 'Accept-Language': 'en' },
      // The address checked above, whatever a second lookup would say (DNS rebinding). Node
      // skips `lookup` for an IP literal, which is the address checked.
      lookup: (_host, options, done) => {
        if ((options as { all?: boolean }).all) (done as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [to]);
        else done(null, to.address, to.family);
      },
      agent: false,
      signal,
    });
    req.on('response', resolve);
    req.on('error', (err) => reject(new FetchRefused(signal.aborted ? 'no answer in time' : `fetch failed: ${err.message}`)));
    req.end();
  });
  res.on('error', () => {});
  const status = res.statusCode ?? 0;
  if ([301, 302, 303, 307, 308].includes(status)) {
    res.destroy();
    const location = res.headers.location;
    if (!location) throw new FetchRefused(`a redirect (${status}) without a Location`);
    return { location };
  }
  if (status < 200 || status > 299) {
    res.destroy();
    throw new FetchRefused(`the site answered ${status}`);
  }
  const contentType = (res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!spec.types.test(contentType)) {
    res.destroy();
    throw new FetchRefused(`the site answered ${contentType || 'no content type'}, not a type fetched here`);
  }
  if (kind === 'page' && contentType.startsWith('image/')) {
    res.destroy();
    return { url: url.href, contentType, charset: null, body: Buffer.alloc(0), truncated: false };
  }
  const { body, truncated } = await readCapped(res, spec.cap, signal);
  if (truncated && !spec.truncate) throw new FetchRefused(`the body is larger than ${spec.cap} bytes`);
  const charset = /;\s*charset\s*=\s*"?([\w-]+)/i.exec(res.headers['content-type'] ?? '')?.[1] ?? null;
  return { url: url.href, contentType, charset, body, truncated };
}

/** The body, decoded, up to `cap` bytes: reading stops there (the connection is closed). */
async function readCapped(res: http.IncomingMessage, cap: number, signal: AbortSignal): Promise<{ body: Buffer; truncated: boolean }> {
  const encoding = String(res.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  let decoded: Readable = res;
  if (encoding === 'gzip' || encoding === 'x-gzip') decoded = zlib.createGunzip();
  else if (encoding === 'deflate') decoded = zlib.createInflate();
  else if (encoding === 'br') decoded = zlib.createBrotliDecompress();
  else if (encoding !== 'identity' && encoding !== '') {
    res.destroy();
    throw new FetchRefused(`content encoding ${encoding} is not read here`);
  }
  if (decoded !== res) {
    res.on('error', (err) => decoded.destroy(err));
    // A connection cut (or aborted at the deadline) in the middle of the body.
    res.on('close', () => {
      if (!res.complete) decoded.destroy(new Error('the connection closed before the end of the body'));
    });
    res.pipe(decoded as zlib.Gunzip);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of decoded as AsyncIterable<Buffer>) {
      if (size + chunk.length > cap) {
        chunks.push(chunk.subarray(0, cap - size));
        size = cap;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      size += chunk.length;
    }
  } catch (err) {
    throw new FetchRefused(signal.aborted ? 'no answer in time' : `reading the body failed: ${(err as Error).message}`);
  } finally {
    res.destroy();
    if (decoded !== res) decoded.destroy();
  }
  return { body: Buffer.concat(chunks, size), truncated };
}

/**
 * FetchRules.isSelf for a server listening on `port()` (null before it listens): its port on a
 * loopback, unspecified or local interface address. Under PREVIEW_INSECURE_HOSTS loopback passes
 * the address check, so this is what keeps a fetch off our own API even then.
 */
export function ownListener(port: () => number | null): (address: string, port: number) => boolean {
  return (address, target) => {
    if (target !== port()) return false;
    const bare = address.toLowerCase().replace(/^::ffff:/, '');
    if (net.isIPv4(bare) && bare.startsWith('127.')) return true;
    if (['::1', '0.0.0.0', '::'].includes(bare)) return true;
    return Object.values(os.networkInterfaces()).some((list) => (list ?? []).some((i) => i.address.toLowerCase() === bare));
  };
}
