import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** The content codings this server sends, best first: Brotli, then gzip. */
export type Coding = 'br' | 'gzip';
const CODINGS: readonly Coding[] = ['br', 'gzip'];

/**
 * The coding to answer with, from an `Accept-Encoding` header (RFC 9110 §12.5.3): the first of
 * ours the client accepts with a q-value above 0 (`*` counts for any not named), or null for
 * the body as it is. `available` narrows the choice to the codings a stored file has.
 */
export function chooseCoding(header: string | string[] | undefined, available: readonly Coding[] = CODINGS): Coding | null {
  if (typeof header !== 'string' || header === '') return null;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.trim().split('=');
      if (name === 'q') q = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value ?? '') ? Number(value) : 0;
    }
    weights.set(token.trim(), q);
  }
  const any = weights.get('*') ?? 0;
  for (const coding of CODINGS) {
    if (available.includes(coding) && (weights.get(coding) ?? any) > 0) return coding;
  }
  return null;
}

/**
 * JSON answers at least this large are compressed for a client that accepts it. Below it the
 * saving is a few hundred bytes, less than the work; above it a history page of 50 messages
 * (30 to 60 KB) shrinks to a quarter or less.
 */
export const COMPRESS_JSON_MIN_BYTES = 16 * 1024;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Compresses an answer off the event loop (in libuv's thread pool), at the fastest settings:
 * Brotli quality 1 and gzip level 1 already take a JSON answer to a quarter of its size, and
 * higher levels cost several times the CPU for a few per cent more.
 */
export function compressAnswer(body: Buffer, coding: Coding): Promise<Buffer> {
  return coding === 'br'
    ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } })
    : gzip(body, { level: 1 });
}
