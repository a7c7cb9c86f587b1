import type fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { HttpError } from './errors';
import { isInline, servedType } from '../sniff';

/** Downloads may sit in the browser's private cache: an attachment id never changes content. */
export const DOWNLOAD_MAX_AGE_S = 24 * 60 * 60;

/** What a download needs to know of its attachment. */
export interface DownloadFile {
  id: string;
  name: string;
  content_type: string;
}

/**
 * Content-Disposition with a file name any browser reads safely (RFC 6266 section 4.3):
 * an ASCII `filename` for old clients, with quotes, backslashes and anything outside
 * printable ASCII replaced, and the exact name in `filename*` (RFC 8187 percent-encoding).
 */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Writes the download from an open file; takes ownership of `handle` (closed when done). */
export function serveFile(req: IncomingMessage, res: ServerResponse, row: DownloadFile, handle: fs.promises.FileHandle, size: number): void {
  const etag = `"${row.id}"`;
  const inline = isInline(row.content_type);
  // The file is untrusted content on our origin: even opened directly it may run nothing,
  // load nothing and be framed by no one.
  res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'; frame-ancestors 'none'");
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cache-Control', `private, max-age=${DOWNLOAD_MAX_AGE_S}`);
  res.setHeader('ETag', etag);
  res.setHeader('Accept-Ranges', 'bytes');

  if (etagMatches(req.headers['if-none-match'], etag)) {
    closeQuietly(handle);
    res.writeHead(304);
    res.end();
    return;
  }

  const ifRange = req.headers['if-range'];
  const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, size) : null;
  if (range === 'unsatisfiable') {
    closeQuietly(handle);
    throw new HttpError(416, 'range not satisfiable', { 'Content-Range': `bytes */${size}` });
  }
  const start = range ? range.start : 0;
  const end = range ? range.end : size - 1;
  res.writeHead(range ? 206 : 200, {
    'Content-Type': servedType(row.content_type),
    'Content-Disposition': contentDisposition(inline ? 'inline' : 'attachment', row.name),
    'Content-Length': end - start + 1,
    ...(range ? { 'Content-Range': `bytes ${start}-${end}/${size}` } : {}),
  });
  if (req.method === 'HEAD' || size === 0) {
    closeQuietly(handle);
    res.end();
    return;
  }
  const stream = handle.createReadStream({ start, end });
  pipeline(stream, res, () => {
    // A client that stops reading (seeking, closing the tab) is normal; the stream closes the file.
  });
}

/** If-None-Match against our one strong ETag (weak comparison, as RFC 9110 13.1.2 asks). */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

/**
 * One byte range of RFC 9110 section 14.1.2: `a-b`, `a-` or `-n`. A header that is absent,
 * malformed, in another unit or asks for several ranges is ignored (the whole file, 200):
 * multipart/byteranges is not worth its complexity for media seeking.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const found = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!found || (found[1] === '' && found[2] === '')) return null;
  if (found[1] === '') {
    const suffix = Number(found[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(found[1]);
  const end = found[2] === '' ? Infinity : Number(found[2]);
  if (end < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

/** Closes a file we only read; a failure to close it leaves nothing to answer for. */
function closeQuietly(handle: { close(): Promise<void> }): void {
  handle.close().catch(() => {});
}
