import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { buildRoutes } from './api';
import { checkAuditReasonHeader, createAuditLog } from './parts/community/audit';
import { claimDataDir } from './parts/backup';
import { armFailpoints, every, logFailure, owned } from './core/callbacks';
import { createChannelTails } from './parts/messages/channel-tails';
import { createChannelStore } from './parts/community/channels';
import { addressKey, authenticate, clientAddress, isCrossSite } from './parts/accounts/auth';
import { type Clock, systemClock, MINUTE } from './core/clock';
import { type Config, prepareDataDir } from './core/config';
import { openDatabase } from './core/db';
import { BODY_DEADLINE_MS, mediaType, readForm, readJson } from './core/http/body';
import { HttpError } from './core/http/errors';
import { requestLogLine, send, sendError, setBaseHeaders, redirect } from './core/http/respond';
import { compile, match, splitUrl } from './core/http/router';
import { createLimits } from './rules/limits';
import { type Mailer, type MailerOptions, createMailer } from './parts/accounts/mail';
import { createDirectory } from './parts/community/directory';
import { createMembers } from './parts/community/members';
import { createMessageStore } from './parts/messages/message-store';
import { createSearch } from './parts/messages/search';
import { createSecretBox, loadSecretKey } from './core/secret-box';
import { createTwoFactor } from './parts/accounts/two-factor';
import { createAvatars } from './parts/accounts/avatars';
import { createExports } from './parts/accounts/account-export';
import { createAccountDeletion } from './parts/accounts/account-deletion';
import { createMetrics } from './core/metrics';
import { createPermissions } from './rules/permissions';
import { createPresence } from './parts/live/presence';
import { buildReady } from './parts/live/ready';
import { createHub, refuseWithoutUpgrade } from './parts/live/realtime';
import type { Services } from './parts/services';
import { SessionStore } from './parts/accounts/sessions';
import { indexStaticFiles } from './core/http/static';
import type { Body, BodyKind, Ctx, Handler, Log, Route, User } from './core/types';
import { createReadStates } from './parts/messages/unread';
import { createUploadStore } from './parts/messages/upload-store';
import { createUserStore } from './parts/accounts/users';
import { createAccountChanges } from './parts/accounts/account-changes';

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
  armFailpoints(config.failpoints);
  prepareDataDir(config.dataDir);
  const releaseDataDir = claimDataDir(config.dataDir);
  const clock = options.clock ?? systemClock;
  const log = options.log ?? stdoutLog;
  // The parts, in order: each is built from the ones before it.
  const db = openDatabase(path.join(config.dataDir, 'chat.db'), config.durability);
  const users = createUserStore(db);
  const sessions = new SessionStore(clock);
  const limits = createLimits(clock, config.rateLimit);
  const staticFiles = indexStaticFiles(path.join(__dirname, '..', 'static'));
  const perms = createPermissions(db, clock);
  const directory = createDirectory(db);
  const tails = createChannelTails(db);
  const readStates = createReadStates(db, tails, directory);
  const mailer = options.mailer ?? createMailer({ config, clock, log }, options.mailerOptions);
  const metrics = createMetrics({
    enabled: config.metrics,
    hosts: config.metricsHosts,
    db,
    databaseFile: path.join(config.dataDir, 'chat.db'),
    // Read at scrape time, when the hub below exists.
    openSockets: () => hub.openSockets(),
  });
  const hub = createHub({ config, clock, log, sessions, users, perms, metrics, directory });
  sessions.onEnd = (session) => hub.endSession(session.token);
  const presence = createPresence({ db, hub, log });
  hub.hooks = {
    ready: (user) => buildReady({ directory, readStates, presence }, user),
    online: presence.online,
    offline: presence.offline,
  };
  const accountChanges = createAccountChanges({ db, clock, sessions, hub });
  // ADMIN_USERS are administrators: granted at start-up (and at registration, src/api/accounts.ts).
  for (const name of config.adminUsers) accountChanges.setAdmin(name, true);
  const uploads = createUploadStore({ db, dataDir: config.dataDir, durability: config.durability, log });
  const messages = createMessageStore({ db, clock, hub, uploads, metrics, readStates, tails });
  const members = createMembers({ db, clock, presence });
  const channels = createChannelStore({ db, clock });
  const audit = createAuditLog(db, clock);
  const search = createSearch(db, messages);
  const twoFactor = createTwoFactor({ db, clock, box: createSecretBox(loadSecretKey(config.dataDir, config.secretKey)), log });
  const avatars = createAvatars({ db, dataDir: config.dataDir, log });
  const accountExports = createExports({ db, clock, directory, dataDir: config.dataDir, log });
  const deletion = createAccountDeletion({
    db,
    clock,
    directory,
    members,
    hub,
    sessions,
    removeFiles: (userId) => {
      avatars.remove(userId);
      accountExports.remove(userId);
    },
  });
  const app: Services = {
    config,
    clock,
    log,
    db,
    users,
    sessions,
    limits,
    staticFiles,
    metrics,
    perms,
    directory,
    readStates,
    mailer,
    hub,
    presence,
    accountChanges,
    uploads,
    messages,
    members,
    channels,
    audit,
    search,
    twoFactor,
    avatars,
    accountExports,
    deletion,
  };

  const table = compile(buildRoutes(app));
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  /** Set by close(): requests still arriving on kept-alive connections are turned away. */
  let draining = false;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const method = req.method ?? 'GET';
    const { pathname, search } = splitUrl(req.url);
    // Queries can carry tokens (verify links): the log line has the path only.
    res.on(
      'close',
      owned(() => {
        // A client that leaves before its answer is an ordinary event: one line, no stack.
        const outcome = res.writableFinished ? String(res.statusCode) : res.headersSent ? `${res.statusCode} aborted` : 'aborted';
        log(requestLogLine(method, pathname, outcome, started));
        if (metrics.enabled) metrics.request(method, route?.path ?? 'other', outcome, (performance.now() - started) / 1000);
      }, logFailure(log, 'request log')),
    );
    setBaseHeaders(res);
    let route: Route | undefined;
    try {
      if (draining) throw new HttpError(503, 'server shutting down', { Connection: 'close' });
      if (STATE_CHANGING.has(method) && isCrossSite(req, config.baseUrl)) {
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
        refuseWithoutUpgrade(method, pathname);
        if ((method === 'GET' || method === 'HEAD') && staticFiles.serve(pathname, req, res)) return;
        // A person following a bad link gets a page with a way on; API clients keep plain text.
        if (wantsPage(req, method, pathname)) return staticFiles.page('not-found.html', res, 404);
        throw new HttpError(404, 'not found');
      }
      if ('allow' in found) {
        throw new HttpError(405, 'method not allowed', { Allow: found.allow.join(', ') });
      }
      route = found.route;
      const { session, user } = authenticate(app, req, route.auth);
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
      send(res, reply, method === 'HEAD');
    } catch (err) {
      // Refused before its body was read (401, 403, 404, 429 on an upload): close rather than
      // let Node drain up to 126 MiB of multipart just to keep the connection alive.
      if (!req.complete) res.setHeader('Connection', 'close');
      if (err instanceof HttpError && err.status < 500 && err.status !== 403 && isFormPost(req, route)) {
        // Browser forms land back on the page, never on a plain-text page. The URL names the
        // error by a code and the page words it: text from a URL is never shown as ours.
        for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
        send(res, redirect(`/?error=${err.code ?? FORM_ERROR_BY_STATUS[err.status] ?? 'bad_request'}`));
        return;
      }
      sendError(res, err, log);
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

  const sweeper = every(10 * MINUTE, 'session-sweep', () => sessions.sweep(), log);

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      draining = true;
      clearInterval(sweeper);
      presence.close();
      hub.close();
      // Uploads still streaming would hold the drain for minutes: they end now, files removed.
      const uploadsStopped = uploads.abortAll();
      const exportsStopped = accountExports.close();
      const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      force.unref();
      server.close(() => {
        clearTimeout(force);
        void Promise.all([uploadsStopped, exportsStopped])
          .then(() => {
            mailer.close?.();
            metrics.close();
            db.close();
            releaseDataDir();
          })
          .catch(logFailure(log, 'shutdown'))
          .finally(resolve);
      });
      server.closeIdleConnections();
    }));

  return { app, server, close };
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
  server.on('connection', owned((socket: Socket) => {
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
  }, logFailure(log, 'connection count')));
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
