import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A Web Push service on 127.0.0.1 for tests. It plays the browser vendor's push service: every
 * POST to an endpoint is checked as a real one checks it (RFC 8030 delivery, RFC 8292 VAPID,
 * RFC 8188/8291 aes128gcm), and it plays the browser: it holds each subscription's private key
 * and decrypts what arrives, so a test reads the payload the server meant to send.
 *
 * It speaks HTTPS by default because web-push's sendNotification always uses https.request
 * (an http:// endpoint fails with EPROTO). The certificate below is for 127.0.0.1 only and
 * trusted by nothing but `agent`/`ca`; pass `agent` to sendNotification. `{ tls: false }` serves
 * plain HTTP, for a sender that posts generateRequestDetails() itself with fetch.
 */

/** RFC 8030 section 7.2: a service must accept 4096 bytes of body; like FCM and Mozilla's, this one refuses more with 413. */
export const MAX_PUSH_BODY_BYTES = 4096;
/** RFC 8292 section 2: a VAPID JWT may not expire more than 24 hours ahead. */
const MAX_VAPID_LIFETIME_S = 24 * 60 * 60;
const URGENCIES = ['very-low', 'low', 'normal', 'high'];

// A test-only self-signed P-256 certificate for IP 127.0.0.1, valid 2000–2100.
const KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgeE3A/tqZMrcT84C7
cnk7rfI0M6A8F9GeLe6BZ3QhfsyhRANCAASXALusrhmN0Q5Fdex1DYQ/G8JIL4Ks
llvB8wWLp2o7PqfiMyaFdLDO9dgQK3+49Y9TSXE24Ww9KO86EiCDd8i+
-----END PRIVATE KEY-----`;
const CERT = `-----BEGIN CERTIFICATE-----
MIIBXjCCAQOgAwIBAgIUPqluIEoTApYet91GAXjgIa8COGYwCgYIKoZIzj0EAwIw
HDEaMBgGA1UEAwwRcHVzaC1zZXJ2aWNlIHRlc3QwIBcNMDAwMTAxMDAwMDAwWhgP
MjEwMDAxMDEwMDAwMDBaMBwxGjAYBgNVBAMMEXB1c2gtc2VydmljZSB0ZXN0MFkw
EwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAElwC7rK4ZjdEORXXsdQ2EPxvCSC+CrJZb
wfMFi6dqOz6n4jMmhXSwzvXYECt/uPWPU0lxNuFsPSjvOhIgg3fIvqMhMB8wDwYD
VR0RBAgwBocEfwAAATAMBgNVHRMBAf8EAjAAMAoGCCqGSM49BAMCA0kAMEYCIQDP
mKAeW3SxMfpr0gf0PtdP3lIHPP06GeuSJ643gHh+SAIhAJk4pgC0lC81gsO1NGNa
OS1EsOU1ALs/hduMHhgq+aHb
-----END CERTIFICATE-----`;

/** What a browser's PushSubscription.toJSON() gives the application. */
export interface PushSubscriptionJSON {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface VapidClaims {
  aud: string;
  exp: number;
  sub: string;
  /** The `k=` key: the application server's public key, base64url. */
  publicKey: string;
}

/** One request as the service saw it. */
export interface ReceivedPush {
  endpoint: string;
  /** The subscription's name from subscribe(), undefined for an unknown endpoint. */
  name: string | undefined;
  /** The status it was answered with. */
  status: number;
  headers: { ttl: string | undefined; urgency: string | undefined; topic: string | undefined };
  vapid?: VapidClaims;
  /** The decrypted body: parsed JSON, or the text if it is not JSON; null for a push without a body. */
  payload?: unknown;
  /** Why the request was refused, when a check failed. */
  error?: string;
}

/** How to answer an accepted push: 410 for a gone subscription, 429 with Retry-After, a delay to provoke a timeout. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** A check failed: answered with `status` (400 unless said otherwise), `message` recorded. */
class Refusal extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const b64url = (text: string, what: string): Buffer => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) throw new Refusal(`${what} is not base64url`);
  return Buffer.from(text, 'base64url');
};

const jsonPart = (text: string, what: string) => {
  try {
    return JSON.parse(b64url(text, what).toString('utf8'));
  } catch (err) {
    throw err instanceof Refusal ? err : new Refusal(`${what} is not JSON`);
  }
};

/**
 * RFC 8292 section 3: `Authorization: vapid t=<JWT>, k=<public key>`. The JWT is ES256-signed
 * by the key `k`; `aud` is the push service's origin, `exp` at most 24 h ahead, `sub` a contact.
 */
export function verifyVapid(authorization: string | undefined, expectedAud: string, nowMs = Date.now()): VapidClaims {
  const params = /^vapid\s+(.+)$/i.exec(authorization ?? '')?.[1];
  if (!params) throw new Refusal('no "Authorization: vapid t=..., k=..." header');
  const fields = new Map(params.split(',').map((part) => part.trim().split('=', 2) as [string, string]));
  const token = fields.get('t') ?? '';
  const publicKey = fields.get('k') ?? '';
  const point = b64url(publicKey, 'VAPID k');
  if (point.length !== 65 || point[0] !== 4) throw new Refusal('VAPID k is not an uncompressed P-256 point');
  const parts = token.split('.');
  if (parts.length !== 3) throw new Refusal('VAPID t is not a JWT');
  const [header, claims, signature] = parts;
  const head = jsonPart(header, 'JWT header');
  if (head.typ !== 'JWT' || head.alg !== 'ES256') throw new Refusal(`JWT header is ${JSON.stringify(head)}, not ES256`);
  const key = crypto.createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  // JWS carries ECDSA signatures as r||s (RFC 7518 section 3.4), not DER.
  const signed = Buffer.from(`${header}.${claims}`);
  if (!crypto.verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, b64url(signature, 'JWT signature'))) {
    throw new Refusal('JWT signature does not verify with the k= key');
  }
  const { aud, exp, sub } = jsonPart(claims, 'JWT claims');
  const now = Math.floor(nowMs / 1000);
  if (aud !== expectedAud) throw new Refusal(`JWT aud is ${aud}, not ${expectedAud}`);
  if (!Number.isInteger(exp) || exp <= now) throw new Refusal(`JWT exp ${exp} is not in the future`);
  if (exp > now + MAX_VAPID_LIFETIME_S) throw new Refusal(`JWT exp ${exp} is more than 24 hours away`);
  if (typeof sub !== 'string' || !/^(mailto:|https:)/.test(sub)) throw new Refusal(`JWT sub ${sub} is not a mailto: or https: URL`);
  return { aud, exp, sub, publicKey };
}

/**
 * RFC 8291 section 3 and RFC 8188 section 2: the receiving browser's side. The header block is
 * salt(16) | rs(4) | idlen(1) | keyid, where keyid is the sender's ephemeral public key; a push
 * message is one record, ending with the padding delimiter 0x02.
 */
export function decryptAes128gcm(body: Buffer, privateKey: crypto.ECDH, authSecret: Buffer): Buffer {
  if (body.length < 21) throw new Refusal('body shorter than the aes128gcm header');
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (idlen !== 65) throw new Refusal(`keyid is ${idlen} bytes, not the sender's 65-byte public key`);
  const senderPublic = body.subarray(21, 86);
  const record = body.subarray(86);
  if (rs < 18 || record.length > rs) throw new Refusal(`the body is not one record of rs ${rs}`);
  if (record.length < 17) throw new Refusal('the record is shorter than its tag');
  let ecdhSecret: Buffer;
  try {
    ecdhSecret = privateKey.computeSecret(senderPublic);
  } catch {
    throw new Refusal('keyid is not a P-256 public key');
  }
  const hkdf = (salt: Buffer, ikm: Buffer, info: Buffer, length: number) => Buffer.from(crypto.hkdfSync('sha256', ikm, salt, info, length));
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), privateKey.getPublicKey(), senderPublic]);
  const ikm = hkdf(authSecret, ecdhSecret, keyInfo, 32);
  const cek = hkdf(salt, ikm, Buffer.from('Content-Encoding: aes128gcm\0'), 16);
  const nonce = hkdf(salt, ikm, Buffer.from('Content-Encoding: nonce\0'), 12);
  const decipher = crypto.createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(-16));
  let padded: Buffer;
  try {
    padded = Buffer.concat([decipher.update(record.subarray(0, -16)), decipher.final()]);
  } catch {
    throw new Refusal('the body does not decrypt (authentication tag mismatch)');
  }
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Refusal('the record does not end with the last-record delimiter 0x02');
  return padded.subarray(0, end);
}

