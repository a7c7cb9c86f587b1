import type { App, Route } from './app';

export function conversationsRoutes(_app: App): Route[] {
  return [];
}
