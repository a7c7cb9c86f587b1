import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { every, failpoint, logFailure, owned } from '../../core/callbacks';
import type { Clock } from '../../core/clock';
import type { Config } from '../../core/config';
import { isBotRequest, isCrossSite } from '../../core/http/client';
import { HttpError } from '../../core/http/errors';
import { requestLogLine, toHttpError } from '../../core/http/respond';
import { compile, match, splitUrl } from '../../core/http/router';
import type { Log, User } from '../../core/types';
import type { Permissions } from '../../rules/permissions';
import { authenticate } from '../accounts/auth';
import type { SessionStore } from '../accounts/sessions';
import type { UserStore } from '../accounts/users';
import { CLOSE, type Hub, type Peer, type PeerSocket } from '../delivery/hub';
import { type ClientFrame, VOICE_LIMITS } from '../delivery/events';
import type { Voice } from '../voice/voice';
import type { Presence } from './presence';

/**
 * The WebSocket side of the listener: the upgrade (authorized exactly as the HTTP pipeline
 * authorizes a request), the heartbeat, and each socket's own callbacks. A socket that opens is
 * handed to the hub, which delivers to it.
 */
export interface Sockets {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** A plain request (no upgrade) to a socket path: 426, naming the protocol it needs (RFC 9110 15.5.22). */
  refuseWithoutUpgrade(method: string, pathname: string): void;
  /**
   * A socket opening on a gateway (src/parts/cluster/remote.ts): the forwarded upgrade request is
   * authorized exactly as one made here; `ws` stands in for the socket. Throws the refusal as an
   * HttpError. Returns the peer and, for a user stream, its `ready`, built in the same turn as
   * the subscription.
   */
  admit(req: SocketRequest, ws: PeerSocket): { peer: Peer; ready: string | null };
  /** A socket admitted so has closed on its gateway. */
  release(peer: Peer): void;
  /** No more upgrades; every socket closes (shutdown). */
  close(): void;
}

/** What authorizing a socket reads of its upgrade request: a real one, or one a gateway forwarded. */
export type SocketRequest = Pick<IncomingMessage, 'method' | 'url' | 'headers'>;

/** Clients send nothing meaningful yet: a small cap stops ws's 100 MiB default from buffering junk. */
export const WS_MAX_PAYLOAD_BYTES = 4 * 1024;
export const HEARTBEAT_MS = 30_000;
export const FLOOD_MAX_FRAMES = 50;
export const FLOOD_WINDOW_MS = 10_000;
/** Open sockets one session may hold (tabs of one browser), and one user across sessions. */
export const MAX_SOCKETS_PER_SESSION = 10;
export const MAX_SOCKETS_PER_USER = 50;
/** The Retry-After of a refusal at those caps. */
export const SOCKET_CAP_RETRY_S = 5;

/** The WebSocket upgrades: the route table's GET operations that switch protocols. */
export const SOCKET_PATHS = [
  { method: 'GET', path: '/api/ws', kind: 'user' as const },
  { method: 'GET', path: '/api/channels/:channel_id/ws', kind: 'channel' as const },
  { method: 'GET', path: '/api/conversations/:conversation_id/ws', kind: 'conversation' as const },
  { method: 'GET', path: '/api/voice/ws', kind: 'voice' as const },
];
const SOCKET_ROUTES = compile(SOCKET_PATHS);

export interface SocketParts {
  config: Pick<Config, 'baseUrl'>;
  clock: Clock;
  log: Log;
  sessions: SessionStore;
  users: UserStore;
  perms: Permissions;
  hub: Hub;
  presence: Pick<Presence, 'online' | 'offline'>;
  /** The `ready` frame of a user stream (JSON text), built in the same turn as the subscription: nothing falls in between. */
  ready(user: User): string;
  heartbeatMs: number;
  /** Voice channels' signaling: the voice socket's frames go there (src/parts/voice/voice.ts). */
  voice: Pick<Voice, 'open'>;
}

