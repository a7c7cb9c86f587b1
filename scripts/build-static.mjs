// Draws the installed app's icons from the favicon (src/core/http/icons.ts, into dist/icons/),
// makes the served copies of static/'s scripts, style sheets and pages without their comments and
// layout (into dist/static-minified/: docs/performance.md "Page weight"), then compresses the web app's files once, at build time, at the strongest settings (Brotli
// quality 11, gzip level 9): the server sends these bytes as they are (src/core/http/static.ts),
// so the minute of CPU they would cost per request is paid here once. Each copy is named by the hash of
// the file as served, so a copy left from another build is never sent for a changed file.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { minify } from 'terser';

const require = createRequire(import.meta.url);
const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const { readStaticFiles, COMPRESSED_DIR, MINIFIED_DIR, MINIFIED_TYPES, minifiedName } = require(path.join(root, 'dist', 'core', 'http', 'static.js'));
const { writeIcons, ICONS_DIR } = require(path.join(root, 'dist', 'core', 'http', 'icons.js'));

// Below this a compressed copy saves less than a TCP packet.
const MIN_BYTES = 1024;
// Only copies that save at least a tenth are kept: PNGs and the like are compressed already.
const WORTH = 0.9;

fs.rmSync(ICONS_DIR, { recursive: true, force: true });
await writeIcons();

// What a reader of the served files can do without: comments and indentation. Scripts go through
// terser with neither compression nor renaming, one statement a line (`semicolons: false`) and
// the quotes kept: module files stay module files, with every name as written, so a stack trace
// or the browser's debugger still reads as the source. Style sheets and pages lose their
// comments and the indentation of each line (a <pre> or <textarea> is kept as written).
const smaller = {
  '.js': async (text) =>
    (await minify(text, { module: true, compress: false, mangle: false, format: { comments: false, semicolons: false, quote_style: 3 } })).code + '\n',
  '.css': async (text) => trimLines(text.replace(/\/\*[\s\S]*?\*\//g, '')),
  '.html': async (text) =>
    text
      .replace(/<!--[\s\S]*?-->/g, '')
      .split(/(<(?:pre|textarea)\b[\s\S]*?<\/(?:pre|textarea)>)/)
      .map((part, i) => (i % 2 ? part : trimLines(part)))
      .join(''),
};
function trimLines(text) {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join('\n');
}
fs.rmSync(MINIFIED_DIR, { recursive: true, force: true });
fs.mkdirSync(MINIFIED_DIR, { recursive: true });
let source = 0;
let minified = 0;
const walk = async (dir, prefix) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const urlPath = `${prefix}/${entry.name}`;
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory()) await walk(full, urlPath);
    else if (MINIFIED_TYPES.has(path.extname(entry.name)) && urlPath !== '/sw.js') {
      const body = fs.readFileSync(full);
      const made = Buffer.from(await smaller[path.extname(entry.name)](body.toString('utf8')));
      fs.writeFileSync(path.join(MINIFIED_DIR, minifiedName(urlPath, body)), made);
      source += body.length;
      minified += made.length;
    }
  }
};
await walk(path.join(root, 'static'), '');
const { files, version } = readStaticFiles(path.join(root, 'static'));
fs.rmSync(COMPRESSED_DIR, { recursive: true, force: true });
fs.mkdirSync(COMPRESSED_DIR, { recursive: true });
let raw = 0;
let br = 0;
let gz = 0;
for (const file of files.values()) {
  raw += file.body.length;
  if (file.body.length < MIN_BYTES) continue;
  const brotli = zlib.brotliCompressSync(file.body, {
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: file.body.length },
  });
  const gzip = zlib.gzipSync(file.body, { level: 9 });
  if (brotli.length <= file.body.length * WORTH) {
    fs.writeFileSync(path.join(COMPRESSED_DIR, `${file.hash}.br`), brotli);
    br += brotli.length;
  }
  if (gzip.length <= file.body.length * WORTH) {
    fs.writeFileSync(path.join(COMPRESSED_DIR, `${file.hash}.gz`), gzip);
    gz += gzip.length;
  }
}
const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(
  `static ${version}: ${files.size} files, ${kb(raw)} (scripts, style sheets and pages ${kb(source)} as written, ${kb(minified)} as served); compressed copies: brotli ${kb(br)}, gzip ${kb(gz)}`,
);
