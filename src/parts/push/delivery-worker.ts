import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { AddressRefused } from '../../core/net/address-guard';
import { checkedEndpoint } from './endpoint';

/**
 * A push's delivery, off the server's event loop (src/parts/push/deliverer.ts starts it): the
 * endpoint's address checked (src/parts/push/endpoint.ts), the payload encrypted for the
 * subscription (RFC 8291: an ECDH key pair per message, HKDF, AES-128-GCM) and the VAPID
 * Authorization header (RFC 8292: an ES256-signed JWT) by web-push, and the request made to the
 * checked address over a kept-alive connection, following no redirect, with a deadline and a cap
 * on the answer read. The cryptography alone costs 1 to 2 ms a push: for an `@everyone` to 2 000
 * devices that would stall every request and stream of the server for seconds.
 *
 * The signed JWT is the same for every push to a push service (its audience is the endpoint's
 * origin), so it is made once per origin and used until an hour before it expires.
 */
export interface DeliveryData {
  /** The VAPID subject: an https: URL or a mailto: address (RFC 8292 section 2.1). */
  subject: string;
  publicKey: string;
  privateKey: string;
  insecureHosts: string[];
  /** Pushes the main thread hands over at most at once for one push service: connections to it at most. */
  concurrency: number;
  /** A push service that has not answered by then has failed the push. */
  timeoutMs: number;
}

export interface DeliveryRequest {
  id: number;
  subscriptionId: string;
  endpoint: string;
  p256dh: string;
  auth: string;
  /** The JSON the service worker receives. */
  payload: string;
  /** Pushes for the same room share a Topic (RFC 8030 section 5.4): the service keeps the newest. */
  room: string;
}

export interface DeliveryAnswer {
  id: number;
  /** 'gone': the push service said so (404, 410), or the endpoint now resolves where it must not go. */
  outcome: 'sent' | 'gone' | 'failed';
  /** What the server's log should say about it. */
  note?: string;
  /** The push service failed it (no connection, no answer in time, 5xx, 429): counts toward its rest (origin-queues.ts). */
  unavailable?: true;
}

/** Bytes of a push service's answer read at most (the body says nothing we need). */
const MAX_ANSWER_BYTES = 4096;
/** A connection to a push service left idle this long is closed. */
const IDLE_CONNECTION_MS = 30_000;
/** A push not delivered within an hour is stale: the push service drops it. */
const PUSH_TTL_S = 3600;
/** A VAPID JWT lives 12 h (web-push's default; RFC 8292 allows at most 24)... */
const VAPID_LIFETIME_S = 12 * 3600;
/** ...and is used for the first 11 of them. */
const VAPID_REUSE_S = 11 * 3600;

const webpush = require('web-push') as typeof import('web-push');
const data = workerData as DeliveryData;
const insecureHosts = new Set(data.insecureHosts);
const vapidByOrigin = new Map<string, { authorization: string; until: number }>();
const agentOptions = { keepAlive: true, maxSockets: data.concurrency, timeout: IDLE_CONNECTION_MS };
const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };

// Pushes are background work: on Linux a thread's nice value is its own (setpriority on the
// calling thread), so this thread gives way to the event loop serving requests and streams when
// both want a CPU. Below normal (10: about a tenth of a CPU against a busy event loop), not the
// lowest (19: about 1.5 %), so a server kept busy still sends pushes, only slower. Set once the
// modules are loaded: loading is a one-off cost that should not crawl. Where refused, it runs as before.
try {
  os.setPriority(os.constants.priority.PRIORITY_BELOW_NORMAL);
} catch {
  // (not permitted here)
}

function authorization(origin: string): string {
  const now = Math.floor(Date.now() / 1000);
  const known = vapidByOrigin.get(origin);
  if (known && known.until > now) return known.authorization;
  const headers = webpush.getVapidHeaders(origin, data.subject, data.publicKey, data.privateKey, 'aes128gcm', now + VAPID_LIFETIME_S);
  vapidByOrigin.set(origin, { authorization: headers.Authorization, until: now + VAPID_REUSE_S });
  return headers.Authorization;
}

async function deliver(request: DeliveryRequest): Promise<Omit<DeliveryAnswer, 'id'>> {
  const endpoint = new URL(request.endpoint);
  let address;
  try {
    address = await checkedEndpoint(endpoint, insecureHosts);
  } catch (err) {
    if (!(err instanceof AddressRefused)) throw err;
    // An endpoint that now resolves somewhere it must not go is never asked again.
    return { outcome: 'gone', note: `push endpoint of subscription ${request.subscriptionId} refused: ${err.message}; the subscription ends` };
  }
  const { cipherText } = webpush.encrypt(request.p256dh, request.auth, request.payload, 'aes128gcm');
  const headers = {
    TTL: PUSH_TTL_S,
    'Content-Type': 'application/octet-stream',
    'Content-Encoding': 'aes128gcm',
    'Content-Length': cipherText.length,
    Authorization: authorization(endpoint.origin),
    Urgency: 'high',
    // At most 32 base64url characters: a digest of the room.
    Topic: crypto.createHash('sha256').update(request.room).digest('base64url').slice(0, 32),
  };
  let status: number;
  try {
    status = await post(endpoint, headers, cipherText, address);
  } catch (err) {
    // No connection, or no answer in time.
    return { outcome: 'failed', note: `push to ${endpoint.host} failed: ${(err as Error).message}`, unavailable: true };
  }
  if (status === 404 || status === 410) return { outcome: 'gone' };
  if (status >= 500 || status === 429) return { outcome: 'failed', note: `push to ${endpoint.host} answered ${status}`, unavailable: true };
  if (status < 200 || status > 299) return { outcome: 'failed', note: `push to ${endpoint.host} answered ${status}` };
  return { outcome: 'sent' };
}

/** One POST to the checked address (SNI and Host stay the endpoint's), with a deadline; the status. */
function post(endpoint: URL, headers: Record<string, string | number>, body: Buffer, to: { address: string; family: number }): Promise<number> {
  return new Promise((resolve, reject) => {
    const secure = endpoint.protocol === 'https:';
    const req = (secure ? https : http).request(
      endpoint,
      {
        method: 'POST',
        headers,
        // The address the guard checked, whatever a new lookup would say.
        lookup: (_host, options, done) => {
          if ((options as { all?: boolean }).all) (done as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [to]);
          else done(null, to.address, to.family);
        },
        // A push service gets many pushes in a row. A pooled connection goes to an address that
        // was checked when it was opened.
        agent: secure ? agents.https : agents.http,
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('error', () => {});
        res.on('close', () => resolve(res.statusCode ?? 0));
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${data.timeoutMs / 1000} s`)), data.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('error', reject);
    req.end(body);
  });
}

parentPort!.on('message', (requests: DeliveryRequest[]) => {
  for (const request of requests) {
    deliver(request)
      .catch((err: unknown): Omit<DeliveryAnswer, 'id'> => ({
        outcome: 'failed',
        note: `push to ${new URL(request.endpoint).host} failed: ${(err as Error).message}`,
      }))
      .then((answer) => parentPort!.postMessage({ id: request.id, ...answer } satisfies DeliveryAnswer));
  }
});
