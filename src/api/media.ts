import { sendWebp } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Ctx, Route } from '../core/types';
import { MEDIA_MAX_AGE_S } from '../parts/accounts/media-proxy';

type Deps = Pick<Services, 'mediaProxy'>;

/** The media proxy: remote images from our own origin (src/parts/accounts/media-proxy.ts). */
export function mediaRoutes(deps: Deps): Route[] {
  const h = mediaHandlers(deps);
  return [{ method: 'GET', path: '/api/media/:sig/:url', auth: 'user', body: 'none', handler: h.proxyImage }];
}

function mediaHandlers({ mediaProxy }: Deps) {
  return { proxyImage };

  /**
   * A WebP of the remote image a signed URL names, cached for a year (the URL is the image's).
   * 403 unsigned or altered; 404 it could not be fetched under the fetch rules; 415 it is no
   * PNG, JPEG, GIF or WebP (SVG never); 503 the decoders are busy.
   */
  async function proxyImage(ctx: Ctx) {
    const body = await mediaProxy.image(ctx.params.sig, ctx.params.url);
    return sendWebp(ctx.req, ctx.res, body, `private, max-age=${MEDIA_MAX_AGE_S}, immutable`);
  }
}
