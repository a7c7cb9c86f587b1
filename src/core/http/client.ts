import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';

/** Who is asking, as far as HTTP can tell: their cookies, their address, their origin. */

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The client as the per-address rate limits count it: the socket's address, or with
 * TRUST_PROXY on, the last X-Forwarded-For hop. The proxy appends the address it accepted the
 * connection from; every hop before it is whatever the client chose to send, so trusting the
 * first one would let anyone pick a fresh address per request and walk around every limit.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  return addressKey(remoteAddress(req, trustProxy));
}

/** The client's address as it is (a session list shows it): the socket's, or the proxy's last hop. */
export function remoteAddress(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    const last = hops[hops.length - 1].trim();
    if (last) return last.replace(/^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i, '$1');
  }
  return (req.socket.remoteAddress ?? 'unknown').replace(/^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i, '$1');
}

/**
 * One key per client: an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, what a dual-stack
 * socket reports) is its IPv4 address, and an IPv6 address counts as its /64, because one
 * subscriber is routinely given a whole /64 and could otherwise rotate through 2^64 addresses.
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  const bare = address.split('%')[0];
  if (!isIPv6(bare)) return address;
  const [head, tail] = bare.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').flatMap((g) => (g.includes('.') ? ['0', '0'] : [g])) : []);
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const full = [...front, ...Array(8 - front.length - back.length).fill('0'), ...back];
  return `${full
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

// host[:port]: a DNS name, an IPv4 address or a bracketed IPv6 address. Anything else in Host
// (spaces, slashes, userinfo) never becomes part of a link.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The origin the requester's browser used (`http://192.168.1.5:8080`), for links shown to that
 * requester when BASE_URL is not set; null for a Host header that is not a plain host[:port].
 * Behind a proxy (TRUST_PROXY=on) the scheme is the one X-Forwarded-Proto names.
 */
export function requestOrigin(req: IncomingMessage, trustProxy: boolean): string | null {
  const host = req.headers.host;
  if (!host || !HOST.test(host)) return null;
  const proto = trustProxy && req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
  return `${proto}://${host}`;
}

/**
 * Cross-site request defence. A browser sends Origin on cross-origin POSTs and on every
 * fetch; Sec-Fetch-Site on modern browsers. Either one naming another site means a page
 * elsewhere is trying to act with this user's cookie (CSRF, cross-site WebSocket hijacking).
 * Requests with neither header (curl, API clients) carry no ambient credentials risk.
 */
/**
 * Whether a request signs in as a bot (`Authorization: Bot <token>`): its cookies are then never
 * read, so a page on another site gains nothing by sending it, and cross-site rules do not apply.
 */
export const isBotRequest = (req: IncomingMessage): boolean => req.headers.authorization?.startsWith('Bot ') === true;

export function isCrossSite(req: IncomingMessage, baseUrl: string): boolean {
  const fetchSite = req.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site') return true;
  // Pages cannot set Sec-Fetch-Site. Under Referrer-Policy: no-referrer a browser form post
  // sends `Origin: null` even from our own page, and this header is what says so.
  if (fetchSite === 'same-origin') return false;
  const origin = req.headers.origin;
  if (origin === undefined) return false;
  if (origin === new URL(baseUrl).origin) return false;
  // The host the browser actually used (a LAN address rather than BASE_URL) is same-origin too.
  const host = req.headers.host;
  return !host || (origin !== `http://${host}` && origin !== `https://${host}`);
}
