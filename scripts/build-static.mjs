// Draws the installed app's icons from the favicon (src/core/http/icons.ts, into dist/icons/),
// then compresses the web app's files once, at build time, at the strongest settings (Brotli
// quality 11, gzip level 9): the server sends these bytes as they are (src/core/http/static.ts),
// so the minute of CPU they would cost per request is paid here once. Each copy is named by the hash of
// the file as served, so a copy left from another build is never sent for a changed file.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..');
const { readStaticFiles, COMPRESSED_DIR } = require(path.join(root, 'dist', 'core', 'http', 'static.js'));
const { writeIcons, ICONS_DIR } = require(path.join(root, 'dist', 'core', 'http', 'icons.js'));

// Below this a compressed copy saves less than a TCP packet.
const MIN_BYTES = 1024;
// Only copies that save at least a tenth are kept: PNGs and the like are compressed already.
const WORTH = 0.9;

fs.rmSync(ICONS_DIR, { recursive: true, force: true });
await writeIcons();
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
console.log(`static ${version}: ${files.size} files, ${kb(raw)}; compressed copies: brotli ${kb(br)}, gzip ${kb(gz)}`);
