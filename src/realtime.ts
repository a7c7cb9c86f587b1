import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { authenticate, isCrossSite } from './auth';
import type { Clock } from './clock';
import type { Config } from './config';
import { HttpError } from './http/errors';
import { requestLogLine, toHttpError } from './http/respond';
import { compile, match, splitUrl } from './http/router';
import type { Reaction } from './message-record';
import type { Metrics } from './metrics';
import type { Permissions } from './permissions';
import type { SessionStore } from './sessions';
import type { Container, Log } from './types';
import type { UserStore } from './users';

/** A live event for the sockets of one container (channel or conversation). */
export interface LiveEvent {
  /** The JSON payload; its `reactions[].reacted` is rewritten per recipient when `reactors` is given. */
  payload: Record<string, unknown>;
  /** For message records: emoji -> ids of users who reacted, so `reacted` is set per recipient. */
  reactors?: Map<string, Set<string>>;
}

export interface Hub {
  /** Called after the write committed. */
  publish(container: Container, event: LiveEvent): void;
  /** Closes every socket opened with this session (logout, expiry, password reset). */
  endSession(token: string): void;
  /** Closes a user's sockets: all of them (suspension), or those of one server or conversation (removal). */
  dropUser(userId: string, where?: { serverId: string } | { conversationId: string }): void;
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
export const FLOOD_WINDOW_MS = 10_000;
/** At shutdown, sockets that have not finished the closing handshake by then are cut. */
export const SHUTDOWN_CLOSE_GRACE_MS = 2_000;

/** Close codes (RFC 6455 section 7.4; 4000-4999 are ours). Documented in docs/api.md ("Close codes"). */
export const CLOSE = {
  goingAway: { code: 1001, reason: 'server shutting down' },
  policy: { code: 1008, reason: 'too many frames' },
  sessionEnded: { code: 4001, reason: 'session ended' },
  accessRemoved: { code: 4003, reason: 'access removed' },
  tooSlow: { code: 4008, reason: 'too slow' },
} as const;

export interface HubOptions {
  heartbeatMs: number;
}

/** Defaults read when a hub is created; tests shorten the heartbeat here before starting a server. */
export const realtimeSettings: HubOptions = { heartbeatMs: HEARTBEAT_MS };

interface Peer {
  ws: WebSocket;
  userId: string;
  token: string;
  container: Container;
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
  { method: 'GET', path: '/api/channels/:channel_id/ws', kind: 'channel' as const },
  { method: 'GET', path: '/api/conversations/:conversation_id/ws', kind: 'conversation' as const },
];
const SOCKET_ROUTES = compile(SOCKET_PATHS);

/** What a hub is built from: the pipeline's authentication and the access rules. */
export interface HubParts {
  config: Pick<Config, 'baseUrl'>;
  clock: Clock;
  log: Log;
  metrics: Pick<Metrics, 'framesSent'>;
  sessions: SessionStore;
  users: UserStore;
  perms: Permissions;
}

export function createHub(parts: HubParts, options: HubOptions = realtimeSettings): Hub {
  const { config, clock, log, perms, metrics } = parts;
  // Per-message deflate stays off (the default): it costs memory per socket and would make
  // every socket compress its own copy of a frame we serialize once.
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD_BYTES, clientTracking: false });
  const peers = new Set<Peer>();
  const byContainer: Index = new Map();
  const byToken: Index = new Map();
  const byUser: Index = new Map();
  let closing = false;

  const heartbeat = setInterval(() => {
    for (const peer of peers) {
      if (!peer.alive) {
        peer.ws.terminate();
        continue;
      }
      peer.alive = false;
      peer.ws.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  /** Who may open this socket: the same rules, in the same order, as the HTTP pipeline. */
  function authorize(req: IncomingMessage): Omit<Peer, 'ws' | 'alive' | 'frames' | 'windowStart'> {
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
    if ((byToken.get(session!.token)?.size ?? 0) >= MAX_SOCKETS_PER_SESSION) {
      throw new HttpError(429, `too many open sockets for this session (at most ${MAX_SOCKETS_PER_SESSION})`);
    }
    if ((byUser.get(user!.id)?.size ?? 0) >= MAX_SOCKETS_PER_USER) {
      throw new HttpError(429, `too many open sockets for this account (at most ${MAX_SOCKETS_PER_USER})`);
    }
    const container =
      found.route.kind === 'channel'
        ? perms.channelAccess(user!, found.params.channel_id).container
        : perms.conversationAccess(user!, found.params.conversation_id);
    return { userId: user!.id, token: session!.token, container };
  }

  function connect(ws: WebSocket, target: ReturnType<typeof authorize>): void {
    const peer: Peer = { ws, ...target, alive: true, frames: 0, windowStart: clock.now() };
    peers.add(peer);
    addTo(byContainer, containerKey(peer.container), peer);
    addTo(byToken, peer.token, peer);
    addTo(byUser, peer.userId, peer);
    ws.on('pong', () => {
      peer.alive = true;
    });
    // Frames from clients carry nothing yet; they are only counted, so a flood is cut off.
    const countFrame = () => {
      const now = clock.now();
      if (now - peer.windowStart >= FLOOD_WINDOW_MS) {
        peer.windowStart = now;
        peer.frames = 0;
      }
      if (++peer.frames > FLOOD_MAX_FRAMES) drop(peer, CLOSE.policy);
    };
    ws.on('message', countFrame);
    ws.on('ping', countFrame);
    // Protocol errors (oversize frame: ws closes with 1009, bad UTF-8...) must never reach the process.
    ws.on('error', (err) => log(`websocket error: ${err.message}`));
    ws.on('close', () => {
      peers.delete(peer);
      removeFrom(byContainer, containerKey(peer.container), peer);
      removeFrom(byToken, peer.token, peer);
      removeFrom(byUser, peer.userId, peer);
    });
  }

  /** Starts the closing handshake; the peer leaves the indexes when the socket is closed. */
  function drop(peer: Peer, how: { code: number; reason: string }): void {
    peer.ws.close(how.code, how.reason);
  }

  function send(peer: Peer, frame: Buffer): void {
    // The check comes before the send so one event never pushes a healthy socket over.
    if (peer.ws.bufferedAmount > SLOW_CONSUMER_BYTES) {
      drop(peer, CLOSE.tooSlow);
      return;
    }
    peer.ws.send(frame, { binary: false });
  }

  return {
    publish(container, { payload, reactors }) {
      const recipients = byContainer.get(containerKey(container));
      if (!recipients) return;
      const frameFor = reactors ? perRecipientFrames(payload, reactors) : once(payload);
      let sent = 0;
      for (const peer of recipients) {
        if (peer.ws.readyState !== WebSocket.OPEN) continue;
        send(peer, frameFor(peer.userId));
        sent++;
      }
      metrics.framesSent(sent);
    },

    endSession(token) {
      for (const peer of byToken.get(token) ?? []) drop(peer, CLOSE.sessionEnded);
    },

    dropUser(userId, where) {
      for (const peer of byUser.get(userId) ?? []) {
        const c = peer.container;
        const inScope =
          where === undefined ||
          ('serverId' in where && c.kind === 'channel' && c.serverId === where.serverId) ||
          ('conversationId' in where && c.kind === 'conversation' && c.id === where.conversationId);
        if (inScope) drop(peer, CLOSE.accessRemoved);
      }
    },

    handleUpgrade(req, socket, head) {
      const started = performance.now();
      const logLine = (status: number) => log(requestLogLine(req.method ?? 'GET', splitUrl(req.url).pathname, status, started));
      let target: ReturnType<typeof authorize>;
      try {
        target = authorize(req);
      } catch (err) {
        const error = toHttpError(err, log);
        refuse(socket, error.status, error.message);
        logLine(error.status);
        return;
      }
      // ws answers a malformed handshake (bad key, wrong version) with its own 400.
      wss.handleUpgrade(req, socket, head, (ws) => {
        connect(ws, target);
        logLine(101);
      });
    },

    get size() {
      return peers.size;
    },

    openSockets() {
      const counts: Record<string, number> = { channel: 0, conversation: 0 };
      for (const peer of peers) counts[peer.container.kind]++;
      return counts;
    },

    close() {
      closing = true;
      clearInterval(heartbeat);
      for (const peer of peers) drop(peer, CLOSE.goingAway);
      const force = setTimeout(() => {
        for (const peer of peers) peer.ws.terminate();
      }, SHUTDOWN_CLOSE_GRACE_MS);
      force.unref();
    },
  };
}

/** The same bytes for every recipient, serialized once. */
function once(payload: Record<string, unknown>): (userId: string) => Buffer {
  const frame = Buffer.from(JSON.stringify(payload));
  return () => frame;
}

/**
 * A message record whose `reactions[].reacted` is the recipient's own: everything but the
 * reactions is serialized once, and each distinct set of "my reactions" joins those bytes with
 * its own flags, so one more reaction costs the same however many recipients or reactions
 * there are (a message holds at most MAX_REACTION_EMOJI emoji). `reactions` comes last.
 */
function perRecipientFrames(payload: Record<string, unknown>, reactors: Map<string, Set<string>>): (userId: string) => Buffer {
  const reactions = (payload.reactions ?? []) as Reaction[];
  const rest = JSON.stringify({ ...payload, reactions: undefined });
  const head = `${rest.slice(0, -1)}${rest === '{}' ? '' : ','}"reactions":[`;
  const pieces = reactions.map((r) => `{"emoji":${JSON.stringify(r.emoji)},"count":${r.count},"reacted":`);
  const frames = new Map<string, Buffer>();
  return (userId) => {
    let key = '';
    for (const r of reactions) key += reactors.get(r.emoji)?.has(userId) ? '1' : '0';
    let frame = frames.get(key);
    if (frame === undefined) {
      frame = Buffer.from(`${head}${pieces.map((piece, i) => `${piece}${key[i] === '1'}}`).join(',')}]}`);
      frames.set(key, frame);
    }
    return frame;
  };
}

/** An upgrade refused before any socket exists: a plain HTTP response, as for any request. */
function refuse(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.on('error', () => socket.destroy());
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'Content-Type: text/plain; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