export function createSockets(parts: SocketParts): Sockets {
  const { config, clock, log, perms, hub, presence } = parts;
  // Per-message deflate stays off (the default): it costs memory per socket and would make
  // every socket compress its own copy of a frame we serialize once.
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD_BYTES, clientTracking: false });
  // A voice socket carries SDPs of a few KiB to a few hundred: a cap of its own.
  const voiceWss = new WebSocketServer({ noServer: true, maxPayload: VOICE_LIMITS.maxFrameBytes, clientTracking: false });
  /** The open voice sockets, pinged with the others (a closed tab leaves voice within a heartbeat). */
  const voiceSockets = new Set<{ ws: WebSocket; alive: boolean }>();
  let closing = false;
  const heartbeat = startHeartbeat(hub, parts.heartbeatMs, log, voiceSockets);

  /** Who may open this socket: the same rules, in the same order, as the HTTP pipeline. */
  function authorize(req: SocketRequest): Omit<Peer, 'ws' | 'alive' | 'frames' | 'windowStart' | 'held'> & { user: User } {
    if (closing) throw new HttpError(503, 'server shutting down');
    const { kind, params, gzip } = readSocketRequest(req, config.baseUrl);
    if (kind === 'voice') throw new HttpError(501, 'voice sockets are served by the core, not by a gateway: route /api/voice/ws to it');
    const { session, user } = authenticate(parts, req as IncomingMessage, 'user');
    // Every socket holds memory and a file, and every event is written to each: one session
    // opening thousands would make every message cost thousands of writes. A cap on what is
    // open clears when a socket closes: a client may try again soon.
    const retry = { 'Retry-After': String(SOCKET_CAP_RETRY_S) };
    const open = hub.countsOf(session!.token, user!.id);
    if (open.session >= MAX_SOCKETS_PER_SESSION) {
      throw new HttpError(429, `too many open sockets for this session (at most ${MAX_SOCKETS_PER_SESSION})`, retry);
    }
    if (open.user >= MAX_SOCKETS_PER_USER) {
      throw new HttpError(429, `too many open sockets for this account (at most ${MAX_SOCKETS_PER_USER})`, retry);
    }
    const container =
      kind === 'user'
        ? null
        : kind === 'channel'
          ? perms.channelAccess(user!, params.channel_id).container
          : perms.conversationAccess(user!, params.conversation_id);
    return { user: user!, userId: user!.id, token: session!.token, container, gzip };
  }

  /** Registers and subscribes a socket; a user stream's `ready` is built in the same turn. */
  function open(peer: Peer, user: User): string | null {
    if (hub.register(peer)) presence.online(peer.userId);
    const ready = peer.container ? null : parts.ready(user);
    return ready;
  }

  function release(peer: Peer): void {
    if (hub.unregister(peer)) presence.offline(peer.userId);
  }

  function connect(ws: WebSocket, { user, ...target }: ReturnType<typeof authorize>): void {
    const peer = { ws, ...target, alive: true, frames: 0, windowStart: clock.now(), held: null };
    const opened = attachSocket(peer, { clock, log, hub, onClose: release });
    opened(() => {
      const ready = open(peer, user);
      hub.subscribe(peer, ready === null ? undefined : Buffer.from(ready));
    });
  }

  /**
   * A voice socket (GET /api/voice/ws): authorized as any socket, then its frames go to voice.
   * Its own flood cap (ICE candidates come by the dozen); no hub, no presence: the user stream
   * beside it carries the events.
   */
  function upgradeVoice(req: IncomingMessage, socket: Duplex, head: Buffer, logLine: (status: number) => void): void {
    let opened: ReturnType<Voice['open']> | null = null;
    let ws: WebSocket | null = null;
    try {
      if (closing) throw new HttpError(503, 'server shutting down');
      const { session, user } = authenticate(parts, req, 'user');
      opened = parts.voice.open(user!, session!.token, {
        send: (frame) => {
          if (ws?.readyState === 1) ws.send(JSON.stringify(frame));
        },
        close: (code, reason) => ws?.close(code, reason),
      });
    } catch (err) {
      const error = toHttpError(err, log);
      refuse(socket, error.status, error.message, error.headers);
      logLine(error.status);
      return;
    }
    const voiceSocket = opened;
    // ws never calls back for a malformed handshake (it answers 400 itself) or a connection that
    // dies during it: the socket's place in the session's count goes back then.
    let upgraded = false;
    const abandoned = owned(
      () => {
        if (!upgraded) voiceSocket.closed();
      },
      logFailure(log, 'voice socket handshake'),
    );
    socket.once('close', abandoned);
    voiceWss.handleUpgrade(req, socket, head, (opening) => {
      upgraded = true;
      socket.off('close', abandoned);
      ws = opening;
      const entry = { ws: opening, alive: true };
      voiceSockets.add(entry);
      let frames = 0;
      let windowStart = clock.now();
      const own = <A extends unknown[]>(fn: (...args: A) => void, where: string) =>
        owned(fn, (err) => {
          logFailure(log, `voice socket ${where}`)(err);
          opening.close(CLOSE.internalError.code, CLOSE.internalError.reason);
        });
      opening.on('error', (err) => log(`voice socket error: ${err.message}`));
      opening.on('pong', () => {
        entry.alive = true;
      });
      opening.on(
        'message',
        own((data: Buffer, isBinary: boolean) => {
          const now = clock.now();
          if (now - windowStart >= FLOOD_WINDOW_MS) {
            windowStart = now;
            frames = 0;
          }
          if (++frames > VOICE_LIMITS.maxFramesPerWindow) return void opening.close(CLOSE.policy.code, CLOSE.policy.reason);
          voiceSocket.frame(isBinary ? '' : data.toString());
        }, 'frame'),
      );
      opening.on(
        'close',
        owned(
          () => {
            voiceSockets.delete(entry);
            voiceSocket.closed();
          },
          logFailure(log, 'voice socket close'),
        ),
      );
      logLine(101);
      own(() => voiceSocket.opened(), 'open')();
    });
  }

  /** An upgrade request: authorized exactly as the HTTP pipeline would, then a socket. */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const started = performance.now();
    const logLine = (status: number) => log(requestLogLine(req.method ?? 'GET', splitUrl(req.url).pathname, status, started));
    let target: ReturnType<typeof authorize>;
    try {
      if (readSocketRequest(req, config.baseUrl).kind === 'voice') return upgradeVoice(req, socket, head, logLine);
      target = authorize(req);
    } catch (err) {
      const error = toHttpError(err, log);
      refuse(socket, error.status, error.message, error.headers);
      logLine(error.status);
      return;
    }
    // ws answers a malformed handshake (bad key, wrong version) with its own 400.
    wss.handleUpgrade(req, socket, head, (ws) => {
      connect(ws, target);
      logLine(101);
    });
  }

  return {
    handleUpgrade(req, socket, head) {
      try {
        upgrade(req, socket, head);
      } catch (err) {
        logFailure(log, 'websocket upgrade')(err);
        socket.destroy();
      }
    },

    refuseWithoutUpgrade(method, pathname) {
      const found = match(SOCKET_ROUTES, method, pathname);
      if (found === null) return;
      if ('allow' in found) throw new HttpError(405, 'method not allowed', { Allow: found.allow.join(', ') });
      throw new HttpError(426, 'this address takes a WebSocket upgrade (Upgrade: websocket)', { Upgrade: 'websocket' });
    },

    admit(req, ws) {
      const { user, ...target } = authorize(req);
      // The gateway compresses a large `ready` itself (?compress=gzip is its socket's).
      const peer: Peer = { ws, ...target, gzip: false, remote: true, alive: true, frames: 0, windowStart: clock.now(), held: null };
      const ready = open(peer, user);
      hub.subscribe(peer);
      return { peer, ready };
    },

    release,

    close() {
      closing = true;
      clearInterval(heartbeat);
      hub.close();
      for (const { ws } of voiceSockets) ws.close(CLOSE.goingAway.code, CLOSE.goingAway.reason);
    },
  };
}

