import crypto from 'node:crypto';
import type { IncomingMessage as HttpRequest } from 'node:http';
import { MAX_JSON_BYTES, decodeUtf8, mediaType, parseJsonObject, readRaw } from '../core/http/body';
import { HttpError, badRequest } from '../core/http/errors';
import { HANDLED, created, json, noContent, sendText } from '../core/http/respond';
import type { Ctx, PublicCtx, Route } from '../core/types';
import { bool, text } from '../core/validate';
import { type IncomingMessage, fromDiscord, fromGitHub, fromSlack } from '../parts/integrations/formats';
import { WEBHOOK_NAME_MAX } from '../parts/integrations/webhooks';
import type { ReceivedFile } from '../parts/messages/upload-store';
import type { Services } from '../parts/services';

type Deps = Pick<Services, 'config' | 'perms' | 'webhooks' | 'messages' | 'posting' | 'uploads' | 'users' | 'limits' | 'directory'>;

/** Text fields a multipart webhook call may carry (Discord's payload_json, or the fields themselves). */
const MULTIPART_FIELDS = { names: new Set(['payload_json', 'content', 'username', 'avatar_url']), maxBytes: 64 * 1024, files: 'any' };
/** A GitHub secret, as GitHub's form allows. */
const GITHUB_SECRET_MAX = 256;
/** An X-GitHub-Delivery longer than this is not GitHub's (a GUID) and is not remembered. */
const MAX_DELIVERY_ID_CHARS = 100;

/**
 * Incoming webhooks (docs/api.md "Webhooks"). Managed by a server's owner and full
 * administrators; called by anyone holding the URL, in Discord's, Slack's or GitHub's format.
 */
export function webhookRoutes(deps: Deps): Route[] {
  const h = webhookHandlers(deps);
  const CH = '/api/servers/:server_id/channels/:channel_id/webhooks';
  const W = '/api/webhooks/:webhook_id';
  return [
    { method: 'GET', path: CH, auth: 'user', body: 'none', handler: h.listWebhooks },
    { method: 'POST', path: CH, auth: 'user', body: 'json', handler: h.createWebhook },
    { method: 'PATCH', path: W, auth: 'user', body: 'json', handler: h.updateWebhook },
    { method: 'DELETE', path: W, auth: 'user', body: 'none', handler: h.deleteWebhook },
    { method: 'POST', path: `${W}/:token`, auth: 'none', body: 'none', handler: h.executeWebhook },
    { method: 'POST', path: `${W}/:token/slack`, auth: 'none', body: 'none', handler: h.executeSlackWebhook },
    { method: 'POST', path: `${W}/:token/github`, auth: 'none', body: 'none', handler: h.executeGitHubWebhook },
  ];
}

