import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { authenticate, isCrossSite } from '../accounts/auth';
import { every, failpoint, logFailure, owned } from '../../core/callbacks';
import type { Clock } from '../../core/clock';
import type { Config } from '../../core/config';
import { HttpError } from '../../core/http/errors';
import { requestLogLine, toHttpError } from '../../core/http/respond';
import { compile, match, splitUrl } from '../../core/http/router';
import type { Directory } from '../community/directory';
import { type LiveEvent, framesOf } from './frames';
import type { Metrics } from '../../core/metrics';
import type { Permissions } from '../../rules/permissions';
import type { SessionStore } from '../accounts/sessions';
import type { Container, Log, User } from '../../core/types';
import type { UserStore } from '../accounts/users';

export type { LiveEvent } from './frames';

/**
 * Live delivery. Two kinds of socket: the spec's room sockets (one channel or conversation,
 * its events in the record shapes of docs/api.md "WebSocket"), and the user stream (`/api/ws`:
 * everything the user can see, each frame `{"event": ...}`). Every publish is called after
 * the write committed.
 */
export interface Hub {
  /** To the room sockets of one channel or conversation. */
  publish(container: Container, event: LiveEvent): void;
  /** To the user streams of everyone who can see a channel or conversation (`except` one user). */
  toContainer(container: Container, event: LiveEvent, except?: string): void;
  /** To the user streams of every member of a server. */
  toServer(serverId: string, event: LiveEvent): void;
  /** To the user streams of these users. */
  toUsers(userIds: Iterable<string>, event: LiveEvent): void;
  /** Whether a user has a user stream open (presence: who needs events at all). */
  hasStream(userId: string): boolean;
  /** Closes every socket opened with this session (logout, expiry, password reset). */
  endSession(token: string): void;
  /**
   * Closes a user's sockets: all of them, user streams included (suspension), or the room sockets
   * of one server or conversation (removal: the user stream stays and gets `server_left`).
   */
  dropUser(userId: string, where?: { serverId: string } | { conversationId: string }): void;
  /** Closes the room sockets of a channel or conversation that no longer exists (4003). */
  closeRoom(container: Container): void;
  /** What the user stream asks of the rest of the service; set once by createApp(). */
  hooks: StreamHooks;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Open sockets, for tests and the benchmark. */
  readonly size: number;
  /** Open sockets by kind, for the metrics. */
  openSockets(): Record<string, number>;
  close(): void;
}

/** Clients send nothing meaningful yet: a small cap stops ws's 100 MiB default from buffering junk. */
export const WS_MAX_PAYLOAD_BYTES = 4 * 1024;
export const HEARTBEAT_MS = 30_000;
/** Past this many bytes queued for one socket, its reader is too slow: it is closed, not buffered for. */
export const SLOW_CONSUMER_BYTES = 1024 * 1024;
export const FLOOD_MAX_FRAMES = 50;
/** Open sockets one session may hold (tabs of one browser), and one user across sessions. */
export const MAX_SOCKETS_PER_SESSION = 10;
export const MAX_SOCKETS_PER_USER = 50;
/** The Retry-After of a refusal at those caps. */
export const SOCKET_CAP_RETRY_S = 5;
export const FLOOD_WINDOW_MS = 10_000;
/** At shutdown, sockets that have not finished the closing handshake by then are cut. */
export const SHUTDOWN_CLOSE_GRACE_MS = 2_000;
/** Socket writes one event-loop turn makes before the rest wait a turn: about 2 ms of sends here. */
export const SENDS_PER_TURN = 100;

/** An outbox entry: an event's frames to its audience, or a close that must follow them. */
type Job =
  | { peers: Peer[]; frameFor: (userId: string) => Buffer; next: number }
  | { close: Peer; how: { code: number; reason: string } };

/** Close codes (RFC 6455 section 7.4; 4000-4999 are ours). Documented in docs/api.md ("Close codes"). */
export const CLOSE = {
  goingAway: { code: 1001, reason: 'server shutting down' },
  policy: { code: 1008, reason: 'too many frames' },
  sessionEnded: { code: 4001, reason: 'session ended' },
  accessRemoved: { code: 4003, reason: 'access removed' },
  tooSlow: { code: 4008, reason: 'too slow' },
  internalError: { code: 1011, reason: 'internal error' },
} as const;

/** What the user stream needs from elsewhere: its first frame, and who is online. */
export interface StreamHooks {
  /** The `ready` frame, built in the same turn as the subscription: nothing falls in between. */
  ready(user: User): Record<string, unknown>;
  /** A user's first socket opened, or their last one closed. */
  online(userId: string): void;
  offline(userId: string): void;
}

