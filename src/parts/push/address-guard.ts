import dns from 'node:dns/promises';
import net from 'node:net';

/**
 * A push subscription's endpoint is an address the server will send requests to, chosen by a
 * client: it must not reach this machine or its network (SSRF). Only public unicast addresses
 * pass: no loopback, private, carrier-grade NAT, link-local (the cloud metadata service at
 * 169.254.169.254 among them), documentation, multicast or reserved ranges, in IPv4 or IPv6
 * (IPv4-mapped IPv6 checked as IPv4). PUSH_INSECURE_HOSTS names hosts let through anyway, over
 * plain http too: a testing aid.
 */
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 127], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['2002::', 16],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(prefix, bits, 'ipv6');

/** Whether an IP address is a public unicast one. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return isPublicAddress(mapped[1]);
    return !blocked.check(address, 'ipv6');
  }
  return !blocked.check(address, 'ipv4');
}

export class EndpointRefused extends Error {}

/** A host name that has not resolved by then is refused. */
const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * The address to connect to for an endpoint: every address its host resolves to must be public
 * (a name with one private address among public ones is refused: which one a connection takes is
 * not ours to choose), unless the host is one of `insecureHosts`. The caller connects to the
 * address returned, so a second lookup cannot give another (DNS rebinding).
 */
export async function checkedAddress(endpoint: URL, insecureHosts: ReadonlySet<string>): Promise<{ address: string; family: number }> {
  const host = endpoint.hostname.replace(/^\[|\]$/g, '');
  const insecure = insecureHosts.has(host.toLowerCase());
  if (endpoint.protocol !== 'https:' && !(insecure && endpoint.protocol === 'http:')) throw new EndpointRefused('the endpoint must be an https URL');
  let found: { address: string; family: number }[];
  if (net.isIP(host)) found = [{ address: host, family: net.isIP(host) }];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      // A resolver that does not answer must not hold a request (or a thread of the pool) for long.
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS)));
      found = await Promise.race([dns.lookup(host, { all: true, verbatim: true }), late]);
    } catch {
      throw new EndpointRefused(`the endpoint's host ${host} does not resolve`);
    } finally {
      clearTimeout(timer);
    }
  }
  if (found.length === 0) throw new EndpointRefused(`the endpoint's host ${host} does not resolve`);
  if (!insecure && !found.every((a) => isPublicAddress(a.address))) throw new EndpointRefused("the endpoint's host is not a public address");
  return found[0];
}
