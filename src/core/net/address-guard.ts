import dns from 'node:dns/promises';
import net from 'node:net';

/**
 * The one check of an address the server is asked to connect to on a user's behalf (SSRF):
 * push endpoints today, link previews and a media proxy next. Only public unicast addresses
 * pass. What is refused, and why this shape:
 *
 * - IPv4: every range of IANA's special-purpose registry (RFC 6890 and after): "this network",
 *   private, carrier-grade NAT, loopback, link-local (the cloud metadata service at
 *   169.254.169.254), IETF protocol assignments, documentation, AS112, AMT, the 6to4 relay,
 *   benchmarking, multicast, reserved and broadcast.
 * - IPv6 is an allowlist: only global unicast (2000::/3) is public, less its special-purpose
 *   blocks (2001::/23 with Teredo, documentation). Forms that carry an IPv4 address are judged
 *   by that address: IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), NAT64's
 *   well-known prefix (64:ff9b::/96: DNS64 hands these to IPv6-only hosts for IPv4-only sites)
 *   and 6to4 (2002::/16). IPv4-compatible addresses (::/96, deprecated by RFC 4291) are refused
 *   whatever they hold, as are NAT64's local-use prefix and Teredo (whose client address is
 *   obfuscated).
 * - Only the usual notations are addresses: dotted-quad IPv4 of four decimal parts, and IPv6.
 *   `127.1`, `2130706433`, `0x7f.1` or `0177.0.0.1` are what a URL parser or getaddrinfo
 *   (inet_aton) would read as 127.0.0.1: as a bare string they are refused, and as a host they
 *   are refused before any lookup. (The WHATWG URL parser already rewrites them in a URL's
 *   `hostname`, so `new URL('https://0x7f.1/').hostname` arrives here as 127.0.0.1.)
 *
 * node:net's BlockList holds the ranges; the one thing it cannot do, judge the IPv4 address
 * inside an IPv6 one, is the 16-byte reading below. No library: the whole rule is this page.
 */
const V4_RESERVED = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.31.196.0', 24],
  ['192.52.193.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['192.175.48.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  V4_RESERVED.addSubnet(prefix, bits, 'ipv4');

const V6_GLOBAL = new net.BlockList();
V6_GLOBAL.addSubnet('2000::', 3, 'ipv6');
const V6_RESERVED = new net.BlockList();
for (const [prefix, bits] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
] as const)
  V6_RESERVED.addSubnet(prefix, bits, 'ipv6');

/** IPv4 as four decimal parts of 0 to 255, no leading zeros: the one notation taken as an address. */
const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Whether `address` is an IP address in a usual notation, and a public unicast one. */
export function isPublicAddress(address: string): boolean {
  if (DOTTED_QUAD.test(address)) return !V4_RESERVED.check(address, 'ipv4');
  // A zone (fe80::1%eth0) only ever goes with a link-local address.
  if (net.isIPv6(address) && !address.includes('%')) {
    const bytes = ipv6Bytes(address);
    const inside = embeddedIpv4(bytes);
    if (inside !== undefined) return inside !== null && isPublicAddress(inside);
    return V6_GLOBAL.check(address, 'ipv6') && !V6_RESERVED.check(address, 'ipv6');
  }
  return false;
}

/**
 * The IPv4 address an IPv6 one carries; null for a form refused whatever it carries; undefined
 * for an IPv6 address that carries none.
 */
function embeddedIpv4(b: Uint8Array): string | null | undefined {
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  const v4 = (at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated).
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return v4(12);
  // ::a.b.c.d, with :: and ::1 among them.
  if (zero(0, 12)) return null;
  // 64:ff9b::a.b.c.d (NAT64's well-known prefix); 64:ff9b:1::/48 is for local use.
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return zero(4, 12) ? v4(12) : null;
  // 2002:aabb:ccdd::/48 (6to4).
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** The 16 bytes of an IPv6 address net.isIPv6 accepted (hex groups, one `::`, an optional dotted tail). */
function ipv6Bytes(address: string): Uint8Array {
  const bytes = new Uint8Array(16);
  let text = address;
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) text = `${text.slice(0, tail.index)}0:0`;
  const [head, rest] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const before = groups(head);
  const after = groups(rest);
  const all = rest === undefined ? before : [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  all.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  if (tail) bytes.set(tail.slice(1).map(Number), 12);
  return bytes;
}

/** The host, its address or its lookup, was refused: the message says why, for a 400 or a log line. */
export class AddressRefused extends Error {}

/** A host name that has not resolved by then is refused. */
export const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The address to connect to for a URL's host (its `hostname`, brackets and all): every address
 * a name resolves to must be public (a name with one private address among public ones is
 * refused: which one a connection takes is not ours to choose), unless the host is in `allow`
 * (a testing aid). The caller connects to the address returned, so a second lookup cannot give
 * another (DNS rebinding). Throws AddressRefused.
 */
export async function publicAddressOf(hostname: string, { allow }: { allow?: ReadonlySet<string> } = {}): Promise<{ address: string; family: 4 | 6 }> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  const allowed = allow?.has(host) ?? false;
  const family = net.isIP(host);
  let found: { address: string; family: number }[];
  if (family !== 0) found = [{ address: host, family }];
  else if (looksNumeric(host)) throw new AddressRefused(`the host ${host} is an address in an unusual notation`);
  else found = await lookup(host);
  if (!allowed && !found.every((a) => isPublicAddress(a.address))) throw new AddressRefused(`the host ${host} is not a public address`);
  return { address: found[0].address, family: found[0].family === 6 ? 6 : 4 };
}

/**
 * A host that getaddrinfo would read as an IPv4 address (`127.1`, `0x7f.1`, `2130706433`): its
 * last label is a number, as the WHATWG URL parser's "ends in a number" rule says.
 */
function looksNumeric(host: string): boolean {
  const labels = host.replace(/\.$/, '').split('.');
  return /^(?:\d+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]);
}

async function lookup(host: string): Promise<{ address: string; family: number }[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    // A resolver that does not answer must not hold a request (or a thread of the pool) for long.
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS)));
    const found = await Promise.race([dns.lookup(host, { all: true, verbatim: true }), late]);
    if (found.length > 0) return found;
  } catch {
    // Answered below.
  } finally {
    clearTimeout(timer);
  }
  throw new AddressRefused(`the host ${host} does not resolve`);
}
