import t from 'tap';
import { linksOf, readPage, toEmbed } from '../../src/parts/messages/previews';

/** What a message's text and a page's head give a preview (src/parts/messages/previews.ts): pure parts. */
t.test('the links of a message: distinct, at most five, none in <…> or code, punctuation left out', async (t) => {
  const cases: [string, string[]][] = [
    ['see https://a.example/x.', ['https://a.example/x']],
    ['(https://a.example/wiki/Foo_(bar)) and https://b.example/?q=1,', ['https://a.example/wiki/Foo_(bar)', 'https://b.example/?q=1']],
    ['<https://a.example/> https://b.example', ['https://b.example/']],
    ['`https://a.example/` ```\nhttps://b.example/\n``` https://c.example', ['https://c.example/']],
    ['https://a.example https://a.example/ HTTP://A.EXAMPLE', ['https://a.example/', 'http://a.example/']],
    [Array.from({ length: 7 }, (_, i) => `https://s${i}.example/`).join(' '), [0, 1, 2, 3, 4].map((i) => `https://s${i}.example/`)],
    ['ftp://a.example javascript:alert(1) no links', []],
    ['[text](https://a.example/page)', ['https://a.example/page']],
  ];
  for (const [content, links] of cases) t.same(linksOf(content), links, content);
});

t.test('a page head: first value wins, entities decoded, oEmbed found, nothing from the body', async (t) => {
  const tags = readPage(
    `<head><meta property="og:title" content="A &amp; B &#x263a;"><meta property="og:title" content="second">
     <meta content='by content first' name=description><link rel="alternate" type="application/json+oembed" href="/o?u=1">
     <title>T</title></head><body><meta property="og:image" content="/from-body.png"></body>`,
    'https://site.example/page',
  );
  t.equal(tags.meta.get('og:title'), 'A & B ☺');
  t.equal(tags.meta.get('description'), 'by content first');
  t.equal(tags.oembed, 'https://site.example/o?u=1');
  t.equal(tags.title, 'T');
  t.notOk(tags.meta.has('og:image'));
  t.equal(toEmbed('https://site.example/page', readPage('<p>nothing</p>', 'https://site.example/'), null), null, 'a page that says nothing: no card');
  const long = toEmbed('https://site.example/', readPage(`<meta name="description" content="${'word '.repeat(200)}">`, 'https://site.example/'), null);
  t.ok([...(long?.description ?? '')].length <= 350, 'a long description is cut');
  const bad = toEmbed(
    'https://site.example/',
    readPage('<meta property="og:image" content="javascript:alert(1)"><title>x</title>', 'https://site.example/'),
    null,
  );
  t.notOk(bad?.thumbnail, 'an image URL that is not http(s) is dropped');
});