/**
 * The checks an upgrade request needs no account for (a gateway makes them too, before asking
 * the core): cross-site, the path, the query. Throws the refusal.
 */
export function readSocketRequest(
  req: SocketRequest,
  baseUrl: string,
): { kind: 'user' | 'channel' | 'conversation' | 'voice'; params: Record<string, string>; gzip: boolean } {
  // A page on another site can open a WebSocket to us and the browser attaches our cookie:
  // cross-site WebSocket hijacking. Browsers always send Origin on the handshake.
  // (A bot signs in with its token, never a cookie: nothing to hijack.)
  if (!isBotRequest(req as IncomingMessage) && isCrossSite(req as IncomingMessage, baseUrl)) throw new HttpError(403, 'cross-site WebSocket refused');
  const found = match(SOCKET_ROUTES, req.method ?? 'GET', splitUrl(req.url).pathname);
  if (found === null) throw new HttpError(404, 'not found');
  if ('allow' in found) throw new HttpError(405, 'method not allowed', { Allow: found.allow.join(', ') });
  // ?compress=gzip: a large `ready` comes as one binary frame of gzip (hub.ts subscribe).
  const compress = new URLSearchParams(splitUrl(req.url).search).getAll('compress');
  if (compress.length > 1 || (compress.length === 1 && compress[0] !== 'gzip')) throw new HttpError(400, 'compress must be gzip');
  return { kind: found.route.kind, params: found.params, gzip: compress.length === 1 };
}

