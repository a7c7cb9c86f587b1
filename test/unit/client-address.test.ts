import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { addressKey, clientAddress } from '../../src/core/http/client';

t.test('addressKey counts an IPv6 /64 as one client and unwraps IPv4-mapped addresses', async (t) => {
  const cases: [string, string][] = [
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:127.0.0.1', '127.0.0.1'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:0:0:0:1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['::', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
    ['unknown', 'unknown'],
    ['not-an-address', 'not-an-address'],
  ];
  for (const [address, key] of cases) t.equal(addressKey(address), key, address);
});

t.test('clientAddress trusts only the hop the proxy appended, and only when told to', async (t) => {
  const req = (forwardedFor: string | string[] | undefined, remoteAddress = '::ffff:10.0.0.5') =>
    ({ headers: { 'x-forwarded-for': forwardedFor }, socket: { remoteAddress } }) as unknown as IncomingMessage;
  t.equal(clientAddress(req('198.51.100.1'), false), '10.0.0.5', 'off: the socket, unwrapped');
  t.equal(clientAddress(req('198.51.100.1'), true), '198.51.100.1');
  t.equal(clientAddress(req('1.1.1.1, 2.2.2.2,198.51.100.1'), true), '198.51.100.1', 'the last hop');
  t.equal(clientAddress(req(['1.1.1.1', '198.51.100.1']), true), '198.51.100.1', 'repeated headers');
  t.equal(clientAddress(req('2001:db8:1:2::99'), true), '2001:db8:1:2::/64');
  t.equal(clientAddress(req(undefined), true), '10.0.0.5', 'no header: the socket');
  t.equal(clientAddress(req('1.1.1.1, '), true), '10.0.0.5', 'an empty last hop: the socket');
  const detached = { headers: {}, socket: {} } as unknown as IncomingMessage;
  t.equal(clientAddress(detached, false), 'unknown', 'a socket already gone');
});
