import type { App, Route } from './app';

export function serversRoutes(_app: App): Route[] {
  return [];
}
