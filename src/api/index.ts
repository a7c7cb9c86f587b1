import { botRoutes } from './bots';
import { voiceRoutes } from './voice';
import { webhookRoutes } from './webhooks';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../core/http/respond';
import type { Services } from '../parts/services';
import type { Route } from '../core/types';
import { accountExportRoutes } from './account-export';
import { accountSecurityRoutes } from './account-security';
import { accountRoutes } from './accounts';
import { ssoRoutes } from './sso';
import { passkeyRoutes } from './passkeys';
import { categoryRoutes } from './categories';
import { channelRoutes } from './channels';
import { threadRoutes } from './threads';
import { clusterRoutes } from './cluster';
import { communityRoutes } from './community';
import { conversationRoutes } from './conversations';
import { emailRoutes } from './email';
import { emojiRoutes } from './emojis';
import { automodRoutes } from './automod';
import { friendRoutes } from './friends';
import { importRoutes } from './imports';
import { inviteRoutes } from './invites';
import { linkRoutes } from './links';
import { mediaRoutes } from './media';
import { messageRoutes } from './messages';
import { moderationRoutes } from './moderation';
import { notificationRoutes } from './notifications';
import { onboardingRoutes } from './onboarding';
import { pushRoutes } from './push';
import { overwriteRoutes } from './overwrites';
import { profileRoutes } from './profile';
import { searchRoutes } from './search';
import { serverExportRoutes } from './server-export';
import { serverRoutes } from './servers';
import { uploadRoutes } from './uploads';
import { webAppRoutes } from './web-app';

const OPENAPI_FILE = path.join(__dirname, '..', '..', 'docs', 'openapi.json');

/**
 * The whole API surface: one table per area, each on one screen at the top of its module
 * (method, path, auth, body, handler). Order matters only where two patterns of one method
 * overlap (`/api/users/me` before `/api/users/:user_id`).
 */
export function buildRoutes(services: Services): Route[] {
  const ping = services.db.prepare('SELECT 1');
  const contract = JSON.parse(fs.readFileSync(OPENAPI_FILE, 'utf8')) as unknown;
  return [
    // GET /healthz: 200 once the database is open (and answering); with voice set up, whether
    // Janus answers (voice is not the whole service: a Janus that is down does not make it 503).
    {
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      body: 'none',
      handler: async () => {
        ping.get();
        if (!services.voice.configured) return json({ ok: true });
        const { reachable, rooms, participants } = await services.voice.status();
        return json({ ok: true, voice: { janus: reachable ? 'up' : 'down', rooms, participants } });
      },
    },
    // GET /api/openapi.json: the machine-readable contract (docs/openapi.json), read once at start.
    { method: 'GET', path: '/api/openapi.json', auth: 'none', body: 'none', handler: () => json(contract) },
    ...accountRoutes(services),
    ...accountSecurityRoutes(services),
    ...ssoRoutes(services),
    ...passkeyRoutes(services),
    ...profileRoutes(services),
    ...mediaRoutes(services),
    ...accountExportRoutes(services),
    ...emailRoutes(services),
    ...serverRoutes(services),
    ...emojiRoutes(services),
    ...onboardingRoutes(services),
    ...serverExportRoutes(services),
    ...channelRoutes(services),
    ...threadRoutes(services),
    ...categoryRoutes(services),
    ...overwriteRoutes(services),
    ...inviteRoutes(services),
    ...communityRoutes(services),
    ...automodRoutes(services),
    ...messageRoutes(services),
    ...searchRoutes(services),
    ...friendRoutes(services),
    ...conversationRoutes(services),
    ...uploadRoutes(services),
    ...moderationRoutes(services),
    ...importRoutes(services),
    ...notificationRoutes(services),
    ...linkRoutes(services),
    ...webAppRoutes(services),
    ...pushRoutes(services),
    ...botRoutes(services),
    ...webhookRoutes(services),
    ...clusterRoutes(services),
    ...voiceRoutes(services),
  ];
}
