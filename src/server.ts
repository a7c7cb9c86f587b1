import { createApp } from './app';
import { describeError } from './core/callbacks';
import { ConfigError, loadConfig } from './core/config';

/** The entry point: the only place that reads the environment, listens and handles signals. */
function main(): void {
  let running;
  try {
    const config = loadConfig(process.env);
    running = createApp({ config });
  } catch (err) {
    const reason = err instanceof ConfigError ? err.message : `cannot start: ${(err as Error).message}`;
    console.error(reason);
    process.exit(1);
  }
  const { server, close, app } = running;
  server.on('error', (err: NodeJS.ErrnoException) => {
    console.error(`cannot listen on ${app.config.host}:${app.config.port}: ${err.code ?? err.message}`);
    process.exit(1);
  });
  server.listen(app.config.port, app.config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : app.config.port;
    console.log(`chat listening on http://${app.config.host}:${port} (data in ${app.config.dataDir}, links to ${app.config.baseUrl})`);
    if (!app.config.baseUrlConfigured) {
      console.log(
        `warning: BASE_URL is not set. Invite links use the address each browser used; links in emails point to ${app.config.baseUrl}. ` +
          'Set BASE_URL to the address people use (https://chat.example.com).',
      );
    }
  });
  const stop = (signal: string) => {
    console.log(`${signal}: finishing in-flight requests, then closing the database`);
    close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  // The last resort (docs/security.md "When code fails"). Every callback has an owner for its
  // errors, so anything arriving here is a defect: it is logged with its stack and counted, and
  // the server goes on. Exiting instead would end every session (they live in memory) and let
  // one request that finds such a defect stop the service for everyone; the database is left
  // consistent either way, since a write that throws rolls its transaction back.
  const lastResort = (kind: string) => (err: unknown) => {
    console.error(`${kind} (a defect: the server goes on): ${describeError(err)}`);
    app.metrics.uncaught();
  };
  process.on('uncaughtException', lastResort('uncaught exception'));
  process.on('unhandledRejection', lastResort('unhandled rejection'));
}

main();
