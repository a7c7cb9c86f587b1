import t from 'tap';
import { AddressRefused, isPublicAddress, publicAddressOf } from '../../src/core/net/address-guard';

/**
 * The one address check (src/core/net/address-guard.ts) that every fetch of a URL a user chose
 * goes through (push endpoints today; link previews and a media proxy next): only public unicast
 * addresses pass, in every notation an address can be written in.
 */
const PUBLIC: [string, string][] = [
  ['8.8.8.8', 'IPv4'],
  ['1.1.1.1', 'IPv4'],
  ['2606:4700:4700::1111', 'IPv6 global unicast'],
  ['2001:4860:4860::8888', 'IPv6 global unicast (2001:4860::/32 is outside 2001::/23)'],
  ['2A00:1450:4001:80B::200E', 'upper case'],
  ['::ffff:8.8.8.8', 'IPv4-mapped, public inside'],
  ['::ffff:808:808', 'IPv4-mapped in hex, public inside'],
  ['64:ff9b::8.8.8.8', 'NAT64 (DNS64 gives these to IPv6-only hosts), public inside'],
  ['64:ff9b::808:808', 'NAT64 in hex, public inside'],
  ['2002:808:808::1', '6to4, public inside'],
];

const REFUSED: [string, string][] = [
  // IPv4 special-purpose ranges (IANA registry).
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', '"this network"'],
  ['10.1.2.3', 'private'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.169.254', 'link-local (the cloud metadata service)'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.170', 'IETF protocol assignments'],
  ['192.0.2.1', 'documentation'],
  ['192.31.196.1', 'AS112'],
  ['192.52.193.1', 'AMT'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private'],
  ['192.175.48.1', 'AS112 direct delegation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.51.100.1', 'documentation'],
  ['203.0.113.1', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast (SSDP)'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  // IPv4 in odd notations: never taken as an address, whatever it would mean.
  ['127.1', 'short form'],
  ['127.0.1', 'short form'],
  ['2130706433', 'one decimal number'],
  ['0x7f000001', 'one hex number'],
  ['017700000001', 'one octal number'],
  ['0x7f.1', 'hex, short'],
  ['0177.0.0.1', 'octal part'],
  ['0x7f.0x0.0x0.0x1', 'hex parts'],
  ['127.000.000.001', 'zero-padded parts'],
  ['8.8.8.8.', 'trailing dot'],
  ['0x8.0x8.0x8.0x8', 'hex parts, public inside'],
  ['134744072', 'decimal, public inside'],
  // IPv6.
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback, written out'],
  ['::127.0.0.1', 'IPv4-compatible (deprecated), loopback inside'],
  ['::7f00:1', 'IPv4-compatible in hex'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated), public inside'],
  ['::ffff:127.0.0.1', 'IPv4-mapped, loopback inside'],
  ['::FFFF:7f00:1', 'IPv4-mapped in hex'],
  ['0:0:0:0:0:ffff:a00:1', 'IPv4-mapped written out, private inside'],
  ['::ffff:169.254.169.254', 'IPv4-mapped, metadata service inside'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated (RFC 2765), loopback inside'],
  ['::ffff:0:a00:1', 'IPv4-translated in hex, private inside'],
  ['64:ff9b::127.0.0.1', 'NAT64, loopback inside'],
  ['64:ff9b::a9fe:a9fe', 'NAT64, metadata service inside'],
  ['64:ff9b:1::8.8.8.8', 'NAT64 local-use prefix'],
  ['2002:7f00:1::', '6to4, loopback inside'],
  ['2002:c0a8:101::1', '6to4, private inside'],
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2001:2::1', 'benchmarking'],
  ['2001:20::1', 'ORCHIDv2'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['100::1', 'discard-only'],
  ['5f00::1', 'SRv6 SIDs'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with a zone'],
  ['fec0::1', 'site-local (deprecated)'],
  ['ff02::1', 'multicast'],
  ['4000::1', 'unallocated'],
  ['[::1]', 'in brackets (a URL host, not an address)'],
  // Not addresses at all.
  ['', 'empty'],
  ['localhost', 'a name'],
  ['1.2.3', 'three parts'],
  ['1.2.3.4.5', 'five parts'],
  ['256.1.1.1', 'a part over 255'],
  [':::1', 'malformed IPv6'],
];

/** Whether the promise fails with AddressRefused (anything else is a defect of the check). */
const refused = (promise: Promise<unknown>) =>
  promise.then(
    () => false,
    (err: unknown) => err instanceof AddressRefused,
  );

t.test('public unicast addresses pass', async (t) => {
  for (const [address, what] of PUBLIC) t.ok(isPublicAddress(address), `${address}: ${what}`);
});

t.test('every reserved form is refused, in every notation', async (t) => {
  for (const [address, what] of REFUSED) t.notOk(isPublicAddress(address), `${address}: ${what}`);
});

t.test('a URL host in any notation is refused without a lookup when it names a reserved address', async (t) => {
  const hosts = [
    'https://[::127.0.0.1]/push',
    'https://[::ffff:127.0.0.1]/push',
    'https://[64:ff9b::169.254.169.254]/',
    'https://[2002:a00:1::]/',
    'https://0x7f.1/',
    'https://2130706433/',
    'https://0177.0.0.1/',
    'https://127.1/',
    'https://[fe80::1]/',
    'https://169.254.169.254./',
  ];
  for (const href of hosts) {
    t.ok(await refused(publicAddressOf(new URL(href).hostname)), href);
  }
  t.same(await publicAddressOf(new URL('https://[2606:4700:4700::1111]/').hostname), { address: '2606:4700:4700::1111', family: 6 }, 'an IPv6 literal passes');
  t.same(await publicAddressOf('8.8.8.8'), { address: '8.8.8.8', family: 4 }, 'an IPv4 literal passes');
});

t.test('a name that resolves to a reserved address is refused; the allowed hosts pass', async (t) => {
  t.ok(await refused(publicAddressOf('localhost')), 'localhost');
  t.same(await publicAddressOf('127.0.0.1', { allow: new Set(['127.0.0.1']) }), { address: '127.0.0.1', family: 4 }, 'a host allowed by name passes');
  t.ok(await refused(publicAddressOf('nothing.invalid')), 'a name that does not resolve');
});