export interface HubOptions {
  heartbeatMs: number;
  /** Socket writes per event-loop turn (SENDS_PER_TURN). */
  sendsPerTurn: number;
}

/** Defaults read when a hub is created; tests shorten the heartbeat (or the turn) here before starting a server. */
export const realtimeSettings: HubOptions = { heartbeatMs: HEARTBEAT_MS, sendsPerTurn: SENDS_PER_TURN };

interface Peer {
  ws: WebSocket;
  userId: string;
  token: string;
  /** The room of a room socket; null for a user stream. */
  container: Container | null;
  /** Answered the last ping. */
  alive: boolean;
  frames: number;
  windowStart: number;
}

type Index = Map<string, Set<Peer>>;

const containerKey = (c: Container) => `${c.kind}:${c.id}`;

function addTo(index: Index, key: string, peer: Peer): void {
  const set = index.get(key) ?? new Set<Peer>();
  index.set(key, set);
  set.add(peer);
}

function removeFrom(index: Index, key: string, peer: Peer): void {
  const set = index.get(key);
  set?.delete(peer);
  if (set?.size === 0) index.delete(key);
}

/** The WebSocket upgrades: the route table's GET operations that switch protocols. */
export const SOCKET_PATHS = [
  { method: 'GET', path: '/api/ws', kind: 'user' as const },
  { method: 'GET', path: '/api/channels/:channel_id/ws', kind: 'channel' as const },
  { method: 'GET', path: '/api/conversations/:conversation_id/ws', kind: 'conversation' as const },
];
const SOCKET_ROUTES = compile(SOCKET_PATHS);

/** A plain request (no upgrade) to a socket path: 426, naming the protocol it needs (RFC 9110 15.5.22). */
export function refuseWithoutUpgrade(method: string, pathname: string): void {
  const found = match(SOCKET_ROUTES, method, pathname);
  if (found === null) return;
  if ('allow' in found) throw new HttpError(405, 'method not allowed', { Allow: found.allow.join(', ') });
  throw new HttpError(426, 'this address takes a WebSocket upgrade (Upgrade: websocket)', { Upgrade: 'websocket' });
}

/** What a hub is built from: the pipeline's authentication and the access rules. */
export interface HubParts {
  config: Pick<Config, 'baseUrl'>;
  clock: Clock;
  log: Log;
  metrics: Pick<Metrics, 'framesSent'>;
  sessions: SessionStore;
  users: UserStore;
  perms: Permissions;
  directory: Pick<Directory, 'serverMemberIds' | 'conversationMemberIds'>;
}

