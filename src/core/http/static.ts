import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PAGE_CSP } from './respond';
import { type Coding, chooseCoding } from './encoding';
import { ICONS_DIR } from './icons';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
};

/** What the build makes (scripts/build-static.mjs), served as if it were in static/: URL prefix → directory. */
const BUILT_DIRS: Record<string, string> = { '/icons': ICONS_DIR };

/**
 * Front-end libraries, served from our own origin straight out of node_modules (pinned by
 * package-lock.json), so neither a CDN nor a copy step is needed. An explicit allowlist: a URL
 * path maps to one file resolved at start-up, and nothing else under node_modules is reachable.
 * Each entry: [package entry to resolve, file relative to the directory of that entry].
 */
export const VENDOR_FILES: Record<string, [string, string] | [string, string, 'commonjs']> = {
  // markdown-it's self-contained browser ES module (its dependencies bundled in).
  '/vendor/markdown-it.js': ['markdown-it/package.json', 'dist/browser/markdown-it.esm.min.mjs'],
  // DOMPurify's minified build (a third the size of its unminified ES module), served as an ES
  // module: it fills the CommonJS `module.exports` it finds, which becomes the default export.
  '/vendor/purify.js': ['dompurify', 'purify.min.js', 'commonjs'],
  // Emojibase's compact English data set (the one the server checks shortcodes with).
  '/vendor/emoji.json': ['emojibase-data/en/compact.json', 'compact.json'],
  // qrcode's browser build (one classic script defining `QRCode`, its one dependency bundled
  // in): the account page draws the two-factor QR code with it. 1.5.1 is the newest 1.x that
  // publishes build/ (soldair/node-qrcode#394).
  '/vendor/qrcode.js': ['qrcode/package.json', 'build/qrcode.js'],
};

/**
 * Addresses that serve another page. /account/warnings is where the account page lived before
 * it grew into /account; the server's suspension answers and older links still name it.
 */
const PAGE_ALIASES: Record<string, string> = {
  '/account/warnings': '/account',
};

function vendorPath(entry: string, relative: string): string {
  return path.join(path.dirname(require.resolve(entry)), relative);
}

/** The URL prefix of versioned assets: `/a/<version>/js/app.js` is `/js/app.js` of that version. */
const VERSIONED = /^\/a\/([0-9a-f]{12})(\/.+)$/;

/**
 * Absolute asset addresses inside pages, scripts and style sheets: `"/js/app.js"`,
 * `'/vendor/purify.js'`, `url(/favicon.svg)`. Each one that names a file is rewritten to its
 * versioned address; relative imports (`./api.js`) follow by themselves.
 */
