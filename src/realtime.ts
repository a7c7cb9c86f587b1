import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { App } from './app';
import type { Container } from './messages';

/** A live event for the sockets of one container (channel or conversation). */
export interface LiveEvent {
  /** The JSON payload as seen by a recipient who has reacted with nothing. */
  payload: Record<string, unknown>;
  /** For message records: emoji -> ids of users who reacted, so `reacted` is set per recipient. */
  reactors?: Map<string, Set<string>>;
}

export interface Hub {
  /** Called after the write committed. */
  publish(container: Container, event: LiveEvent): void;
  /** Closes every socket opened with this session (logout, expiry, password reset). */
  endSession(token: string): void;
  /** Closes a user's sockets: all of them (suspension), or those of one server or conversation (removal). */
  dropUser(userId: string, where?: { serverId: string } | { conversationId: string }): void;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

// Placeholder until the WebSocket issue: refuses upgrades, publishes nowhere.
export function createHub(_app: App): Hub {
  return {
    publish: () => {},
    endSession: () => {},
    dropUser: () => {},
    handleUpgrade: (_req, socket) => {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    },
    close: () => {},
  };
}
