import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { logFailure, owned } from '../callbacks';
import type { Config } from '../config';
import { MINUTE } from '../clock';
import type { Metrics } from '../metrics';
import type { AuthLevel, Body, BodyKind, Ctx, Handler, Log, Route, Session, User } from '../types';
import { checkAuditReasonHeader } from '../validate';
import { BODY_DEADLINE_MS, mediaType, readForm, readJson } from './body';
import { addressKey, clientAddress, isBotRequest, isCrossSite } from './client';
import { HttpError } from './errors';
import { redirect, requestLogLine, send, sendError, setBaseHeaders } from './respond';
import { compile, match, splitUrl } from './router';
import type { StaticFiles } from './static';

/**
 * Connection timeouts, set deliberately rather than left to Node's defaults: a slow-loris
 * client dribbling headers is cut off after `headersMs`; a whole request (a 25 MiB upload on a
 * slow link) may take `requestMs`; a connection idle for `idleMs` is closed.
 */
export interface Timeouts {
  headersMs: number;
  /** A JSON or form body, whole (uploads, read only once authenticated, have `requestMs`). */
  bodyMs: number;
  requestMs: number;
  idleMs: number;
  keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  headersMs: 15_000,
  bodyMs: BODY_DEADLINE_MS,
  requestMs: 15 * MINUTE,
  idleMs: MINUTE,
  keepAliveMs: 5_000,
};

/** What the pipeline is built from: the route table and the parts it asks at each request. */
export interface PipelineParts {
  config: Pick<Config, 'baseUrl' | 'trustProxy' | 'maxConnections' | 'connectionsPerClient'>;
  log: Log;
  metrics: Pick<Metrics, 'enabled' | 'request' | 'mayRead' | 'render'>;
  routes: Route[];
  staticFiles: StaticFiles;
  /** The session and user of a request, at the route's level (401, then 403). */
  authenticate(req: IncomingMessage, level: AuthLevel, route: { method: string; path: string }): { session: Session | undefined; user: User | null };
  /** The WebSocket side: a plain request to a socket path (426), and an upgrade. */
  sockets: { refuseWithoutUpgrade(method: string, pathname: string): void; handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void };
  timeouts: Timeouts;
}

