import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorShape, Log, Reply } from '../types';
import { HttpError } from './errors';
import { COMPRESS_JSON_MIN_BYTES, chooseCoding, compressAnswer } from './encoding';

export const json = (body: unknown, status = 200): Reply => ({ kind: 'json', status, body });
export const created = (body: unknown): Reply => ({ kind: 'json', status: 201, body });
export const noContent = (): Reply => ({ kind: 'empty', status: 204 });
export const redirect = (location: string): Reply => ({ kind: 'redirect', location });
export const HANDLED: Reply = { kind: 'handled' };

/** Headers on every response. Pages and uploads add their own stricter CSP on top. */
export function setBaseHeaders(res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Content-Security-Policy', "frame-ancestors 'none'");
  res.setHeader('Cache-Control', 'no-store');
}

/**
 * A WebP we made (an avatar, a proxied image): its bytes with `cacheControl`, sandboxed like an
 * upload so it can never act as a document. HEAD gets the headers only.
 */
export function sendWebp(req: IncomingMessage, res: ServerResponse, body: Buffer, cacheControl: string): Reply {
  res.writeHead(200, {
    'Content-Type': 'image/webp',
    'Content-Length': body.length,
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "sandbox; default-src 'none'",
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return HANDLED;
}

/** The CSP of every HTML page: no inline script, nothing from elsewhere. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The one request log line (bench/history.ts reads it): `METHOD /path STATUS 1.2ms`, never a query. */
export const requestLogLine = (method: string, path: string, outcome: string | number, startedMs: number): string =>
  `${method} ${path} ${outcome} ${(performance.now() - startedMs).toFixed(1)}ms`;

/**
 * Writes a handler's reply. A JSON body of 16 KiB or more goes compressed (Brotli or gzip) to a
 * client whose `acceptEncoding` allows it; `Vary` says the answer depends on that header.
 */
export async function send(res: ServerResponse, reply: Reply, head = false, acceptEncoding?: string | string[]): Promise<void> {
  if (reply.kind === 'handled' || res.headersSent) return;
  if (reply.kind === 'redirect') {
    res.writeHead(303, { Location: reply.location, 'Content-Length': 0 });
    res.end();
    return;
  }
  if (reply.kind === 'empty') {
    res.writeHead(reply.status);
    res.end();
    return;
  }
  let body: Buffer = Buffer.from(JSON.stringify(reply.body));
  const headers: Record<string, string | number> = { 'Content-Type': 'application/json; charset=utf-8' };
  if (body.length >= COMPRESS_JSON_MIN_BYTES) {
    headers.Vary = 'Accept-Encoding';
    const coding = chooseCoding(acceptEncoding);
    if (coding) {
      body = await compressAnswer(body, coding);
      headers['Content-Encoding'] = coding;
    }
  }
  if (res.headersSent || res.destroyed) return;
  headers['Content-Length'] = body.length;
  res.writeHead(reply.status, headers);
  res.end(head ? undefined : body);
}

/**
 * Writes a JSON array of every item `pages` yields, a page at a time, waiting for the client
 * to take each before reading the next: an array of any length costs one page of memory.
 */
export async function streamJsonArray(res: ServerResponse, pages: Iterable<unknown[]>, head = false): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
  if (head) return void res.end();
  let first = true;
  res.write('[');
  for (const page of pages) {
    if (page.length === 0) continue;
    const chunk = page.map((item) => JSON.stringify(item)).join(',');
    const more = res.write(first ? chunk : `,${chunk}`);
    first = false;
    if (!more) await new Promise((resolve) => res.once('drain', resolve));
    if (res.destroyed) return;
  }
  res.end(']');
}

export function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = Buffer.from(text.endsWith('\n') ? text : `${text}\n`);
  res.writeHead(status, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}

/**
 * The one mapping from a thrown value to an error answer (the spec's plain-text format), for
 * requests and WebSocket upgrades alike: our HttpError as it says, a UNIQUE violation 409,
 * anything else a generic 500 logged once with its stack.
 */
export function toHttpError(err: unknown, log: Log): HttpError {
  if (err instanceof HttpError) return err;
  if (isSqliteConstraint(err, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteConstraint(err, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
    return new HttpError(409, 'that already exists');
  }
  log(`unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
  return new HttpError(500, 'internal server error');
}

/** Answers any thrown value, as plain text or (on Discord's paths) as Discord's JSON error; returns the status sent. */
export function sendError(res: ServerResponse, err: unknown, log: Log, shape: ErrorShape = 'text'): number {
  const error = toHttpError(err, log);
  if (shape === 'discord') sendDiscordError(res, error);
  else sendText(res, error.status, error.message, error.headers);
  return error.status;
}

/**
 * Discord's JSON error codes (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json),
 * by the error's own code first, then by status; 0 is Discord's "general error".
 */
const DISCORD_CODE_BY_NAME: Record<string, number> = { unknown_webhook: 10015, unknown_message: 10008, unknown_channel: 10003 };
const DISCORD_CODE_BY_STATUS: Record<number, number> = { 400: 50035, 401: 50027, 403: 50013, 404: 10015, 413: 40005 };

/**
 * An error as Discord writes it, `{"code", "message"}` (a 429 adds `retry_after` in seconds and
 * `global`), so that Discord's libraries report it rather than fail to read it. Only on the
 * routes that copy Discord's paths: the rest of the API keeps the spec's plain text.
 */
function sendDiscordError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const code = (error.code && DISCORD_CODE_BY_NAME[error.code]) ?? DISCORD_CODE_BY_STATUS[error.status] ?? 0;
  const retryAfter = error.headers['Retry-After'];
  const body = Buffer.from(
    JSON.stringify(
      error.status === 429 ? { code, message: error.message, retry_after: Number(retryAfter ?? 1), global: false } : { code, message: error.message },
    ),
  );
  const limited = error.status === 429 ? { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset-After': retryAfter ?? '1', 'X-RateLimit-Scope': 'shared' } : {};
  res.writeHead(error.status, { ...error.headers, ...limited, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
  res.end(body);
}

function isSqliteConstraint(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === code;
}
