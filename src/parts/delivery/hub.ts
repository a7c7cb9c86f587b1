import { WebSocket } from 'ws';
import { failpoint, logFailure } from '../../core/callbacks';
import { COMPRESS_JSON_MIN_BYTES, compressAnswer } from '../../core/http/encoding';
import { placeOf, showsReplyTo, withoutReply as noReply } from '../../core/message-record';
import type { Container, Log } from '../../core/types';
import type { Permissions } from '../../rules/permissions';
import type { MessageChange, StreamEvent } from './events';
import { type LiveEvent, framesOf } from './frames';

/**
 * Live delivery: who is listening where, and the outbox that writes to them. Two kinds of
 * socket: the spec's room sockets (one channel or conversation, its events in the record shapes
 * of docs/api.md "WebSocket"), and the user stream (`/api/ws`: everything the user can see, each
 * frame `{"event": ...}`). Every publish is called after the write committed. Sockets are opened
 * by src/parts/live/sockets.ts, which registers them here.
 *
 * The hub stands below every part that announces through it (the areas' order: README.md "A tour
 * of the code"): what it must know of the others it asks through an interface of its own
 * (Membership below), which the composition root (src/app.ts) answers with the directory.
 */
export interface Hub {
  /**
   * A change to a message, told once (src/parts/delivery/events.ts): its room's sockets get it in the
   * core contract's shapes, the user streams of everyone who can see it in the catalogue's.
   */
  message(container: Container, change: MessageChange): void;
  /** Something else that follows every message change after its commit, once the sockets are served (web push). */
  onMessage(listener: (container: Container, change: MessageChange) => void): void;
  /** To the user streams of everyone who can see a channel (view_channel) or conversation (`except` one user). */
  toContainer(container: Container, event: StreamEvent, except?: string): void;
  /** To the user streams of every member of a server. */
  toServer(serverId: string, event: StreamEvent): void;
  /** To the user streams of these users. */
  toUsers(userIds: Iterable<string>, event: StreamEvent): void;
  /** Whether a user has a user stream open (presence: who needs events at all). */
  hasStream(userId: string): boolean;
  /** Whether a user has a user stream open whose page is visible (it says so: docs/api.md "What clients send"). */
  hasVisibleStream(userId: string): boolean;
  /** Whether a user has any socket open, a user stream or a room socket. */
  connected(userId: string): boolean;
  /** Closes every socket opened with this session (logout, expiry, password reset). */
  endSession(token: string): void;
  /**
   * Closes a user's sockets: all of them, user streams included (suspension), or the room sockets
   * of one server, channel or conversation (removal, or a channel hidden from them: the user
   * stream stays and is told).
   */
  dropUser(userId: string, where?: { serverId: string } | { channelId: string } | { conversationId: string }): void;
  /** Closes the room sockets of a channel or conversation that no longer exists (4003). */
  closeRoom(container: Container): void;

  // The socket side (src/parts/live/sockets.ts).
  /** A new socket joins the indexes; true when it is its user's first. */
  register(peer: Peer): boolean;
  /** It starts receiving: its room's events, or its user's stream; `first` goes out before anything else. */
  subscribe(peer: Peer, first?: Buffer): void;
  /** A closed socket leaves; true when its user has none left. */
  unregister(peer: Peer): boolean;
  /** Starts the closing handshake, behind what is already queued for the socket. */
  drop(peer: Peer, how: { code: number; reason: string }): void;
  /** Frames made elsewhere (a gateway's, from the core through the bus), written to these sockets in order. */
  relay(peers: Peer[], frame: Buffer): void;
  /** Open sockets of one session and of one user (the caps). */
  countsOf(token: string, userId: string): { session: number; user: number };
  peers(): Iterable<Peer>;

  /** Open sockets, for tests and the benchmark. */
  readonly size: number;
  /** Open sockets by kind, for the metrics. */
  openSockets(): Record<string, number>;
  /** Frames written since the start, for the metrics. */
  readonly framesSent: number;
  /**
   * Closes every socket (1001): shutdown. User streams get `streams`: 4001 from a core or one
   * process, whose sessions end with it; a gateway's stay 1001, since the sessions live on.
   */
  close(streams?: { code: number; reason: string }): void;
}

/** Past this many bytes queued for one socket, its reader is too slow: it is closed, not buffered for. */
export const SLOW_CONSUMER_BYTES = 1024 * 1024;
/** At shutdown, sockets that have not finished the closing handshake by then are cut. */
export const SHUTDOWN_CLOSE_GRACE_MS = 2_000;
/** Socket writes one event-loop turn makes before the rest wait a turn: about 2 ms of sends here. */
export const SENDS_PER_TURN = 100;

