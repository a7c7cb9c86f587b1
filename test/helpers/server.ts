import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createApp, type AppOptions, type Settings } from '../../src/app';
import type { Services as App } from '../../src/parts/services';
import { loadConfig, type Config } from '../../src/core/config';
import type { Clock } from '../../src/core/clock';

/** A clock the tests move by hand. */
export class FakeClock implements Clock {
  constructor(public ms = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface TestServer {
  url: string;
  app: App;
  settings: Settings;
  dataDir: string;
  logs: string[];
  close(): Promise<void>;
}

/**
 * Starts the real server on port 0 with a temporary data directory.
 * Rate limits are off unless a test turns them on with env RATE_LIMIT=on; link previews too
 * (LINK_PREVIEWS=on), so no test reaches out to a link it happens to post.
 */
export async function startServer(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    mailer?: AppOptions['mailer'];
    mailerOptions?: AppOptions['mailerOptions'];
    config?: Partial<Config>;
    timeouts?: AppOptions['timeouts'];
    settings?: AppOptions['settings'];
    /** An existing data directory (a restart): the caller removes it; by default a fresh one is made and removed. */
    dataDir?: string;
    /** A port to listen on (a restart at the same address, as a browser sees it); by default any free one. */
    port?: number;
    /** Another build of the pages (static/ by default): an upgrade. */
    staticDir?: string;
  } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'chat-test-'));
  const config = { ...loadConfig({ RATE_LIMIT: 'off', LINK_PREVIEWS: 'off', DATA_DIR: dataDir, ...opts.env }), ...opts.config };
  const logs: string[] = [];
  const running = createApp({
    config,
    clock: opts.clock,
    mailer: opts.mailer,
    mailerOptions: opts.mailerOptions,
    timeouts: opts.timeouts,
    settings: opts.settings,
    staticDir: opts.staticDir,
    log: (line) => logs.push(line),
  });
  await new Promise<void>((resolve) => running.server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const port = (running.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  // Absolute links (invites, emails) point at the real test port unless a test set BASE_URL.
  if (!opts.env?.BASE_URL && !opts.config?.baseUrl) running.app.config.baseUrl = url;
  return {
    url,
    app: running.app,
    settings: running.settings,
    dataDir,
    logs,
    close: async () => {
      await running.close();
      if (!opts.dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
