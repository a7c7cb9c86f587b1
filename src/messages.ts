import type { App, Route } from './app';

export type Container = { kind: 'channel'; id: string; serverId: string } | { kind: 'conversation'; id: string };

export function messageRoutes(_app: App): Route[] {
  return [];
}
