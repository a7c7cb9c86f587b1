import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { describeError, logFailure, owned } from '../../core/callbacks';
import type { Log } from '../../core/types';
import {
  type HandleEvent,
  type IceCandidate,
  JANUS_ADMIN_PROTOCOL,
  JANUS_PROTOCOL,
  JanusError,
  type JanusFrame,
  type Jsep,
  VIDEOROOM_PLUGIN,
  handleEventOf,
  pluginAnswer,
  readFrame,
} from './janus-api';

/**
 * Our server's client of Janus (docs: src/parts/voice/janus-api.ts for the frames). The chat
 * server is Janus's only client: it holds one Janus session over one WebSocket, and every
 * voice participant is a handle in it (a publisher handle, a subscriber handle).
 *
 * - Janus runs with `token_auth`: at each connection the client adds a random token of its own
 *   through the Admin API (`add_token`, valid for the VideoRoom only) and sends it with every
 *   request; browsers never see it, and it dies with Janus.
 * - Each request has a transaction and a deadline. An asynchronous plugin request is answered
 *   `ack` then `event`; the promise settles on the event. Frames that answer no request go to
 *   the handle they name (`sender`): the VideoRoom's events, webrtcup, media, hangup.
 * - A keepalive every `keepaliveMs` holds the session open (Janus drops it after its
 *   `session_timeout`, 60 s by default); one that goes unanswered counts as a lost connection.
 * - When the connection is lost (Janus restarted, the socket closed, the session timed out),
 *   every handle is gone with it: `onLost` says so, the client reconnects by itself with a
 *   growing wait, and `onReady({ reconnected: true })` tells the caller to rebuild its state
 *   (rooms outlive a session but not a restart of Janus: check them with `exists`).
 * - Nothing thrown in a socket or timer callback leaves it: each has an owner (the request it
 *   answers, a handle's listener wrapped by owned(), or the log).
 *
 * Why plain JSON over `ws` and not Meetecho's janode: the API we use is six requests (create,
 * attach, message, trickle, keepalive, detach) and two admin ones; janode would bring a native
 * dependency (unix-dgram) that must be stubbed with an npm override to install, is ESM-only in a
 * CommonJS project and has no types. `ws` is already ours.
 */

export interface JanusClientOptions {
  /** Janus's WebSocket API (JANUS_URL, e.g. ws://127.0.0.1:8188). */
  url: string;
  /** Its Admin API (JANUS_ADMIN_URL, e.g. ws://127.0.0.1:7188). */
  adminUrl: string;
  adminSecret: string;
  log: Log;
  /** The deadline of every request, milliseconds. */
  requestTimeoutMs?: number;
  /** How often the session is kept alive; well under Janus's session_timeout. */
  keepaliveMs?: number;
  /** The first wait before connecting again; it doubles up to `retryMaxMs`. */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** A session is ready: the first one, or a new one after a loss (`reconnected`): every earlier handle is gone. */
  onReady?(info: { reconnected: boolean }): void;
  /** The session is lost, and every handle with it; reconnection is under way. */
  onLost?(reason: string): void;
}

export const JANUS_DEFAULTS = {
  requestTimeoutMs: 10_000,
  keepaliveMs: 20_000,
  retryMinMs: 250,
  retryMaxMs: 5_000,
  /** The largest frame Janus may send us (a list of many rooms; SDPs are a few KiB). */
  maxPayloadBytes: 8 * 1024 * 1024,
} as const;

/** A plugin handle: one PeerConnection's worth of conversation with the VideoRoom. */
export interface JanusHandle {
  readonly id: number;
  /** False once detached or once its session is lost. */
  readonly alive: boolean;
  /** A plugin request: the plugin's answer (a synchronous request) or its event (an asynchronous one), with the SDP it carries. */
  message(body: Record<string, unknown>, jsep?: Jsep): Promise<{ data: Record<string, unknown>; jsep?: Jsep }>;
  /** One ICE candidate of the peer, or null when its gathering is complete. */
  trickle(candidate: IceCandidate | null): Promise<void>;
  /** Detaches (Janus closes its PeerConnection); harmless when the session is already gone. */
  detach(): Promise<void>;
}

