import { badRequest, notFound } from '../core/http/errors';
import { created, json, noContent } from '../core/http/respond';
import type { Body, Ctx, PublicCtx, Route } from '../core/types';
import { bool } from '../core/validate';
import { AddressRefused } from '../core/net/address-guard';
import { checkedEndpoint } from '../parts/push/endpoint';
import type { Services } from '../parts/services';

type Deps = Pick<Services, 'config' | 'limits' | 'pushSubscriptions' | 'vapidKeys'>;

/** An endpoint longer than this is no push service's. */
const MAX_ENDPOINT_CHARS = 2048;

/**
 * Web Push (docs/api.md "Push notifications"): the server's VAPID key, and the caller's
 * subscriptions, one per browser that allowed notifications, listed on the account page.
 */
export function pushRoutes(deps: Deps): Route[] {
  const h = pushHandlers(deps);
  const S = '/api/account/push-subscriptions';
  return [
    { method: 'GET', path: '/api/push/key', auth: 'none', body: 'none', handler: h.getPushKey },
    { method: 'GET', path: S, auth: 'user', body: 'none', handler: h.listPushSubscriptions },
    { method: 'POST', path: S, auth: 'user', body: 'json', handler: h.subscribeToPush },
    { method: 'PATCH', path: `${S}/:subscription_id`, auth: 'user', body: 'json', handler: h.changePushSubscription },
    { method: 'DELETE', path: `${S}/:subscription_id`, auth: 'user', body: 'none', handler: h.unsubscribeFromPush },
  ];
}

function pushHandlers({ config, limits, pushSubscriptions, vapidKeys }: Deps) {
  const insecureHosts = new Set(config.pushInsecureHosts);
  return { getPushKey, listPushSubscriptions, subscribeToPush, changePushSubscription, unsubscribeFromPush };

  /** The VAPID public key (base64url of the P-256 point): a browser's applicationServerKey. */
  function getPushKey(_ctx: PublicCtx) {
    return json({ key: vapidKeys.publicKey });
  }

  /** The caller's subscriptions, newest first. */
  function listPushSubscriptions(ctx: Ctx) {
    return json(pushSubscriptions.list(ctx.user.id));
  }

  /**
   * A browser's PushSubscription JSON `{endpoint, keys: {p256dh, auth}}` (and `show_text`): 201.
   * The endpoint must be https on a public address (400 otherwise); it belongs to this session.
   */
  async function subscribeToPush(ctx: Ctx) {
    const endpoint = endpointOf(ctx.body);
    const keys = ctx.body.keys;
    if (typeof keys !== 'object' || keys === null || Array.isArray(keys)) throw badRequest('keys must be an object with p256dh and auth');
    const { p256dh, auth } = keys as Record<string, unknown>;
    if (!isKey(p256dh, 65) || Buffer.from(p256dh, 'base64url')[0] !== 4)
      throw badRequest('keys.p256dh must be the base64url of an uncompressed P-256 point (65 bytes)');
    if (!isKey(auth, 16)) throw badRequest('keys.auth must be the base64url of 16 bytes');
    const showText = ctx.body.show_text === undefined ? false : bool(ctx.body, 'show_text');
    limits.pushSubscriptionsPerUser.take(ctx.user.id, 'push subscriptions');
    try {
      await checkedEndpoint(endpoint, insecureHosts);
    } catch (err) {
      if (err instanceof AddressRefused) throw badRequest(`endpoint: ${err.message}`);
      throw err;
    }
    return created(pushSubscriptions.add(ctx.session, { endpoint: endpoint.href, p256dh, auth, showText }));
  }

  /** `{show_text}`: whether pushes to that device carry the message's text; 200 the subscription. */
  function changePushSubscription(ctx: Ctx) {
    const changed = pushSubscriptions.setShowText(ctx.user.id, ctx.params.subscription_id, bool(ctx.body, 'show_text'));
    if (!changed) throw notFound('no such subscription');
    return json(changed);
  }

  /** Ends one of the caller's subscriptions: 204; 404 when there is no such one of theirs. */
  function unsubscribeFromPush(ctx: Ctx) {
    if (!pushSubscriptions.remove(ctx.user.id, ctx.params.subscription_id)) throw notFound('no such subscription');
    return noContent();
  }
}

function endpointOf(body: Body): URL {
  const value = body.endpoint;
  if (typeof value !== 'string' || value.length > MAX_ENDPOINT_CHARS) throw badRequest(`endpoint must be a URL of at most ${MAX_ENDPOINT_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest('endpoint must be a URL');
  }
  if (url.username || url.password) throw badRequest('endpoint must not carry credentials');
  return url;
}

/** base64url (no padding) of exactly `bytes` bytes. */
function isKey(value: unknown, bytes: number): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]+$/.test(value) && Buffer.from(value, 'base64url').length === bytes;
}
