import t, { type Test } from 'tap';
import webpush, { type PushSubscription, type RequestOptions, type WebPushError } from 'web-push';
import { MAX_PUSH_BODY_BYTES, startPushService, type PushService } from './helpers/push-service';

/**
 * The fake push service (helpers/push-service.ts) held against the real sender, web-push: what
 * web-push sends is accepted and decrypted exactly, and what a real push service refuses is
 * refused here too, so the server's push tests prove something.
 */
const keys = webpush.generateVAPIDKeys();
const vapidDetails = { subject: 'mailto:admin@example.com', ...keys };
const message = { type: 'message', room: 'room1', author: 'alice', text: 'héllo 👋 <b>bold</b>' };

async function service(t: Test, options?: { tls?: boolean }): Promise<PushService> {
  const started = await startPushService(options);
  t.teardown(started.close);
  return started;
}

/** web-push's sendNotification through the service's agent (it trusts the test certificate), bounded. */
const send = (push: PushService, subscription: PushSubscription, payload: string, options: RequestOptions = {}) =>
  webpush.sendNotification(subscription, payload, { vapidDetails, TTL: 60, agent: push.agent, timeout: 5000, ...options });

t.test('decrypts what web-push sends and records its VAPID claims, TTL, urgency and topic', async (t) => {
  const push = await service(t);
  const subscription = push.subscribe('alice');
  t.match(subscription, { endpoint: new RegExp(`^${push.url}/push/[\\w-]+$`), keys: { p256dh: /^[\w-]{87}$/, auth: /^[\w-]{22}$/ } });

  const sent = await send(push, subscription, JSON.stringify(message), { urgency: 'high', topic: 'room1' });
  t.equal(sent.statusCode, 201, 'RFC 8030 section 5: 201 Created');
  t.match(sent.headers.location, new RegExp(`^${push.url}/message/`), 'with the message resource as Location');

  const [received] = await push.waitFor(1);
  t.same(received.payload, message, 'the payload decrypts to exactly what was sent');
  t.match(received, {
    endpoint: subscription.endpoint,
    name: 'alice',
    status: 201,
    headers: { ttl: '60', urgency: 'high', topic: 'room1' },
    vapid: { aud: push.url, sub: 'mailto:admin@example.com', publicKey: keys.publicKey },
  });
  t.notOk(received.error);
  const now = Date.now() / 1000;
  t.ok(received.vapid!.exp > now && received.vapid!.exp <= now + 24 * 3600, 'exp is in the next 24 hours');
});

t.test('a text payload is recorded as text, and web-push sends Urgency: normal by default', async (t) => {
  const push = await service(t);
  await send(push, push.subscribe(), 'plain words');
  t.match((await push.waitFor(1))[0], { payload: 'plain words', headers: { urgency: 'normal', topic: undefined } });
});

