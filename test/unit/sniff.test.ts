import t from 'tap';
import { SNIFF_BYTES, extensionOf, isInline, previewKindOf, servedType, sniff } from '../../src/core/sniff';

const bytes = (...parts: (number[] | string)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));
const riff = (kind: string) => bytes('RIFF', [36, 0, 0, 0], kind, 'fmt ', Array(16).fill(0));
const ftyp = (brand: string) => bytes([0, 0, 0, 0x18], 'ftyp', brand, [0, 0, 2, 0], 'isommp41', Array(16).fill(0));
const ebml = (docType: string) => bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84], docType, Array(16).fill(0));
const bmp = bytes('BM', [0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);

t.test('magic numbers decide media types, whatever the name says', async (t) => {
  const cases: [string, Buffer, string, string, string][] = [
    ['PNG', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), 'x.txt', 'image/png', 'image'],
    ['JPEG', bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10], 'JFIF'), 'x', 'image/jpeg', 'image'],
    ['GIF87a', bytes('GIF87a', [1, 0, 1, 0]), 'x.gif', 'image/gif', 'image'],
    ['GIF89a', bytes('GIF89a', [1, 0, 1, 0]), 'x.png', 'image/gif', 'image'],
    ['WebP', riff('WEBP'), 'x.webp', 'image/webp', 'image'],
    ['BMP', bmp, 'x.bmp', 'image/bmp', 'image'],
    ['WAV', riff('WAVE'), 'x.wav', 'audio/wav', 'audio'],
    ['MP3 with ID3', bytes('ID3', [4, 0, 0, 0, 0, 0, 0]), 'x.mp3', 'audio/mpeg', 'audio'],
    ['MP3 frame', bytes([0xff, 0xfb, 0x90, 0x64], Array(32).fill(0)), 'x', 'audio/mpeg', 'audio'],
    ['AAC in ADTS', bytes([0xff, 0xf1, 0x50, 0x80], Array(32).fill(0)), 'x', 'audio/aac', 'audio'],
    ['OGG Vorbis', bytes('OggS', [0, 2], Array(22).fill(0), [1], 'vorbis'), 'x.ogg', 'audio/ogg', 'audio'],
    ['OGG Theora', bytes('OggS', [0, 2], Array(22).fill(0), [0x80], 'theora'), 'x.ogg', 'video/ogg', 'video'],
    ['FLAC', bytes('fLaC', [0, 0, 0, 34]), 'x', 'audio/flac', 'audio'],
    ['MP4', ftyp('isom'), 'x.mp4', 'video/mp4', 'video'],
    ['MP4 brand, .m4a name', ftyp('isom'), 'x.m4a', 'audio/mp4', 'audio'],
    ['M4A brand', ftyp('M4A '), 'x.mp4', 'audio/mp4', 'audio'],
    ['QuickTime', ftyp('qt  '), 'x.mov', 'video/quicktime', 'video'],
    ['WebM', ebml('webm'), 'x.webm', 'video/webm', 'video'],
    ['WebM audio by name', ebml('webm'), 'x.weba', 'audio/webm', 'audio'],
    ['Matroska', ebml('matroska'), 'x.mkv', 'video/x-matroska', 'code'],
    ['PDF', bytes('%PDF-1.7\n'), 'x.pdf', 'application/pdf', 'code'],
    ['ZIP', bytes('PK', [3, 4, 20, 0]), 'x.zip', 'application/zip', 'code'],
    ['ZIP named docx', bytes('PK', [3, 4, 20, 0]), 'x.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'code'],
    ['gzip', bytes([0x1f, 0x8b, 8, 0]), 'x.gz', 'application/gzip', 'code'],
  ];
  for (const [what, head, name, type, kind] of cases) {
    t.same(sniff(head, name, true), { contentType: type, previewKind: kind }, what);
  }
});