export interface Pipeline {
  server: http.Server;
  /** From now on, requests still arriving on kept-alive connections are turned away (503). */
  drain(): void;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** A refused request's body at most this long is read and dropped rather than cut off (below). */
const DRAINED_BODY_BYTES = 64 * 1024;

/**
 * The request pipeline, one path for every request: cross-site check → route → auth and
 * standing → body → handler → one `send`; every error answered in one place (respond.ts).
 * Returns an unstarted server: the caller listens.
 */
export function createPipeline(parts: PipelineParts): Pipeline {
  const { config, log, metrics, staticFiles, timeouts } = parts;
  const table = compile(parts.routes);
  const logPath = credentialMask(parts.routes);
  let draining = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const { pathname, search } = splitUrl(req.url);
    // Queries can carry tokens (verify links): the log line has the path only, its tokens masked.
    res.on(
      'close',
      owned(
        () => {
          // A client that leaves before its answer is an ordinary event: one line, no stack.
          const outcome = res.writableFinished ? String(res.statusCode) : res.headersSent ? `${res.statusCode} aborted` : 'aborted';
          log(requestLogLine(method, logPath(pathname), outcome, started));
          if (metrics.enabled) metrics.request(method, route?.path ?? 'other', outcome, (performance.now() - started) / 1000);
        },
        logFailure(log, 'request log'),
      ),
    );
    setBaseHeaders(res);
    let route: Route | undefined;
    try {
      if (draining) throw new HttpError(503, 'server shutting down', { Connection: 'close' });
      if (STATE_CHANGING.has(method) && !isBotRequest(req) && isCrossSite(req, config.baseUrl)) {
        throw new HttpError(403, 'cross-site request refused');
      }
      if (pathname === '/metrics' && method === 'GET' && metrics.mayRead(req)) {
        const { contentType, body } = await metrics.render();
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
        res.end(body);
        return;
      }
      const found = match(table, method, pathname);
      if (found === null) {
        parts.sockets.refuseWithoutUpgrade(method, pathname);
        if ((method === 'GET' || method === 'HEAD') && staticFiles.serve(pathname, req, res)) return;
        // A person following a bad link gets a page with a way on; API clients keep plain text.
        if (wantsPage(req, method, pathname)) return staticFiles.page('not-found.html', res, 404);
        throw new HttpError(404, 'not found');
      }
      if ('allow' in found) {
        throw new HttpError(405, 'method not allowed', { Allow: found.allow.join(', ') });
      }
      route = found.route;
      const { session, user } = parts.authenticate(req, route.auth, route);
      checkAuditReasonHeader(req);
      const ctx = {
        req,
        res,
        params: found.params,
        query: new URLSearchParams(search),
        user,
        session,
        body: Object.create(null) as Body,
        form: false,
        client: clientAddress(req, config.trustProxy),
      };
      await readBody(ctx, route.body, timeouts.bodyMs);
      // authenticate() enforced route.auth: a route that needs a user has one here.
      const reply = await (route.handler as Handler<User | null>)(ctx);
      await send(res, reply, method === 'HEAD', req.headers['accept-encoding']);
    } catch (err) {
      // Refused before its body was read (401, 403, 404, 429 on an upload): a large or unsized
      // body closes the connection rather than let Node drain up to 126 MiB of multipart just to
      // keep it alive; a small one is read and dropped (Node does so after the answer), so a
      // client still sending it gets the answer instead of a broken pipe.
      if (!req.complete && !(Number(req.headers['content-length']) <= DRAINED_BODY_BYTES)) res.setHeader('Connection', 'close');
      if (err instanceof HttpError && err.status < 500 && err.status !== 403 && isFormPost(req, route)) {
        // Browser forms land back on the page, never on a plain-text page. The URL names the
        // error by a code and the page words it: text from a URL is never shown as ours.
        for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
        void send(res, redirect(`/?error=${err.code ?? FORM_ERROR_BY_STATUS[err.status] ?? 'bad_request'}`));
        return;
      }
      // Refused before its route was taken (a cross-site post, a draining server): the route its path names still says how.
      sendError(res, err, log, (route ?? routeOf(method, pathname))?.errors);
    }
  }

  /** The route a request would take, if any (its error shape); an id that is no UUID names none. */
  function routeOf(method: string, pathname: string): Route | undefined {
    try {
      const found = match(table, method, pathname);
      return found && 'route' in found ? found.route : undefined;
    } catch {
      return undefined;
    }
  }

  const server = http.createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // How often Node checks the two timeouts above; its default (30 s) would let a
      // slow-loris client hold a connection twice as long as headersTimeout says.
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    // handle() answers every error itself; what escapes even that (a response that cannot be
    // written) ends this one connection.
    (req, res) =>
      void handle(req, res).catch((err: unknown) => {
        logFailure(log, 'request')(err);
        res.destroy();
      }),
  );
  server.timeout = timeouts.idleMs;
  server.maxConnections = config.maxConnections;
  limitConnectionsPerClient(server, config.connectionsPerClient, log);
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // A path with a credential in it is no socket's: refused here, where its log line is masked.
    const pathname = splitUrl(req.url).pathname;
    if (logPath(pathname) === pathname) return parts.sockets.handleUpgrade(req, socket, head);
    socket.on('error', () => socket.destroy());
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\n\r\nnot found\n');
    log(requestLogLine(req.method ?? 'GET', logPath(pathname), 404, performance.now()));
  });
  // Requests Node rejects before a handler runs: timed-out (slow-loris) or malformed ones.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const status =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : '400 Bad Request';
    if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  });
  return {
    server,
    drain: () => {
      draining = true;
    },
  };
}

/**
 * Route parameters the request log never writes, each written as its name instead: `token`, a
 * credential (a webhook's URL, an invite: docs/security.md promises tokens never reach the log),
 * and `url`, the remote address the media proxy serves (a URL someone posted, whose query may be
 * a signature or a key, and the query string is never logged).
 */