t.test('refuses what a real push service refuses, recording why', async (t) => {
  // Plain HTTP here, so the requests can be built by web-push and sent (altered) with fetch.
  const push = await service(t, { tls: false });
  const subscription = push.subscribe('bob');
  const other = webpush.generateVAPIDKeys();
  const vapid = (aud: string, expiration?: number) =>
    webpush.getVapidHeaders(aud, vapidDetails.subject, keys.publicKey, keys.privateKey, 'aes128gcm', expiration).Authorization;
  type Request = { endpoint: string; headers: Record<string, string>; body: Buffer };
  const cases: [string, (request: Request) => void, number, RegExp | undefined][] = [
    ['the request as web-push built it', () => {}, 201, undefined],
    ['a body with one byte flipped', (r) => (r.body[r.body.length - 20] ^= 1), 400, /does not decrypt/],
    [
      'a JWT presented with another key as k=',
      (r) => (r.headers.Authorization = r.headers.Authorization.replace(/k=.*/, `k=${other.publicKey}`)),
      400,
      /signature does not verify/,
    ],
    ['a JWT for another audience', (r) => (r.headers.Authorization = vapid('https://push.example.com')), 400, /aud is https:\/\/push\.example\.com/],
    ['an expired JWT', (r) => (r.headers.Authorization = vapid(push.url, Math.floor(Date.now() / 1000) - 60)), 400, /exp .* not in the future/],
    ['no Authorization', (r) => delete r.headers.Authorization, 400, /no "Authorization: vapid/],
    ['no TTL', (r) => delete r.headers.TTL, 400, /TTL/],
    ['an unknown Urgency', (r) => (r.headers.Urgency = 'urgent'), 400, /Urgency/],
    ['the old aesgcm content coding', (r) => (r.headers['Content-Encoding'] = 'aesgcm'), 400, /Content-Encoding is aesgcm/],
    ['an endpoint nobody subscribed', (r) => (r.endpoint = `${push.url}/push/nobody`), 404, /no such subscription/],
  ];
  for (const [name, alter, status, error] of cases) {
    const details = webpush.generateRequestDetails(subscription, JSON.stringify(message), { vapidDetails, TTL: 60 });
    const headers = Object.fromEntries(
      Object.entries(details.headers)
        .filter(([h]) => h !== 'Content-Length')
        .map(([h, v]) => [h, String(v)]),
    );
    const request = { endpoint: details.endpoint, headers, body: Buffer.from(details.body) };
    alter(request);
    const before = push.received.length;
    const res = await fetch(request.endpoint, { method: 'POST', headers: request.headers, body: request.body, signal: AbortSignal.timeout(5000) });
    const [received] = (await push.waitFor(before + 1)).slice(before);
    t.equal(res.status, status, `${name}: ${status}`);
    t.equal(received.status, status, `${name}: recorded ${status}`);
    if (error) t.match(received.error, error, `${name}: recorded why`);
    else t.same(received.payload, message, `${name}: decrypted`);
  }
});

t.test('a subscription made with an applicationServerKey refuses any other key with 403', async (t) => {
  const push = await service(t);
  const subscription = push.subscribe('carol', webpush.generateVAPIDKeys().publicKey);
  const err: WebPushError = await send(push, subscription, 'hi').catch((e) => e);
  t.equal(err.statusCode, 403);
  t.match(err.body, /not the applicationServerKey/, 'the reason is the answer body');
});

t.test('a body over the size limit is refused with 413', async (t) => {
  const push = await service(t);
  const err: WebPushError = await send(push, push.subscribe(), 'x'.repeat(MAX_PUSH_BODY_BYTES)).catch((e) => e);
  t.equal(err.statusCode, 413);
});

t.test('answerWith sets the answer: web-push rejects a non-2xx with a WebPushError', async (t) => {
  const push = await service(t);
  const subscription = push.subscribe('gone');

  push.answerWith(410);
  const gone: WebPushError = await send(push, subscription, '{}').catch((e) => e);
  t.match(gone, { name: 'WebPushError', message: 'Received unexpected response code', statusCode: 410, endpoint: subscription.endpoint });
  t.equal(push.received[0].status, 410, 'the push was still checked and recorded');
  t.notOk(push.received[0].error);

  push.answerWith(() => ({ status: 429, headers: { 'retry-after': '30' } }));
  const slowDown: WebPushError = await send(push, subscription, '{}').catch((e) => e);
  t.equal(slowDown.statusCode, 429);
  t.equal(slowDown.headers['retry-after'], '30', 'the answer headers are on the error');

  push.answerWith({ status: 201, delayMs: 2000 });
  await t.rejects(send(push, subscription, '{}', { timeout: 200 }), /Socket timeout/, 'a sender with a timeout gives up');
  t.equal((await push.waitFor(3)).length, 3);
});

t.test('waitFor rejects after its bound, saying what did arrive', async (t) => {
  const push = await service(t);
  await send(push, push.subscribe('dave'), '{}', { TTL: 0 });
  await t.rejects(push.waitFor(2, 50), /waited 50 ms for 2 push requests, received 1:\n {2}201 dave/);
});