function webhookHandlers({ config, perms, webhooks, messages, posting, uploads, users, limits, directory }: Deps) {
  return { listWebhooks, createWebhook, updateWebhook, deleteWebhook, executeWebhook, executeSlackWebhook, executeGitHubWebhook };

  /** The owner or a full administrator of the channel's server, who can see the channel. */
  function requireManager(ctx: Ctx, serverId: string, channelId: string) {
    perms.requireServerAdmin(ctx.user, serverId, 'manage webhooks');
    perms.channelAccess(ctx.user, channelId, serverId);
  }

  /** 200 the channel's webhooks, oldest first, without tokens. */
  function listWebhooks(ctx: Ctx) {
    requireManager(ctx, ctx.params.server_id, ctx.params.channel_id);
    return json(webhooks.list(ctx.params.channel_id));
  }

  /** `{"name"}`: 201 the webhook with its token and URL, shown this once. */
  function createWebhook(ctx: Ctx) {
    requireManager(ctx, ctx.params.server_id, ctx.params.channel_id);
    // A forum takes posts, a thread lives by its parent: a webhook posts into a text channel.
    const type = directory.channel(ctx.params.channel_id)?.type;
    if (type === 'forum' || type === 'thread') throw badRequest('a webhook posts into a text channel, not a forum or a thread');
    const name = text(ctx.body, 'name', { max: WEBHOOK_NAME_MAX });
    limits.creationsPerUser.take(ctx.user.id, 'creations');
    return created(webhooks.create(ctx.params.server_id, ctx.params.channel_id, ctx.user.id, name, config.baseUrl));
  }

  /**
   * `{"name"?, "github_secret"? (string, or null for none), "regenerate_token"?: true}`: 200 the
   * webhook; with a new token and URL when one was asked for (the old URL stops at once).
   */
  function updateWebhook(ctx: Ctx) {
    const hook = webhooks.find(ctx.params.webhook_id);
    requireManager(ctx, hook.server_id, hook.channel_id);
    const body = ctx.body;
    const change = {
      name: body.name === undefined ? undefined : text(body, 'name', { max: WEBHOOK_NAME_MAX }),
      githubSecret:
        body.github_secret === undefined
          ? undefined
          : body.github_secret === null
            ? null
            : text(body, 'github_secret', { max: GITHUB_SECRET_MAX, trim: false }),
      newToken: body.regenerate_token === undefined ? false : bool(body, 'regenerate_token'),
    };
    if (change.name === undefined && change.githubSecret === undefined && !change.newToken) throw badRequest('give name, github_secret or regenerate_token');
    return json(webhooks.update(hook.id, ctx.user.id, change, config.baseUrl));
  }

  /** 204; its messages stay (shown under its name) unless `?delete_messages=true`. */
  function deleteWebhook(ctx: Ctx) {
    const hook = webhooks.find(ctx.params.webhook_id);
    requireManager(ctx, hook.server_id, hook.channel_id);
    const flag = ctx.query.get('delete_messages');
    if (flag !== null && flag !== 'true' && flag !== 'false') throw badRequest('delete_messages must be true or false');
    if (flag === 'true') messages.removeByWebhook(channelOf(hook), hook.id, (count) => webhooks.remove(hook.id, ctx.user.id, count));
    else webhooks.remove(hook.id, ctx.user.id, 0);
    return noContent();
  }

  /**
   * Discord's execute-webhook payload (and ours: the same fields), as JSON or as multipart with
   * files and `payload_json`. 204, or 200 the message with `?wait=true`. Signed when the webhook
   * has a secret (401 otherwise).
   */
  async function executeWebhook(ctx: PublicCtx) {
    const { hook, secret } = authorized(ctx);
    const wait = ctx.query.get('wait');
    if (wait !== null && wait !== 'true' && wait !== 'false') throw badRequest('wait must be true or false');
    let files: ReceivedFile[] = [];
    try {
      let incoming: IncomingMessage;
      if (mediaType(ctx.req) === 'multipart/form-data') {
        // The signature covers every byte of the body: hashed as it streams past, files and all.
        const digest = secret === null ? null : hashing(ctx.req, secret);
        const received = await uploads.receive(ctx.req, MULTIPART_FIELDS);
        files = received.files;
        if (digest) checkSignature(ctx.req, digest());
        const fields = received.fields;
        const payload = typeof fields.payload_json === 'string' ? parseJsonObject(fields.payload_json) : fields;
        incoming = files.length > 0 && isEmpty(payload) ? { content: '', embeds: [] } : fromDiscord(payload);
      } else {
        incoming = fromDiscord(await readSigned(ctx.req, secret));
      }
      spend(hook);
      const record = await post(hook, incoming, files);
      return wait === 'true' ? json(record) : noContent();
    } catch (err) {
      uploads.discard(files);
      throw err;
    }
  }

  /** Slack's incoming-webhook payload, as JSON or as a form with `payload`: 200 `ok`, as Slack answers. Signed as above. */
  async function executeSlackWebhook(ctx: PublicCtx) {
    const { hook, secret } = authorized(ctx);
    const incoming = fromSlack(await readSigned(ctx.req, secret));
    spend(hook);
    await post(hook, incoming, []);
    ctx.res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 2 });
    ctx.res.end('ok');
    return HANDLED;
  }

  /**
   * A GitHub webhook delivery (X-GitHub-Event names it): 204, whether or not the event makes a
   * message (docs/integrations.md lists those that do). Signed as above. A delivery seen before
   * (the same X-GitHub-Delivery, or the same signed body: the id is not signed) is answered 200
   * and not posted again.
   */
  async function executeGitHubWebhook(ctx: PublicCtx) {
    const { hook, secret } = authorized(ctx);
    const event = ctx.req.headers['x-github-event'];
    if (typeof event !== 'string' || !/^[a-z_]{1,64}$/.test(event)) throw badRequest('the X-GitHub-Event header is missing');
    const raw = await readRaw(ctx.req, MAX_JSON_BYTES);
    const keys: string[] = [];
    if (secret !== null) keys.push(`signature ${checkSignature(ctx.req, hmacOf(secret, raw))}`);
    const delivery = ctx.req.headers['x-github-delivery'];
    if (typeof delivery === 'string' && delivery.length > 0 && delivery.length <= MAX_DELIVERY_ID_CHARS) keys.push(`delivery ${delivery}`);
    const incoming = fromGitHub(event, payloadOf(ctx.req, raw));
    if (!webhooks.claimDelivery(hook.id, keys)) {
      sendText(ctx.res, 200, 'this delivery was taken already: not posted again');
      return HANDLED;
    }
    try {
      spend(hook);
      if (incoming) await post(hook, incoming, []);
    } catch (err) {
      webhooks.releaseDelivery(hook.id, keys);
      throw err;
    }
    return noContent();
  }

  /**
   * The webhook the URL names and its signing secret (null: none), its rate limits checked but
   * not spent: a call refused later (a bad signature, a bad payload) costs the webhook nothing.
   * A webhook with a secret refuses a call without a signature before reading its body.
   */
  function authorized(ctx: PublicCtx) {
    const hook = webhooks.authorize(ctx.params.webhook_id, ctx.params.token);
    limits.webhookCallsPerWebhook.check(hook.id, 'messages through this webhook');
    limits.webhookCallsPerChannel.check(hook.channel_id, 'webhook messages in this channel');
    const secret = webhooks.githubSecret(hook.id);
    if (secret !== null && ctx.req.headers['x-hub-signature-256'] === undefined) {
      throw new HttpError(401, 'this webhook takes signed calls only: the X-Hub-Signature-256 header is missing');
    }
    return { hook, secret };
  }

  /** Spends the rate limits of a call about to post: 5 per 2 s per webhook, 30 a minute per channel. */
  function spend(hook: { id: string; channel_id: string }) {
    limits.webhookCallsPerWebhook.take(hook.id, 'messages through this webhook');
    limits.webhookCallsPerChannel.take(hook.channel_id, 'webhook messages in this channel');
  }

  /** What the webhook may post is src/parts/messages/posting.ts's to say, as for anyone. */
  function post(hook: ReturnType<typeof webhooks.authorize>, incoming: IncomingMessage, files: ReceivedFile[]) {
    return posting.postAsWebhook(
      { webhookId: hook.id, author: users.byId(hook.user_id)!, channel: channelOf(hook) },
      {
        content: incoming.content,
        files,
        embeds: incoming.embeds,
        username: incoming.username ?? null,
        avatarUrl: incoming.avatar_url ?? null,
        allowedMentions: incoming.allowed_mentions,
      },
    );
  }
}

