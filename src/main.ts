/** Process entry: config → app → listen → initial load → signals. The only file that listens. */
import pino from 'pino';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { buildApp } from './app.js';
import { isLoopbackHost } from './http/loopback.js';
import { loadTokensFile } from './policy/auth.js';

function fail(message: string, fields: Record<string, unknown> = {}): never {
  // One line, then a non-zero exit (CONTRACT sections 1 and 12).
  pino({ base: undefined }).fatal(fields, message);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, { variable: err.variable });
    throw err;
  }
  if (!config.apiTokensFile && !isLoopbackHost(config.httpHost)) {
    fail(
      `refusing to listen on non-loopback address ${config.httpHost} without ONGRID_API_TOKENS_FILE: ` +
        'set ONGRID_API_TOKENS_FILE or listen on 127.0.0.1',
      { variable: 'ONGRID_HTTP_HOST' },
    );
  }
  if (config.apiTokensFile) {
    // Checked here, not only in buildApp, so the one line names the variable like any other bad setting.
    try {
      loadTokensFile(config.apiTokensFile);
    } catch (err) {
      fail(`invalid configuration: ONGRID_API_TOKENS_FILE: ${(err as Error).message}`, { variable: 'ONGRID_API_TOKENS_FILE' });
    }
  }
  const logger = createLogger(config);
  let ongrid;
  try {
    ongrid = await buildApp(config, logger);
  } catch (err) {
    fail(`cannot start: ${(err as Error).message}`);
  }
  const { app, start, close } = ongrid;

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: forcing exit');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: no new executions, waiting for running ones');
    close().then(
      () => {
        logger.info('shutdown complete');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  await app.listen({ host: config.httpHost, port: config.httpPort });
  await start();
}

main().catch((err: unknown) => fail(`fatal: ${(err as Error).message}`));
