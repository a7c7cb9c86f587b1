import crypto from 'node:crypto';
import { WebSocket } from 'ws';
import { every, logFailure } from '../../core/callbacks';
import type { Clock } from '../../core/clock';
import { HttpError } from '../../core/http/errors';
import type { Log } from '../../core/types';
import type { Peer, PeerSocket } from '../delivery/hub';
import type { SocketRequest, Sockets } from '../live/sockets';
import { type BusItem, type Publisher, createPublisher } from './bus';
import { GATEWAY_ALIVE_MS, GATEWAY_TIMEOUT_MS } from './protocol';

/**
 * The core's side of its gateways (docs/scaling.md). A socket open on a gateway is a peer of the
 * core's hub like any other, so audiences, presence, caps, session ends and suspensions are
 * worked out exactly as for the core's own sockets; only its writes differ: they are gathered
 * per gateway for one turn of the event loop and appended to that gateway's stream on the bus.
 *
 * Gateways report every `GATEWAY_ALIVE_MS` which sockets they hold; a gateway not heard from for
 * `GATEWAY_TIMEOUT_MS` is taken for gone and its sockets leave (presence, caps).
 */

export interface Cluster {
  /** A random id of this start of the core: a gateway that sees it change knows the sessions ended. */
  readonly epoch: string;
  /** Whether a request carries this core's gateway key. */
  keyMatches(shown: string | undefined): boolean;
  /** A gateway asks to open socket `peer` for this upgrade request: throws the refusal, or returns whose it is and the `ready` of a user stream. */
  open(gatewayId: string, peer: number, req: SocketRequest): { ready: string | null; userId: string };
  /**
   * A gateway's report of the sockets it holds (or is opening), made when its ids went up to
   * `upTo`, and of those whose page is hidden; answers those the core does not know.
   */
  alive(gatewayId: string, peers: number[], upTo: number, hidden: number[]): number[];
  /** Sockets open on gateways, for the metrics. */
  readonly remoteSockets: number;
  close(): Promise<void>;
}

/** A gateway as the core knows it: its sockets, when it was last heard, what it is to be sent this turn. */
interface Gateway {
  id: string;
  heardAt: number;
  peers: Map<number, Peer>;
  items: BusItem[];
  /** The frame the last item carries, to add a socket to it rather than repeat the frame. */
  lastFrame: Buffer | null;
}

export interface ClusterParts {
  busUrl: string;
  clock: Clock;
  log: Log;
  sockets: Pick<Sockets, 'admit' | 'release'>;
}

