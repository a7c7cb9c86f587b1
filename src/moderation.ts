import type { App, Route } from './app';
import { json } from './http/respond';

export function moderationRoutes(_app: App): Route[] {
  return [
    {
      // GET /api/admin/me
      // - 200 {user_id, username, is_admin: true} for an administrator; 403 for others.
      method: 'GET',
      path: '/api/admin/me',
      auth: 'admin',
      handler: (ctx) => json({ user_id: ctx.user.id, username: ctx.user.username, is_admin: true }),
    },
  ];
}
