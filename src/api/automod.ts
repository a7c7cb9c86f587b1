import { created, json, noContent } from '../core/http/respond';
import type { Ctx, Route } from '../core/types';
import type { Services } from '../parts/services';

type Deps = Pick<Services, 'perms' | 'automod' | 'limits'>;

/** A server's AutoMod rules (docs/api.md "AutoMod", docs/moderation.md "AutoMod"): manage_server (the owner and full administrators hold it). */
export function automodRoutes(deps: Deps): Route[] {
  const h = automodHandlers(deps);
  const R = '/api/servers/:server_id/automod/rules';
  return [
    { method: 'GET', path: R, auth: 'user', body: 'none', handler: h.listRules },
    { method: 'POST', path: R, auth: 'user', body: 'json', handler: h.createRule },
    { method: 'PATCH', path: `${R}/:rule_id`, auth: 'user', body: 'json', handler: h.updateRule },
    { method: 'DELETE', path: `${R}/:rule_id`, auth: 'user', body: 'none', handler: h.deleteRule },
  ];
}

function automodHandlers({ perms, automod, limits }: Deps) {
  return { listRules, createRule, updateRule, deleteRule };

  /** 404 outside the server; 403 without manage_server or while timed out. */
  function requireManager(ctx: Ctx) {
    perms.requireServerFlag(ctx.user, ctx.params.server_id, 'manage_server');
  }

  /** 200 the server's rules, oldest first. */
  function listRules(ctx: Ctx) {
    requireManager(ctx);
    return json(automod.list(ctx.params.server_id));
  }

  /** {name, trigger, actions, enabled?, exempt_role_ids?, exempt_channel_ids?}: 201 the rule; 400 past a kind's limit; audited. */
  function createRule(ctx: Ctx) {
    requireManager(ctx);
    limits.creationsPerUser.take(ctx.user.id, 'creations');
    return created(automod.create(ctx.params.server_id, ctx.user, ctx.body));
  }

  /** Any of the fields (the trigger's type stays): 200 the rule; audited. */
  function updateRule(ctx: Ctx) {
    requireManager(ctx);
    // A change compiles the server's rules again at its next message: as often as a creation, no more.
    limits.creationsPerUser.take(ctx.user.id, 'creations');
    return json(automod.update(ctx.params.server_id, ctx.params.rule_id, ctx.user, ctx.body));
  }

  /** 204; audited. */
  function deleteRule(ctx: Ctx) {
    requireManager(ctx);
    automod.remove(ctx.params.server_id, ctx.params.rule_id, ctx.user);
    return noContent();
  }
}
