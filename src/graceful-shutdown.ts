import type { Server } from 'node:http';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';

/**
 * SIGTERM / SIGINT: stop accepting connections, let the requests in flight finish, then close the
 * application (database pool, Redis) and exit 0. Nest's own shutdown hooks are not used: they
 * close the modules (and so the pool) before the HTTP server, failing the requests still running,
 * and re-raise the signal instead of exiting 0. After `timeoutMs` the process gives up and exits 1.
 */
export function installGracefulShutdown(app: NestExpressApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  let shuttingDown = false;

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.log(`${signal} received: finishing requests in flight (at most ${timeoutMs} ms)`);
    const server: Server = app.getHttpServer();
    const deadline = setTimeout(() => {
      logger.error(`requests still running after ${timeoutMs} ms; closing them`);
      server.closeAllConnections();
      process.exit(1);
    }, timeoutMs);
    deadline.unref();

    // close() refuses new connections, closes idle keep-alive ones, and calls back once every
    // request in flight has been answered.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await app.close();
    clearTimeout(deadline);
    logger.log('stopped');
    process.exit(0);
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void shutdown(received));
}