export function createHub(parts: HubParts, options: HubOptions = realtimeSettings): Hub {
  const { config, clock, log, perms, metrics, directory } = parts;
  // Per-message deflate stays off (the default): it costs memory per socket and would make
  // every socket compress its own copy of a frame we serialize once.
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD_BYTES, clientTracking: false });
  const peers = new Set<Peer>();
  const byContainer: Index = new Map();
  const byToken: Index = new Map();
  const byUser: Index = new Map();
  /** User streams only, by user. */
  const streams: Index = new Map();
  let closing = false;
  /** Writes and closes not yet made, in the order they were asked for (see flush()). */
  const outbox: Job[] = [];
  let flushing = false;
  let hooks: StreamHooks = { ready: () => ({ event: 'ready' }), online: () => {}, offline: () => {} };

  const heartbeat = every(
    options.heartbeatMs,
    'heartbeat',
    () => {
      for (const peer of peers) {
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

  /** Who may open this socket: the same rules, in the same order, as the HTTP pipeline. */
  function authorize(req: IncomingMessage): Omit<Peer, 'ws' | 'alive' | 'frames' | 'windowStart'> & { user: User } {
    if (closing) throw new HttpError(503, 'server shutting down');
    // A page on another site can open a WebSocket to us and the browser attaches our cookie:
    // cross-site WebSocket hijacking. Browsers always send Origin on the handshake.
    if (isCrossSite(req, config.baseUrl)) throw new HttpError(403, 'cross-site WebSocket refused');
    const found = match(SOCKET_ROUTES, req.method ?? 'GET', splitUrl(req.url).pathname);
    if (found === null) throw new HttpError(404, 'not found');
    if ('allow' in found) throw new HttpError(405, 'method not allowed');
    const { session, user } = authenticate(parts, req, 'user');
    // Every socket holds memory and a file, and every event is written to each: one session
    // opening thousands would make every message cost thousands of writes.
    // A cap on what is open clears when a socket closes: a client may try again soon.
    const retry = { 'Retry-After': String(SOCKET_CAP_RETRY_S) };
    if ((byToken.get(session!.token)?.size ?? 0) >= MAX_SOCKETS_PER_SESSION) {
      throw new HttpError(429, `too many open sockets for this session (at most ${MAX_SOCKETS_PER_SESSION})`, retry);
    }
    if ((byUser.get(user!.id)?.size ?? 0) >= MAX_SOCKETS_PER_USER) {
      throw new HttpError(429, `too many open sockets for this account (at most ${MAX_SOCKETS_PER_USER})`, retry);
    }
    const { kind } = found.route;
    const container =
      kind === 'user'
        ? null
        : kind === 'channel'
          ? perms.channelAccess(user!, found.params.channel_id).container
          : perms.conversationAccess(user!, found.params.conversation_id);
    return { user: user!, userId: user!.id, token: session!.token, container };
  }

  function connect(ws: WebSocket, { user, ...target }: ReturnType<typeof authorize>): void {
    const peer: Peer = { ws, ...target, alive: true, frames: 0, windowStart: clock.now() };
    // What goes wrong inside this socket's callbacks ends this socket (1011), nothing else.
    const own = <A extends unknown[]>(fn: (...args: A) => void, where: string) =>
      owned(fn, (err) => {
        logFailure(log, `websocket ${where}`)(err);
        ws.close(CLOSE.internalError.code, CLOSE.internalError.reason);
      });
    // Protocol errors (oversize frame: ws closes with 1009, bad UTF-8...) must never reach the process.
    ws.on('error', (err) => log(`websocket error: ${err.message}`));
    ws.on(
      'close',
      owned(() => {
        failpoint('socket.close');
        if (!peers.delete(peer)) return;
        if (peer.container) removeFrom(byContainer, containerKey(peer.container), peer);
        else removeFrom(streams, peer.userId, peer);
        removeFrom(byToken, peer.token, peer);
        removeFrom(byUser, peer.userId, peer);
        if (!byUser.has(peer.userId)) hooks.offline(peer.userId);
      }, logFailure(log, 'websocket close')),
    );
    ws.on('pong', () => {
      peer.alive = true;
    });
    // Frames from clients carry nothing yet; they are only counted, so a flood is cut off.
    const countFrame = own(() => {
      failpoint('socket.message');
      const now = clock.now();
      if (now - peer.windowStart >= FLOOD_WINDOW_MS) {
        peer.windowStart = now;
        peer.frames = 0;
      }
      if (++peer.frames > FLOOD_MAX_FRAMES) drop(peer, CLOSE.policy);
    }, 'frame');
    ws.on('message', countFrame);
    ws.on('ping', countFrame);
    own(() => {
      peers.add(peer);
      addTo(byToken, peer.token, peer);
      addTo(byUser, peer.userId, peer);
      if (byUser.get(peer.userId)!.size === 1) hooks.online(peer.userId);
      if (peer.container) {
        addTo(byContainer, containerKey(peer.container), peer);
        return;
      }
      // The snapshot is taken in the same turn as the subscription: every event committed
      // after it reaches this socket, and none before it is missing from the snapshot.
      addTo(streams, peer.userId, peer);
      failpoint('socket.ready');
      send(peer, Buffer.from(JSON.stringify(hooks.ready(user))));
    }, 'open')();
  }

  /**
   * Starts the closing handshake; the peer leaves the indexes when the socket is closed. Behind
   * sends still waiting in the outbox, so an event that explains a close (standing, removal)
   * arrives before it.
   */
  function drop(peer: Peer, how: { code: number; reason: string }): void {
    if (outbox.length === 0) peer.ws.close(how.code, how.reason);
    else enqueue({ close: peer, how });
  }

  function send(peer: Peer, frame: Buffer): void {
    // The check comes before the send so one event never pushes a healthy socket over.
    if (peer.ws.bufferedAmount > SLOW_CONSUMER_BYTES) {
      drop(peer, CLOSE.tooSlow);
      return;
    }
    peer.ws.send(frame, { binary: false });
  }

  /**
   * Writes an event to these peers; one serialization per distinct content. The audience and
   * the frames are fixed now (the state the event describes); the writes go out through the
   * outbox, SENDS_PER_TURN per event-loop turn, in order.
   */
  function deliver(recipients: Iterable<Peer>, event: LiveEvent): void {
    const peers = [...recipients].filter((peer) => peer.ws.readyState === WebSocket.OPEN);
    // An event nobody receives is never serialized.
    if (peers.length > 0) enqueue({ peers, frameFor: framesOf(event), next: 0 });
  }

  function enqueue(job: Job): void {
    outbox.push(job);
    // From the next turn: the request that caused the event answers first, its fan-out after.
    if (!flushing) {
      flushing = true;
      setImmediate(flush);
    }
  }

  /**
   * Sends from the outbox until this turn's budget is spent, then yields to the event loop
   * (requests, other sockets) and goes on in the next turn. One event to a thousand sockets
   * is a thousand socket writes, tens of milliseconds: spread out, no turn blocks for long.
   */
  function flush(): void {
    let budget = options.sendsPerTurn;
    let sent = 0;
    while (outbox.length > 0 && budget > 0) {
      const job = outbox[0];
      try {
        failpoint('outbox.flush');
        if ('close' in job) {
          outbox.shift();
          job.close.ws.close(job.how.code, job.how.reason);
          continue;
        }
        while (job.next < job.peers.length && budget > 0) {
          const peer = job.peers[job.next++];
          budget--;
          if (peer.ws.readyState !== WebSocket.OPEN) continue;
          send(peer, job.frameFor(peer.userId));
          sent++;
        }
        if (job.next === job.peers.length) outbox.shift();
      } catch (err) {
        // One event that cannot be written (a frame that fails to build) is dropped and logged;
        // the events behind it still go out, in order.
        if (outbox[0] === job) outbox.shift();
        logFailure(log, 'live event delivery')(err);
      }
    }
    if (sent) metrics.framesSent(sent);
    if (outbox.length > 0) setImmediate(flush);
    else flushing = false;
  }

  /** The user streams of these users. */
  function* streamsOf(userIds: Iterable<string>, except?: string): Generator<Peer> {
    for (const userId of userIds) {
      if (userId === except) continue;
      const own = streams.get(userId);
      if (own) yield* own;
    }
  }

  /** An upgrade request: authorized exactly as the HTTP pipeline would, then a socket. */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const started = performance.now();
    const logLine = (status: number) => log(requestLogLine(req.method ?? 'GET', splitUrl(req.url).pathname, status, started));
    let target: ReturnType<typeof authorize>;
    try {
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

  const hub: Hub = {
    publish(container, event) {
      const recipients = byContainer.get(containerKey(container));
      if (recipients) deliver(recipients, event);
    },

    toContainer(container, event, except) {
      // Nobody streaming, nobody to ask the database about.
      if (streams.size === 0) return;
      const audience = container.kind === 'channel' ? directory.serverMemberIds(container.serverId) : directory.conversationMemberIds(container.id);
      deliver(streamsOf(audience, except), event);
    },

    toServer(serverId, event) {
      if (streams.size > 0) deliver(streamsOf(directory.serverMemberIds(serverId)), event);
    },

    toUsers(userIds, event) {
      if (streams.size > 0) deliver(streamsOf(userIds), event);
    },

    hasStream: (userId) => streams.has(userId),

    endSession(token) {
      for (const peer of byToken.get(token) ?? []) drop(peer, CLOSE.sessionEnded);
    },

    dropUser(userId, where) {
      for (const peer of byUser.get(userId) ?? []) {
        const c = peer.container;
        const inScope =
          where === undefined ||
          (c !== null && 'serverId' in where && c.kind === 'channel' && c.serverId === where.serverId) ||
          (c !== null && 'conversationId' in where && c.kind === 'conversation' && c.id === where.conversationId);
        if (inScope) drop(peer, CLOSE.accessRemoved);
      }
    },

    closeRoom(container) {
      for (const peer of byContainer.get(containerKey(container)) ?? []) drop(peer, CLOSE.accessRemoved);
    },

    get hooks() {
      return hooks;
    },
    set hooks(value) {
      hooks = value;
    },

    handleUpgrade(req, socket, head) {
      try {
        upgrade(req, socket, head);
      } catch (err) {
        logFailure(log, 'websocket upgrade')(err);
        socket.destroy();
      }
    },

    get size() {
      return peers.size;
    },

    openSockets() {
      const counts: Record<string, number> = { user: 0, channel: 0, conversation: 0 };
      for (const peer of peers) counts[peer.container?.kind ?? 'user']++;
      return counts;
    },

    close() {
      closing = true;
      clearInterval(heartbeat);
      // Sessions live in memory: a restart ends every one, and a user stream says so (4001),
      // so a client signs in again rather than retrying a dead cookie.
      for (const peer of peers) drop(peer, peer.container ? CLOSE.goingAway : CLOSE.sessionEnded);
      const force = setTimeout(() => {
        for (const peer of peers) peer.ws.terminate();
      }, SHUTDOWN_CLOSE_GRACE_MS);
      force.unref();
    },
  };
  return hub;
}

/** An upgrade refused before any socket exists: a plain HTTP response, as for any request. */
function refuse(socket: Duplex, status: number, reason: string, headers: Record<string, string>): void {
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