/** Close codes (RFC 6455 section 7.4; 4000-4999 are ours). Documented in docs/api.md ("Close codes"). */
export const CLOSE = {
  goingAway: { code: 1001, reason: 'server shutting down' },
  policy: { code: 1008, reason: 'too many frames' },
  sessionEnded: { code: 4001, reason: 'session ended' },
  /** RFC 6455 1012: a gateway lost events meant for the socket (docs/scaling.md); reconnect and catch up. */
  reconnect: { code: 1012, reason: 'reconnect and catch up' },
  accessRemoved: { code: 4003, reason: 'access removed' },
  tooSlow: { code: 4008, reason: 'too slow' },
  internalError: { code: 1011, reason: 'internal error' },
} as const;

/**
 * What the hub needs of a socket: a `ws` WebSocket, or on a core the stand-in for a socket that
 * is open on a gateway (src/parts/cluster/remote.ts), whose writes go to the bus.
 */
export interface PeerSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(frame: Buffer, options: { binary: boolean }): void;
  close(code: number, reason: string): void;
  terminate(): void;
  ping(): void;
}

/** One open socket. */
export interface Peer {
  ws: PeerSocket;
  /** Open on a gateway: the core's writes to it cost a few bytes on the bus, so they are not paced. */
  remote?: boolean;
  userId: string;
  token: string;
  /** The room of a room socket; null for a user stream. */
  container: Container | null;
  /** Answered the last ping. */
  alive: boolean;
  frames: number;
  windowStart: number;
  /** Opened with `?compress=gzip`: a large `ready` goes as a binary frame of gzip (below). */
  gzip: boolean;
  /** Frames waiting while its compressed `ready` is made, sent right after it in order; null otherwise. */
  held: Buffer[] | null;
  /** A user stream whose page said it is hidden (a tab in the background): pushes still go to its user. */
  hidden?: boolean;
}

/** An outbox entry: an event's frames to its audience, or a close that must follow them. */
type Job = { peers: Peer[]; frameFor: (userId: string) => Buffer; next: number } | { close: Peer; how: { code: number; reason: string } };

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

/** Who is in a server or a conversation: the directory (src/parts/community/directory.ts) answers. */
export interface Membership {
  serverMemberIds(serverId: string): Iterable<string>;
  conversationMemberIds(conversationId: string): Iterable<string>;
}

export interface HubParts {
  log: Log;
  directory: Membership;
  /** Who sees a channel (view_channel), kept in memory. */
  perms: Pick<Permissions, 'channelRules'>;
  /** Socket writes per event-loop turn (SENDS_PER_TURN). */
  sendsPerTurn: number;
}