const ASSET_REFERENCE = /(["'(])(\/(?:css|js|vendor|icons)\/[A-Za-z0-9._/-]+|\/favicon\.svg)(?=["')])/g;
const REWRITTEN = new Set(['.html', '.js', '.css']);
/** Relative addresses in scripts and style sheets: a module imported on first use ("./place-menu.js"), a style sheet addressed from import.meta.url ("../css/app.css"). */
const RELATIVE_REFERENCE = /(["'])(\.{1,2}\/[A-Za-z0-9._/-]+\.(?:js|css|json|svg|png))\1/g;

/** The service worker (static/sw.js): the server writes its BUILD line, the version and the app shell. */
const SERVICE_WORKER = '/sw.js';
const SERVICE_WORKER_BUILD = /^const BUILD = .*;$/m;
/** The page the app shell starts from, and the address the service worker keeps it under. */
const APP_PAGE = '/index.html';

/** A file as the server holds it: the body, and the compressed forms the build made of it. */
export interface StaticFile {
  body: Buffer;
  type: string;
  /** The SHA-256 of the body (base64url, 22 characters): the strong ETag, and the build's file name. */
  hash: string;
  /** What `make build` compressed (scripts/build-static.mjs), by coding. */
  encoded: Partial<Record<Coding, Buffer>>;
}

const hashOf = (body: Buffer) => crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22);

/**
 * Where `make build` leaves the served copies of static/'s scripts, style sheets and pages
 * without their comments and layout (scripts/build-static.mjs), each named by the hash of its
 * source and its extension: a file edited since the build has no copy, and goes as it is.
 */
export const MINIFIED_DIR = path.join(__dirname, '..', '..', '..', 'dist', 'static-minified');
/** The kinds of file the build makes smaller; the service worker is served as written (its BUILD line is rewritten here). */
export const MINIFIED_TYPES = new Set(['.js', '.css', '.html']);
/** The name of a file's smaller copy: the hash of its source, and its extension. */
export const minifiedName = (urlPath: string, source: Buffer) => `${hashOf(source)}${path.extname(urlPath)}`;

/**
 * Every file served from static/ (and the vendor allowlist) by URL path, as it is sent: with
 * absolute asset addresses rewritten to `/a/<version>/…`, where the version is a hash of every
 * asset together. A page is never cached without asking (`no-cache` with a strong ETag); what
 * it loads under its version never changes, so it is cached for a year as `immutable`. A change
 * to any asset changes the version, and the next page load fetches the new files.
 */
export function readStaticFiles(
  root: string,
  built: Record<string, string> = BUILT_DIRS,
  minifiedDir = MINIFIED_DIR,
): { files: Map<string, StaticFile>; version: string } {
  const raw = new Map<string, Buffer>();
  /** The build's smaller copy of a file of static/, when it made one from this very source. */
  const served = (urlPath: string, source: Buffer) => {
    if (!MINIFIED_TYPES.has(path.extname(urlPath)) || urlPath === SERVICE_WORKER) return source;
    const copy = path.join(minifiedDir, minifiedName(urlPath, source));
    return fs.existsSync(copy) ? fs.readFileSync(copy) : source;
  };
  const walk = (dir: string, prefix: string) => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      const urlPath = `${prefix}/${entry.name}`;
      if (entry.isDirectory()) walk(full, urlPath);
      else raw.set(urlPath, served(urlPath, fs.readFileSync(full)));
    }
  };
  walk(root, '');
  for (const [prefix, dir] of Object.entries(built)) walk(dir, prefix);
  for (const [urlPath, [entry, relative, wrap]] of Object.entries(VENDOR_FILES)) {
    // A source-map comment would make devtools ask for a file we do not serve.
    const code = fs.readFileSync(vendorPath(entry, relative), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    raw.set(urlPath, Buffer.from(wrap ? `const module = { exports: {} }, exports = module.exports;\n${code}\nexport default module.exports;\n` : code));
  }
  const all = crypto.createHash('sha256');
  for (const urlPath of [...raw.keys()].sort()) all.update(urlPath).update('\0').update(raw.get(urlPath)!).update('\0');
  const version = all.digest('hex').slice(0, 12);
  const files = new Map<string, StaticFile>();
  for (const [urlPath, original] of raw) {
    const ext = path.extname(urlPath);
    let text = REWRITTEN.has(ext)
      ? original.toString('utf8').replace(ASSET_REFERENCE, (whole, open: string, target: string) => (raw.has(target) ? `${open}/a/${version}${target}` : whole))
      : null;
    if (urlPath === SERVICE_WORKER && text !== null) text = serviceWorkerBuild(text, version, appShell(raw));
    const body = text === null ? original : Buffer.from(text);
    files.set(urlPath, { body, type: TYPES[ext] ?? 'application/octet-stream', hash: hashOf(body), encoded: {} });
  }
  return { files, version };
}

/**
 * The app shell: the app page and every file it can load, however late (a module imported on
 * first use, the style sheet the import page lends, the emoji data), found by following the
 * addresses in the page, its scripts and its style sheets from the page itself. The service
 * worker keeps all of them under one version, so an app started offline, or started before an
 * upgrade it has not taken yet, never asks the server for a file of another version.
 */
export function appShell(raw: Map<string, Buffer>): string[] {
  const found = new Set<string>();
  const visit = (urlPath: string) => {
    if (found.has(urlPath) || !raw.has(urlPath)) return;
    found.add(urlPath);
    if (!REWRITTEN.has(path.extname(urlPath))) return;
    const text = raw.get(urlPath)!.toString('utf8');
    for (const [, , target] of text.matchAll(ASSET_REFERENCE)) visit(target);
    for (const [, , relative] of text.matchAll(RELATIVE_REFERENCE)) visit(path.posix.join(path.posix.dirname(urlPath), relative));
  };
  visit(APP_PAGE);
  return [...found].sort();
}

/** static/sw.js with its BUILD line written: the version, and the shell's addresses under it (the page as `/`). */
function serviceWorkerBuild(source: string, version: string, shell: string[]): string {
  if (!SERVICE_WORKER_BUILD.test(source)) throw new Error(`${SERVICE_WORKER} has no "const BUILD = …;" line for the server to write`);
  const addresses = ['/', ...shell.filter((urlPath) => urlPath !== APP_PAGE).map((urlPath) => `/a/${version}${urlPath}`)];
  return source.replace(SERVICE_WORKER_BUILD, () => `const BUILD = ${JSON.stringify({ version, shell: addresses })};`);
}

/** Where `make build` leaves the compressed copies, named `<hash>.br` and `<hash>.gz`. */
export const COMPRESSED_DIR = path.join(__dirname, '..', '..', '..', 'dist', 'static-compressed');

export interface StaticFiles {
  /** Serves the file for a URL path if there is one; false otherwise. */
  serve(urlPath: string, req: IncomingMessage, res: ServerResponse): boolean;
  /** Serves a named page (for routes like /invites/:token that answer with a page). */
  page(file: string, res: ServerResponse, status?: number): void;
}

/**
 * static/ is read once at start-up into a map: a request is a map lookup, never a path
 * joined from user input, so no `..` can escape. Dotfiles are skipped. `x.html` is also
 * served at `x`, and `dir/index.html` at `dir/`. A file the build compressed is sent as
 * Brotli or gzip to a client that accepts it; one it did not (static/ edited since) goes as it is.
 */
export function indexStaticFiles(root: string, compressedDir = COMPRESSED_DIR): StaticFiles {
  const { files, version } = readStaticFiles(root);
  for (const file of files.values()) {
    for (const coding of ['br', 'gz'] as const) {
      const stored = path.join(compressedDir, `${file.hash}.${coding}`);
      if (fs.existsSync(stored)) file.encoded[coding === 'gz' ? 'gzip' : 'br'] = fs.readFileSync(stored);
    }
  }
  for (const [urlPath, file] of [...files]) {
    if (urlPath.endsWith('.html')) {
      files.set(urlPath.slice(0, -5), file);
      if (urlPath.endsWith('/index.html')) files.set(urlPath.slice(0, -'index.html'.length), file);
    }
  }
  for (const [alias, target] of Object.entries(PAGE_ALIASES)) {
    const file = files.get(target);
    if (file) files.set(alias, file);
  }

  const write = (file: StaticFile, req: IncomingMessage | null, res: ServerResponse, cacheControl: string, status = 200) => {
    if (file.type.startsWith('text/html')) res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Cache-Control', cacheControl);
    const available = Object.keys(file.encoded) as Coding[];
    if (available.length) res.setHeader('Vary', 'Accept-Encoding');
    const coding = req && available.length ? chooseCoding(req.headers['accept-encoding'], available) : null;
    // A strong ETag names one representation: the compressed forms have their own.
    const etag = `"${file.hash}${coding ? `-${coding}` : ''}"`;
    res.setHeader('ETag', etag);
    if (req && req.headers['if-none-match'] === etag) {
      res.writeHead(304);
      res.end();
      return;
    }
    const body = coding ? file.encoded[coding]! : file.body;
    res.writeHead(status, { 'Content-Type': file.type, 'Content-Length': body.length, ...(coding && { 'Content-Encoding': coding }) });
    res.end(req?.method === 'HEAD' ? undefined : body);
  };

  return {
    serve(urlPath, req, res) {
      const versioned = VERSIONED.exec(urlPath);
      const file = files.get(versioned ? versioned[2] : urlPath);
      // Under the current version an asset never changes. Under another one (a page loaded before
      // an upgrade asking for more) it is today's file, so it must not be kept as that version's.
      if (!file || (versioned && file.type.startsWith('text/html'))) return false;
      // A script or style sheet is never a document: a CSP or Referrer-Policy on it does nothing
      // (its page's own apply), and the app page loads fifty of them.
      if (versioned && /^text\/(?:javascript|css)/.test(file.type)) {
        res.removeHeader('Content-Security-Policy');
        res.removeHeader('Referrer-Policy');
      }
      write(file, req, res, versioned?.[1] === version ? 'public, max-age=31536000, immutable' : 'no-cache');
      return true;
    },
    page(name, res, status = 200) {
      const file = files.get(`/${name}`);
      if (!file) throw new Error(`static page ${name} is missing`);
      write(file, null, res, 'no-cache', status);
    },
  };
}
