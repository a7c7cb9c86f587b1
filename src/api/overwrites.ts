import { badRequest, notFound } from '../core/http/errors';
import { json, noContent } from '../core/http/respond';
import type { Services } from '../parts/services';
import { type OverwriteRecord, type Scope, overwriteRecord } from '../parts/community/overwrites';
import type { Body, Ctx, Route } from '../core/types';
import { auditReason, subsetOf } from '../core/validate';
import { FLAGS, type Flag, type Flags, flagsOf } from '../rules/channel-permissions';
import { requireGrantable } from '../rules/permissions';

/** Overwrites one channel or category may hold (Discord allows 100). */
export const MAX_OVERWRITES = 100;

type Deps = Pick<Services, 'db' | 'perms' | 'directory' | 'audit' | 'overwrites' | 'accessChanges'>;

/**
 * Channel permission overwrites (src/rules/channel-permissions.ts): for everyone (the server's
 * id), a role or a member, on a channel or on a category its synced channels follow. Holders of
 * manage_roles read and change them (in the channel, its overwrites counting; on a category, as
 * their roles give it), and only for the flags they hold themselves there, as on Discord (the
 * owner and full server administrators hold every one); each change is audited with before and
 * after, and told to the members whose access it changes (src/parts/community/access-changes.ts).
 */
export function overwriteRoutes(deps: Deps): Route[] {
  const h = overwriteHandlers(deps);
  const CH = '/api/servers/:server_id/channels/:channel_id/overwrites';
  const CA = '/api/servers/:server_id/categories/:category_id/overwrites';
  return [
    { method: 'GET', path: CH, auth: 'user', body: 'none', handler: h.listOverwrites },
    { method: 'PUT', path: `${CH}/:target_id`, auth: 'user', body: 'json', handler: h.putOverwrite },
    { method: 'DELETE', path: `${CH}/:target_id`, auth: 'user', body: 'none', handler: h.deleteOverwrite },
    { method: 'GET', path: CA, auth: 'user', body: 'none', handler: h.listOverwrites },
    { method: 'PUT', path: `${CA}/:target_id`, auth: 'user', body: 'json', handler: h.putOverwrite },
    { method: 'DELETE', path: `${CA}/:target_id`, auth: 'user', body: 'none', handler: h.deleteOverwrite },
  ];
}

/** `{allow?, deny?}` of flag names (missing: none); a flag both allowed and denied is 400. */
export function readOverwrite(body: Body): { allow: Flag[]; deny: Flag[] } {
  const allow = body.allow === undefined ? [] : subsetOf(body, 'allow', FLAGS);
  const deny = body.deny === undefined ? [] : subsetOf(body, 'deny', FLAGS);
  const both = allow.find((flag) => deny.includes(flag));
  if (both) throw badRequest(`${both} cannot be both allowed and denied`);
  return { allow, deny };
}