t.test('text is recognised from its bytes, its kind from the name', async (t) => {
  const cases: [string, string, string, string][] = [
    ['plain text', 'notes', 'hello\n', 'text/plain; charset=utf-8'],
    ['Python', 'a.py', "print('hi')\n", 'text/x-python; charset=utf-8'],
    ['TypeScript', 'a.ts', 'const a = 1;\n', 'text/plain; charset=utf-8'],
    ['JSON', 'a.JSON', '{"a":1}', 'application/json; charset=utf-8'],
    ['Markdown', 'README.md', '# Title\n', 'text/markdown; charset=utf-8'],
    ['HTML', 'page.html', '<!doctype html><p>hi', 'text/html; charset=utf-8'],
    ['SVG', 'logo.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>', 'image/svg+xml; charset=utf-8'],
    ['HTML named .png', 'fake.png', '<html><script>alert(1)</script>', 'text/plain; charset=utf-8'],
    ['UTF-8 beyond ASCII', 'x', 'héllo wörld 名前 😀', 'text/plain; charset=utf-8'],
    ['an empty file', 'empty', '', 'text/plain; charset=utf-8'],
  ];
  for (const [what, name, content, type] of cases) {
    t.same(sniff(Buffer.from(content), name, true), { contentType: type, previewKind: 'code' }, what);
  }
});

t.test('bytes that are not text stay opaque, even with a text name', async (t) => {
  t.equal(sniff(bytes([0, 1, 2, 3]), 'x.txt', true).contentType, 'application/octet-stream', 'a NUL byte');
  t.equal(sniff(bytes([0xc3, 0x28]), 'x.bin', true).contentType, 'application/octet-stream', 'invalid UTF-8');
  t.equal(sniff(bytes('caf', [0xe9]), 'x.txt', true).contentType, 'text/plain', 'Latin-1 text with a text name, no charset claimed');
});

t.test('a UTF-8 character cut by the end of the sniffed bytes is still text when the file goes on', async (t) => {
  const head = Buffer.concat([Buffer.alloc(SNIFF_BYTES - 1, 'a'), Buffer.from('é').subarray(0, 1)]);
  t.equal(sniff(head, 'x', false).contentType, 'text/plain; charset=utf-8');
  t.equal(sniff(head, 'x', true).contentType, 'application/octet-stream', 'at the real end it is invalid');
});

t.test('"BM" alone is not a bitmap', async (t) => {
  t.equal(sniff(Buffer.from('BMW and Audi, a comparison of cars\n'), 'cars.txt', true).contentType, 'text/plain; charset=utf-8');
});

t.test('preview kinds and inline rendering follow the same allowlist', async (t) => {
  const cases: [string, string, boolean][] = [
    ['image/png', 'image', true],
    ['image/jpeg', 'image', true],
    ['image/gif', 'image', true],
    ['image/webp', 'image', true],
    ['audio/mpeg', 'audio', true],
    ['video/mp4', 'video', true],
    ['video/webm', 'video', true],
    ['image/svg+xml; charset=utf-8', 'code', false],
    ['text/html; charset=utf-8', 'code', false],
    ['application/xml', 'code', false],
    ['text/javascript', 'code', false],
    ['application/pdf', 'code', false],
    ['application/octet-stream', 'code', false],
  ];
  for (const [type, kind, inline] of cases) {
    t.equal(previewKindOf(type), kind, type);
    t.equal(isInline(type), inline, type);
  }
});

t.test('markup and script are served as plain text; other types as stored', async (t) => {
  const cases: [string, string][] = [
    ['text/html; charset=utf-8', 'text/plain; charset=utf-8'],
    ['image/svg+xml; charset=utf-8', 'text/plain; charset=utf-8'],
    ['application/xhtml+xml; charset=utf-8', 'text/plain; charset=utf-8'],
    ['application/xml', 'text/plain'],
    ['text/javascript; charset=utf-8', 'text/plain; charset=utf-8'],
    ['image/png', 'image/png'],
    ['application/pdf', 'application/pdf'],
    ['text/x-python; charset=utf-8', 'text/x-python; charset=utf-8'],
  ];
  for (const [stored, served] of cases) t.equal(servedType(stored), served, stored);
});

t.test('extensionOf', async (t) => {
  const cases: [string, string][] = [
    ['a.PNG', 'png'],
    ['archive.tar.gz', 'gz'],
    ['.bashrc', ''],
    ['noext', ''],
    ['trailing.', ''],
  ];
  for (const [name, ext] of cases) t.equal(extensionOf(name), ext, name);
});
