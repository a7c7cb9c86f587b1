import { createClient } from '@redis/client';
import { logFailure } from '../../core/callbacks';
import type { Log } from '../../core/types';

/**
 * The bus between a core and its gateways (docs/scaling.md): Redis Streams, one stream per
 * gateway. The core appends, in commit order, what each gateway must write to its sockets; the
 * gateway reads its stream in order. Each entry carries the core's epoch (a random id per start)
 * and a number counting that gateway's entries from 1: a gateway that finds a number missing
 * knows that some sockets may have missed events, whatever Redis acknowledged, and has them
 * reconnect and catch up from the database. Nothing depends on the bus keeping what it took.
 *
 * Why Redis Streams through @redis/client: the engine orders, stores and hands out entries by
 * id, so a reader that reconnects goes on from the last id it read; the client is Redis's own,
 * typed, and reconnects by itself.
 */

/** One thing for a gateway to do: a text frame to some of its sockets (their ids), or a close. */
export type BusItem = ['frame', string, number[]] | ['close', number, number, string];

export interface BusEntry {
  epoch: string;
  n: number;
  items: BusItem[];
}

/** The stream of one gateway; gone two minutes after the last entry (a gateway that stopped). */
export const streamOf = (gatewayId: string) => `chat:gateway:${gatewayId}`;
const STREAM_IDLE_MS = 120_000;
/** Entries a stream keeps (about): a gateway is never that far behind unless it is gone. */
const STREAM_MAX_ENTRIES = 10_000;
/** The key gateways show the core's cluster routes: random per core start, kept in Redis. */
export const GATEWAY_KEY = 'chat:gateway-key';
/** Entries the core holds for gateways while Redis does not answer; past it the oldest go (the gateway sees the gap). */
export const MAX_PENDING_ENTRIES = 20_000;
const RETRY_MS = 500;
const KEY_REFRESH_MS = 5_000;

/** A client that reconnects by itself and never holds a command while disconnected: the callers keep what must be retried. */
const newClient = (url: string) =>
  createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: (attempt: number) => Math.min(100 * attempt, 2_000) } });

function connect(url: string, log: Log, name: string, onReady: () => void = () => {}): ReturnType<typeof newClient> {
  const client = newClient(url);
  // Without a listener an 'error' event would stop the process; a bus that is down is logged, once per outage.
  let down = false;
  client.on('error', (err: Error) => {
    if (!down) log(`bus (${name}): ${err.message}; retrying`);
    down = true;
  });
  client.on('ready', () => {
    if (down) log(`bus (${name}): connected again`);
    down = false;
    onReady();
  });
  client.connect().catch(logFailure(log, `bus (${name}) connect`));
  return client;
}

export interface Publisher {
  /** Adds an entry to a gateway's stream; entries go out in the order given, retried until Redis takes them. */
  append(gatewayId: string, items: BusItem[]): void;
  readonly pending: number;
  close(): Promise<void>;
}

/** The core's writer. It also keeps the gateway key in Redis: at each connection, and every few seconds (Redis may have restarted empty). */
export function createPublisher({
  url,
  epoch,
  key,
  log,
  onDropped,
}: {
  url: string;
  epoch: string;
  key: string;
  log: Log;
  onDropped(count: number): void;
}): Publisher {
  const publishKey = () => void client.set(GATEWAY_KEY, key).catch(() => {});
  const client = connect(url, log, 'publisher', publishKey);
  const keyTimer = setInterval(publishKey, KEY_REFRESH_MS);
  const numbers = new Map<string, number>();
  const queue: { stream: string; fields: Record<string, string> }[] = [];
  let pumping = false;
  let closed = false;

  async function pump(): Promise<void> {
    if (pumping || closed) return;
    pumping = true;
    try {
      while (queue.length > 0 && !closed) {
        const batch = queue.slice(0, 200);
        try {
          // Commands of one turn go out as one pipeline, answered in order.
          await Promise.all(
            batch.flatMap(({ stream, fields }) => [
              client.xAdd(stream, '*', fields, { TRIM: { strategy: 'MAXLEN', strategyModifier: '~', threshold: STREAM_MAX_ENTRIES } }),
              client.pExpire(stream, STREAM_IDLE_MS),
            ]),
          );
          queue.splice(0, batch.length);
        } catch {
          // Redis is away (the client logs it): the same entries go again. One that Redis took
          // before the failure comes twice, and the gateway skips a number it has seen.
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    } finally {
      pumping = false;
    }
  }

  return {
    append(gatewayId, items) {
      const n = (numbers.get(gatewayId) ?? 0) + 1;
      numbers.set(gatewayId, n);
      queue.push({ stream: streamOf(gatewayId), fields: { epoch, n: String(n), items: JSON.stringify(items) } });
      if (queue.length > MAX_PENDING_ENTRIES) {
        const dropped = queue.length - MAX_PENDING_ENTRIES;
        queue.splice(0, dropped);
        onDropped(dropped);
      }
      void pump();
    },

    get pending() {
      return queue.length;
    },

    async close() {
      closed = true;
      clearInterval(keyTimer);
      await client.close().catch(() => client.destroy());
    },
  };
}

export interface Subscriber {
  /** The core's gateway key as Redis holds it now (null when there is none yet). */
  key(): Promise<string | null>;
  close(): Promise<void>;
}

/** A gateway's reader: every entry of its stream, in order, to `onEntry`; after an outage it goes on from the last id read. */
export function createSubscriber({ url, gatewayId, log, onEntry }: { url: string; gatewayId: string; log: Log; onEntry(entry: BusEntry): void }): Subscriber {
  const client = connect(url, log, 'commands');
  const reader = connect(url, log, 'reader');
  const stream = streamOf(gatewayId);
  let lastId = '0';
  let closed = false;

  async function read(): Promise<void> {
    while (!closed) {
      try {
        const answer = await reader.xRead({ key: stream, id: lastId }, { BLOCK: 5_000, COUNT: 500 });
        for (const { messages } of (answer ?? []) as { messages: { id: string; message: Record<string, string> }[] }[]) {
          for (const { id, message } of messages) {
            lastId = id;
            const entry = parseEntry(message);
            if (entry) onEntry(entry);
            else log(`bus: an entry of ${stream} is not one of ours (skipped)`);
          }
        }
      } catch {
        if (!closed) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
  void read().catch(logFailure(log, 'bus reader'));

  return {
    key: () => client.get(GATEWAY_KEY),
    async close() {
      closed = true;
      await Promise.all([client.close().catch(() => client.destroy()), Promise.resolve(reader.destroy())]);
    },
  };
}

function parseEntry(message: Record<string, string>): BusEntry | null {
  const n = Number(message.n);
  if (typeof message.epoch !== 'string' || !Number.isInteger(n) || n < 1) return null;
  try {
    const items = JSON.parse(message.items) as unknown;
    return Array.isArray(items) ? { epoch: message.epoch, n, items: items as BusItem[] } : null;
  } catch {
    return null;
  }
}
