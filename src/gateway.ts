import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { every, logFailure, owned } from './core/callbacks';
import { systemClock } from './core/clock';
import type { Config } from './core/config';
import { HttpError } from './core/http/errors';
import { requestLogLine, setBaseHeaders, toHttpError } from './core/http/respond';
import { compile, match, splitUrl } from './core/http/router';
import { stdoutLog } from './core/log';
import type { Log } from './core/types';
import { type BusEntry, type BusItem, createSubscriber } from './parts/cluster/bus';
import { EPOCH_HEADER, FORWARDED_HEADERS, GATEWAY_ALIVE_MS, GATEWAY_KEY_HEADER, OPEN_SOCKET_PATH, REPORT_PATH, USER_HEADER } from './parts/cluster/protocol';
import { CLOSE, type Peer, SENDS_PER_TURN, createHub } from './parts/delivery/hub';
import {
  HEARTBEAT_MS,
  SOCKET_CAP_RETRY_S,
  SOCKET_PATHS,
  WS_MAX_PAYLOAD_BYTES,
  attachSocket,
  readSocketRequest,
  refuse,
  startHeartbeat,
} from './parts/live/sockets';

/**
 * ROLE=gateway (docs/scaling.md): a process that holds user streams and room sockets and nothing
 * else. Each upgrade is authorized by the core (the same rules, the same refusals) and answered
 * with the `ready` the core built; from then on the core names this gateway's sockets in the
 * entries it appends to the gateway's stream on the bus, and the gateway writes those frames
 * with the same outbox as a single process (src/parts/delivery/hub.ts): pacing, slow readers,
 * heartbeats and flood limits are the same. It has no database and keeps no sessions.
 */
export interface RunningGateway {
  server: http.Server;
  /** Sockets open here, for tests. */
  readonly sockets: number;
  close(): Promise<void>;
}

/** An answer from the core slower than this is taken for none: the upgrade gets 503. */
const CORE_TIMEOUT_MS = 10_000;
const SOCKET_ROUTES = compile(SOCKET_PATHS);

/** A socket being opened: what the bus named it while the core's answer was on its way. */
interface Opening {
  items: BusItem[];
  /** The bus lost entries meanwhile: the socket may have missed some. */
  missed: boolean;
}

