import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PAGE_CSP } from './respond';

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

/**
 * Front-end libraries, served from our own origin straight out of node_modules (pinned by
 * package-lock.json), so neither a CDN nor a copy step is needed. An explicit allowlist: a URL
 * path maps to one file resolved at start-up, and nothing else under node_modules is reachable.
 * Each entry: [package entry to resolve, file relative to the directory of that entry].
 */
export const VENDOR_FILES: Record<string, [string, string]> = {
  // markdown-it's self-contained browser ES module (its dependencies bundled in).
  '/vendor/markdown-it.js': ['markdown-it/package.json', 'dist/browser/markdown-it.esm.min.mjs'],
  // DOMPurify's ES module build.
  '/vendor/purify.js': ['dompurify', 'purify.es.mjs'],
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

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

export interface StaticFiles {
  /** Serves the file for a URL path if there is one; false otherwise. */
  serve(urlPath: string, req: IncomingMessage, res: ServerResponse): boolean;
  /** Serves a named page (for routes like /invites/:token that answer with a page). */
  page(file: string, res: ServerResponse, status?: number): void;
}

/**
 * static/ is read once at start-up into a map: a request is a map lookup, never a path
 * joined from user input, so no `..` can escape. Dotfiles are skipped. `x.html` is also
 * served at `x`, and `dir/index.html` at `dir/`.
 */
export function indexStaticFiles(root: string): StaticFiles {
  const files = new Map<string, StaticFile>();
  const walk = (dir: string, prefix: string) => {
    if (!fs.existsSync(dir)) return;
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      const urlPath = `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        walk(full, urlPath);
        continue;
      }
      const ext = path.extname(entry.name);
      const body = fs.readFileSync(full);
      const file = {
        body,
        type: TYPES[ext] ?? 'application/octet-stream',
        etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      };
      files.set(urlPath, file);
      if (ext === '.html') {
        files.set(urlPath.slice(0, -5), file);
        if (entry.name === 'index.html') files.set(`${prefix}/`, file);
      }
    }
  };
  walk(root, '');
  for (const [alias, target] of Object.entries(PAGE_ALIASES)) {
    const file = files.get(target);
    if (file) files.set(alias, file);
  }
  for (const [urlPath, [entry, relative]] of Object.entries(VENDOR_FILES)) {
    const full = vendorPath(entry, relative);
    // A source-map comment would make devtools ask for a file we do not serve.
    const body = Buffer.from(fs.readFileSync(full, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
    files.set(urlPath, {
      body,
      type: TYPES[path.extname(urlPath)] ?? 'application/octet-stream',
      etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    });
  }

  const write = (file: StaticFile, req: IncomingMessage | null, res: ServerResponse, status = 200) => {
    if (file.type.startsWith('text/html')) res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', file.etag);
    if (req && req.headers['if-none-match'] === file.etag) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.writeHead(status, { 'Content-Type': file.type, 'Content-Length': file.body.length });
    res.end(req?.method === 'HEAD' ? undefined : file.body);
  };

  return {
    serve(urlPath, req, res) {
      const file = files.get(urlPath);
      if (!file) return false;
      write(file, req, res);
      return true;
    },
    page(name, res, status = 200) {
      const file = files.get(`/${name}`);
      if (!file) throw new Error(`static page ${name} is missing`);
      write(file, null, res, status);
    },
  };
}
