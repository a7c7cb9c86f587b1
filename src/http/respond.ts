import type { ServerResponse } from 'node:http';
import { HttpError } from './errors';

/** What a handler returns; `send` is the one place that turns it into bytes. */
export type Reply =
  | { kind: 'json'; status: number; body: unknown }
  | { kind: 'empty'; status: number }
  | { kind: 'redirect'; location: string }
  /** The handler streamed the response itself (downloads, static files). */
  | { kind: 'handled' };

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

/** The CSP of every HTML page: no inline script, nothing from elsewhere. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The one request log line (bench/history.ts reads it): `METHOD /path STATUS 1.2ms`, never a query. */
export const requestLogLine = (method: string, path: string, outcome: string | number, startedMs: number): string =>
  `${method} ${path} ${outcome} ${(performance.now() - startedMs).toFixed(1)}ms`;

export function send(res: ServerResponse, reply: Reply, head = false): void {
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
  const body = Buffer.from(JSON.stringify(reply.body));
  res.writeHead(reply.status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': body.length,
  });
  res.end(head ? undefined : body);
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

/** Maps any thrown value to a plain-text response: the spec's error format. */
export function sendError(res: ServerResponse, err: unknown, log: (line: string) => void): number {
  if (err instanceof HttpError) {
    sendText(res, err.status, err.message, err.headers);
    return err.status;
  }
  if (isSqliteConstraint(err, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteConstraint(err, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
    sendText(res, 409, 'that already exists');
    return 409;
  }
  log(`unexpected error: ${err instanceof Error ? err.stack : String(err)}`);
  sendText(res, 500, 'internal server error');
  return 500;
}

function isSqliteConstraint(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === code;
}