/** Reads at most MAX_PUSH_BODY_BYTES; beyond that the rest is drained unread and the request refused with 413. */
function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PUSH_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => (size > MAX_PUSH_BODY_BYTES ? reject(new Refusal(`body over ${MAX_PUSH_BODY_BYTES} bytes`, 413)) : resolve(Buffer.concat(chunks))));
    req.on('error', reject);
  });
}

/** Starts the service on 127.0.0.1, port 0; `{ tls: false }` serves plain HTTP. */
export async function startPushService(options: { tls?: boolean } = {}) {
  const subscriptions = new Map<string, { name: string; ecdh: crypto.ECDH; auth: Buffer; applicationServerKey?: string }>();
  const received: ReceivedPush[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  let answer: (push: ReceivedPush) => number | Answer = () => 201;
  let url = '';

  async function check(req: http.IncomingMessage, push: ReceivedPush): Promise<void> {
    const body = await readBody(req);
    const subscription = subscriptions.get(push.endpoint);
    if (!subscription) throw new Refusal('no such subscription', 404);
    push.name = subscription.name;
    if (req.method !== 'POST') throw new Refusal(`${req.method} is not POST`, 405);
    push.vapid = verifyVapid(req.headers.authorization, url);
    // A subscription made with an applicationServerKey accepts only that key (RFC 8292 section 4).
    if (subscription.applicationServerKey && push.vapid.publicKey !== subscription.applicationServerKey) {
      throw new Refusal('k= is not the applicationServerKey of the subscription', 403);
    }
    // RFC 8030 section 5: TTL is required; Urgency and Topic are optional but constrained.
    if (!/^\d+$/.test(push.headers.ttl ?? '')) throw new Refusal(`TTL header ${push.headers.ttl} is not a non-negative integer`);
    if (push.headers.urgency !== undefined && !URGENCIES.includes(push.headers.urgency)) throw new Refusal(`Urgency ${push.headers.urgency} is unknown`);
    if (push.headers.topic !== undefined && !/^[A-Za-z0-9_-]{1,32}$/.test(push.headers.topic)) throw new Refusal('Topic is not 1-32 base64url characters');
    if (body.length === 0) {
      push.payload = null;
      return;
    }
    if (req.headers['content-encoding'] !== 'aes128gcm') throw new Refusal(`Content-Encoding is ${req.headers['content-encoding']}, not aes128gcm`);
    const text = decryptAes128gcm(body, subscription.ecdh, subscription.auth).toString('utf8');
    try {
      push.payload = JSON.parse(text);
    } catch {
      push.payload = text;
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const one = (name: string) => req.headers[name] as string | undefined;
    const push: ReceivedPush = {
      endpoint: url + (req.url ?? ''),
      name: undefined,
      status: 400,
      headers: { ttl: one('ttl'), urgency: one('urgency'), topic: one('topic') },
    };
    let chosen: Answer;
    try {
      await check(req, push);
      const given = answer(push);
      chosen = typeof given === 'number' ? { status: given } : given;
    } catch (err) {
      push.error = (err as Error).message;
      chosen = { status: err instanceof Refusal ? err.status : 500 };
    }
    push.status = chosen.status;
    received.push(push);
    for (const waiter of waiters) waiter();
    const headers = { 'content-type': 'text/plain', ...chosen.headers };
    if (chosen.status === 201) Object.assign(headers, { location: `${url}/message/${crypto.randomUUID()}` });
    const timer = setTimeout(() => {
      timers.delete(timer);
      res.writeHead(chosen.status, headers).end(push.error ?? '');
    }, chosen.delayMs ?? 0);
    timers.add(timer);
  }

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((err) => res.destroy(err));
  };
  const server = options.tls === false ? http.createServer(onRequest) : https.createServer({ key: KEY, cert: CERT }, onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `${options.tls === false ? 'http' : 'https'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = new https.Agent({ ca: CERT });
  let counter = 0;

  return {
    /** The origin, e.g. https://127.0.0.1:PORT: the `aud` VAPID requires. */
    url,
    /** The certificate to trust, and an https.Agent trusting only it (sendNotification's `agent` option). */
    ca: CERT,
    agent,
    received,
    /**
     * A browser's subscription: a fresh P-256 key pair and auth secret, kept to decrypt what
     * arrives. With an applicationServerKey (PushManager.subscribe's option) only that VAPID key is accepted.
     */
    subscribe(name = `subscription${++counter}`, applicationServerKey?: string): PushSubscriptionJSON {
      const ecdh = crypto.createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = crypto.randomBytes(16);
      const endpoint = `${url}/push/${crypto.randomBytes(16).toString('base64url')}`;
      subscriptions.set(endpoint, { name, ecdh, auth, applicationServerKey });
      return { endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } };
    },
    /** How accepted pushes are answered from now on (201 until told otherwise); refusals stay 400/403/404/413. */
    answerWith(given: number | Answer | ((push: ReceivedPush) => number | Answer)): void {
      answer = typeof given === 'function' ? given : () => given;
    },
    /** Resolves with `received` once it holds `count` requests; rejects after `ms`. */
    waitFor(count: number, ms = 5000): Promise<ReceivedPush[]> {
      return new Promise((resolve, reject) => {
        const done = () => {
          if (received.length < count) return;
          waiters.delete(done);
          clearTimeout(timer);
          resolve(received);
        };
        const timer = setTimeout(() => {
          waiters.delete(done);
          const seen = received.map((push) => `${push.status} ${push.name ?? push.endpoint}${push.error ? `: ${push.error}` : ''}`);
          reject(new Error(`waited ${ms} ms for ${count} push requests, received ${received.length}${seen.length ? `:\n  ${seen.join('\n  ')}` : ''}`));
        }, ms);
        waiters.add(done);
        done();
      });
    },
    close(): Promise<void> {
      for (const timer of timers) clearTimeout(timer);
      agent.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export type PushService = Awaited<ReturnType<typeof startPushService>>;