export interface JanusClient {
  /** Resolves once a session is ready (at once when one is); rejects when `ms` pass first. */
  ready(ms?: number): Promise<void>;
  readonly connected: boolean;
  /** A new VideoRoom handle; `listener` hears its events (its errors are logged, never thrown at the socket). */
  attach(listener: (event: HandleEvent) => void): Promise<JanusHandle>;
  /** Admin API: a stored token, valid for these plugins. */
  addToken(token: string, plugins?: string[]): Promise<void>;
  removeToken(token: string): Promise<void>;
  /** Janus answers a ping within `ms` (for /healthz and /metrics); never throws. */
  reachable(ms?: number): Promise<boolean>;
  /** Ends the session, removes our token and closes the sockets; no reconnection after. */
  close(): Promise<void>;
}

/** One WebSocket to Janus with its transactions: a request is settled by its reply, its error, its deadline or the socket's close. */
interface Channel {
  request(message: Record<string, unknown>, opts: { until: 'ack' | 'reply'; timeoutMs: number }): Promise<JanusFrame>;
  close(): void;
}

interface Pending {
  until: 'ack' | 'reply';
  resolve(frame: JanusFrame): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

let transactionCounter = 0;
const newTransaction = () => `${(++transactionCounter).toString(36)}-${randomBytes(4).toString('hex')}`;

function openChannel(
  url: string,
  protocol: string,
  timeoutMs: number,
  log: Log,
  onFrame: (frame: JanusFrame) => void,
  onClose: (reason: string) => void,
): Promise<Channel> {
  const socket = new WebSocket(url, protocol, { handshakeTimeout: timeoutMs, maxPayload: JANUS_DEFAULTS.maxPayloadBytes, perMessageDeflate: false });
  const pending = new Map<string, Pending>();
  let closed = false;
  const fail = (err: Error) => {
    for (const entry of pending.values()) {
      clearTimeout(entry.timer);
      entry.reject(err);
    }
    pending.clear();
  };
  const close = (reason: string) => {
    if (closed) return;
    closed = true;
    fail(new JanusError('unavailable', 0, `Janus connection lost: ${reason}`));
    socket.terminate();
    onClose(reason);
  };

  socket.on(
    'message',
    owned(
      (raw: WebSocket.RawData) => {
        const text = raw.toString();
        const frame = readFrame(text);
        if (frame === null) {
          log(`janus: a frame we do not read (dropped): ${text.slice(0, 200)}`);
          return;
        }
        const transaction = 'transaction' in frame ? frame.transaction : undefined;
        const entry = transaction === undefined ? undefined : pending.get(transaction);
        if (entry === undefined) {
          onFrame(frame);
          return;
        }
        if (frame.janus === 'ack' && entry.until === 'reply') return;
        pending.delete(transaction!);
        clearTimeout(entry.timer);
        if (frame.janus === 'error') entry.reject(new JanusError('janus', frame.error.code, `Janus: ${frame.error.reason} (${frame.error.code})`));
        else entry.resolve(frame);
      },
      logFailure(log, 'janus frame'),
    ),
  );
  socket.on('close', (code, reason) => close(`closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`));
  socket.on('error', (err) => close(err.message));

  const channel: Channel = {
    request(message, { until, timeoutMs: ms }) {
      if (closed || socket.readyState !== WebSocket.OPEN) return Promise.reject(new JanusError('unavailable', 0, 'not connected to Janus'));
      const transaction = newTransaction();
      return new Promise<JanusFrame>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(transaction);
          reject(
            new JanusError(
              'timeout',
              0,
              `Janus did not answer ${String(message.janus)}${message.body ? ` ${String((message.body as { request?: unknown }).request)}` : ''} within ${ms} ms`,
            ),
          );
        }, ms);
        timer.unref();
        pending.set(transaction, { until, resolve, reject, timer });
        socket.send(JSON.stringify({ ...message, transaction }), (err) => {
          if (err) close(`send failed: ${err.message}`);
        });
      });
    },
    close: () => close('closed by us'),
  };

  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(channel));
    socket.once('close', () => reject(new JanusError('unavailable', 0, `cannot connect to ${url}`)));
  });
}

