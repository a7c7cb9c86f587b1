import crypto from 'node:crypto';
import { type Clock, iso } from '../../core/clock';
import type { DB } from '../../core/db';
import { notFound } from '../../core/http/errors';

/**
 * The audit log of a server: what its owner and administrators did, written in the same
 * transaction as the change it records, so a change and its entry exist together or not at all.
 */

export type AuditAction =
  | 'server_update'
  | 'owner_transfer'
  | 'channel_create'
  | 'channel_update'
  | 'channel_delete'
  | 'thread_update'
  | 'thread_delete'
  | 'category_create'
  | 'category_update'
  | 'category_delete'
  | 'overwrite_update'
  | 'overwrite_delete'
  | 'role_create'
  | 'role_update'
  | 'role_delete'
  | 'role_assign'
  | 'role_unassign'
  | 'member_kick'
  | 'member_ban'
  | 'member_unban'
  | 'member_timeout'
  | 'member_timeout_remove'
  | 'member_voice_update'
  | 'member_move'
  | 'member_disconnect'
  | 'invite_revoke'
  | 'message_delete'
  | 'message_pin'
  | 'message_unpin'
  | 'bot_add'
  | 'webhook_create'
  | 'webhook_update'
  | 'webhook_token_reset'
  | 'webhook_delete'
  | 'emoji_create'
  | 'emoji_update'
  | 'emoji_delete'
  | 'sticker_create'
  | 'sticker_update'
  | 'sticker_delete'
  | 'automod_rule_create'
  | 'automod_rule_update'
  | 'automod_rule_delete'
  | 'automod_block'
  | 'automod_alert'
  | 'joins_pause'
  | 'onboarding_update'
  | 'onboarding_accept';

export interface AuditEntry {
  serverId: string;
  action: AuditAction;
  actorId: string;
  targetId: string | null;
  targetKind: 'server' | 'user' | 'channel' | 'category' | 'role' | 'invite' | 'message' | 'webhook' | 'emoji' | 'sticker' | 'automod_rule' | null;
  reason: string | null;
  changes?: Record<string, unknown>;
}

export interface AuditRecord {
  id: string;
  action: AuditAction;
  actor: { user_id: string; username: string };
  target_id: string | null;
  target_kind: string | null;
  reason: string | null;
  changes: Record<string, unknown> | null;
  created_at: string;
}

export interface AuditLog {
  /** Call inside the transaction of the change. */
  write(entry: AuditEntry): void;
  /** Newest first; `before` is an entry id (400 if it is not one of this server's). */
  list(serverId: string, before: string | null, limit: number): AuditRecord[];
}

interface Row {
  seq: number;
  id: string;
  action: AuditAction;
  actor_id: string;
  username: string;
  target_id: string | null;
  target_kind: string | null;
  reason: string | null;
  changes: string | null;
  created_at: string;
}

export function createAuditLog(db: DB, clock: Clock): AuditLog {
  const insert = db.prepare(
    `INSERT INTO audit_log (id, server_id, action, actor_id, target_id, target_kind, reason, changes, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const COLUMNS = `a.seq, a.id, a.action, a.actor_id, u.username, a.target_id, a.target_kind, a.reason, a.changes, a.created_at
    FROM audit_log a JOIN users u ON u.id = a.actor_id`;
  const newest = db.prepare<[string, number], Row>(`SELECT ${COLUMNS} WHERE a.server_id = ? ORDER BY a.seq DESC LIMIT ?`);
  const before = db.prepare<[string, number, number], Row>(`SELECT ${COLUMNS} WHERE a.server_id = ? AND a.seq < ? ORDER BY a.seq DESC LIMIT ?`);
  const seqOf = db.prepare<[string, string], { seq: number }>('SELECT seq FROM audit_log WHERE id = ? AND server_id = ?');
  const record = (r: Row): AuditRecord => ({
    id: r.id,
    action: r.action,
    actor: { user_id: r.actor_id, username: r.username },
    target_id: r.target_id,
    target_kind: r.target_kind,
    reason: r.reason,
    changes: r.changes ? (JSON.parse(r.changes) as Record<string, unknown>) : null,
    created_at: r.created_at,
  });
  return {
    write(e) {
      const changes = e.changes && Object.keys(e.changes).length ? JSON.stringify(e.changes) : null;
      insert.run(crypto.randomUUID(), e.serverId, e.action, e.actorId, e.targetId, e.targetKind, e.reason, changes, iso(clock.now()));
    },
    list(serverId, beforeId, limit) {
      if (!beforeId) return newest.all(serverId, limit).map(record);
      const cursor = seqOf.get(beforeId, serverId);
      if (!cursor) throw notFound("before: no such entry in this server's audit log");
      return before.all(serverId, cursor.seq, limit).map(record);
    },
  };
}
