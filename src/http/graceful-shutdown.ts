import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Draining } from './draining.js';

/** After the signal, idle connections are closed this often; the first time, a request on its way has arrived. */
const IDLE_SWEEP_MS = 1_000;

/**
 * SIGTERM / SIGINT: stop accepting connections, let the requests in flight finish, then close the
 * application (database pool, Redis) and exit 0. After `timeoutMs` the process gives up and exits 1.
 *
 * Keep-alive clients under load would otherwise hold the server open for ever (each response lets
 * them send the next request), and closing their idle connections at once races with requests
 * already on the wire. So from the signal on, every response ends its connection
 * (`Connection: close`), including those still being computed, and the connections idle at the
 * signal are closed a second later, once any request already on its way to them has arrived. Nest's own shutdown hooks are not used:
 * they close the modules (and so the pool) before the HTTP server, failing the requests still
 * running, and re-raise the signal instead of exiting 0.
 */
export function installGracefulShutdown(app: NestExpressApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  const server: Server = app.getHttpServer();
  let shuttingDown = false;

  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (shuttingDown) response.shouldKeepAlive = false;
  });

  const shutdown = async (signal: NodeJS.Signals): Promise<void> => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.log(`${signal} received: finishing requests in flight (at most ${timeoutMs} ms)`);
    const deadline = setTimeout(() => {
      logger.error(`requests still running after ${timeoutMs} ms; closing them`);
      server.closeAllConnections();
      process.exit(1);
    }, timeoutMs);
    deadline.unref();

    // Long polls answer and event streams end now, rather than hold the server open until the deadline.
    app.get(Draining).start();
    // Responses being computed right now end their connection too.
    for (const socket of sockets) {
      const response = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (response && !response.headersSent) response.shouldKeepAlive = false;
    }
    // net.Server's close refuses new connections and calls back once every connection has ended;
    // http.Server's would also drop the idle ones at once, with any request on its way to them.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
    await closed;
    clearInterval(sweep);
    await app.close();
    clearTimeout(deadline);
    logger.log('stopped');
    process.exit(0);
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void shutdown(received));
}
