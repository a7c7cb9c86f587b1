import { type Clock, MINUTE } from '../../core/clock';
import type { DB } from '../../core/db';
import { forbidden } from '../../core/http/errors';
import type { JoinRateAction } from '../../core/records';
import { type Flags, flagsOf } from '../../rules/channel-permissions';
import type { Permissions } from '../../rules/permissions';
import type { AuditLog } from './audit';
import type { Directory } from './directory';
import type { Hub } from '../delivery/hub';

/** The largest join-rate threshold a server may set (joins per minute); also what one server's window holds at most. */
export const MAX_JOIN_RATE_THRESHOLD = 1000;
/** The window joins are counted in. */
export const JOIN_WINDOW_MS = MINUTE;
/** Servers whose recent joins are kept at most; past it, windows with nothing in the last minute go. */
const KEPT_WINDOWS = 10_000;

/** How someone comes in: by an invite, or by claiming imported Discord history (src/parts/import/claims.ts). */
export type JoinWay = 'invite' | 'claim';

/**
 * Raid protection at the door (issue 53, docs/moderation.md "Raid protection"): whether a join may
 * happen now, and how many happened in the last minute.
 *
 * - `invites_paused` (a server setting, one click in the browser): invites take nobody in (403).
 * - `joins_paused`: nobody comes in by any way (403) until a moderator resumes (PATCH the server
 *   `joins_paused: false`). Join-rate protection sets it when joins per minute pass the threshold
 *   and the action is `pause`; either action alerts those who can act (`join_rate_alert`).
 *
 * Joins are counted in memory per server over a sliding minute: at most threshold + 1 times per
 * server (MAX_JOIN_RATE_THRESHOLD + 1), for at most KEPT_WINDOWS servers before stale ones are
 * dropped; a restart forgets them (a raid that spans one starts counting again).
 *
 * Owners and bots added by a manager are not joins: a server's creation and POST …/bots do not
 * pass here.
 */
export interface JoinGate {
  /** 403 when this join may not happen now. */
  requireOpen(serverId: string, way: JoinWay): void;
  /**
   * Inside a join's write, before it is counted: whether this newcomer is to wait in screening
   * (action `screen`: the join that passes the threshold and every one after it, while joins per
   * minute stay past it).
   */
  screens(serverId: string): boolean;
  /** After a join's commit: counts it; past the threshold, pauses joins (action `pause`) and alerts. */
  joined(serverId: string, userId: string): void;
  /**
   * Whether joins in the last minute are past the server's threshold now. The hook for "put in
   * screening" (issue 53): a join path may ask it after `joined` and mark the newcomer pending.
   */
  surging(serverId: string): boolean;
}

export interface JoinGateParts {
  db: DB;
  clock: Clock;
  perms: Pick<Permissions, 'channelRules'>;
  directory: Pick<Directory, 'server' | 'serverMemberIds'>;
  hub: Pick<Hub, 'toServer' | 'toUsers'>;
  audit: Pick<AuditLog, 'write'>;
}

/** Who hears of a surge: who can pause joins or act on the newcomers (the owner and full administrators hold all three). */
const ALERTED: Flags = flagsOf(['manage_server', 'kick_members', 'ban_members']);

export function createJoinGate({ db, clock, perms, directory, hub, audit }: JoinGateParts): JoinGate {
  const doorOf = db.prepare<[string], { invites_paused: number; joins_paused: number; join_rate_threshold: number; join_rate_action: JoinRateAction }>(
    'SELECT invites_paused, joins_paused, join_rate_threshold, join_rate_action FROM servers WHERE id = ?',
  );
  const pauseJoins = db.prepare('UPDATE servers SET joins_paused = 1 WHERE id = ? AND joins_paused = 0');
  /** Each server's join times in the last minute, oldest first (at most threshold + 1). */
  const windows = new Map<string, number[]>();
  /** When each server's moderators were last alerted: once a minute at most. */
  const alerted = new Map<string, number>();

  const recent = (serverId: string, now: number): number[] => {
    const times = windows.get(serverId) ?? [];
    while (times.length > 0 && times[0] <= now - JOIN_WINDOW_MS) times.shift();
    return times;
  };

  const alertRecipients = (serverId: string): string[] => {
    const rules = perms.channelRules(serverId);
    if (!rules) return [];
    return directory.serverMemberIds(serverId).filter((id) => (rules.serverFlags(id) & ALERTED) !== 0);
  };

  return {
    requireOpen(serverId, way) {
      const door = doorOf.get(serverId);
      if (!door) return;
      if (door.joins_paused === 1)
        throw forbidden('this server is not taking new members right now: its moderators paused joins (too many joined at once); try again later');
      if (way === 'invite' && door.invites_paused === 1) throw forbidden("this server's invites are paused by its moderators: try again later");
    },

    joined(serverId, userId) {
      const door = doorOf.get(serverId);
      if (!door || door.join_rate_threshold === 0) {
        windows.delete(serverId);
        return;
      }
      const now = clock.now();
      const times = recent(serverId, now);
      times.push(now);
      while (times.length > door.join_rate_threshold + 1) times.shift();
      windows.set(serverId, times);
      if (windows.size > KEPT_WINDOWS) for (const [id, kept] of windows) if (recent(id, now).length === 0 || kept.length === 0) windows.delete(id);
      if (times.length <= door.join_rate_threshold) return;
      const pause = door.join_rate_action === 'pause';
      const paused =
        pause &&
        db.transaction(() => {
          if (pauseJoins.run(serverId).changes === 0) return false;
          // The actor is the member whose join passed the threshold: the change is the server's own.
          audit.write({
            serverId,
            action: 'joins_pause',
            actorId: userId,
            targetId: serverId,
            targetKind: 'server',
            reason: `join-rate protection: more than ${door.join_rate_threshold} joins in a minute`,
            changes: { joins_paused: { from: false, to: true } },
          });
          return true;
        })();
      if (paused) hub.toServer(serverId, { event: 'server_updated', server_id: serverId, server: directory.server(serverId)! });
      const last = alerted.get(serverId);
      if (!paused && last !== undefined && now - last < JOIN_WINDOW_MS) return;
      alerted.set(serverId, now);
      if (alerted.size > KEPT_WINDOWS) for (const [id, at] of alerted) if (now - at >= JOIN_WINDOW_MS) alerted.delete(id);
      hub.toUsers(alertRecipients(serverId), {
        event: 'join_rate_alert',
        server_id: serverId,
        joins: times.length,
        threshold: door.join_rate_threshold,
        action: door.join_rate_action,
        joins_paused: pause,
      });
    },

    screens(serverId) {
      const door = doorOf.get(serverId);
      return (
        !!door && door.join_rate_action === 'screen' && door.join_rate_threshold > 0 && recent(serverId, clock.now()).length + 1 > door.join_rate_threshold
      );
    },

    surging(serverId) {
      const door = doorOf.get(serverId);
      return !!door && door.join_rate_threshold > 0 && recent(serverId, clock.now()).length > door.join_rate_threshold;
    },
  };
}
