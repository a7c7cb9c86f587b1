import type { DB } from '../../core/db';
import { VIEW } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';
import type { Level, NotificationSetting, TargetKind } from '../../core/records';

/**
 * Notification settings (docs/api.md "Notifications"): what a user wants to hear of a server, a
 * channel (over its server's) or a conversation. The one owner of the notification_settings
 * table; who may set one for what is src/api/notifications.ts's business (the access rule of
 * each kind of thing). The record itself (NotificationSetting) is in src/core/records.ts.
 */

export interface NotificationSettings {
  /**
   * The user's settings on what they see now, servers first, then channels, then
   * conversations. One on a server left, a channel hidden from them or a group left is kept
   * (and shows again with it), never listed.
   */
  list(userId: string): NotificationSetting[];
  /** What kind of thing an id names, if any (access is the caller's to check). */
  kindOf(targetId: string): TargetKind | null;
  /** Sets (replaces) one setting. */
  put(userId: string, setting: NotificationSetting): void;
  /** Back to inheriting; true when there was a setting. */
  remove(userId: string, targetId: string): boolean;
  /** The settings of many users for a few targets (a room and its server), by `${user_id} ${target_id}`. */
  settingsOf(userIds: readonly string[], targetIds: readonly string[]): Map<string, NotificationSetting>;
}

type Row = Omit<NotificationSetting, 'suppress_everyone' | 'suppress_roles'> & { suppress_everyone: number; suppress_roles: number };

const ORDER = "CASE target_kind WHEN 'server' THEN 0 WHEN 'channel' THEN 1 ELSE 2 END, target_id";

export function createNotificationSettings(db: DB, perms: Pick<Permissions, 'channelRulesOf'>): NotificationSettings {
  // Servers and conversations the user is in; channels with their server, whose access is the
  // channel rule's to decide (below).
  const ofUser = db.prepare<{ user: string }, Row & { channel_server: string | null }>(
    `SELECT ns.target_id, ns.target_kind, ns.level, ns.muted_until, ns.suppress_everyone, ns.suppress_roles, c.server_id AS channel_server
       FROM notification_settings ns LEFT JOIN channels c ON ns.target_kind = 'channel' AND c.id = ns.target_id
      WHERE ns.user_id = :user AND CASE ns.target_kind
        WHEN 'server' THEN EXISTS (SELECT 1 FROM members m WHERE m.server_id = ns.target_id AND m.user_id = :user)
        WHEN 'channel' THEN EXISTS (SELECT 1 FROM members m WHERE m.server_id = c.server_id AND m.user_id = :user)
        ELSE EXISTS (SELECT 1 FROM conversation_members cm WHERE cm.conversation_id = ns.target_id AND cm.user_id = :user) END
      ORDER BY ${ORDER.replace(/target_/g, 'ns.target_')}`,
  );
  const kind = db.prepare<[string, string, string], { kind: TargetKind }>(
    `SELECT 'server' AS kind FROM servers WHERE id = ?
     UNION ALL SELECT 'channel' FROM channels WHERE id = ?
     UNION ALL SELECT 'conversation' FROM conversations WHERE id = ?`,
  );
  const upsert = db.prepare<[string, string, string, string, string | null, number, number]>(
    `INSERT INTO notification_settings (user_id, target_id, target_kind, level, muted_until, suppress_everyone, suppress_roles)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (user_id, target_id) DO UPDATE SET level = excluded.level, muted_until = excluded.muted_until,
       suppress_everyone = excluded.suppress_everyone, suppress_roles = excluded.suppress_roles`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM notification_settings WHERE user_id = ? AND target_id = ?');
  const ofUsers = db.prepare<[string, string], Row & { user_id: string }>(
    `SELECT user_id, target_id, target_kind, level, muted_until, suppress_everyone, suppress_roles FROM notification_settings
      WHERE user_id IN (SELECT value FROM json_each(?)) AND target_id IN (SELECT value FROM json_each(?))`,
  );
  const toSetting = ({ suppress_everyone, suppress_roles, ...rest }: Row): NotificationSetting => ({
    ...rest,
    suppress_everyone: suppress_everyone === 1,
    suppress_roles: suppress_roles === 1,
  });

  return {
    list(userId) {
      const rows = ofUser.all({ user: userId });
      const rules = perms.channelRulesOf([...new Set(rows.flatMap((r) => (r.channel_server ? [r.channel_server] : [])))]);
      return rows
        .filter((r) => r.channel_server === null || (rules.get(r.channel_server)?.flags(userId, r.target_id) ?? 0) & VIEW)
        .map(({ channel_server: _, ...row }) => toSetting(row));
    },
    kindOf: (targetId) => kind.get(targetId, targetId, targetId)?.kind ?? null,
    put(userId, s) {
      upsert.run(userId, s.target_id, s.target_kind, s.level, s.muted_until, Number(s.suppress_everyone), Number(s.suppress_roles));
    },
    remove: (userId, targetId) => remove.run(userId, targetId).changes > 0,
    settingsOf(userIds, targetIds) {
      const found = new Map<string, NotificationSetting>();
      for (const { user_id, ...row } of ofUsers.all(JSON.stringify(userIds), JSON.stringify(targetIds)))
        found.set(`${user_id} ${row.target_id}`, toSetting(row));
      return found;
    },
  };
}

/** Whether a setting mutes now. */
export const mutedAt = (setting: Pick<NotificationSetting, 'muted_until'> | undefined, now: number): boolean =>
  setting?.muted_until != null && Date.parse(setting.muted_until) > now;

/**
 * How much a message in a room notifies, by the room's own setting over its parent's (a thread's
 * channel) over its server's (a channel's server; none for a conversation): `nothing` while any
 * of them is muted; `all` when none says.
 */
export function levelAt(own: NotificationSetting | undefined, server: NotificationSetting | undefined, now: number, parent?: NotificationSetting): Level {
  if (mutedAt(own, now) || mutedAt(parent, now) || mutedAt(server, now)) return 'nothing';
  return own?.level ?? parent?.level ?? server?.level ?? 'all';
}
