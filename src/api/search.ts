import { badRequest } from '../core/http/errors';
import { json } from '../core/http/respond';
import { HAS_VALUES, type Has, type SearchScope } from '../parts/messages/search';
import { parseQuery } from '../core/search-query';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { limitParam, uuidParam } from '../core/validate';

type Deps = Pick<Services, 'perms' | 'limits' | 'search'>;

/** Message search (docs/api.md "Search"). */
export function searchRoutes(deps: Deps): Route[] {
  const h = searchHandlers(deps);
  return [{ method: 'GET', path: '/api/search', auth: 'user', body: 'none', handler: h.searchMessages }];
}

function searchHandlers({ perms, limits, search }: Deps) {
  return { searchMessages };

  /**
   * 200 `{results, next_before}`: the messages the caller can see now that match `q`, newest
   * first, each with `highlight` offsets. A scope the caller cannot see is 404.
   */
  function searchMessages(ctx: Ctx) {
    const terms = parseQuery(ctx.query.get('q'));
    const scope = scopeOf(ctx);
    const has = new Set<Has>();
    for (const value of ctx.query.getAll('has').flatMap((v) => v.split(','))) {
      if (!(HAS_VALUES as readonly string[]).includes(value)) throw badRequest(`has must be one of ${HAS_VALUES.join(', ')}`);
      has.add(value as Has);
    }
    const request = {
      userId: ctx.user.id,
      terms,
      scope,
      authorId: uuidParam(ctx.query, 'author_id'),
      has,
      before: uuidParam(ctx.query, 'before'),
      after: uuidParam(ctx.query, 'after'),
      limit: limitParam(ctx.query, 25, 50),
    };
    limits.searchesPerUser.take(ctx.user.id, 'searches');
    return json(search.find(request));
  }

  /** One server, one channel (of that server, if both are given), one conversation, or all. */
  function scopeOf(ctx: Ctx): SearchScope {
    const serverId = uuidParam(ctx.query, 'server_id');
    const channelId = uuidParam(ctx.query, 'channel_id');
    const conversationId = uuidParam(ctx.query, 'conversation_id');
    if (conversationId && (serverId || channelId)) {
      throw badRequest('use conversation_id or server_id and channel_id, not both');
    }
    if (conversationId) return { kind: 'conversation', conversationId: perms.conversationAccess(ctx.user, conversationId).id };
    if (channelId) return { kind: 'channel', channelId: perms.channelAccess(ctx.user, channelId, serverId ?? undefined).container.id };
    if (serverId) {
      perms.serverAccess(ctx.user, serverId);
      return { kind: 'server', serverId };
    }
    return { kind: 'all' };
  }
}