function overwriteHandlers({ db, perms, directory, audit, overwrites, accessChanges }: Deps) {
  const roleOf = db.prepare<[string], { server_id: string }>('SELECT server_id FROM roles WHERE id = ?');

  /**
   * The channel or category the path names, in this server (404 otherwise); the caller must hold
   * manage_roles there (`mine`: the flags they hold there, the ones they may allow or deny). A
   * thread follows its parent's overwrites: they are read through it, changed on the parent.
   */
  function scopeOf(ctx: Ctx, writing = false): { serverId: string; scope: Scope; targetKind: 'channel' | 'category'; id: string; mine: Flags } {
    const serverId = ctx.params.server_id;
    if (ctx.params.channel_id !== undefined) {
      const channel = directory.channel(ctx.params.channel_id);
      if (!channel || channel.server_id !== serverId) throw notFound('channel not found');
      const { flags } = perms.requireChannelFlag(ctx.user, channel.id, serverId, 'manage_roles');
      if (writing && channel.type === 'thread') throw badRequest("a thread follows its parent channel's overwrites: change them there");
      return { serverId, scope: { channelId: channel.id }, targetKind: 'channel', id: channel.id, mine: flags };
    }
    perms.requireServerFlag(ctx.user, serverId, 'manage_roles');
    const category = directory.categoriesOf(serverId).find((c) => c.id === ctx.params.category_id);
    if (!category) throw notFound('category not found');
    const mine = perms.channelRules(serverId)?.serverFlags(ctx.user.id) ?? 0;
    return { serverId, scope: { categoryId: category.id }, targetKind: 'category', id: category.id, mine };
  }

  /** Everyone (the server's id), a role of this server, or a member of it. */
  function kindOf(serverId: string, targetId: string): OverwriteRecord['kind'] {
    if (targetId === serverId) return 'everyone';
    if (roleOf.get(targetId)?.server_id === serverId) return 'role';
    if (perms.rank(targetId, serverId)) return 'member';
    throw notFound('target not found: the server id (everyone), a role or a member of this server');
  }

  return { listOverwrites, putOverwrite, deleteOverwrite };

  /** The overwrites that apply: a synced channel's are its category's (as access is decided). */
  function listOverwrites(ctx: Ctx) {
    const { serverId, scope } = scopeOf(ctx);
    if (!('channelId' in scope)) return json(overwrites.list(scope));
    return json((perms.channelRules(serverId)?.overwritesOf(scope.channelId) ?? []).map(overwriteRecord));
  }

  /** Sets one; a synced channel first takes its category's as its own; 200 the overwrite. */
  function putOverwrite(ctx: Ctx) {
    const { serverId, scope, targetKind, id, mine } = scopeOf(ctx, true);
    const targetId = ctx.params.target_id;
    const kind = kindOf(serverId, targetId);
    const { allow, deny } = readOverwrite(ctx.body);
    const reason = auditReason(ctx);
    accessChanges.around(serverId, () =>
      db.transaction(() => {
        if ('channelId' in scope) overwrites.detach(scope.channelId);
        const current = overwrites.list(scope);
        const before = current.find((o) => o.target_id === targetId);
        if (!before && current.length >= MAX_OVERWRITES) throw badRequest(`a ${targetKind} may have at most ${MAX_OVERWRITES} overwrites`);
        requireGrantable(mine, (flagsOf(before?.allow ?? []) ^ flagsOf(allow)) | (flagsOf(before?.deny ?? []) ^ flagsOf(deny)));
        overwrites.put(scope, serverId, targetId, kind, flagsOf(allow), flagsOf(deny));
        const changes = { target_id: targetId, kind, allow: { from: before?.allow ?? null, to: allow }, deny: { from: before?.deny ?? null, to: deny } };
        audit.write({ serverId, action: 'overwrite_update', actorId: ctx.user.id, targetId: id, targetKind, reason, changes });
      })(),
    );
    return json(overwrites.list(scope).find((o) => o.target_id === targetId));
  }

  /** Removes one (that target inherits again); 404 when there is none; 204. */
  function deleteOverwrite(ctx: Ctx) {
    const { serverId, scope, targetKind, id, mine } = scopeOf(ctx, true);
    const targetId = ctx.params.target_id;
    const reason = auditReason(ctx);
    accessChanges.around(serverId, () =>
      db.transaction(() => {
        if ('channelId' in scope) overwrites.detach(scope.channelId);
        const before = overwrites.list(scope).find((o) => o.target_id === targetId);
        if (!before) throw notFound('overwrite not found');
        requireGrantable(mine, flagsOf(before.allow) | flagsOf(before.deny));
        if (!overwrites.remove(scope, targetId)) throw notFound('overwrite not found');
        const changes = { target_id: targetId, kind: before.kind, allow: { from: before.allow, to: null }, deny: { from: before.deny, to: null } };
        audit.write({ serverId, action: 'overwrite_delete', actorId: ctx.user.id, targetId: id, targetKind, reason, changes });
      })(),
    );
    return noContent();
  }
}