/** Pings every socket of this process each `ms`; one that did not answer the last ping is cut. */
export function startHeartbeat(hub: Pick<Hub, 'peers'>, ms: number, log: Log, others: Iterable<{ ws: WebSocket; alive: boolean }> = []): NodeJS.Timeout {
  return every(
    ms,
    'heartbeat',
    () => {
      for (const other of others) {
        if (!other.alive) {
          other.ws.terminate();
          continue;
        }
        other.alive = false;
        other.ws.ping();
      }
      for (const peer of hub.peers()) {
        // A gateway's socket is pinged by its gateway.
        if (peer.remote) continue;
        if (!peer.alive) {
          peer.ws.terminate();
          continue;
        }
        peer.alive = false;
        peer.ws.ping();
      }
    },
    log,
  );
}

/**
 * A new socket's own callbacks: errors, close (`onClose`), pongs, and the flood count of what a
 * client sends. Returns a runner for its opening work, under the same rule: what goes wrong
 * inside this socket's callbacks ends this socket (1011), nothing else.
 */
export function attachSocket(
  peer: Peer & { ws: WebSocket },
  { clock, log, hub, onClose, onVisibility }: { clock: Clock; log: Log; hub: Pick<Hub, 'drop'>; onClose(peer: Peer): void; onVisibility?(peer: Peer): void },
): (work: () => void) => void {
  const { ws } = peer;
  const own = <A extends unknown[]>(fn: (...args: A) => void, where: string) =>
    owned(fn, (err) => {
      logFailure(log, `websocket ${where}`)(err);
      ws.close(CLOSE.internalError.code, CLOSE.internalError.reason);
    });
  // Protocol errors (oversize frame: ws closes with 1009, bad UTF-8...) must never reach the process.
  ws.on('error', (err) => log(`websocket error: ${err.message}`));
  ws.on(
    'close',
    owned(
      () => {
        failpoint('socket.close');
        onClose(peer);
      },
      logFailure(log, 'websocket close'),
    ),
  );
  ws.on('pong', () => {
    peer.alive = true;
  });
  // Frames from clients are counted, so a flood is cut off; the one a user stream may send says
  // whether its page is visible: {"op": "visibility", "visible": false} (pushes go to a user with
  // no visible stream). Anything else is ignored.
  const countFrame = own(() => {
    failpoint('socket.message');
    const now = clock.now();
    if (now - peer.windowStart >= FLOOD_WINDOW_MS) {
      peer.windowStart = now;
      peer.frames = 0;
    }
    if (++peer.frames > FLOOD_MAX_FRAMES) hub.drop(peer, CLOSE.policy);
  }, 'frame');
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    countFrame();
    if (!isBinary && peer.container === null) {
      const visible = visibilityIn(data);
      if (visible !== null && peer.hidden !== !visible) {
        peer.hidden = !visible;
        onVisibility?.(peer);
      }
    }
  });
  ws.on('ping', countFrame);
  return (work) => own(work, 'open')();
}

/** An upgrade refused before any socket exists: a plain HTTP response, as for any request. */
export function refuse(socket: Duplex, status: number, reason: string, headers: Record<string, string>): void {
  const body = `${reason}\n`;
  socket.on('error', () => socket.destroy());
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      Object.entries(headers)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** A `visibility` frame (CLIENT_FRAMES in src/parts/delivery/events.ts) → its `visible`; null for anything else. */
function visibilityIn(data: Buffer): boolean | null {
  if (data.length > 100 || !data.includes('visibility')) return null;
  try {
    const frame = JSON.parse(data.toString()) as Partial<ClientFrame>;
    return frame.op === 'visibility' && typeof frame.visible === 'boolean' ? frame.visible : null;
  } catch {
    return null;
  }
}
