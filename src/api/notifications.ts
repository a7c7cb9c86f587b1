import { HttpError, badRequest, notFound } from '../core/http/errors';
import { json, noContent } from '../core/http/respond';
import { placeOf } from '../core/message-record';
import { type Body, type Container, type Ctx, type Route, reachedWhole } from '../core/types';
import { bool, oneOf } from '../core/validate';
import { LEVELS, type NotificationSetting, type TargetKind } from '../core/records';
import type { Services } from '../parts/services';

type Deps = Pick<Services, 'db' | 'perms' | 'hub' | 'limits' | 'readStates' | 'notifications'>;

/**
 * Notifications (docs/api.md "Notifications"): the caller's settings for servers, channels and
 * conversations, and marking a whole server, or everything, read. Each change reaches the
 * caller's other devices through their user streams.
 */
export function notificationRoutes(deps: Deps): Route[] {
  const h = notificationHandlers(deps);
  return [
    { method: 'GET', path: '/api/account/notifications', auth: 'user', body: 'none', handler: h.listNotificationSettings },
    { method: 'PUT', path: '/api/account/notifications/:target_id', auth: 'user', body: 'json', handler: h.setNotificationSetting },
    { method: 'DELETE', path: '/api/account/notifications/:target_id', auth: 'user', body: 'none', handler: h.inheritNotificationSetting },
    { method: 'POST', path: '/api/servers/:server_id/read', auth: 'user', body: 'none', handler: h.markServerRead },
    { method: 'POST', path: '/api/account/read-all', auth: 'user', body: 'none', handler: h.markEverythingRead },
  ];
}

const NO_TARGET = 'no such server, channel or conversation';

/** A time in ISO 8601 with a zone: `2026-11-28T10:00:00Z`, `…T10:00:00.000+01:00`. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

function notificationHandlers({ db, perms, hub, limits, readStates, notifications }: Deps) {
  return { listNotificationSettings, setNotificationSetting, inheritNotificationSetting, markServerRead, markEverythingRead };

  /**
   * What the id names, if the caller may see it: otherwise 404, the one answer of an id of
   * nothing, so whether it exists (and what it is) stays unsaid.
   */
  function targetOf(ctx: Ctx): TargetKind {
    const id = ctx.params.target_id;
    const kind = notifications.kindOf(id);
    try {
      if (kind === 'server') perms.serverAccess(ctx.user, id);
      else if (kind === 'channel') perms.channelAccess(ctx.user, id);
      else if (kind === 'conversation') perms.conversationAccess(ctx.user, id);
      else throw notFound(NO_TARGET);
    } catch (err) {
      if (err instanceof HttpError && err.status === 404) throw notFound(NO_TARGET);
      throw err;
    }
    return kind;
  }

  /** The caller's settings: servers, then channels, then conversations. */
  function listNotificationSettings(ctx: Ctx) {
    return json(notifications.list(ctx.user.id));
  }

  /** Replaces the caller's setting for a server, channel or conversation they see; 200 the setting. */
  function setNotificationSetting(ctx: Ctx) {
    const kind = targetOf(ctx);
    const setting: NotificationSetting = {
      target_id: ctx.params.target_id,
      target_kind: kind,
      level: oneOf(ctx.body, 'level', LEVELS),
      muted_until: mutedUntil(ctx.body),
      suppress_everyone: optionalFlag(ctx.body, 'suppress_everyone', kind),
      suppress_roles: optionalFlag(ctx.body, 'suppress_roles', kind),
    };
    notifications.put(ctx.user.id, setting);
    hub.toUsers([ctx.user.id], { event: 'notification_settings', target_id: setting.target_id, setting });
    return json(setting);
  }

  /** Back to inheriting (the server's for a channel, the default otherwise); 204 whether or not one was set. */
  function inheritNotificationSetting(ctx: Ctx) {
    targetOf(ctx);
    if (notifications.remove(ctx.user.id, ctx.params.target_id)) {
      hub.toUsers([ctx.user.id], { event: 'notification_settings', target_id: ctx.params.target_id, setting: null });
    }
    return noContent();
  }

  /** Every channel of a server the caller sees, read up to its newest message; 200 the channels' read states. */
  function markServerRead(ctx: Ctx) {
    const serverId = ctx.params.server_id;
    perms.serverAccess(ctx.user, serverId);
    limits.markAllReadPerUser.take(ctx.user.id, 'servers marked read');
    const moved = markRead(ctx.user.id, channelsToRead(ctx.user.id, serverId));
    const states = readStates.channels(ctx.user.id, serverId);
    announce(ctx.user.id, moved, (c) => readStates.of(ctx.user.id, c));
    return json(
      [...states.values()].map(({ id, server_id, last_message_id, last_read_id, unread_count, mention_count }) => ({
        server_id,
        channel_id: id,
        last_message_id,
        last_read_id,
        unread_count,
        mention_count,
      })),
    );
  }

  /** Every channel and conversation of the caller, read; 204. */
  function markEverythingRead(ctx: Ctx) {
    limits.markAllReadPerUser.take(ctx.user.id, 'everything marked read');
    const conversations: [Container, string][] = [];
    for (const state of readStates.conversations(ctx.user.id).values()) {
      if (state.last_message_id !== null && state.last_message_id !== state.last_read_id)
        conversations.push([{ kind: 'conversation', id: state.conversation_id }, state.last_message_id]);
    }
    const moved = markRead(ctx.user.id, [...channelsToRead(ctx.user.id), ...conversations]);
    announce(ctx.user.id, moved, (c) => readStates.of(ctx.user.id, c));
    return noContent();
  }

  /** The channels (of one server, or all) and the active threads the caller follows with something they have not read, and their newest message. */
  function channelsToRead(userId: string, serverId?: string): [Container, string][] {
    const found: [Container, string][] = [];
    const states = [...readStates.channels(userId, serverId).values(), ...readStates.threads(userId, serverId).values()];
    for (const state of states) {
      if (state.last_message_id != null && state.last_message_id !== state.last_read_id) {
        found.push([{ kind: 'channel', id: state.id, serverId: state.server_id }, state.last_message_id]);
      }
    }
    return found;
  }

  /** Moves the markers in one transaction; the containers whose marker moved (each to the newest message of the caller's read state: one they may read). */
  function markRead(userId: string, targets: [Container, string][]): Container[] {
    return db.transaction(() =>
      targets.filter(([container, messageId]) => readStates.markRead(userId, reachedWhole(container), messageId)).map(([container]) => container),
    )();
  }

  /** The caller's streams hear of each marker that moved, as after PUT …/read. */
  function announce(userId: string, moved: Container[], stateOf: (c: Container) => ReturnType<typeof readStates.of>): void {
    for (const container of moved) hub.toUsers([userId], { event: 'read', ...placeOf(container), ...stateOf(container) });
  }
}

/** `muted_until`: absent or null (not muted), or a time with its zone; kept as UTC. */
function mutedUntil(body: Body): string | null {
  const value = body.muted_until;
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !TIMESTAMP.test(value) || Number.isNaN(Date.parse(value))) {
    throw badRequest('muted_until must be null or a time such as 2026-11-28T18:00:00Z');
  }
  return new Date(Date.parse(value)).toISOString();
}

/** `suppress_everyone` and `suppress_roles`: a server's; absent is false. */
function optionalFlag(body: Body, key: string, kind: TargetKind): boolean {
  if (body[key] === undefined) return false;
  const value = bool(body, key);
  if (value && kind !== 'server') throw badRequest(`${key} applies to a server, not a ${kind}`);
  return value;
}
