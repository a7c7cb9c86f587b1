import t from 'tap';
import { highlight, matchExpression, parseQuery, tokenize } from '../../src/core/search-query';

t.test('parsing: words, phrases, prefixes, exclusions', async (t) => {
  t.same(parseQuery('Cat  "hot DOG" caf* -fish -"big fish"'), [
    { tokens: ['cat'], prefix: false, exclude: false },
    { tokens: ['hot', 'dog'], prefix: false, exclude: false },
    { tokens: ['caf'], prefix: true, exclude: false },
    { tokens: ['fish'], prefix: false, exclude: true },
    { tokens: ['big', 'fish'], prefix: false, exclude: true },
  ]);
  t.same(parseQuery("don't"), [{ tokens: ['don', 't'], prefix: false, exclude: false }], 'punctuation inside a word: a phrase');
  t.same(parseQuery('NEAR(a, b)'), [
    { tokens: ['near', 'a'], prefix: false, exclude: false },
    { tokens: ['b'], prefix: false, exclude: false },
  ]);
  t.same(parseQuery('"fo ba"*'), [{ tokens: ['fo', 'ba'], prefix: true, exclude: false }]);
  t.same(parseQuery('Ünïcödé'), [{ tokens: ['unicode'], prefix: false, exclude: false }], 'diacritics and case folded');
});

t.test('the MATCH expression holds only quoted tokens and our own operators', async (t) => {
  t.equal(matchExpression(parseQuery('a "b c" d* -e -"f g"')), '("a" AND "b c" AND "d" *) NOT "e" NOT "f g"');
  t.equal(matchExpression(parseQuery('OR AND NOT')), '("or" AND "and" AND "not")');
  // Whatever the input, every token is letters and digits: no quote can close early.
  for (const q of ['a"b', '"a""b"', 'x:y', '^z', '{a}', 'a*b*', '(((x', '\\"']) {
    let expression = '';
    try {
      expression = matchExpression(parseQuery(q));
    } catch {
      continue;
    }
    t.match(expression, /^\((?:"[\p{L}\p{N}\p{Co} ]+"(?: \*)?(?: AND )?)+\)(?: NOT "[\p{L}\p{N}\p{Co} ]+"(?: \*)?)*$/u, `${q} -> ${expression}`);
  }
});

t.test('refusals', async (t) => {
  for (const [q, reason] of [
    [null, /must not be empty/],
    [' \t', /must not be empty/],
    ['a'.repeat(257), /at most 256/],
    ['"open', /unbalanced/],
    ['*', /nothing to search for/],
    ['-a -b', /nothing to search for/],
    ['?!', /nothing to search for/],
  ] as const) {
    t.throws(() => parseQuery(q), { status: 400, message: reason }, String(q).slice(0, 20));
  }
});

t.test('tokens carry UTF-16 offsets; highlight marks whole matches and merges overlaps', async (t) => {
  t.same(tokenize('😀 ab-Cd'), [
    { token: 'ab', start: 3, end: 5 },
    { token: 'cd', start: 6, end: 8 },
  ]);
  const text = 'Hot dog, hot DOGS, hotdog';
  t.same(highlight(text, parseQuery('"hot dog"')), [[0, 7]]);
  t.same(
    highlight(text, parseQuery('hot dog*')),
    [
      [0, 3],
      [4, 7],
      [9, 12],
      [13, 17],
    ],
    'separate words are separate ranges; hotdog is neither',
  );
  t.same(
    highlight('abc', [
      { tokens: ['abc'], prefix: false, exclude: false },
      { tokens: ['ab'], prefix: true, exclude: false },
    ]),
    [[0, 3]],
    'overlaps merge',
  );
  t.same(
    highlight(text, parseQuery('hot* -dog')),
    [
      [0, 3],
      [9, 12],
      [19, 25],
    ],
    'excluded words are not marked',
  );
});
