import t from 'tap';
import { MAX_EMOJI_UTF16, isEmoji } from '../../src/core/emoji';

t.test('accepts single emoji of every shape clients send', async (t) => {
  const valid: [string, string][] = [
    ['👍', 'a plain pictograph'],
    ['❤', 'a pictograph in text presentation'],
    ['❤️', 'a pictograph with the emoji variation selector'],
    ['👍🏽', 'a skin-tone modifier'],
    ['🇫🇷', 'a flag (two regional indicators)'],
    ['1️⃣', 'a keycap'],
    ['#️⃣', 'the hash keycap'],
    ['👨‍👩‍👧‍👦', 'a ZWJ family sequence'],
    ['🏳️‍🌈', 'a ZWJ sequence with a variation selector'],
    ['🧑🏽‍🤝‍🧑🏻', 'a ZWJ sequence with modifiers'],
    ['🏴󠁧󠁢󠁳󠁣󠁴󠁿', 'a subdivision flag (tag sequence)'],
    [':thumbsup:', 'a shortcode'],
    [':+1:', 'a shortcode with a plus'],
  ];
  for (const [value, what] of valid) t.ok(isEmoji(value), `${what}: ${value}`);
});

t.test('rejects text, several emoji and anything that only contains an emoji', async (t) => {
  const invalid: [unknown, string][] = [
    ['hello', 'a word'],
    [':not a shortcode:', 'a shortcode with spaces'],
    [':' + 'x'.repeat(31) + ':', 'a shortcode over 30 characters'],
    [':Thumbsup:', 'a shortcode with capitals'],
    ['::', 'an empty shortcode'],
    ['', 'the empty string'],
    ['👍👍', 'two emoji'],
    ['🇫🇷🇩🇪', 'two flags'],
    ['x'.repeat(40), 'a 40-character string'],
    ['a', 'a letter'],
    ['1', 'a digit without the keycap'],
    [' 👍', 'an emoji with a leading space'],
    ['👍 ', 'an emoji with a trailing space'],
    ['👍a', 'an emoji followed by a letter'],
    ['🇫', 'a lone regional indicator'],
    ['a\u20e3', 'a letter in a keycap'],
    ['👍\u0301\u0302\u0303', 'an emoji under stacked combining marks'],
    ['👍\u200d', 'an emoji with a dangling zero-width joiner'],
    [42, 'a number'],
    [null, 'null'],
    [undefined, 'undefined'],
    [['👍'], 'an array holding an emoji'],
  ];
  for (const [value, what] of invalid) t.notOk(isEmoji(value), what);
});

t.test('bounds the length of a ZWJ chain', async (t) => {
  const chain = (n: number) => Array.from({ length: n }, () => '👍').join('\u200d');
  t.ok(isEmoji(chain(3)), 'a short chain is one emoji');
  t.ok(chain(20).length > MAX_EMOJI_UTF16, 'the long chain exceeds the bound');
  t.notOk(isEmoji(chain(20)), 'a chain longer than the bound is rejected');
});
