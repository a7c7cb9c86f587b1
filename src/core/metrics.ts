import fs from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DB } from './db';

/**
 * Prometheus metrics (prom-client, the maintained client every Node exporter uses), off unless
 * METRICS=on. Everything here is a no-op when off, so the request path pays nothing for it.
 */
export interface Metrics {
  readonly enabled: boolean;
  /** One answered request: its route pattern (never the raw path: ids would explode the labels). */
  request(method: string, route: string, status: string, seconds: number): void;
  messageSent(): void;
  /** A web push: sent, gone (404/410: the subscription ended), failed, or dropped (the queue was full). */
  push(outcome: 'sent' | 'gone' | 'failed' | 'dropped'): void;
  /** An exception or rejection that no callback owned reached the process (src/server.ts). */
  uncaught(): void;
  /** May this request read /metrics? Only when on, and only where METRICS_HOST allows. */
  mayRead(req: IncomingMessage): boolean;
  /** The text exposition format, and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
  close(): void;
}

export interface MetricsParts {
  enabled: boolean;
  /** Local addresses (interfaces) on which /metrics answers; `*` for any. */
  hosts: string[];
  db: DB;
  databaseFile: string;
  /** The sockets (src/parts/delivery/hub.ts), read when scraped: open by kind, and frames written so far. */
  sockets: { openSockets(): Record<string, number>; readonly framesSent: number };
  /** Voice (src/parts/voice/voice.ts), read when scraped: Janus connected, rooms, people in voice. */
  voice?: { readonly configured: boolean; counts(): { janusUp: boolean; rooms: number; participants: number } };
}

const NONE: Metrics = {
  enabled: false,
  request: () => {},
  messageSent: () => {},
  push: () => {},
  uncaught: () => {},
  mayRead: () => false,
  render: () => Promise.reject(new Error('metrics are off')),
  close: () => {},
};

export function createMetrics(parts: MetricsParts): Metrics {
  if (!parts.enabled) return NONE;
  const registry = new Registry();
  // Event-loop delay (nodejs_eventloop_lag_*), memory, handles, GC: prom-client's defaults,
  // but the delay sampled by a 1 ms timer instead of 10. Node records the interval between the
  // timer's ticks, so at 10 ms an idle loop reads 10 ms and a block reads up to 10 ms long;
  // at 1 ms the figures are the blocks themselves, within a millisecond. The price: about 1-2 %
  // of a core while idle (0.3 % with metrics off, under 1 % at 10 ms), only with METRICS=on.
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1 });
  const requests = new Counter({
    name: 'chat_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'chat_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer handed to the kernel, by route',
    labelNames: ['method', 'route'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const messages = new Counter({ name: 'chat_messages_sent_total', help: 'Messages stored (channels and conversations)', registers: [registry] });
  const pushes = new Counter({
    name: 'chat_push_total',
    help: 'Web pushes by outcome: sent, gone (the subscription ended), failed, dropped (queue full)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  let framesCounted = 0;
  new Counter({
    name: 'chat_websocket_frames_sent_total',
    help: 'WebSocket frames written to sockets (fan-out)',
    registers: [registry],
    collect() {
      const total = parts.sockets.framesSent;
      this.inc(total - framesCounted);
      framesCounted = total;
    },
  });
  const uncaught = new Counter({
    name: 'chat_uncaught_errors_total',
    help: 'Exceptions and rejections no callback owned (each logged with its stack; the server went on)',
    registers: [registry],
  });
  new Gauge({
    name: 'chat_websockets_open',
    help: 'Open WebSockets by kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [kind, count] of Object.entries(parts.sockets.openSockets())) this.set({ kind }, count);
    },
  });
  const voice = parts.voice;
  if (voice?.configured) {
    const voiceGauge = (name: string, help: string, read: (c: ReturnType<NonNullable<MetricsParts['voice']>['counts']>) => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read(voice.counts()));
        },
      });
    voiceGauge('chat_voice_janus_up', 'Whether the chat server has a live session with Janus (1) or not (0)', (c) => (c.janusUp ? 1 : 0));
    voiceGauge('chat_voice_rooms', 'Voice channels with a VideoRoom (someone is in them)', (c) => c.rooms);
    voiceGauge('chat_voice_participants', 'People in voice channels', (c) => c.participants);
  }
  const pageBytes = parts.db.prepare<[], { bytes: number }>('SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()');
  new Gauge({
    name: 'chat_database_bytes',
    help: 'Size of the SQLite database file and its write-ahead log',
    registers: [registry],
    collect() {
      let wal = 0;
      try {
        wal = fs.statSync(`${parts.databaseFile}-wal`).size;
      } catch {
        // no WAL file at this moment
      }
      this.set(pageBytes.get()!.bytes + wal);
    },
  });
  const anyHost = parts.hosts.includes('*');
  const hosts = new Set(parts.hosts.flatMap((h) => [h, `::ffff:${h}`]));

  return {
    enabled: true,
    request(method, route, status, seconds) {
      requests.inc({ method, route, status });
      latency.observe({ method, route }, seconds);
    },
    messageSent: () => messages.inc(),
    push: (outcome) => pushes.inc({ outcome }),
    uncaught: () => uncaught.inc(),
    mayRead(req) {
      // A reverse proxy on this machine connects over loopback too: a request it relays names
      // the outside client in these headers, and is not let in.
      if (req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined) return false;
      return anyHost || hosts.has(req.socket.localAddress ?? '');
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    close: () => registry.clear(),
  };
}
