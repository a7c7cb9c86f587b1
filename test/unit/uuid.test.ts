import t from 'tap';
import { timeOrderedUuid } from '../../src/parts/messages/message-store';
import { isUuid } from '../../src/core/http/router';

t.test('message ids are version 7 UUIDs that sort by time', async (t) => {
  const at = Date.parse('2026-11-22T10:00:00Z');
  const first = timeOrderedUuid(at);
  const later = timeOrderedUuid(at + 1);
  t.ok(isUuid(first), first);
  t.equal(first[14], '7', 'version nibble is 7');
  t.match(first[19], /[89ab]/, 'RFC 9562 variant');
  t.equal(parseInt(first.replace(/-/g, '').slice(0, 12), 16), at, 'the first 48 bits are the milliseconds');
  t.ok(first < later, 'a later id sorts after an earlier one');
  t.not(timeOrderedUuid(at), timeOrderedUuid(at), 'ids of the same millisecond still differ');
});