export function createCluster({ busUrl, clock, log, sockets }: ClusterParts): Cluster {
  const epoch = crypto.randomUUID();
  const key = crypto.randomBytes(32).toString('base64url');
  const gateways = new Map<string, Gateway>();
  const publisher: Publisher = createPublisher({
    url: busUrl,
    epoch,
    key,
    log,
    onDropped: (count) => log(`bus: Redis has not answered for long; ${count} entries for gateways dropped (their sockets reconnect and catch up)`),
  });
  /** Gateways with items gathered this turn. */
  const due = new Set<Gateway>();
  let remoteSockets = 0;

  /** Items of this turn go to the bus as one entry per gateway, after the turn's writes. */
  function queue(gateway: Gateway, item: BusItem, frame: Buffer | null): void {
    gateway.items.push(item);
    gateway.lastFrame = frame;
    if (due.size === 0) setImmediate(flush);
    due.add(gateway);
  }

  function flush(): void {
    for (const gateway of due) {
      publisher.append(gateway.id, gateway.items);
      gateway.items = [];
      gateway.lastFrame = null;
    }
    due.clear();
  }

  /** The stand-in for a socket open on a gateway: the hub writes to it as to any socket. */
  class RemoteSocket implements PeerSocket {
    readyState: number = WebSocket.OPEN;
    readonly bufferedAmount = 0;
    peer: Peer | null = null;
    constructor(
      private readonly gateway: Gateway,
      readonly id: number,
    ) {}

    send(frame: Buffer): void {
      if (this.readyState !== WebSocket.OPEN) return;
      const { gateway } = this;
      const last = gateway.items[gateway.items.length - 1];
      if (gateway.lastFrame === frame && last?.[0] === 'frame') last[2].push(this.id);
      else queue(gateway, ['frame', frame.toString(), [this.id]], frame);
    }

    close(code: number, reason: string): void {
      if (this.readyState !== WebSocket.OPEN) return;
      queue(this.gateway, ['close', this.id, code, reason], null);
      this.gone();
    }

    terminate(): void {
      this.close(1006, 'terminated');
    }

    ping(): void {}

    /** The socket leaves the hub (closed here, on its gateway, or with its gateway). */
    gone(): void {
      if (this.readyState === WebSocket.CLOSED) return;
      this.readyState = WebSocket.CLOSED;
      this.gateway.peers.delete(this.id);
      remoteSockets--;
      if (this.peer) sockets.release(this.peer);
    }
  }

  function gatewayOf(id: string): Gateway {
    let gateway = gateways.get(id);
    if (!gateway) {
      gateway = { id, heardAt: clock.now(), peers: new Map(), items: [], lastFrame: null };
      gateways.set(id, gateway);
    }
    return gateway;
  }

  function forget(gateway: Gateway): void {
    gateways.delete(gateway.id);
    for (const peer of [...gateway.peers.values()]) (peer.ws as RemoteSocket).gone();
  }

  // A gateway not heard from for GATEWAY_TIMEOUT_MS is gone. A sweep that itself ran late (this
  // process was stopped, or blocked) counts nobody's silence over that time.
  let lastSweep = clock.now();
  const sweeper = every(
    GATEWAY_ALIVE_MS,
    'gateway sweep',
    () => {
      const now = clock.now();
      const late = now - lastSweep - GATEWAY_ALIVE_MS;
      lastSweep = now;
      for (const gateway of gateways.values()) {
        if (late > GATEWAY_ALIVE_MS) gateway.heardAt += late;
        else if (now - gateway.heardAt > GATEWAY_TIMEOUT_MS) {
          log(`gateway ${gateway.id} not heard from for ${GATEWAY_TIMEOUT_MS / 1000} s: its ${gateway.peers.size} sockets are taken for closed`);
          forget(gateway);
        }
      }
    },
    log,
  );

  return {
    epoch,

    keyMatches(shown) {
      if (shown === undefined) return false;
      const a = Buffer.from(shown);
      const b = Buffer.from(key);
      return a.length === b.length && crypto.timingSafeEqual(a, b);
    },

    open(gatewayId, id, req) {
      const gateway = gatewayOf(gatewayId);
      gateway.heardAt = clock.now();
      if (gateway.peers.has(id)) throw new HttpError(400, 'socket id already open on this gateway');
      const socket = new RemoteSocket(gateway, id);
      const { peer, ready } = sockets.admit(req, socket);
      socket.peer = peer;
      gateway.peers.set(id, peer);
      remoteSockets++;
      return { ready, userId: peer.userId };
    },

    alive(gatewayId, held, upTo, hidden) {
      const gateway = gatewayOf(gatewayId);
      gateway.heardAt = clock.now();
      const holds = new Set(held);
      // Which user streams' pages are hidden (pushes go to users with none visible).
      const hiddenNow = new Set(hidden);
      for (const [id, peer] of gateway.peers) peer.hidden = hiddenNow.has(id);
      // A socket the gateway no longer holds closed there: it leaves here too. One opened after
      // the report was made (a higher id) may have overtaken it: it stays.
      for (const [id, peer] of gateway.peers) if (id <= upTo && !holds.has(id)) (peer.ws as RemoteSocket).gone();
      return held.filter((id) => !gateway.peers.has(id));
    },

    get remoteSockets() {
      return remoteSockets;
    },

    async close() {
      clearInterval(sweeper);
      flush();
      // What is still queued gets a moment to reach Redis (the gateways then see the closes).
      const until = Date.now() + 2_000;
      while (publisher.pending > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      await publisher.close().catch(logFailure(log, 'bus close'));
    },
  };
}