export function createJanusClient(options: JanusClientOptions): JanusClient {
  const { url, adminUrl, adminSecret, log } = options;
  const timeoutMs = options.requestTimeoutMs ?? JANUS_DEFAULTS.requestTimeoutMs;
  const keepaliveMs = options.keepaliveMs ?? JANUS_DEFAULTS.keepaliveMs;
  const retryMinMs = options.retryMinMs ?? JANUS_DEFAULTS.retryMinMs;
  const retryMaxMs = options.retryMaxMs ?? JANUS_DEFAULTS.retryMaxMs;
  const token = randomBytes(24).toString('base64url');

  let api: Channel | null = null;
  let admin: Channel | null = null;
  let session: number | null = null;
  /** Counts sessions: a handle belongs to one, and dies with it. */
  let generation = 0;
  let everReady = false;
  let closed = false;
  let down = false;
  let retryMs = retryMinMs;
  let retryTimer: NodeJS.Timeout | null = null;
  let keepaliveTimer: NodeJS.Timeout | null = null;
  const listeners = new Map<number, (event: HandleEvent) => void>();
  const waiters = new Set<{ resolve(): void; reject(err: Error): void }>();

  const callOwned = (name: string, fn: () => void) => owned(fn, logFailure(log, name))();

  function onApiFrame(frame: JanusFrame): void {
    if (frame.janus === 'timeout') {
      if (frame.session_id === session) api?.close();
      return;
    }
    const event = handleEventOf(frame);
    const sender = 'sender' in frame && typeof frame.sender === 'number' ? frame.sender : undefined;
    const listener = sender === undefined ? undefined : listeners.get(sender);
    if (event === null || sender === undefined || listener === undefined) return;
    if (event.kind === 'detached') listeners.delete(sender);
    callOwned('janus handle listener', () => listener(event));
  }

  function lost(reason: string): void {
    const wasReady = session !== null;
    session = null;
    listeners.clear();
    if (keepaliveTimer) clearInterval(keepaliveTimer);
    keepaliveTimer = null;
    const [a, b] = [api, admin];
    api = null;
    admin = null;
    a?.close();
    b?.close();
    if (wasReady) {
      log(`janus: session lost (${reason}); reconnecting`);
      if (options.onLost) callOwned('janus onLost', () => options.onLost!(reason));
    }
    schedule();
  }

  function schedule(): void {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect().catch(logFailure(log, 'janus connect'));
    }, retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, retryMaxMs);
  }

  async function connect(): Promise<void> {
    if (closed || api) return;
    let channels: Channel[] = [];
    // Either socket closing ends the pair: this is the one place that reconnects.
    const onClose = (reason: string) => {
      if (channels.length && (api === channels[0] || admin === channels[1])) lost(reason);
    };
    try {
      const adminChannel = await openChannel(adminUrl, JANUS_ADMIN_PROTOCOL, timeoutMs, log, () => {}, onClose);
      channels = [adminChannel];
      await adminChannel.request({ janus: 'add_token', token, plugins: [VIDEOROOM_PLUGIN], admin_secret: adminSecret }, { until: 'reply', timeoutMs });
      const apiChannel = await openChannel(url, JANUS_PROTOCOL, timeoutMs, log, onApiFrame, onClose);
      channels = [apiChannel, adminChannel];
      const created = await apiChannel.request({ janus: 'create', token }, { until: 'reply', timeoutMs });
      const id = created.janus === 'success' ? created.data?.id : undefined;
      if (typeof id !== 'number') throw new Error('Janus created no session');
      if (closed) {
        for (const channel of channels) channel.close();
        return;
      }
      [api, admin, session] = [apiChannel, adminChannel, id];
    } catch (err) {
      for (const channel of channels) channel.close();
      if (!down) log(`janus: cannot connect to ${url} (${err instanceof Error ? err.message : String(err)}); retrying`);
      down = true;
      schedule();
      return;
    }
    generation++;
    retryMs = retryMinMs;
    if (down) log('janus: connected again');
    down = false;
    keepaliveTimer = setInterval(
      owned(
        () => {
          const channel = api;
          channel?.request({ janus: 'keepalive', session_id: session, token }, { until: 'ack', timeoutMs }).catch((err) => {
            if (channel === api) lost(`keepalive: ${describeError(err)}`);
          });
        },
        logFailure(log, 'janus keepalive'),
      ),
      keepaliveMs,
    );
    keepaliveTimer.unref();
    const reconnected = everReady;
    everReady = true;
    for (const waiter of waiters) waiter.resolve();
    waiters.clear();
    if (options.onReady) callOwned('janus onReady', () => options.onReady!({ reconnected }));
  }

  function apiRequest(message: Record<string, unknown>, until: 'ack' | 'reply' = 'reply'): Promise<JanusFrame> {
    if (api === null || session === null) return Promise.reject(new JanusError('unavailable', 0, 'not connected to Janus'));
    return api.request({ ...message, session_id: session, token }, { until, timeoutMs });
  }

  async function adminRequest(message: Record<string, unknown>): Promise<JanusFrame> {
    if (admin === null) throw new JanusError('unavailable', 0, 'not connected to Janus');
    return admin.request({ ...message, admin_secret: adminSecret }, { until: 'reply', timeoutMs });
  }

  connect().catch(logFailure(log, 'janus connect'));

  return {
    ready(ms = timeoutMs) {
      if (session !== null) return Promise.resolve();
      if (closed) return Promise.reject(new JanusError('unavailable', 0, 'the Janus client is closed'));
      return new Promise((resolve, reject) => {
        const waiter = {
          resolve() {
            clearTimeout(timer);
            resolve();
          },
          reject(err: Error) {
            clearTimeout(timer);
            reject(err);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new JanusError('unavailable', 0, `no Janus session within ${ms} ms`));
        }, ms);
        timer.unref();
        waiters.add(waiter);
      });
    },

    get connected() {
      return session !== null;
    },

    async attach(listener) {
      const attached = await apiRequest({ janus: 'attach', plugin: VIDEOROOM_PLUGIN });
      const id = attached.janus === 'success' ? attached.data?.id : undefined;
      if (typeof id !== 'number') throw new Error('Janus attached no handle');
      const mine = generation;
      listeners.set(id, listener);
      let detached = false;
      const alive = () => !detached && generation === mine && session !== null;
      return {
        id,
        get alive() {
          return alive();
        },
        async message(body, jsep) {
          if (!alive()) throw new JanusError('unavailable', 0, 'this Janus handle is gone');
          const frame = await apiRequest({ janus: 'message', handle_id: id, body, ...(jsep ? { jsep } : {}) });
          if (frame.janus !== 'success' && frame.janus !== 'event') throw new Error(`Janus answered ${frame.janus} to a message`);
          const data = frame.janus === 'event' ? frame.plugindata.data : frame.plugindata?.data;
          if (data === undefined) throw new Error('Janus answered a message with no plugin data');
          return { data: pluginAnswer(data), ...(frame.janus === 'event' && frame.jsep ? { jsep: frame.jsep } : {}) };
        },
        async trickle(candidate) {
          if (!alive()) throw new JanusError('unavailable', 0, 'this Janus handle is gone');
          await apiRequest({ janus: 'trickle', handle_id: id, candidate: candidate ?? { completed: true } }, 'ack');
        },
        async detach() {
          if (!alive()) return;
          detached = true;
          listeners.delete(id);
          await apiRequest({ janus: 'detach', handle_id: id }).catch((err) => {
            if (!(err instanceof JanusError && (err.kind === 'unavailable' || err.code === 459))) throw err;
          });
        },
      };
    },

    async addToken(value, plugins = [VIDEOROOM_PLUGIN]) {
      await adminRequest({ janus: 'add_token', token: value, plugins });
    },

    async removeToken(value) {
      await adminRequest({ janus: 'remove_token', token: value });
    },

    async reachable(ms = 2_000) {
      const channel = admin;
      if (channel === null) return false;
      try {
        return (await channel.request({ janus: 'ping' }, { until: 'reply', timeoutMs: ms })).janus === 'pong';
      } catch {
        return false;
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (keepaliveTimer) clearInterval(keepaliveTimer);
      for (const waiter of waiters) waiter.reject(new JanusError('unavailable', 0, 'the Janus client is closed'));
      waiters.clear();
      const [apiChannel, adminChannel, id] = [api, admin, session];
      api = null;
      admin = null;
      session = null;
      listeners.clear();
      // Best effort: Janus ends the session (and its handles) when the socket closes anyway.
      if (apiChannel && id !== null)
        await apiChannel.request({ janus: 'destroy', session_id: id, token }, { until: 'reply', timeoutMs: 2_000 }).catch(() => {});
      if (adminChannel)
        await adminChannel.request({ janus: 'remove_token', token, admin_secret: adminSecret }, { until: 'reply', timeoutMs: 2_000 }).catch(() => {});
      apiChannel?.close();
      adminChannel?.close();
    },
  };
}
