import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { logFailure } from '../../core/callbacks';
import type { Log } from '../../core/types';
import { createDeliverer } from './deliverer';
import { OriginQueues, type OriginLimits, PUSH_FAILURES_TO_REST, type ServiceResult } from './origin-queues';
import type { Target } from './subscriptions';

/**
 * Sending Web Push messages (RFC 8030), encrypted for the subscription (RFC 8291) and signed
 * with our VAPID key (RFC 8292): what to send and when is decided here; the delivery itself
 * (address check, cryptography, request) happens on a worker thread
 * (src/parts/push/delivery-worker.ts), so an `@everyone` to thousands of devices costs the
 * server's event loop one small message per push.
 *
 * Sending never holds up a post: pushes wait in bounded queues, one per push service, a few at a
 * time each, so that a service that never answers holds up no other's (origin-queues.ts). The first push
 * for a room goes at once; for COLLAPSE_MS after it, more for the same device and room gather
 * into one that follows, carrying how many messages it stands for: a burst of twenty messages is
 * two pushes, the second replacing the first on the device (same tag). The Topic header asks the
 * push service to do the same with what it has not delivered yet.
 */
export const VAPID_FILE = 'vapid.json';
/** Pushes waiting at most; past it new ones are dropped (and counted). */
export const MAX_QUEUED_PUSHES = 10_000;
/** After a push for a room, a device's next for the same room waits this long, gathering what comes meanwhile into one. */
export const COLLAPSE_MS = 3_000;
/** A push service that has not answered a push by then has failed it (a real one answers in well under a second). */
export const PUSH_TIMEOUT_MS = 5_000;
/**
 * Pushes in flight to one push service (origin) at most, and in all; what one service may hold
 * of the queue; and its circuit breaker: 3 failures in a row, then a minute's rest.
 */
export const PUSH_LIMITS: OriginLimits = {
  perOrigin: 8,
  total: 64,
  queuedPerOrigin: MAX_QUEUED_PUSHES / 2,
  failuresToRest: PUSH_FAILURES_TO_REST,
  restMs: 60_000,
};

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}

