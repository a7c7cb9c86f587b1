import { createApp } from './app';
import { describeError } from './core/callbacks';
import { type Config, ConfigError, loadConfig } from './core/config';
import { stderrLine, stdoutLog } from './core/log';

/** The entry point: the only place that reads the environment, listens and handles signals. */
function main(): void {
  let running;
  let config: Config;
  try {
    config = loadConfig(process.env);
    // ROLE=gateway holds sockets only (src/gateway.ts); `all` and `core` are the whole server.
    // A gateway's code (and its Redis client) is loaded only by a gateway.
    running = config.role === 'gateway' ? (require('./gateway') as typeof import('./gateway')).createGateway({ config }) : createApp({ config });
  } catch (err) {
    const reason = err instanceof ConfigError ? err.message : `cannot start: ${(err as Error).message}`;
    console.error(reason);
    process.exit(1);
  }
  const { server, close } = running;
  const uncaught = 'app' in running ? () => running.app.metrics.uncaught() : () => {};
  server.on('error', (err: NodeJS.ErrnoException) => {
    console.error(`cannot listen on ${config.host}:${config.port}: ${err.code ?? err.message}`);
    process.exit(1);
  });
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const where = config.role === 'gateway' ? `gateway of ${config.coreUrl}` : `data in ${config.dataDir}, links to ${config.baseUrl}`;
    console.log(`chat listening on http://${config.host}:${port} (${config.role === 'all' ? '' : `ROLE=${config.role}, `}${where})`);
    if (!config.baseUrlConfigured && config.role !== 'gateway') {
      console.log(
        `warning: BASE_URL is not set. Invite links use the address each browser used; links in emails point to ${config.baseUrl}. ` +
          'Set BASE_URL to the address people use (https://chat.example.com).',
      );
    }
  });
  const stop = (signal: string) => {
    stdoutLog(`${signal}: finishing in-flight requests, then closing the database`);
    close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));

  // The last resort (docs/security.md "When code fails"). Every callback has an owner for its
  // errors, so anything arriving here is a defect: it is logged with its stack and counted, and
  // the server goes on. Exiting instead would end every session (they live in memory) and let
  // one request that finds such a defect stop the service for everyone; the database is left
  // consistent either way, since a write that throws rolls its transaction back.
  // Its line never throws (src/core/log.ts): an error here would come back here, for ever.
  const lastResort = (kind: string) => (err: unknown) => {
    stderrLine(`${kind} (a defect: the server goes on): ${describeError(err)}`);
    uncaught();
  };
  process.on('uncaughtException', lastResort('uncaught exception'));
  process.on('unhandledRejection', lastResort('unhandled rejection'));
}

main();
