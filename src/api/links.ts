import { HANDLED } from '../core/http/respond';
import type { PublicCtx, Route } from '../core/types';
import type { Services } from '../parts/services';

/**
 * Message links (docs/api.md "Message links"): `/channels/<server>/<channel>/<message>` and
 * `/channels/@me/<conversation>/<message>` are the app page, which opens the room around that
 * message for whoever may see it and says "You cannot see this message" to anyone else. The page
 * is the same whatever the ids: whether a message exists is never said here.
 */
export function linkRoutes({ staticFiles }: Pick<Services, 'staticFiles'>): Route[] {
  const appPage = (ctx: PublicCtx) => {
    staticFiles.page('index.html', ctx.res);
    return HANDLED;
  };
  return [
    { method: 'GET', path: '/channels/@me/:conversation_id/:message_id', auth: 'none', body: 'none', handler: appPage },
    { method: 'GET', path: '/channels/:server_id/:channel_id/:message_id', auth: 'none', body: 'none', handler: appPage },
  ];
}
