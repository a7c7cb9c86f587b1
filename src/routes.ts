import type { App, Route } from './app';
import { json } from './http/respond';
import { accountRoutes } from './accounts';
import { serversRoutes } from './servers';
import { messageRoutes } from './messages';
import { friendsRoutes } from './friends';
import { conversationsRoutes } from './conversations';
import { uploadsRoutes } from './uploads';
import { mailRoutes } from './mail';
import { moderationRoutes } from './moderation';

/** The whole API surface, one module per resource. */
export function buildRoutes(app: App): Route[] {
  const ping = app.db.prepare('SELECT 1');
  return [
    {
      // GET /healthz: 200 once the database is open (and answering).
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      handler: () => {
        ping.get();
        return json({ ok: true });
      },
    },
    ...accountRoutes(app),
    ...mailRoutes(app),
    ...serversRoutes(app),
    ...messageRoutes(app),
    ...friendsRoutes(app),
    ...conversationsRoutes(app),
    ...uploadsRoutes(app),
    ...moderationRoutes(app),
  ];
}