export function createGateway({ config, log = stdoutLog }: { config: Config; log?: Log }): RunningGateway {
  const coreUrl = new URL(config.coreUrl!);
  const gatewayId = crypto.randomUUID();
  // A gateway resolves no audience: the core names the sockets of every frame.
  const hub = createHub({
    log,
    directory: { serverMemberIds: () => [], conversationMemberIds: () => [] },
    perms: { channelRules: () => null },
    sendsPerTurn: SENDS_PER_TURN,
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD_BYTES, clientTracking: false });
  const agent = coreUrl.protocol === 'https:' ? new https.Agent({ keepAlive: true, maxSockets: 32 }) : new http.Agent({ keepAlive: true, maxSockets: 32 });
  /** Open sockets by id, with the core's epoch they were opened under. */
  const open = new Map<number, { peer: Peer; epoch: string }>();
  const opening = new Map<number, Opening>();
  let nextId = 0;
  let coreKey: string | null = null;
  let closing = false;
  /** The core's epoch and the number of the last entry read from the bus. */
  let busEpoch = '';
  let lastN = 0;

  const subscriber = createSubscriber({
    url: config.busUrl!,
    gatewayId,
    log,
    onEntry: owned((entry: BusEntry) => apply(entry), logFailure(log, 'bus entry')),
  });

  /** One entry of the bus, in order: frames and closes for the sockets it names. */
  function apply(entry: BusEntry): void {
    if (entry.epoch !== busEpoch) {
      // A new start of the core numbers its entries from 1 again.
      busEpoch = entry.epoch;
      lastN = 0;
    }
    if (entry.n <= lastN) return; // Seen already: Redis took it twice when the core retried.
    if (entry.n > lastN + 1) lost(entry.epoch, entry.n - lastN - 1);
    lastN = entry.n;
    for (const item of entry.items) {
      if (item[0] === 'frame') {
        const [, text, ids] = item;
        const frame = Buffer.from(text);
        const peers: Peer[] = [];
        for (const id of ids) {
          const found = open.get(id);
          if (found) peers.push(found.peer);
          else opening.get(id)?.items.push(item);
        }
        hub.relay(peers, frame);
      } else {
        const [, id, code, reason] = item;
        const found = open.get(id);
        if (found) hub.drop(found.peer, { code, reason });
        else opening.get(id)?.items.push(item);
      }
    }
  }

  /**
   * Entries of the bus are missing (Redis restarted and lost what it had acknowledged, or the
   * core dropped them while Redis was away): any socket may have missed events, so every one
   * reconnects and catches up from the database, as after any drop.
   */
  function lost(epoch: string, count: number): void {
    log(`bus: ${count} entries missing; the sockets reconnect and catch up`);
    for (const { peer, epoch: opened } of open.values()) if (opened === epoch) hub.drop(peer, CLOSE.reconnect);
    for (const pending of opening.values()) pending.missed = true;
  }

  /** A JSON request to the core with the gateway key (fetched again from Redis once if refused). */
  async function callCore(path: string, body: unknown, retried = false): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
    coreKey ??= await subscriber.key();
    if (coreKey === null) throw new Error('no gateway key in Redis yet (is the core running?)');
    const answer = await post(path, JSON.stringify(body), coreKey);
    if (answer.status === 403 && answer.headers[EPOCH_HEADER] === undefined && !retried) {
      // The core restarted with a new key.
      coreKey = null;
      return callCore(path, body, true);
    }
    return answer;
  }

  function post(path: string, body: string, key: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
    return new Promise((resolve, reject) => {
      const req = (coreUrl.protocol === 'https:' ? https : http).request(
        new URL(path, coreUrl),
        {
          method: 'POST',
          agent,
          timeout: CORE_TIMEOUT_MS,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), [GATEWAY_KEY_HEADER]: key },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('the core did not answer in time')));
      req.on('error', reject);
      req.end(body);
    });
  }

  /** An upgrade: checked here as far as no account is needed, then authorized by the core. */
  async function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const started = performance.now();
    const logLine = (status: number) => log(requestLogLine(req.method ?? 'GET', splitUrl(req.url).pathname, status, started));
    const refuseWith = (err: unknown) => {
      const error = toHttpError(err, log);
      refuse(socket, error.status, error.message, error.headers);
      logLine(error.status);
    };
    let id = 0;
    try {
      if (closing) throw new HttpError(503, 'server shutting down');
      const { kind, params, gzip } = readSocketRequest(req, config.baseUrl);
      // Voice signaling is held by the core, which is Janus's client (docs/voice.md).
      if (kind === 'voice') throw new HttpError(501, 'voice sockets are served by the core, not by a gateway: route /api/voice/ws to it');
      id = ++nextId;
      opening.set(id, { items: [], missed: false });
      const headers: Record<string, string> = {};
      for (const name of FORWARDED_HEADERS) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      let answer;
      try {
        answer = await callCore(OPEN_SOCKET_PATH, { gateway: gatewayId, socket: id, url: req.url ?? '/', headers });
      } catch (err) {
        log(`gateway: the core did not answer (${(err as Error).message})`);
        throw new HttpError(503, 'the server is not answering; try again', { 'Retry-After': String(SOCKET_CAP_RETRY_S) });
      }
      const epoch = answer.headers[EPOCH_HEADER];
      if (answer.status !== 200 && answer.status !== 204) {
        if (typeof epoch !== 'string') throw new HttpError(503, 'the server refused this gateway; try again', { 'Retry-After': String(SOCKET_CAP_RETRY_S) });
        // The core's refusal, as the upgrade's own: the same status, reason and headers.
        const passOn: Record<string, string> = {};
        for (const name of ['retry-after', 'allow'])
          if (typeof answer.headers[name] === 'string') passOn[name === 'allow' ? 'Allow' : 'Retry-After'] = answer.headers[name] as string;
        throw new HttpError(answer.status, answer.text.trim() || 'refused', passOn);
      }
      const pending = opening.get(id)!;
      if (pending.missed || closing || socket.destroyed) {
        // The core forgets it at the next report (it is in neither list).
        throw new HttpError(503, 'try again', { 'Retry-After': '1' });
      }
      const userId = String(answer.headers[USER_HEADER] ?? '');
      // The room (its server is the core's business: the core names the sockets of each frame).
      const container = kind === 'user' ? null : kind === 'channel' ? { kind, id: params.channel_id, serverId: '' } : { kind, id: params.conversation_id };
      wss.handleUpgrade(req, socket, head, (ws) => {
        const peer = { ws, userId, token: '', container, gzip, alive: true, frames: 0, windowStart: systemClock.now(), held: null };
        // The core decides about pushes: it hears which streams are hidden with the next report, soon.
        const opened = attachSocket(peer, { clock: systemClock, log, hub, onClose: closed(id), onVisibility: reportSoon });
        opened(() => {
          hub.register(peer);
          open.set(id, { peer, epoch: epoch as string });
          opening.delete(id);
          hub.subscribe(peer, answer.status === 200 ? Buffer.from(answer.text) : undefined);
          // What the bus named this socket while its answer was on the way, in order.
          for (const item of pending.items) {
            if (item[0] === 'frame') hub.relay([peer], Buffer.from(item[1]));
            else hub.drop(peer, { code: item[2], reason: item[3] });
          }
        });
        logLine(101);
      });
    } catch (err) {
      opening.delete(id);
      refuseWith(err);
    }
  }

  /** A socket closed here: it leaves the hub, and the core hears of it with the next report, soon. */
  const closed = (id: number) => (peer: Peer) => {
    hub.unregister(peer);
    open.delete(id);
    reportSoon();
  };

  let reportTimer: NodeJS.Timeout | null = null;
  function reportSoon(): void {
    reportTimer ??= setTimeout(() => void report(), 100);
  }

  /**
   * Tells the core which sockets this gateway holds or is opening. Sockets the core does not
   * know (it restarted: their sessions ended with it; or it took this gateway for gone) are
   * closed. While the core does not answer, the sockets are held: they have nothing to miss.
   */
  async function report(): Promise<void> {
    if (reportTimer) clearTimeout(reportTimer);
    reportTimer = null;
    const held = new Map(open);
    // Sockets given ids after this report was made may reach the core before it: they are not
    // in it, and the core keeps every socket above `up_to`.
    const upTo = nextId;
    try {
      const hidden = [...held].filter(([, { peer }]) => peer.hidden).map(([id]) => id);
      const answer = await callCore(REPORT_PATH, { gateway: gatewayId, sockets: [...held.keys(), ...opening.keys()], up_to: upTo, hidden });
      if (answer.status !== 200) return log(`gateway: the core answered ${answer.status} to a report: ${answer.text.trim()}`);
      const { epoch, unknown } = JSON.parse(answer.text) as { epoch: string; unknown: number[] };
      const forgotten = new Set(unknown);
      for (const [id, { peer, epoch: opened }] of held) {
        if (!open.has(id)) continue;
        // Sessions live in the core's memory: a core that started again ended them all (4001).
        if (opened !== epoch) hub.drop(peer, CLOSE.sessionEnded);
        else if (forgotten.has(id)) hub.drop(peer, CLOSE.reconnect);
      }
    } catch {
      // The core is not answering (restarting): hold on, ask again at the next beat.
    }
  }
  const reporter = every(GATEWAY_ALIVE_MS, 'gateway report', () => void report(), log);
  const heartbeat = startHeartbeat(hub, HEARTBEAT_MS, log);

  const server = http.createServer((req, res) => {
    setBaseHeaders(res);
    const { pathname } = splitUrl(req.url);
    const method = req.method ?? 'GET';
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8', headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...headers });
      res.end(method === 'HEAD' ? undefined : body);
      log(requestLogLine(method, pathname, status, started));
    };
    const started = performance.now();
    if (pathname === '/healthz' && (method === 'GET' || method === 'HEAD'))
      return reply(200, JSON.stringify({ ok: true, role: 'gateway', sockets: open.size }), 'application/json; charset=utf-8');
    const found = match(SOCKET_ROUTES, method, pathname);
    if (found && 'allow' in found) return reply(405, 'method not allowed\n', undefined, { Allow: found.allow.join(', ') });
    if (found) return reply(426, 'this address takes a WebSocket upgrade (Upgrade: websocket)\n', undefined, { Upgrade: 'websocket' });
    reply(404, 'not found: this is a gateway, which serves sockets only; the API is on the core\n');
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((err: unknown) => {
      logFailure(log, 'websocket upgrade')(err);
      socket.destroy();
    });
  });
  server.on('clientError', (_err, socket: Duplex) => socket.destroy());
  // Past this many connections Node drops new ones (a socket is a file: MAX_CONNECTIONS).
  server.maxConnections = config.maxConnections;

  let closingDone: Promise<void> | undefined;
  return {
    server,
    get sockets() {
      return open.size;
    },
    close: () =>
      (closingDone ??= (async () => {
        closing = true;
        clearInterval(reporter);
        clearInterval(heartbeat);
        // The sessions live on in the core: every socket here is told to go elsewhere (1001).
        hub.close(CLOSE.goingAway);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await subscriber.close().catch(logFailure(log, 'bus close'));
        agent.destroy();
      })()),
  };
}
