import type { App, Route } from './app';

export function friendsRoutes(_app: App): Route[] {
  return [];
}