const channelOf = (hook: { server_id: string; channel_id: string }) => ({ kind: 'channel' as const, id: hook.channel_id, serverId: hook.server_id });

const isEmpty = (body: Record<string, unknown>) => Object.keys(body).length === 0;

/** A JSON body, or a form with the JSON in `payload` (Slack's and GitHub's other encoding), its signature checked when there is a secret. */
async function readSigned(req: HttpRequest, secret: string | null): Promise<Record<string, unknown>> {
  const raw = await readRaw(req, MAX_JSON_BYTES);
  if (secret !== null) checkSignature(req, hmacOf(secret, raw));
  return payloadOf(req, raw);
}

function payloadOf(req: HttpRequest, raw: Buffer): Record<string, unknown> {
  const type = mediaType(req);
  if (type === 'application/json') return parseJsonObject(decodeUtf8(raw, 'JSON body'));
  if (type === 'application/x-www-form-urlencoded') {
    const payload = new URLSearchParams(decodeUtf8(raw, 'form body')).get('payload');
    if (payload === null) throw badRequest('a form body must carry the JSON in its payload field');
    return parseJsonObject(payload);
  }
  throw new HttpError(415, 'Content-Type must be application/json (or a form with a payload field)');
}

const hmacOf = (secret: string, raw: Buffer): Buffer => crypto.createHmac('sha256', secret).update(raw).digest();

/** The HMAC-SHA256 under `secret` of every byte `req` gives from now on, once it has given them all. */
function hashing(req: HttpRequest, secret: string): () => Buffer {
  const hmac = crypto.createHmac('sha256', secret);
  req.on('data', (chunk: Buffer) => hmac.update(chunk));
  return () => hmac.digest();
}

/**
 * GitHub's X-Hub-Signature-256, on every route of a webhook with a secret: `sha256=` and the hex
 * HMAC-SHA256 of the body under the secret, compared in constant time. Returns the signature.
 */
function checkSignature(req: HttpRequest, digest: Buffer): string {
  const header = req.headers['x-hub-signature-256'];
  if (typeof header !== 'string' || !header.startsWith('sha256='))
    throw new HttpError(401, 'this webhook takes signed calls only: the X-Hub-Signature-256 header is missing');
  const want = Buffer.from(`sha256=${digest.toString('hex')}`);
  const given = Buffer.from(header);
  if (want.length !== given.length || !crypto.timingSafeEqual(want, given))
    throw new HttpError(401, 'the X-Hub-Signature-256 signature does not match this webhook’s secret');
  return header;
}
