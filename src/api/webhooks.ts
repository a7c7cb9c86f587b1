import crypto from 'node:crypto';
import type { IncomingMessage as HttpRequest } from 'node:http';
import { MAX_JSON_BYTES, decodeUtf8, mediaType, parseJsonObject, readRaw } from '../core/http/body';
import { HttpError, badRequest } from '../core/http/errors';
import { HANDLED, created, json, noContent, sendText } from '../core/http/respond';
import { type Ctx, type PublicCtx, type Route, reachedWhole } from '../core/types';
import type { MessageRecord } from '../core/message-record';
import { isUuid } from '../core/http/router';
import { bool, text } from '../core/validate';
import { type IncomingMessage, discordEdit, fromDiscord, fromGitHub, fromSlack } from '../parts/integrations/formats';
import { WEBHOOK_NAME_MAX, type WebhookRecord } from '../parts/integrations/webhooks';
import type { ReceivedFile } from '../parts/messages/upload-store';
import type { Services } from '../parts/services';

type Deps = Pick<Services, 'clock' | 'config' | 'perms' | 'webhooks' | 'messages' | 'posting' | 'uploads' | 'users' | 'limits' | 'directory' | 'threads'>;

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
    ...DISCORD_API_VERSIONS.flatMap((v) => discordRoutes(`/api/v${v}/webhooks/:hook/:token`, h)),
  ];
}

/** The versions of Discord's API whose webhook paths answer here (discord.js and @discordjs/rest call v10). */
const DISCORD_API_VERSIONS = [6, 7, 8, 9, 10];

/**
 * Discord's own paths (docs/integrations.md "Discord's paths"), for the libraries that build
 * them from an id and a token: what Discord answers there, shaped as Discord shapes it, errors
 * included (`errors: 'discord'`). The ids are read by the handlers (not `_id` parameters), so a
 * malformed one is answered in Discord's shape too.
 */
function discordRoutes(D: string, h: ReturnType<typeof webhookHandlers>): Route[] {
  const M = `${D}/messages/:message`;
  return [
    { method: 'GET', path: D, auth: 'none', body: 'none', errors: 'discord', handler: h.getDiscordWebhook },
    { method: 'POST', path: D, auth: 'none', body: 'none', errors: 'discord', handler: h.executeDiscordWebhook },
    { method: 'GET', path: M, auth: 'none', body: 'none', errors: 'discord', handler: h.getDiscordMessage },
    { method: 'PATCH', path: M, auth: 'none', body: 'none', errors: 'discord', handler: h.editDiscordMessage },
    { method: 'DELETE', path: M, auth: 'none', body: 'none', errors: 'discord', handler: h.deleteDiscordMessage },
  ];
}

