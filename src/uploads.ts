import type { App, Route } from './app';

export function uploadsRoutes(_app: App): Route[] {
  return [];
}
