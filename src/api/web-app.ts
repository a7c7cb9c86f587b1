import crypto from 'node:crypto';
import { HANDLED } from '../core/http/respond';
import { ICONS } from '../core/http/icons';
import type { PublicCtx, Route } from '../core/types';
import type { Services } from '../parts/services';

/**
 * The installable app (docs/api.md "The installable app"): the web app manifest every page links,
 * which a phone or a desktop browser reads to add the app to its home screen, and the page that
 * "Share to" from another app opens. The service worker, /sw.js, is a static file (static.ts).
 */
export function webAppRoutes({ config, staticFiles }: Pick<Services, 'config' | 'staticFiles'>): Route[] {
  const body = Buffer.from(JSON.stringify(webAppManifest(config.instanceName)));
  const etag = `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return [
    // GET /manifest.webmanifest: the manifest, named after INSTANCE_NAME; asked again (ETag) at every use.
    { method: 'GET', path: '/manifest.webmanifest', auth: 'none', body: 'none', handler: (ctx) => sendManifest(ctx, body, etag) },
    // GET /share: the app page, which asks where to share what another app sent (the manifest's share_target).
    { method: 'GET', path: '/share', auth: 'none', body: 'none', handler: (ctx) => (staticFiles.page('index.html', ctx.res), HANDLED) },
  ];
}

/** The app's colours: the page background, light and dark (static/css/site.css `--bg`). The pages' theme-color metas say the same. */
export const APP_COLORS = { light: '#ffffff', dark: '#25272d' };
/** A home screen shows about this many characters under an icon. */
const SHORT_NAME_CHARS = 12;

/**
 * The web app manifest (W3C Web Application Manifest): what makes the site installable in
 * Chromium (a name, a start URL, standalone display, 192 and 512 px icons) and on iOS 16.4+ (which
 * also needs the Apple meta tags of the pages), and what an installed app offers: two shortcuts on
 * its icon and a share target. The share target posts multipart to /share, where the service
 * worker takes it (static/sw.js); the page then asks where it goes.
 */
export function webAppManifest(name: string) {
  const icon = (file: string, size: number) => ({ src: `/icons/${file}`, sizes: `${size}x${size}`, type: 'image/png' });
  const chars = [...name];
  return {
    id: '/',
    name,
    short_name: chars.length <= SHORT_NAME_CHARS ? name : chars.slice(0, SHORT_NAME_CHARS).join('').trim(),
    description: `${name}: servers, channels and direct messages`,
    start_url: '/',
    scope: '/',
    display: 'standalone',
    theme_color: APP_COLORS.light,
    background_color: APP_COLORS.light,
    categories: ['social'],
    icons: ICONS.filter((spec) => spec.purpose !== 'apple').map((spec) => ({ ...icon(spec.file, spec.size), purpose: spec.purpose })),
    shortcuts: [
      { name: 'Direct messages', short_name: 'Messages', url: '/?view=friends', icons: [icon('icon-192.png', 192)] },
      { name: 'Search', url: '/?search=1', icons: [icon('icon-192.png', 192)] },
    ],
    share_target: {
      action: '/share',
      method: 'POST',
      enctype: 'multipart/form-data',
      params: {
        title: 'title',
        text: 'text',
        url: 'url',
        files: [{ name: 'files', accept: ['image/*', 'video/*', 'audio/*', 'application/pdf', 'text/plain'] }],
      },
    },
  };
}

function sendManifest({ req, res }: PublicCtx, body: Buffer, etag: string) {
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', etag);
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304);
    res.end();
    return HANDLED;
  }
  res.writeHead(200, { 'Content-Type': 'application/manifest+json', 'Content-Length': body.length });
  res.end(req.method === 'HEAD' ? undefined : body);
  return HANDLED;
}
