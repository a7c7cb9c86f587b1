import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { buildRoutes } from './api';
import { authenticate, clientAddress, isCrossSite } from './auth';
import { type Clock, systemClock, MINUTE } from './clock';
import { type Config, prepareDataDir } from './config';
import { openDatabase } from './db';
import { mediaType, readForm, readJson } from './http/body';
import { HttpError } from './http/errors';
import { requestLogLine, send, sendError, setBaseHeaders, redirect } from './http/respond';
import { compile, match, splitUrl } from './http/router';
import { createLimits } from './limits';
import { type Mailer, type MailerOptions, createMailer } from './mail';
import { createMessageStore } from './message-store';
import { createPermissions } from './permissions';
import { createHub } from './realtime';
import type { Services } from './services';
import { SessionStore } from './sessions';
import { indexStaticFiles } from './static';
import type { Body, BodyKind, Ctx, Handler, Log, Route, User } from './types';
import { createUploadStore } from './upload-store';
import { createUserStore, grantConfiguredAdmins } from './users';

/**
 * Connection timeouts, set deliberately rather than left to Node's defaults: a slow-loris
 * client dribbling headers is cut off after `headersMs`; a whole request (a 25 MiB upload on a
 * slow link) may take `requestMs`; a connection idle for `idleMs` is closed.
 */
export interface Timeouts {
  headersMs: number;
  requestMs: number;
  idleMs: number;
  keepAliveMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = { headersMs: 15_000, requestMs: 15 * MINUTE, idleMs: MINUTE, keepAliveMs: 5_000 };

export interface AppOptions {
  config: Config;
  clock?: Clock;
  /** A mailer of the caller's; otherwise one is built (SMTP or the outbox) with `mailerOptions`. */
  mailer?: Mailer;
  mailerOptions?: MailerOptions;
  log?: Log;
  timeouts?: Partial<Timeouts>;
}

export interface RunningApp {
  app: Services;
  server: http.Server;
  /** Stops accepting, lets in-flight requests finish (bounded), closes sockets and the database. */
  close(): Promise<void>;
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * The default log: lines are gathered and written once per turn of the event loop. stdout is
 * a pipe or a file, where Node writes synchronously: one write per request line cost about a
 * tenth of a message post under load (bench/post-message.ts). Lines still pending when the
 * process exits are written then.
 */
let pendingLines: string[] = [];
function flushLog(): void {
  if (pendingLines.length === 0) return;
  const text = `${pendingLines.join('\n')}\n`;
  pendingLines = [];
  process.stdout.write(text);
}
process.on('exit', flushLog);
function stdoutLog(line: string): void {
  if (pendingLines.push(line) === 1) setImmediate(flushLog);
}

/** Builds an unstarted server: the caller listens (src/server.ts on PORT, tests on port 0). */
export function createApp(options: AppOptions): RunningApp {
  const { config } = options;
  prepareDataDir(config.dataDir);
  const clock = options.clock ?? systemClock;
  const log = options.log ?? stdoutLog;
  // The parts, in order: each is built from the ones before it.
  const db = openDatabase(path.join(config.dataDir, 'chat.db'));
  grantConfiguredAdmins(db, config.adminUsers);
  const users = createUserStore(db);
  const sessions = new SessionStore(clock);
  const limits = createLimits(clock, config.rateLimit);
  const staticFiles = indexStaticFiles(path.join(__dirname, '..', 'static'));
  const perms = createPermissions(db);
  const mailer = options.mailer ?? createMailer({ config, clock, log }, options.mailerOptions);
  const hub = createHub({ config, clock, log, sessions, users, perms });
  sessions.onEnd = (session) => hub.endSession(session.token);
  const uploads = createUploadStore({ dataDir: config.dataDir, log });
  const messages = createMessageStore({ db, clock, hub, uploads });
  const app: Services = { config, clock, log, db, users, sessions, limits, staticFiles, perms, mailer, hub, uploads, messages };

  const table = compile(buildRoutes(app));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const { pathname, search } = splitUrl(req.url);
    // Queries can carry tokens (verify links): the log line has the path only.
    res.on('close', () => {
      const outcome = res.writableFinished ? String(res.statusCode) : `${res.statusCode} aborted`;
      log(requestLogLine(method, pathname, outcome, started));
    });
    setBaseHeaders(res);
    let route: Route | undefined;
    try {
      if (STATE_CHANGING.has(method) && isCrossSite(req, config.baseUrl)) {
        throw new HttpError(403, 'cross-site request refused');
      }
      const found = match(table, method, pathname);
      if (found === null) {
        if ((method === 'GET' || method === 'HEAD') && staticFiles.serve(pathname, req, res)) return;
        throw new HttpError(404, 'not found');
      }
      if ('allow' in found) {
        throw new HttpError(405, 'method not allowed', { Allow: found.allow.join(', ') });
      }
      route = found.route;
      const { session, user } = authenticate(app, req, route.auth);
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
      await readBody(ctx, route.body);
      // authenticate() enforced route.auth: a route that needs a user has one here.
      const reply = await (route.handler as Handler<User | null>)(ctx);
      send(res, reply, method === 'HEAD');
    } catch (err) {
      // Refused before its body was read (401, 403, 404, 429 on an upload): close rather than
      // let Node drain up to 126 MiB of multipart just to keep the connection alive.
      if (!req.complete) res.setHeader('Connection', 'close');
      if (err instanceof HttpError && err.status < 500 && err.status !== 403 && isFormPost(req, route)) {
        // Browser forms land back on the page with a readable reason, never a plain-text page.
        for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
        send(res, redirect(`/?error=${encodeURIComponent(err.message)}`));
        return;
      }
      sendError(res, err, log);
    }
  }

  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const server = http.createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      // How often Node checks the two timeouts above; its default (30 s) would let a
      // slow-loris client hold a connection twice as long as headersTimeout says.
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    (req, res) => void handle(req, res),
  );
  server.timeout = timeouts.idleMs;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => hub.handleUpgrade(req, socket, head));
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

  const sweeper = setInterval(() => sessions.sweep(), 10 * MINUTE);
  sweeper.unref();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      clearInterval(sweeper);
      hub.close();
      const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        mailer.close?.();
        db.close();
        resolve();
      });
      server.closeIdleConnections();
    }));

  return { app, server, close };
}

function isFormPost(req: IncomingMessage, route: Route | undefined): boolean {
  return route?.body === 'auth-form' && mediaType(req) === 'application/x-www-form-urlencoded';
}

async function readBody(ctx: Ctx<User | null>, kind: BodyKind): Promise<void> {
  if (kind === 'none' || kind === 'message') return;
  if (kind === 'auth-form') {
    if (mediaType(ctx.req) === 'application/x-www-form-urlencoded') {
      ctx.form = true;
      ctx.body = await readForm(ctx.req);
      return;
    }
    // Logout from an API client has no body at all.
    if (!hasBody(ctx.req)) return;
  }
  ctx.body = await readJson(ctx.req);
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
