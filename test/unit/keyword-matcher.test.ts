import fc from 'fast-check';
import t from 'tap';
import { compileKeywords, parseKeyword } from '../../src/rules/keyword-matcher';
import { distinctMentions, inviteTokenCandidates, hasDiscordInvite, linkHosts, withinDomain } from '../../src/rules/automod';

t.test("keywords match as Discord's do: whole words in any case, '*' for a prefix, a suffix or anywhere", async (t) => {
  const m = compileKeywords(['cat', 'dog*', '*fish', '*bird*', 'ice cream']);
  const cases: [string, string | null][] = [
    ['a CAT!', 'cat'],
    ['cat', 'cat'],
    ['category', null],
    ['bobcat', null],
    ['dogma', 'dog*'],
    ['hotdog', null],
    ['catfish', '*fish'],
    ['fishy', null],
    ['blackbirds', '*bird*'],
    ['I like ice cream', 'ice cream'],
    ['I like ice  cream', null],
    ['nice creamery', null],
    ['_cat_', null],
    ['chat: cat.', 'cat'],
    ['Кот cat', 'cat'],
    ['', null],
  ];
  for (const [text, expected] of cases) t.equal(m.find(text), expected, JSON.stringify(text));
  t.same(parseKeyword('*Ab*'), { source: '*Ab*', text: 'ab', wholeStart: false, wholeEnd: false });
});

t.test('the allow list exempts a match inside one of its own matches, and only that one', async (t) => {
  const m = compileKeywords(['*cat*'], ['category', 'catalog*']);
  t.equal(m.find('a category'), null, 'allowed');
  t.equal(m.find('the catalogue'), null, 'allowed by a prefix entry');
  t.equal(m.find('concatenate'), '*cat*', 'not allowed');
  t.equal(m.find('category concatenate'), '*cat*', 'one allowed word does not cover another');
});

t.test('many keywords sharing prefixes and suffixes (failure links)', async (t) => {
  const m = compileKeywords(['*he*', '*she*', '*his*', '*hers*', 'ushers']);
  t.equal(m.find('USHERS'), '*she*', 'the first match as the text is read');
  t.equal(compileKeywords(['abcd', '*bc*']).find('xabcy'), '*bc*');
  t.equal(compileKeywords(['aab']).find('aaab'), null, 'a whole word: not inside aaab');
  t.equal(compileKeywords(['*aab']).find('aaab'), '*aab', 'found through a failure link');
});

/** The same rules, one keyword at a time with indexOf: what the automaton must agree with. */
function naive(keywords: string[], allow: string[], content: string): boolean {
  const text = content.toLowerCase();
  const word = (i: number) => i >= 0 && i < text.length && /[\p{L}\p{N}\p{M}_]/u.test(text[i]);
  const spans = (list: string[]) =>
    list.flatMap((source) => {
      const k = parseKeyword(source);
      if (!k.text) return [];
      const found: [number, number][] = [];
      for (let i = text.indexOf(k.text); i !== -1; i = text.indexOf(k.text, i + 1)) {
        const end = i + k.text.length;
        if ((k.wholeStart && word(i - 1)) || (k.wholeEnd && word(end))) continue;
        found.push([i, end]);
      }
      return found;
    });
  const allowed = spans(allow);
  return spans(keywords).some(([s, e]) => !allowed.some(([as, ae]) => as <= s && e <= ae));
}

t.test('property: the automaton finds a keyword exactly when one keyword at a time would', async (t) => {
  const piece = fc.constantFrom('a', 'b', 'ab', 'ba', 'A', ' ', '.', 'é');
  const kw = fc
    .tuple(fc.boolean(), fc.array(fc.constantFrom('a', 'b', 'é'), { minLength: 1, maxLength: 4 }), fc.boolean())
    .map(([pre, letters, post]) => `${pre ? '*' : ''}${letters.join('')}${post ? '*' : ''}`);
  fc.assert(
    fc.property(fc.array(kw, { minLength: 1, maxLength: 8 }), fc.array(kw, { maxLength: 3 }), fc.array(piece, { maxLength: 30 }), (keywords, allow, parts) => {
      const content = parts.join('');
      const found = compileKeywords(keywords, allow).find(content);
      if ((found !== null) !== naive(keywords, allow, content)) return false;
      return found === null || naive([found], allow, content);
    }),
    { numRuns: 2000 },
  );
  t.pass('2000 random rule sets and texts agree');
});

t.test('links, invites and mentions as the other triggers read them', async (t) => {
  t.same(linkHosts('see https://Docs.Example.com:8080/x and http://user@evil.test/ and www.foo.org.'), ['docs.example.com', 'evil.test', 'www.foo.org']);
  t.same(linkHosts('no links: example.com'), []);
  t.ok(withinDomain('docs.example.com', 'example.com'));
  t.notOk(withinDomain('example.com.evil.test', 'example.com'));
  t.notOk(withinDomain('badexample.com', 'example.com'));
  t.ok(hasDiscordInvite('join discord.gg/abc'));
  t.ok(hasDiscordInvite('https://discordapp.com/invite/abc'));
  t.notOk(hasDiscordInvite('discord is great'));
  const token = 'AbCdEfGhIjKlMnOpQrStUvWx';
  t.same(inviteTokenCandidates(`go to https://chat.example/invites/${token} now`), [token]);
  t.same(inviteTokenCandidates('a short message'), []);
  t.equal(distinctMentions('@anna @Anna @bert @everyone mail@example.com'), 3, 'distinct names in any case; an email is none');
  t.equal(distinctMentions('nobody'), 0);
});
