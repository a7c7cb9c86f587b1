import crypto from 'node:crypto';
import { type Clock, HOUR, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { HttpError, conflict, notFound } from '../../core/http/errors';
import type { SecretBox } from '../../core/secret-box';
import type { AccountRows } from '../accounts/account-rows';
import { matchesHash, tokenHash } from '../accounts/users';
import type { AuditLog } from '../community/audit';

/** Webhooks one channel may have, and one server (Discord's order of magnitude). */
export const MAX_WEBHOOKS_PER_CHANNEL = 15;
export const MAX_WEBHOOKS_PER_SERVER = 100;
export const WEBHOOK_NAME_MAX = 80;
/** Deliveries remembered (to answer a repeat without posting again) at most, and for how long. */
export const REMEMBERED_DELIVERIES = 100_000;
export const DELIVERY_MEMORY_MS = 24 * HOUR;

export interface WebhookRecord {
  id: string;
  name: string;
  server_id: string;
  channel_id: string;
  /** Whether every call, on every route, must carry a valid signature (docs/integrations.md "Signed calls"). */
  github_secret_set: boolean;
  /** Who made it. */
  created_by: { user_id: string; username: string };
  created_at: string;
}

/** A new webhook or a new token: the only times the token (and so the URL) is shown. */
export type WebhookWithToken = WebhookRecord & { token: string; url: string };

interface Row {
  id: string;
  name: string;
  server_id: string;
  channel_id: string;
  user_id: string;
  token_hash: string;
  github_secret: string | null;
  created_by: string;
  creator_name: string;
  created_at: string;
}

export interface Webhooks {
  create(serverId: string, channelId: string, actorId: string, name: string, baseUrl: string): WebhookWithToken;
  list(channelId: string): WebhookRecord[];
  /** The webhook of this server, or 404. */
  inServer(serverId: string, webhookId: string): WebhookRecord;
  /** Any webhook by id (the management routes find the server from it), or 404. */
  find(webhookId: string): WebhookRecord;
  update(
    webhookId: string,
    actorId: string,
    change: { name?: string; githubSecret?: string | null; newToken?: boolean },
    baseUrl: string,
  ): WebhookRecord | WebhookWithToken;
  /** Deletes it (its messages stay unless the caller deletes them in the same transaction: MessageStore.removeByWebhook). */
  remove(webhookId: string, actorId: string, messagesDeleted: number): void;
  /** The webhook a URL names, if its token is right: 404 for no such webhook, 401 for a wrong token. */
  authorize(webhookId: string, token: string): WebhookRecord & { user_id: string };
  /** The signing secret (`github_secret`), decrypted, or null. */
  githubSecret(webhookId: string): string | null;
  /**
   * A delivery to this webhook, named by `keys` (its delivery id, its signature): true when none
   * of them was seen in the last DELIVERY_MEMORY_MS, and from now on they are. In memory: a
   * restart forgets them.
   */
  claimDelivery(webhookId: string, keys: readonly string[]): boolean;
  /** Forgets a claimed delivery whose message was not posted, so that a redelivery is taken. */
  releaseDelivery(webhookId: string, keys: readonly string[]): void;
}

/**
 * Incoming webhooks (docs/api.md "Webhooks"): a secret URL that posts into one channel. The
 * token is shown once and stored as its SHA-256; each webhook's messages have an author row of
 * their own (users.bot = 2, no password), which stays when the webhook goes, so its messages
 * keep their author. Every change is in the server's audit log, in the same transaction.
 */
export function createWebhooks({
  db,
  clock,
  accountRows,
  audit,
  box,
}: {
  db: DB;
  clock: Clock;
  accountRows: Pick<AccountRows, 'createAccount' | 'setDisplayName'>;
  audit: AuditLog;
  box: SecretBox;
}): Webhooks {
  const SELECT = `SELECT w.id, w.name, w.server_id, w.channel_id, w.user_id, w.token_hash, w.github_secret, w.created_by,
                         p.username AS creator_name, w.created_at
                    FROM webhooks w JOIN profiles p ON p.id = w.created_by`;
  const byId = db.prepare<[string], Row>(`${SELECT} WHERE w.id = ?`);
  const byChannel = db.prepare<[string], Row>(`${SELECT} WHERE w.channel_id = ? ORDER BY w.created_at, w.id`);
  const countIn = db.prepare<[string, string], { channel: number; server: number }>(
    'SELECT (SELECT COUNT(*) FROM webhooks WHERE channel_id = ?) AS channel, (SELECT COUNT(*) FROM webhooks WHERE server_id = ?) AS server',
  );
  const insertWebhook = db.prepare(
    'INSERT INTO webhooks (id, server_id, channel_id, user_id, name, token_hash, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const setName = db.prepare('UPDATE webhooks SET name = ? WHERE id = ?');
  const setToken = db.prepare('UPDATE webhooks SET token_hash = ? WHERE id = ?');
  const setSecret = db.prepare('UPDATE webhooks SET github_secret = ? WHERE id = ?');
  const deleteWebhook = db.prepare('DELETE FROM webhooks WHERE id = ?');

  /** Claimed deliveries, `<webhook id> <key>` to when, oldest first. */
  const deliveries = new Map<string, number>();

  const toRecord = (row: Row): WebhookRecord => ({
    id: row.id,
    name: row.name,
    server_id: row.server_id,
    channel_id: row.channel_id,
    github_secret_set: row.github_secret !== null,
    created_by: { user_id: row.created_by, username: row.creator_name },
    created_at: row.created_at,
  });
  const rowOf = (webhookId: string) => {
    const row = byId.get(webhookId);
    if (!row) throw notFound('webhook not found');
    return row;
  };
  const newToken = () => crypto.randomBytes(32).toString('base64url');
  const withToken = (record: WebhookRecord, token: string, baseUrl: string): WebhookWithToken => ({
    ...record,
    token,
    url: `${baseUrl.replace(/\/$/, '')}/api/webhooks/${record.id}/${token}`,
  });

  return {
    create(serverId, channelId, actorId, name, baseUrl) {
      const id = crypto.randomUUID();
      const token = newToken();
      const now = iso(clock.now());
      db.transaction(() => {
        const count = countIn.get(channelId, serverId)!;
        if (count.channel >= MAX_WEBHOOKS_PER_CHANNEL) throw conflict(`a channel may have at most ${MAX_WEBHOOKS_PER_CHANNEL} webhooks`);
        if (count.server >= MAX_WEBHOOKS_PER_SERVER) throw conflict(`a server may have at most ${MAX_WEBHOOKS_PER_SERVER} webhooks`);
        // Its author: a name no person can register (a dot is not allowed in usernames).
        const authorId = accountRows.createAccount({ kind: 'webhook', username: `webhook.${id}`, displayName: name });
        insertWebhook.run(id, serverId, channelId, authorId, name, tokenHash(token), actorId, now);
        audit.write({
          serverId,
          action: 'webhook_create',
          actorId,
          targetId: id,
          targetKind: 'webhook',
          reason: null,
          changes: { name, channel_id: channelId },
        });
      })();
      return withToken(toRecord(rowOf(id)), token, baseUrl);
    },

    list: (channelId) => byChannel.all(channelId).map(toRecord),

    inServer(serverId, webhookId) {
      const row = rowOf(webhookId);
      if (row.server_id !== serverId) throw notFound('webhook not found');
      return toRecord(row);
    },

    find: (webhookId) => toRecord(rowOf(webhookId)),

    update(webhookId, actorId, change, baseUrl) {
      const row = rowOf(webhookId);
      const token = change.newToken ? newToken() : null;
      db.transaction(() => {
        if (change.name !== undefined) {
          setName.run(change.name, webhookId);
          accountRows.setDisplayName(row.user_id, change.name);
        }
        if (change.githubSecret !== undefined) setSecret.run(change.githubSecret === null ? null : box.seal(change.githubSecret, webhookId), webhookId);
        if (token) setToken.run(tokenHash(token), webhookId);
        const changes = {
          ...(change.name !== undefined ? { name: change.name } : {}),
          ...(change.githubSecret !== undefined ? { github_secret_set: change.githubSecret !== null } : {}),
        };
        if (Object.keys(changes).length > 0)
          audit.write({ serverId: row.server_id, action: 'webhook_update', actorId, targetId: webhookId, targetKind: 'webhook', reason: null, changes });
        if (token) audit.write({ serverId: row.server_id, action: 'webhook_token_reset', actorId, targetId: webhookId, targetKind: 'webhook', reason: null });
      })();
      const record = toRecord(rowOf(webhookId));
      return token ? withToken(record, token, baseUrl) : record;
    },

    remove(webhookId, actorId, messagesDeleted) {
      const row = rowOf(webhookId);
      db.transaction(() => {
        deleteWebhook.run(webhookId);
        audit.write({
          serverId: row.server_id,
          action: 'webhook_delete',
          actorId,
          targetId: webhookId,
          targetKind: 'webhook',
          reason: null,
          changes: { name: row.name, messages_deleted: messagesDeleted },
        });
      })();
    },

    authorize(webhookId, token) {
      const row = byId.get(webhookId);
      if (!row) throw notFound('unknown webhook: it was deleted, or the URL is wrong');
      if (!matchesHash(row.token_hash, token)) throw new HttpError(401, 'the webhook token is not valid');
      return { ...toRecord(row), user_id: row.user_id };
    },

    githubSecret(webhookId) {
      const sealed = rowOf(webhookId).github_secret;
      if (sealed === null) return null;
      // A secret sealed under another key (the data directory's key changed) cannot be checked:
      // deliveries are refused until an administrator sets it again, never let through unsigned.
      const secret = box.open(sealed, webhookId);
      if (secret === null) throw new HttpError(401, "this webhook's GitHub secret cannot be read (the server's key changed): set it again");
      return secret;
    },

    claimDelivery(webhookId, keys) {
      const now = clock.now();
      for (const [key, at] of deliveries) {
        if (at > now - DELIVERY_MEMORY_MS && deliveries.size < REMEMBERED_DELIVERIES) break;
        deliveries.delete(key);
      }
      if (keys.some((key) => deliveries.has(`${webhookId} ${key}`))) return false;
      for (const key of keys) deliveries.set(`${webhookId} ${key}`, now);
      return true;
    },

    releaseDelivery(webhookId, keys) {
      for (const key of keys) deliveries.delete(`${webhookId} ${key}`);
    },
  };
}
