import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { closeAbruptly, listenOnLoopback } from './restartable-listener.js';

/**
 * A loopback TCP proxy in front of a database server, so a test can take the database away from
 * the service (stop) and give it back (start) without touching the server itself.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    // The same port every time, so the service's DATABASE_URL stays valid across stop/start.
    this.port = await listenOnLoopback(server, this.port);
    this.server = server;
  }

  /** Refuses new connections and cuts the open ones, as a crashed or unreachable server would. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await closeAbruptly(server, this.sockets);
  }
}
