import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PAGE_CSP } from './http/respond';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

export interface StaticFiles {
  /** Serves the file for a URL path if there is one; false otherwise. */
  serve(urlPath: string, req: IncomingMessage, res: ServerResponse): boolean;
  /** Serves a named page (for routes like /invites/:token that answer with a page). */
  page(file: string, res: ServerResponse): void;
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

  const write = (file: StaticFile, req: IncomingMessage | null, res: ServerResponse) => {
    if (file.type.startsWith('text/html')) res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', file.etag);
    if (req && req.headers['if-none-match'] === file.etag) {
      res.writeHead(304);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length });
    res.end(req?.method === 'HEAD' ? undefined : file.body);
  };

  return {
    serve(urlPath, req, res) {
      const file = files.get(urlPath);
      if (!file) return false;
      write(file, req, res);
      return true;
    },
    page(name, res) {
      const file = files.get(`/${name}`);
      if (!file) throw new Error(`static page ${name} is missing`);
      write(file, null, res);
    },
  };
}
