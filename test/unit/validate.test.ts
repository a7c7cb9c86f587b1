import t from 'tap';
import { bool, integer, limitParam, oneOf, stringArray, subsetOf, text, uuid, uuidParam } from '../../src/core/validate';

const ID = '3F2B8C1E-7D4A-4B6E-9C0D-1A2B3C4D5E6F';
const b = (value: unknown) => ({ field: value }) as Record<string, unknown>;
const bad = (message: RegExp) => ({ status: 400, message });

t.test('text measures as sent, in characters, refuses control characters, and trims what it stores', async (t) => {
  t.equal(text(b('  hi  '), 'field', { max: 6 }), 'hi');
  t.equal(text(b('  hi  '), 'field', { max: 6, trim: false }), '  hi  ');
  t.equal(text(b('😀😀'), 'field', { max: 2 }), '😀😀', 'an emoji is one character');
  t.equal(text(b('a\nb\tc'), 'field', { max: 10, multiline: true }), 'a\nb\tc');
  const cases: [unknown, object, RegExp][] = [
    [undefined, { max: 5 }, /field must be a string/],
    [5, { max: 5 }, /field must be a string/],
    ['   ', { max: 5 }, /field must not be empty/],
    ['ab', { min: 3, max: 5 }, /field must be at least 3 characters/],
    ['abcdef', { max: 5 }, /field must be at most 5 characters/],
    ['  hi  ', { max: 2 }, /field must be at most 2 characters/],
    ['hi\n', { max: 5 }, /control characters/],
    ['a\nb', { max: 5 }, /control characters/],
    ['a\u0000b', { max: 5, multiline: true }, /control characters/],
    ['a\u007fb', { max: 5 }, /control characters/],
  ];
  for (const [value, opts, message] of cases) {
    t.throws(() => text(b(value), 'field', opts as { max: number }), bad(message), JSON.stringify(value));
  }
});

t.test('bool and integer take only their own JSON types', async (t) => {
  t.equal(bool(b(false), 'field'), false);
  for (const value of ['true', 1, null, undefined]) t.throws(() => bool(b(value), 'field'), bad(/true or false/));
  t.equal(integer(b(4), 'field', 0, 4), 4);
  t.equal(integer(b(0), 'field', 0, 4), 0);
  for (const value of [5, -1, 1.5, '2', null, Number.NaN]) {
    t.throws(() => integer(b(value), 'field', 0, 4), bad(/field must be an integer from 0 to 4/), String(value));
  }
});

t.test('uuid lower-cases', async (t) => {
  t.equal(uuid(b(ID), 'field'), ID.toLowerCase());
  t.throws(() => uuid(b('nope'), 'field'), bad(/field must be a UUID/));
});

t.test('oneOf and stringArray', async (t) => {
  t.equal(oneOf(b('user'), 'field', ['user', 'server']), 'user');
  t.throws(() => oneOf(b('User'), 'field', ['user', 'server']), bad(/field must be one of user, server/));
  t.same(stringArray(b(['a', 'b']), 'field', 1, 2), ['a', 'b']);
  t.throws(() => stringArray(b('a'), 'field', 1, 2), bad(/array of strings/));
  t.throws(() => stringArray(b(['a', 1]), 'field', 1, 2), bad(/array of strings/));
  t.throws(() => stringArray(b([]), 'field', 1, 2), bad(/1 to 2 entries/));
  t.throws(() => stringArray(b(['a', 'b']), 'field', 1, 1), bad(/exactly 1/));
});

t.test('query readers', async (t) => {
  const q = (s: string) => new URLSearchParams(s);
  t.equal(limitParam(q('')), 50);
  t.equal(limitParam(q('limit=1')), 1);
  t.equal(limitParam(q('limit=100')), 100);
  for (const raw of ['0', '101', '-1', '1.5', 'ten', '', ' 5']) {
    t.throws(() => limitParam(q(`limit=${encodeURIComponent(raw)}`)), bad(/limit must be an integer from 1 to 100/), raw);
  }
  t.equal(uuidParam(q(''), 'before'), null);
  t.throws(() => uuidParam(q('before='), 'before'), bad(/before must be a UUID/), 'an empty value is not absence');
  t.equal(uuidParam(q(`before=${ID}`), 'before'), ID.toLowerCase());
  t.throws(() => uuidParam(q('before=x'), 'before'), bad(/before must be a UUID/));
});

t.test('text refuses lone surrogates, which UTF-8 cannot store, and keeps real pairs', async (t) => {
  const body = (value: string) => Object.assign(Object.create(null), { name: value });
  t.throws(() => text(body('a\ud800b'), 'name', { max: 10 }), /not valid Unicode/);
  t.throws(() => text(body('\udc00'), 'name', { max: 10 }), /not valid Unicode/);
  t.equal(text(body('cat 🐱'), 'name', { max: 10 }), 'cat 🐱');
});

t.test('subsetOf refuses what is not a name with a 400, whatever it is (found by the fuzzer: a 500)', async (t) => {
  // As the JSON reader makes them: objects without a prototype, which String() cannot turn into text.
  const body = JSON.parse('{"deny": [[{}]], "allow": [null], "x": [{}]}', (_, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.assign(Object.create(null), v) : v,
  );
  for (const key of ['deny', 'allow', 'x']) {
    t.throws(() => subsetOf(body, key, ['a', 'b'] as const), bad(/unknown name/), key);
  }
});
