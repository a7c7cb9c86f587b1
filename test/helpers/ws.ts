import zlib from 'node:zlib';
import t from 'tap';
import WebSocket from 'ws';
import type { Client } from './client';
import { frameViolation } from './frames';

/** Frames received in this test file that docs/asyncapi.json does not describe. */
const violations: string[] = [];
t.after(() => {
  if (violations.length > 0) t.fail(`${violations.length} frame(s) contradict docs/asyncapi.json`, { violations: violations.slice(0, 5) });
});

/** Every wait is bounded: a missing event fails the test with a reason instead of hanging it. */
export const WAIT_MS = 5_000;

export interface Closed {
  code: number;
  reason: string;
}

/** A real `ws` client that queues what it receives, so tests can await events in order. */
export interface LiveSocket {
  ws: WebSocket;
  /** The next frame, parsed as JSON. */
  next<T = any>(timeoutMs?: number): Promise<T>;
  /** The next frame that matches, skipping the others (bounded like next()). */
  until<T = any>(match: (frame: any) => boolean, timeoutMs?: number): Promise<T>;
  /** The next frame whose `event` is `name`, skipping the others. */
  event<T = any>(name: string, timeoutMs?: number): Promise<T>;
  /** Every frame received within `ms` (for asserting that something did not arrive). */
  drain(ms: number): Promise<any[]>;
  /** How many frames came binary (gzip of the JSON, `?compress=gzip`); next() unpacks them. */
  binaryFrames(): number;
  /** Resolves when the server (or the network) closed the socket. */
  closed(timeoutMs?: number): Promise<Closed>;
  close(): void;
}

export interface SocketOptions {
  /** Whose cookie to send; none for an anonymous handshake. */
  client?: Client;
  origin?: string;
  /** false: the client never answers pings (a dead peer, for the heartbeat). */
  autoPong?: boolean;
  /** More handshake headers (a bot's Authorization). */
  headers?: Record<string, string>;
}

const wsUrl = (base: string, path: string) => base.replace(/^http/, 'ws') + path;

function headersFor(opts: SocketOptions): Record<string, string> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.client?.cookie) headers.cookie = opts.client.cookie;
  if (opts.origin) headers.origin = opts.origin;
  return headers;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Opens a socket and resolves once the handshake succeeded. */
export async function openSocket(base: string, path: string, opts: SocketOptions = {}): Promise<LiveSocket> {
  const ws = new WebSocket(wsUrl(base, path), { headers: headersFor(opts), autoPong: opts.autoPong ?? true });
  const queue: unknown[] = [];
  const waiters: ((value: unknown) => void)[] = [];
  let binaryFrames = 0;
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) binaryFrames++;
    const parsed: unknown = JSON.parse(isBinary ? zlib.gunzipSync(data).toString() : data.toString());
    // A frame the document does not describe fails the test that reads it, and the file at its end.
    const violation = frameViolation(path, parsed);
    if (violation) violations.push(violation);
    const value = violation ? new Error(violation) : parsed;
    const waiter = waiters.shift();
    if (waiter) waiter(value);
    else queue.push(value);
  });
  ws.on('error', () => {});
  const closed = new Promise<Closed>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await withTimeout(
    new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused with ${res.statusCode}`)));
      ws.once('error', reject);
    }),
    WAIT_MS,
    `the handshake of ${path}`,
  );
  const next = <T>(timeoutMs = WAIT_MS) =>
    withTimeout(
      new Promise<T>((resolve, reject) => {
        const settle = (value: unknown) => (value instanceof Error ? reject(value) : resolve(value as T));
        if (queue.length) settle(queue.shift());
        else waiters.push(settle);
      }),
      timeoutMs,
      `an event on ${path}`,
    );
  const until = async <T>(match: (frame: any) => boolean, timeoutMs = WAIT_MS): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const frame = await next<T>(Math.max(1, deadline - Date.now()));
      if (match(frame)) return frame;
    }
  };
  return {
    ws,
    next,
    until,
    event: <T>(name: string, timeoutMs?: number) => until<T>((frame) => frame.event === name, timeoutMs),
    drain: async (ms: number) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return queue.splice(0);
    },
    binaryFrames: () => binaryFrames,
    closed: (timeoutMs = WAIT_MS) => withTimeout(closed, timeoutMs, `the close of ${path}`),
    close: () => ws.close(),
  };
}

/** Attempts a handshake expected to fail; resolves with the plain HTTP answer. */
export async function refusedUpgrade(
  base: string,
  path: string,
  opts: SocketOptions = {},
): Promise<{ status: number; contentType: string | undefined; headers: Record<string, string | string[] | undefined>; body: string }> {
  const ws = new WebSocket(wsUrl(base, path), { headers: headersFor(opts) });
  ws.on('error', () => {});
  return withTimeout(
    new Promise((resolve, reject) => {
      ws.once('open', () => {
        ws.close();
        reject(new Error(`upgrade of ${path} was accepted`));
      });
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], headers: res.headers, body }));
      });
    }),
    WAIT_MS,
    `the refusal of ${path}`,
  );
}
