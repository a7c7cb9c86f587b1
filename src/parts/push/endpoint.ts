import { AddressRefused, publicAddressOf } from '../../core/net/address-guard';

/**
 * A push subscription's endpoint is an address the server will send requests to, chosen by a
 * client (SSRF): an https URL whose host passes the one address check
 * (src/core/net/address-guard.ts), at subscription and again at every send. PUSH_INSECURE_HOSTS
 * names hosts let through anyway, over plain http too: a testing aid. Throws AddressRefused.
 */
export async function checkedEndpoint(endpoint: URL, insecureHosts: ReadonlySet<string>): Promise<{ address: string; family: 4 | 6 }> {
  const insecure = insecureHosts.has(endpoint.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase());
  if (endpoint.protocol !== 'https:' && !(insecure && endpoint.protocol === 'http:')) throw new AddressRefused('the endpoint must be an https URL');
  return publicAddressOf(endpoint.hostname, { allow: insecureHosts });
}
