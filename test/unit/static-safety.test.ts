import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

/**
 * The page CSP (script-src 'self'; style-src 'self') blocks inline code, so inline code in
 * static/ would be dead at best. More to the point, user text must only ever reach the page
 * through textContent: any HTML sink is where a stored XSS would start.
 */
const root = path.join(__dirname, '..', '..', 'static');

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

const files = filesUnder(root).map((file) => ({ name: path.relative(root, file), text: fs.readFileSync(file, 'utf8') }));
const html = files.filter((f) => f.name.endsWith('.html'));
const js = files.filter((f) => f.name.endsWith('.js'));

/** Line numbers and lines where `pattern` matches, for a readable failure. */
function hits(text: string, pattern: RegExp): string[] {
  const flags = pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`;
  const global = new RegExp(pattern.source, flags);
  return [...text.matchAll(global)].map((m) => {
    const line = text.slice(0, m.index).split('\n').length;
    return `line ${line}: ${m[0].slice(0, 80)}`;
  });
}

t.test('static/ holds pages and scripts to check', async (t) => {
  t.ok(html.length > 0, `${html.length} HTML files`);
  t.ok(js.length > 0, `${js.length} JS files`);
});

const htmlRules: [string, RegExp][] = [
  ['an inline <script> with content (only <script src=...></script>)', /<script\b(?![^>]*\bsrc=)[^>]*>|<script\b[^>]*>\s*[^<\s][\s\S]*?<\/script>/i],
  ['an on...= event handler attribute', /<[^>]*\son[a-z]+\s*=/i],
  ['a style= attribute', /<[^>]*\sstyle\s*=/i],
  ['a <style> block', /<style\b/i],
  ['a javascript: URL', /javascript:/i],
  ['a script, image or form target on another site', /\s(?:src|action)\s*=\s*["']?(?:https?:)?\/\//i],
  ['a stylesheet from another site', /<link\b[^>]*\shref\s*=\s*["']?(?:https?:)?\/\//i],
];

for (const file of html) {
  t.test(`${file.name} has no inline code`, async (t) => {
    for (const [what, pattern] of htmlRules) t.same(hits(file.text, pattern), [], `no ${what}`);
  });
}

const jsRules: [string, RegExp][] = [
  ['innerHTML', /\binnerHTML\b/],
  ['outerHTML', /\bouterHTML\b/],
  ['insertAdjacentHTML', /\binsertAdjacentHTML\b/],
  ['document.write', /\bdocument\.write(?:ln)?\b/],
  ['eval or new Function', /\beval\s*\(|\bnew\s+Function\s*\(/],
  ['a string timer (setTimeout("..."))', /\bset(?:Timeout|Interval)\s*\(\s*["'`]/],
  ['an inline style or handler set as an attribute', /setAttribute\s*\(\s*["'`](?:style|on[a-z]+)["'`]/i],
  ['a javascript: URL', /javascript:/i],
  ['createContextualFragment or DOMParser (HTML parsing)', /\bcreateContextualFragment\b|\bDOMParser\b/],
];

/**
 * The one deliberate HTML sink: message text rendered by markdown-it (configured with
 * `html: false`) and sanitized by DOMPurify into a DocumentFragment, in static/js/markdown.js.
 * A sanitize call anywhere else, or a second one there, fails like any other sink.
 */
const SANITIZE = /\bsanitize\s*\(/;
const SANITIZER_FILE = path.join('js', 'markdown.js');

for (const file of js) {
  t.test(`${file.name} never inserts HTML`, async (t) => {
    for (const [what, pattern] of jsRules) t.same(hits(file.text, pattern), [], `no ${what}`);
    const sanitizes = hits(file.text, SANITIZE);
    if (file.name === SANITIZER_FILE) t.equal(sanitizes.length, 1, 'exactly one DOMPurify.sanitize call: the message body');
    else t.same(sanitizes, [], 'no HTML sanitized (and so parsed) outside js/markdown.js');
  });
}

t.test('the one HTML sink is markdown-it without raw HTML, through DOMPurify, as a fragment', async (t) => {
  const file = js.find((f) => f.name === SANITIZER_FILE);
  t.ok(file, `${SANITIZER_FILE} exists`);
  if (!file) return;
  t.match(file.text, /new MarkdownIt\([^)]*\bhtml:\s*false/, 'markdown-it is configured with html: false');
  t.match(file.text, /\blinkify:\s*true/, 'and linkify: true');
  t.match(file.text, /DOMPurify\.sanitize\(md\.render\(/, 'what is sanitized is the markdown-it output');
  t.match(file.text, /RETURN_DOM_FRAGMENT:\s*true/, 'DOMPurify returns a fragment: the sanitized HTML is never parsed again');
  t.match(file.text, /rel', 'noopener noreferrer nofollow'/, 'links get rel="noopener noreferrer nofollow"');
  t.same(hits(file.text, /\bimport\b[^;]*from\s+['"](?!\/vendor\/|\.\/)/), [], 'libraries come from our own /vendor/ paths only');
});

for (const file of files.filter((f) => f.name.endsWith('.css'))) {
  t.test(`${file.name} loads nothing from elsewhere`, async (t) => {
    t.same(hits(file.text, /@import|url\(\s*["']?(?:https?:)?\/\//i), [], 'no @import or remote url()');
  });
}

t.test('the rules catch what they are meant to catch', async (t) => {
  const badHtml = [
    '<script>alert(1)</script>',
    '<script type="module">\n  go()\n</script>',
    '<script src="/js/a.js">alert(1)</script>',
    '<button onclick="go()">',
    '<body\n  onload=go()>',
    '<p style="color:red">',
    '<style>p{}</style>',
    '<a href="javascript:go()">',
    '<script src="https://cdn.example/x.js"></script>',
    '<link rel="stylesheet" href="//cdn.example/x.css">',
  ];
  for (const sample of badHtml)
    t.ok(
      htmlRules.some(([, p]) => p.test(sample)),
      `caught: ${sample}`,
    );
  const fine = ['<script src="/js/home.js" defer></script>', '<a href="https://example.com/docs">docs</a>', '<p class="note">one</p>'];
  for (const sample of fine)
    t.notOk(
      htmlRules.some(([, p]) => p.test(sample)),
      `allowed: ${sample}`,
    );
  const badJs = [
    'el.innerHTML = name;',
    'el.outerHTML = x',
    "el.insertAdjacentHTML('beforeend', x)",
    'document.write(x)',
    'eval(x)',
    'new Function(x)',
    "setTimeout('go()', 1)",
    "el.setAttribute('onclick', x)",
    "el.setAttribute('style', x)",
  ];
  for (const sample of badJs)
    t.ok(
      jsRules.some(([, p]) => p.test(sample)),
      `caught: ${sample}`,
    );
  t.ok(SANITIZE.test('body.append(DOMPurify.sanitize(html, config))'), 'caught: a sanitize call (allowed once, in js/markdown.js)');
  t.notOk(
    jsRules.some(([, p]) => p.test('el.textContent = name; setTimeout(go, 1)')),
    'textContent and function timers are fine',
  );
});
