import t from 'tap';
import { type Embed, checkEmbeds, embedText } from '../../src/core/embed';
import { bad } from '../helpers/webhook-payloads';

// The embed record's checks (src/core/embed.ts): Discord's limits, for every message with embeds.
const embed = (overrides: Record<string, unknown>) => ({ title: 'A title', ...overrides });

t.test('checkEmbeds keeps only known keys, reads null as absent and drops embeds with no text', async (t) => {
  const got = checkEmbeds([
    { title: 'Kept', type: 'rich', provider: { name: 'x' }, video: { url: 'https://v.example' }, description: null, footer: null },
    { title: '   ', description: '', image: { url: 'https://img.example/a.png' } },
    { fields: [{ name: '', value: ' ' }] },
    {},
  ]);
  t.strictSame(got, [{ title: 'Kept' }]);
});

t.test('checkEmbeds normalizes URLs, timestamps and line breaks', async (t) => {
  const [got] = checkEmbeds([
    {
      title: 'Line one\r\nline two\rline three',
      url: 'HTTPS://Example.COM/a/../b?q=ü',
      timestamp: '2024-05-01T14:30:00.5+02:00',
      author: { name: 'Ann', url: 'http://example.com' },
      fields: [{ name: 'n', value: 'v', inline: null }],
    },
  ]);
  t.strictSame(got, {
    title: 'Line one\nline two\nline three',
    url: 'https://example.com/b?q=%C3%BC',
    timestamp: '2024-05-01T12:30:00.500Z',
    author: { name: 'Ann', url: 'http://example.com/' },
    fields: [{ name: 'n', value: 'v', inline: false }],
  });
  t.equal(checkEmbeds([embed({ timestamp: '2024-05-01' })])[0].timestamp, '2024-05-01T00:00:00.000Z', 'a date alone is midnight UTC');
  t.equal(checkEmbeds([embed({ timestamp: '2024-05-01T10:00:00' })])[0].timestamp, '2024-05-01T10:00:00.000Z', 'no zone reads as UTC');
});

t.test('checkEmbeds refuses what breaks a limit, naming the field', async (t) => {
  const fields = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `f${i}`, value: 'v' }));
  const cases: [unknown, string | RegExp][] = [
    [{}, 'embeds must be an array of embed objects'],
    [Array.from({ length: 11 }, () => embed({})), 'embeds must hold at most 10 embeds; this holds 11'],
    [[embed({}), embed({}), embed({ title: 'x'.repeat(257) })], 'embeds[2].title must be at most 256 characters'],
    [[embed({ description: 'x'.repeat(4097) })], 'embeds[0].description must be at most 4096 characters'],
    [[embed({ fields: fields(26) })], 'embeds[0].fields must hold at most 25 fields; this holds 26'],
    [[embed({ fields: [{ name: 'n', value: 'x'.repeat(1025) }] })], 'embeds[0].fields[0].value must be at most 1024 characters'],
    [[embed({ fields: [{ name: 'n' }] })], 'embeds[0].fields[0].value is missing'],
    [[embed({ fields: [{ name: 'n', value: 'v', inline: 'yes' }] })], 'embeds[0].fields[0].inline must be true or false'],
    [[embed({ fields: {} })], 'embeds[0].fields must be an array of fields'],
    [[embed({ footer: { text: 'x'.repeat(2049) } })], 'embeds[0].footer.text must be at most 2048 characters'],
    [[embed({ footer: 'text' })], 'embeds[0].footer must be an object'],
    [[embed({ author: { name: 'x'.repeat(257) } })], 'embeds[0].author.name must be at most 256 characters'],
    [[embed({ title: 5 })], 'embeds[0].title must be a string'],
    [['a title'], 'embeds[0] must be an object'],
    [[embed({ title: 'a\u0000b' })], /^embeds\[0\]\.title contains control characters/],
    [[embed({ description: 'a\u001bb' })], /^embeds\[0\]\.description contains control characters/],
    [[embed({ title: 'half \ud83d' })], 'embeds[0].title is not valid Unicode text'],
    [[embed({ timestamp: 'yesterday' })], /^embeds\[0\]\.timestamp must be an ISO 8601 date and time/],
    [[embed({ timestamp: '2024-02-30T00:00:00Z' })], /^embeds\[0\]\.timestamp must be an ISO 8601/],
    [[embed({ timestamp: '2024-05-01T24:00:00Z' })], /^embeds\[0\]\.timestamp must be an ISO 8601/],
    [[embed({ timestamp: 1714566120 })], /^embeds\[0\]\.timestamp must be an ISO 8601/],
  ];
  for (const [raw, message] of cases) t.throws(() => checkEmbeds(raw), bad(message), typeof message === 'string' ? message : message.source);
});

t.test('checkEmbeds refuses links that are not http or https, wherever they are', async (t) => {
  for (const url of ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'ftp://example.com/f', '//example.com', 'https://exa mple.com', 'not a url', 5]) {
    for (const [where, at] of [
      [{ url }, 'embeds[0].url'],
      [{ author: { name: 'a', url } }, 'embeds[0].author.url'],
      [{ image: { url } }, 'embeds[0].image.url'],
      [{ thumbnail: { url } }, 'embeds[0].thumbnail.url'],
    ] as const) {
      t.throws(() => checkEmbeds([embed(where)]), bad(new RegExp(`^${at.replace(/[.[\]]/g, '\\$&')} must be`)), `${at} ${String(url)}`);
    }
  }
  t.throws(() => checkEmbeds([embed({ url: `https://example.com/${'a'.repeat(2048)}` })]), bad(/at most 2048 characters/));
});

t.test('checkEmbeds takes colours as integers from 0 to 0xFFFFFF only', async (t) => {
  t.equal(checkEmbeds([embed({ color: 0 })])[0].color, 0);
  t.equal(checkEmbeds([embed({ color: 0xffffff })])[0].color, 0xffffff);
  for (const color of [-1, 0x1000000, 1.5, '#ff0000', Number.NaN, true]) {
    t.throws(() => checkEmbeds([embed({ color })]), bad('embeds[0].color must be an integer from 0 to 16777215 (0xFFFFFF)'), String(color));
  }
});

t.test('checkEmbeds counts text across all embeds in characters, up to 6000', async (t) => {
  // 10 embeds of 600 characters each is exactly the limit; one character more is refused.
  const full = Array.from({ length: 10 }, () => ({ title: 'x'.repeat(100), description: 'y'.repeat(500) }));
  t.equal(checkEmbeds(full).length, 10);
  const over = [...full.slice(0, 9), { title: 'x'.repeat(100), description: 'y'.repeat(400), footer: { text: 'z'.repeat(101) } }];
  t.throws(() => checkEmbeds(over), bad(/^embeds must hold at most 6000 characters of text in all .*; these hold 6001$/));
  const emoji = '😀'.repeat(256);
  t.equal(checkEmbeds([{ title: emoji }])[0].title, emoji, 'an emoji is one character, not two');
});

t.test('embedText joins every visible text for the search index', async (t) => {
  const embeds: Embed[] = [
    {
      title: 'T',
      description: 'D',
      url: 'https://x.example/',
      author: { name: 'A' },
      fields: [{ name: 'N', value: 'V', inline: true }],
      footer: { text: 'F' },
    },
    { title: 'T2', image: { url: 'https://x.example/i.png' } },
  ];
  t.equal(embedText(embeds), 'T\nD\nA\nN\nV\nF\nT2');
  t.equal(embedText([]), '');
});