/** DATA_DIR/vapid.json, made at first start (mode 0600); `cli.js backup` copies it. */
export function loadVapidKeys(dataDir: string): VapidKeys {
  const file = path.join(dataDir, VAPID_FILE);
  try {
    // A P-256 key pair, as web-push's generateVAPIDKeys makes it (the library loads on first push).
    const ecdh = crypto.createECDH('prime256v1');
    ecdh.generateKeys();
    const secret = ecdh.getPrivateKey();
    const privateKey = Buffer.concat([Buffer.alloc(32 - secret.length), secret]).toString('base64url');
    const keys = { publicKey: ecdh.getPublicKey().toString('base64url'), privateKey };
    fs.writeFileSync(file, `${JSON.stringify(keys)}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const keys = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<VapidKeys>;
  if (typeof keys.publicKey !== 'string' || typeof keys.privateKey !== 'string') throw new Error(`${file} must hold {"publicKey", "privateKey"}`);
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}

/**
 * The VAPID subject (RFC 8292 section 2.1), how a push service reaches whoever runs the server:
 * BASE_URL when it is https, otherwise a mailto: address at its host.
 */
export function vapidSubject(baseUrl: string): string {
  const url = new URL(baseUrl);
  return url.protocol === 'https:' ? url.origin : `mailto:push@${url.hostname.includes('.') ? url.hostname : 'localhost.localdomain'}`;
}

export type PushOutcome = 'sent' | 'gone' | 'failed' | 'dropped';

export interface PushSender {
  /** Queues a push of `payload` to a subscription; `room` collapses bursts (one push per device and room). */
  send(target: Target, room: string, payload: (count: number) => object): void;
  readonly queued: number;
  /** Stops sending; what waits is dropped. */
  close(): void;
}

export interface SenderParts {
  keys: VapidKeys;
  /** The VAPID subject: an https: URL or a mailto: address (RFC 8292 section 2.1). */
  subject: string;
  insecureHosts: ReadonlySet<string>;
  log: Log;
  /** A subscription the push service says is gone (404, 410). */
  onGone(subscriptionId: string): void;
  onOutcome(outcome: PushOutcome): void;
}

interface Job {
  target: Target;
  room: string;
  count: number;
  payload: (count: number) => object;
}

export function createPushSender(parts: SenderParts): PushSender {
  const { keys, subject, insecureHosts, log, onGone, onOutcome } = parts;
  const queues = new OriginQueues<Job>(PUSH_LIMITS, Date.now);
  /** Jobs not sent yet, by device and room: queued, or held until their room's quiet time ends. */
  const waiting = new Map<string, Job>();
  /** When a device last got a push for a room, and the timer of a held one. */
  const recent = new Map<string, { at: number; timer: NodeJS.Timeout | null }>();
  let closed = false;
  const deliverer = createDeliverer({
    subject,
    publicKey: keys.publicKey,
    privateKey: keys.privateKey,
    insecureHosts: [...insecureHosts],
    concurrency: PUSH_LIMITS.perOrigin,
    timeoutMs: PUSH_TIMEOUT_MS,
  });
  const keyOf = (job: Job) => `${job.target.id} ${job.room}`;

  function next(): void {
    for (let item = closed ? null : queues.next(); item !== null; item = closed ? null : queues.next()) {
      const { origin, job } = item;
      const key = keyOf(job);
      waiting.delete(key);
      quietAfter(key);
      deliver(job)
        .then(
          ({ outcome, unavailable }): ServiceResult => {
            onOutcome(outcome);
            return unavailable ? 'failed' : 'answered';
          },
          (err: unknown): ServiceResult => {
            log(`push to ${origin} failed: ${(err as Error).message}`);
            onOutcome('failed');
            return 'unknown';
          },
        )
        .catch((err: unknown): ServiceResult => (logFailure(log, 'push outcome')(err), 'unknown'))
        .then((result) => {
          if (closed) return;
          // Its slot is given back whatever happens below.
          const { rested, dropped } = queues.done(origin, result);
          try {
            if (rested)
              log(`push service ${origin} failed ${PUSH_LIMITS.failuresToRest} times in a row: its pushes are dropped for ${PUSH_LIMITS.restMs / 1000} s`);
            for (const gone of dropped) {
              waiting.delete(keyOf(gone));
              onOutcome('dropped');
            }
          } finally {
            next();
          }
        })
        .catch(logFailure(log, 'push outcome'));
    }
  }

  /** Marks a push for `key` sent now; the entry goes once its quiet time is over with nothing held. */
  function quietAfter(key: string): void {
    const entry = { at: Date.now(), timer: null as NodeJS.Timeout | null };
    recent.set(key, entry);
    const forget = setTimeout(() => {
      if (recent.get(key) === entry && entry.timer === null) recent.delete(key);
    }, COLLAPSE_MS);
    forget.unref();
  }

  function enqueue(key: string, job: Job): void {
    if (!queues.add(new URL(job.target.endpoint).origin, job)) {
      waiting.delete(key);
      onOutcome('dropped');
      return;
    }
    next();
  }

  async function deliver(job: Job): Promise<{ outcome: PushOutcome; unavailable: boolean }> {
    const { target } = job;
    const { outcome, note, unavailable } = await deliverer.deliver({
      subscriptionId: target.id,
      endpoint: target.endpoint,
      p256dh: target.p256dh,
      auth: target.auth,
      payload: JSON.stringify(job.payload(job.count)),
      room: job.room,
    });
    if (note) log(note);
    if (outcome === 'gone') onGone(target.id);
    return { outcome, unavailable: unavailable === true };
  }

  return {
    send(target, room, payload) {
      if (closed) return;
      const key = `${target.id} ${room}`;
      const same = waiting.get(key);
      if (same) {
        same.count++;
        same.payload = payload;
        return;
      }
      if (waiting.size >= MAX_QUEUED_PUSHES) {
        onOutcome('dropped');
        return;
      }
      const job = { target, room, count: 1, payload };
      waiting.set(key, job);
      const last = recent.get(key);
      const wait = last ? last.at + COLLAPSE_MS - Date.now() : 0;
      if (wait <= 0 || !last) return enqueue(key, job);
      // Held: what else comes for this room meanwhile joins it.
      last.timer = setTimeout(() => {
        last.timer = null;
        if (!closed) enqueue(key, job);
      }, wait);
      last.timer.unref();
    },

    get queued() {
      return queues.queued;
    },
    close() {
      closed = true;
      queues.clear();
      waiting.clear();
      for (const { timer } of recent.values()) if (timer) clearTimeout(timer);
      recent.clear();
      deliverer.close();
    },
  };
}