export function createHub({ log, directory, perms, sendsPerTurn }: HubParts): Hub {
  const peers = new Set<Peer>();
  const byContainer: Index = new Map();
  const byToken: Index = new Map();
  const byUser: Index = new Map();
  /** User streams only, by user. */
  const streams: Index = new Map();
  /** Writes and closes not yet made, in the order they were asked for (see flush()). */
  const outbox: Job[] = [];
  const listeners: ((container: Container, change: MessageChange) => void)[] = [];
  let flushing = false;
  let framesSent = 0;

  function drop(peer: Peer, how: { code: number; reason: string }): void {
    if (outbox.length === 0) peer.ws.close(how.code, how.reason);
    else enqueue({ close: peer, how });
  }

  function send(peer: Peer, frame: Buffer): void {
    if (peer.held) {
      peer.held.push(frame);
      return;
    }
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
    const open = [...recipients].filter((peer) => peer.ws.readyState === WebSocket.OPEN);
    // An event nobody receives is never serialized.
    if (open.length > 0) enqueue({ peers: open, frameFor: framesOf(event), next: 0 });
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
    let budget = sendsPerTurn;
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
          if (!peer.remote) budget--;
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
    framesSent += sent;
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

  /** The user streams of everyone who can see a channel (view_channel) or conversation. */
  const streamsIn = (container: Container, except?: string): Iterable<Peer> => {
    // Nobody streaming, nobody to ask the database about.
    if (streams.size === 0) return [];
    const audience =
      container.kind === 'channel' ? (perms.channelRules(container.serverId)?.viewers(container.id) ?? []) : directory.conversationMemberIds(container.id);
    return streamsOf(audience, except);
  };
  const toContainer = (container: Container, event: LiveEvent, except?: string) => deliver(streamsIn(container, except), event);
  /** A message record, whose reactions[].reacted is each recipient's own when `reactors` is given. */
  const asPayload = (record: object) => record as Record<string, unknown>;

  /**
   * How much of a message each reader gets, by their history floor (src/rules/channel-access.ts
   * historyFloor): all of it, all but what it replies to, or nothing. The same rule as REST.
   */
  type Reading = 'whole' | 'noReply' | 'none';
  function readingOf(container: Container, seq: number, replySeq: number | null | undefined): (userId: string) => Reading {
    if (container.kind !== 'channel') return () => 'whole';
    const rules = perms.channelRules(container.serverId);
    return (userId) => {
      const floor = rules?.historyFloor(userId, container.id) ?? Infinity;
      if (floor === 0) return 'whole';
      if (seq <= floor) return 'none';
      return replySeq === undefined || showsReplyTo(floor, replySeq) ? 'whole' : 'noReply';
    };
  }

  /**
   * A change to a message, to its room's sockets and to the user streams of who can see it, each
   * as much as their history floor lets them read: `event(false)` for whole readers,
   * `event(true)` for those who may not read what it replies to.
   */
  function toReaders(
    container: Container,
    change: MessageChange,
    room: ((withoutReply: boolean) => LiveEvent) | null,
    stream: (withoutReply: boolean) => LiveEvent,
  ): void {
    const replySeq = 'message' in change && change.message.reply_to !== null ? change.replySeq : undefined;
    const reading = readingOf(container, change.seq, replySeq);
    const send = (peers: Iterable<Peer>, event: (withoutReply: boolean) => LiveEvent) => {
      const whole: Peer[] = [];
      const partial: Peer[] = [];
      for (const peer of peers) {
        const r = reading(peer.userId);
        if (r === 'whole') whole.push(peer);
        else if (r === 'noReply') partial.push(peer);
      }
      deliver(whole, event(false));
      if (partial.length > 0) deliver(partial, event(true));
    };
    if (room) send(byContainer.get(containerKey(container)) ?? [], room);
    send(streamsIn(container), stream);
  }

  /** A change to a message, to its room's sockets and to the user streams of who can see it. */
  function toSockets(container: Container, change: MessageChange): void {
    const place = placeOf(container);
    if (change.kind === 'deleted') {
      toReaders(
        container,
        change,
        () => ({ payload: { event: 'deleted', id: change.messageId, ...place } }),
        () => ({ payload: { event: 'message_deleted', message_id: change.messageId, ...place } }),
      );
      return;
    }
    const message = (withoutReply: boolean) => (withoutReply ? noReply(change.message) : change.message);
    switch (change.kind) {
      case 'created':
        toReaders(
          container,
          change,
          (w) => ({ payload: asPayload(message(w)) }),
          (w) => ({ payload: asPayload(message(w)), within: { event: 'message', key: 'message' } }),
        );
        return;
      case 'edited':
        toReaders(
          container,
          change,
          (w) => ({ payload: { event: 'edited', ...message(w) }, reactors: change.reactors }),
          (w) => ({ payload: asPayload(message(w)), reactors: change.reactors, within: { event: 'message_edited', key: 'message' } }),
        );
        return;
      case 'updated':
        toReaders(
          container,
          change,
          (w) => ({ payload: { event: 'message_updated', ...message(w) }, reactors: change.reactors }),
          (w) => ({ payload: asPayload(message(w)), reactors: change.reactors, within: { event: 'message_updated', key: 'message' } }),
        );
        return;
      case 'reaction': {
        // The user stream carries the change alone, the same bytes for everyone: a recipient's
        // own `reacted` changes only when user_id is theirs.
        const { emoji, userId, added, count } = change;
        toReaders(
          container,
          change,
          (w) => ({ payload: { event: 'reaction', ...message(w) }, reactors: change.reactors }),
          () => ({ payload: { event: 'reaction', message_id: change.message.id, ...place, emoji, user_id: userId, added, count } }),
        );
        return;
      }
      case 'poll':
        // The user streams alone, the same bytes for everyone (the room sockets keep the spec's events).
        toReaders(container, change, null, () => ({ payload: { event: 'poll_vote', message_id: change.message.id, ...place, poll: change.poll } }));
        return;
      default:
        toReaders(container, change, null, (w) => ({
          payload: asPayload(message(w)),
          reactors: change.reactors,
          within: { event: change.kind === 'pinned' ? 'message_pinned' : 'message_unpinned', key: 'message' },
        }));
    }
  }

  return {
    message(container, change) {
      toSockets(container, change);
      for (const listener of listeners) {
        try {
          listener(container, change);
        } catch (err) {
          logFailure(log, 'message listener')(err);
        }
      }
    },

    onMessage: (listener) => void listeners.push(listener),

    toContainer: (container, event, except) => toContainer(container, { payload: event }, except),

    toServer(serverId, event) {
      if (streams.size > 0) deliver(streamsOf(directory.serverMemberIds(serverId)), { payload: event });
    },

    toUsers(userIds, event) {
      if (streams.size > 0) deliver(streamsOf(userIds), { payload: event });
    },

    hasStream: (userId) => streams.has(userId),

    hasVisibleStream(userId) {
      for (const peer of streams.get(userId) ?? []) if (!peer.hidden) return true;
      return false;
    },

    connected: (userId) => byUser.has(userId),

    endSession(token) {
      for (const peer of byToken.get(token) ?? []) drop(peer, CLOSE.sessionEnded);
    },

    dropUser(userId, where) {
      for (const peer of byUser.get(userId) ?? []) {
        const c = peer.container;
        const inScope =
          where === undefined ||
          (c !== null && 'serverId' in where && c.kind === 'channel' && c.serverId === where.serverId) ||
          (c !== null && 'channelId' in where && c.kind === 'channel' && c.id === where.channelId) ||
          (c !== null && 'conversationId' in where && c.kind === 'conversation' && c.id === where.conversationId);
        if (inScope) drop(peer, CLOSE.accessRemoved);
      }
    },

    closeRoom(container) {
      for (const peer of byContainer.get(containerKey(container)) ?? []) drop(peer, CLOSE.accessRemoved);
    },

    register(peer) {
      peers.add(peer);
      addTo(byToken, peer.token, peer);
      addTo(byUser, peer.userId, peer);
      return byUser.get(peer.userId)!.size === 1;
    },

    subscribe(peer, first) {
      if (peer.container) {
        addTo(byContainer, containerKey(peer.container), peer);
        return;
      }
      // The snapshot is taken in the same turn as the subscription: every event committed
      // after it reaches this socket, and none before it is missing from the snapshot.
      addTo(streams, peer.userId, peer);
      failpoint('socket.ready');
      if (!first) return;
      // A stream opened with ?compress=gzip gets a large `ready` (a big account's is 700 KiB of
      // JSON) as one binary frame of gzip, as large JSON answers are compressed: once, in the
      // thread pool, with no zlib state kept per socket, unlike per-message deflate.
      if (!peer.gzip || first.length < COMPRESS_JSON_MIN_BYTES) return send(peer, first);
      // Events committed from now on wait in `held`, so none overtakes the snapshot.
      peer.held = [];
      const release = (frame: Buffer, binary: boolean) => {
        const held = peer.held ?? [];
        peer.held = null;
        if (peer.ws.readyState !== WebSocket.OPEN) return;
        peer.ws.send(frame, { binary });
        for (const later of held) send(peer, later);
      };
      compressAnswer(first, 'gzip')
        .then(
          (packed) => release(packed, true),
          () => release(first, false),
        )
        .catch((err: unknown) => {
          logFailure(log, 'compressed ready')(err);
          peer.ws.close(CLOSE.internalError.code, CLOSE.internalError.reason);
        });
    },

    unregister(peer) {
      if (!peers.delete(peer)) return false;
      if (peer.container) removeFrom(byContainer, containerKey(peer.container), peer);
      else removeFrom(streams, peer.userId, peer);
      removeFrom(byToken, peer.token, peer);
      removeFrom(byUser, peer.userId, peer);
      return !byUser.has(peer.userId);
    },

    drop,

    relay(recipients, frame) {
      const open = recipients.filter((peer) => peer.ws.readyState === WebSocket.OPEN);
      if (open.length > 0) enqueue({ peers: open, frameFor: () => frame, next: 0 });
    },

    countsOf: (token, userId) => ({ session: byToken.get(token)?.size ?? 0, user: byUser.get(userId)?.size ?? 0 }),

    peers: () => peers,

    get size() {
      return peers.size;
    },

    openSockets() {
      const counts: Record<string, number> = { user: 0, channel: 0, conversation: 0 };
      for (const peer of peers) counts[peer.container?.kind ?? 'user']++;
      return counts;
    },

    get framesSent() {
      return framesSent;
    },

    close(streamsEnd = CLOSE.sessionEnded) {
      // Sessions live in memory: a restart ends every one, and a user stream says so (4001),
      // so a client signs in again rather than retrying a dead cookie.
      for (const peer of peers) drop(peer, peer.container ? CLOSE.goingAway : streamsEnd);
      const force = setTimeout(() => {
        for (const peer of peers) peer.ws.terminate();
      }, SHUTDOWN_CLOSE_GRACE_MS);
      force.unref();
    },
  };
}