function webhookHandlers({ clock, config, perms, webhooks, messages, posting, uploads, users, limits, directory, threads }: Deps) {
  return {
    listWebhooks,
    createWebhook,
    updateWebhook,
    deleteWebhook,
    executeWebhook,
    executeSlackWebhook,
    executeGitHubWebhook,
    getDiscordWebhook,
    executeDiscordWebhook,
    getDiscordMessage,
    editDiscordMessage,
    deleteDiscordMessage,
  };

  /** manage_webhooks in the channel (its overwrites count, as on Discord; the owner and full administrators hold it), who sees it. */
  function requireManager(ctx: Ctx, serverId: string, channelId: string) {
    perms.requireChannelFlag(ctx.user, channelId, serverId, 'manage_webhooks');
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
    const record = await execute(ctx, hook, secret, threadOf(ctx, hook));
    return wait === 'true' || withFiles(record) ? json(record) : noContent();
  }

  /** Reads an execute-webhook call (JSON, or multipart with files) and posts it into `where`. */
  async function execute(ctx: PublicCtx, hook: Hook, secret: string | null, where: ChannelOf): Promise<MessageRecord> {
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
        incoming = fromDiscord(payload, files.length > 0);
      } else {
        incoming = fromDiscord(await readSigned(ctx.req, secret));
      }
      spend(hook);
      return await post(hook, incoming, files, where);
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
    if (typeof event !== 'string' || !/^[a-z0-9_]{1,64}$/.test(event)) throw badRequest('the X-GitHub-Event header is missing');
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

  /** `GET /api/v{6..10}/webhooks/{id}/{token}`: 200 the webhook as Discord shows it to its token's holder, without the token. */
  function getDiscordWebhook(ctx: PublicCtx) {
    const { hook } = discordAuthorized(ctx);
    return json({
      id: hook.id,
      type: 1,
      guild_id: hook.server_id,
      channel_id: hook.channel_id,
      name: hook.name,
      avatar: null,
      application_id: null,
    });
  }

  /**
   * `POST /api/v{6..10}/webhooks/{id}/{token}`: as our execute (above), into the thread
   * `?thread_id=` names when given; 204, or with `?wait=true` 200 the message as Discord shapes it.
   * Every answer carries the webhook's X-RateLimit-* headers.
   */
  async function executeDiscordWebhook(ctx: PublicCtx) {
    const { hook, secret } = discordAuthorized(ctx);
    const wait = ctx.query.get('wait');
    if (wait !== null && wait !== 'true' && wait !== 'false') throw badRequest('wait must be true or false');
    const record = await execute(ctx, hook, secret, threadOf(ctx, hook));
    rateHeaders(ctx, hook);
    return wait === 'true' || withFiles(record) ? json(discordMessage(record, hook)) : noContent();
  }

  /** `GET …/messages/{message_id}`: 200 one of the webhook's own messages (in `?thread_id=` when given); 404 for any other. */
  function getDiscordMessage(ctx: PublicCtx) {
    const { hook, secret } = discordAuthorized(ctx);
    if (secret !== null) checkSignature(ctx.req, hmacOf(secret, Buffer.alloc(0)));
    return json(discordMessage(ownMessage(ctx, hook), hook));
  }

  /**
   * `PATCH …/messages/{message_id}` (JSON `{"content"?, "embeds"?}`): 200 the webhook's own
   * message edited. What is not given stays; null clears it (a message keeps some text or a card).
   */
  async function editDiscordMessage(ctx: PublicCtx) {
    const { hook, secret } = discordAuthorized(ctx);
    const where = threadOf(ctx, hook);
    ownMessage(ctx, hook, where);
    const change = discordEdit(await readSigned(ctx.req, secret));
    limits.webhookCallsPerWebhook.take(hook.id, 'messages through this webhook');
    const record = posting.editAsWebhook(posterOf(hook, where), ctx.params.message.toLowerCase(), change);
    rateHeaders(ctx, hook);
    return json(discordMessage(record, hook));
  }

  /** `DELETE …/messages/{message_id}`: 204, the webhook's own message deleted (its files with it). */
  function deleteDiscordMessage(ctx: PublicCtx) {
    const { hook, secret } = discordAuthorized(ctx);
    if (secret !== null) checkSignature(ctx.req, hmacOf(secret, Buffer.alloc(0)));
    const where = threadOf(ctx, hook);
    const message = ownMessage(ctx, hook, where);
    limits.webhookCallsPerWebhook.take(hook.id, 'messages through this webhook');
    const author = users.byId(hook.user_id)!;
    messages.remove(reachedWhole(where), message.id, author, false);
    rateHeaders(ctx, hook);
    return noContent();
  }

  /** The webhook a Discord path names: ids are ours (UUIDs); anything else is an unknown webhook, in Discord's words. */
  function discordAuthorized(ctx: PublicCtx) {
    if (!isUuid(ctx.params.hook)) throw new HttpError(404, 'unknown webhook', {}, 'unknown_webhook');
    ctx.params.webhook_id = ctx.params.hook.toLowerCase();
    // Every answer tells the bucket, a 429 included (the error mapper adds its own Retry-After).
    rateHeaders(ctx, webhooks.authorize(ctx.params.webhook_id, ctx.params.token));
    return authorized(ctx);
  }

  /** Where a Discord call goes: the webhook's channel, or the thread of it that `?thread_id=` names (400 for any other). */
  function threadOf(ctx: PublicCtx, hook: Hook): ChannelOf {
    const threadId = ctx.query.get('thread_id');
    if (threadId === null) return channelOf(hook);
    const thread = isUuid(threadId) ? threads.get(threadId.toLowerCase()) : undefined;
    if (!thread || thread.parent_id !== hook.channel_id) throw new HttpError(400, 'thread_id names no thread of this webhook’s channel', {}, 'unknown_channel');
    return { kind: 'channel', id: thread.id, serverId: hook.server_id };
  }

  /** The message the path names, if this webhook posted it there; else 404 (Discord's unknown message). */
  function ownMessage(ctx: PublicCtx, hook: Hook, where: ChannelOf = threadOf(ctx, hook)): MessageRecord {
    const unknown = () => new HttpError(404, 'unknown message: this webhook posted no such message here', {}, 'unknown_message');
    const id = ctx.params.message;
    if (!isUuid(id)) throw unknown();
    let record: MessageRecord;
    try {
      record = messages.get(reachedWhole(where), id.toLowerCase(), hook.user_id);
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) throw unknown();
      throw err;
    }
    if (record.webhook_id !== hook.id) throw unknown();
    return record;
  }

  function posterOf(hook: Hook, where: ChannelOf) {
    return { webhookId: hook.id, author: users.byId(hook.user_id)!, channel: where };
  }

  /**
   * Discord's rate-limit headers (https://discord.com/developers/docs/topics/rate-limits#header-format)
   * for the webhook's own bucket, so that Discord's libraries pace themselves and never meet the 429.
   */
  function rateHeaders(ctx: PublicCtx, hook: Hook): void {
    const { limit, remaining, fullInMs } = limits.webhookCallsPerWebhook.state(hook.id);
    ctx.res.setHeader('X-RateLimit-Limit', String(limit));
    ctx.res.setHeader('X-RateLimit-Remaining', String(remaining));
    ctx.res.setHeader('X-RateLimit-Reset', ((clock.now() + fullInMs) / 1000).toFixed(3));
    ctx.res.setHeader('X-RateLimit-Reset-After', (fullInMs / 1000).toFixed(3));
    ctx.res.setHeader('X-RateLimit-Bucket', hook.id);
  }

  /**
   * A message as Discord's API shows a webhook's (https://discord.com/developers/docs/resources/message#message-object):
   * the author is the webhook (`bot: true`), with the name this message was posted under.
   * `mentions` is empty: Discord lists user objects there, ours are ids, in `mentions` of our own record.
   */
  function discordMessage(record: MessageRecord, hook: Hook) {
    const base = config.baseUrl.replace(/\/$/, '');
    return {
      id: record.id,
      type: 0,
      channel_id: record.channel_id,
      guild_id: record.server_id ?? hook.server_id,
      content: record.content,
      author: { id: hook.id, username: record.author.display_name ?? hook.name, global_name: null, avatar: null, discriminator: '0000', bot: true },
      attachments: record.attachments.map((a) => ({
        id: a.id,
        filename: a.name,
        size: a.size,
        url: `${base}${a.url}`,
        proxy_url: `${base}${a.url}`,
        content_type: a.content_type,
      })),
      embeds: record.embeds ?? [],
      mentions: [],
      mention_roles: record.mention_roles,
      mention_everyone: record.mention_everyone,
      pinned: record.pinned,
      tts: false,
      timestamp: record.created_at,
      edited_timestamp: record.edited_at,
      flags: 0,
      components: [],
      webhook_id: hook.id,
    };
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
  function post(hook: Hook, incoming: IncomingMessage, files: ReceivedFile[], where: ChannelOf = channelOf(hook)) {
    return posting.postAsWebhook(posterOf(hook, where), {
      content: incoming.content,
      files,
      embeds: incoming.embeds,
      username: incoming.username ?? null,
      avatarUrl: incoming.avatar_url ?? null,
      allowedMentions: incoming.allowed_mentions,
    });
  }
}

const channelOf = (hook: { server_id: string; channel_id: string }) => ({ kind: 'channel' as const, id: hook.channel_id, serverId: hook.server_id });
type ChannelOf = ReturnType<typeof channelOf>;
/**
 * A message with files is answered 200 with the message even without `?wait=true`: Discord's
 * quirk (discord/discord-api-docs#5099), which clients such as discord-webhook-node's sendFile
 * depend on.
 */
const withFiles = (record: MessageRecord) => record.attachments.length > 0;
type Hook = WebhookRecord & { user_id: string };

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