const MASKED_PARAMS = new Set([':token', ':url']);

/**
 * The path as the request log writes it: a masked parameter's segment is written as its name, on
 * any path that reaches it by such a route's earlier segments (letter case aside), whether or not
 * the rest matches a route (a mistyped webhook URL still holds its token).
 */
function credentialMask(routes: readonly Route[]): (pathname: string) => string {
  const patterns = [...new Set(routes.map((r) => r.path))].flatMap((path) => {
    const segments = path.split('/');
    const before = segments.map((s) => (s.startsWith(':') ? null : s.toLowerCase()));
    return segments.flatMap((name, at) => (MASKED_PARAMS.has(name) ? [{ before: before.slice(0, at), at, name, rest: name === ':url' }] : []));
  });
  return (pathname) => {
    const parts = pathname.split('/');
    let masked = false;
    for (const { before, at, name, rest } of patterns) {
      if (parts.length > at && before.every((segment, i) => segment === null || segment === parts[i].toLowerCase())) {
        parts[at] = name;
        // A posted URL is the rest of the path: what an unencoded slash in it left behind goes too.
        if (rest) parts.length = at + 1;
        masked = true;
      }
    }
    return masked ? parts.join('/') : pathname;
  };
}

function isFormPost(req: IncomingMessage, route: Route | undefined): boolean {
  return route?.body === 'auth-form' && mediaType(req) === 'application/x-www-form-urlencoded';
}

/** The form error code of an error that has none of its own (home.js words each code). */
const FORM_ERROR_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'signed_out',
  408: 'too_slow',
  409: 'conflict',
  413: 'too_large',
  415: 'bad_request',
  429: 'rate_limited',
};

async function readBody(ctx: Ctx<User | null>, kind: BodyKind, deadlineMs: number): Promise<void> {
  if (kind === 'none' || kind === 'message' || kind === 'multipart') return;
  if (kind === 'auth-form') {
    if (mediaType(ctx.req) === 'application/x-www-form-urlencoded') {
      ctx.form = true;
      ctx.body = await readForm(ctx.req, deadlineMs);
      return;
    }
    // Logout from an API client has no body at all.
    if (!hasBody(ctx.req)) return;
  }
  if (kind === 'json-optional' && !hasBody(ctx.req)) return;
  ctx.body = await readJson(ctx.req, deadlineMs);
}

/**
 * At most `limit` open connections per client address. One client holding thousands (each
 * dribbling a body, or idle) would use up the process's open files, and then nobody, the
 * health check included, gets an answer. Past the limit a new connection is answered 503 at
 * once and closed. Counted per socket address: a reverse proxy is one client here (its own
 * connection limits apply in front of it).
 */
function limitConnectionsPerClient(server: http.Server, limit: number, log: Log): void {
  const open = new Map<string, number>();
  server.on(
    'connection',
    owned(
      (socket: Socket) => {
        const key = addressKey(socket.remoteAddress ?? 'unknown');
        const count = (open.get(key) ?? 0) + 1;
        open.set(key, count);
        socket.once('close', () => {
          const left = (open.get(key) ?? 1) - 1;
          if (left === 0) open.delete(key);
          else open.set(key, left);
        });
        if (count > limit) {
          const body = `too many connections from this address (at most ${limit})\n`;
          // Paused, so Node's parser never sees a request on it: nothing it sends is acted on.
          socket.pause();
          socket.on('error', () => socket.destroy());
          socket.end(
            'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 10\r\n' +
              `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
          setTimeout(() => socket.destroy(), 2_000).unref();
        }
      },
      logFailure(log, 'connection count'),
    ),
  );
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** A browser asking for a page (not the API, not a download) at an address that has none. */
function wantsPage(req: IncomingMessage, method: string, pathname: string): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (pathname === '/api' || pathname.startsWith('/api/') || pathname.startsWith('/uploads/')) return false;
  return (req.headers.accept ?? '').includes('text/html');
}
