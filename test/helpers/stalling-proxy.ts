import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { closeAbruptly, listenOnLoopback } from './restartable-listener.js';

/**
 * How the path to the server goes silent. Either way nothing is refused or reset and new connections are
 * still accepted: the client sees no error, only no answer.
 * - `link`: a partitioned network. The proxy stops reading, so bytes wait in the kernel buffers; what
 *   the client resets before the link heals is lost, as TCP loses it.
 * - `middlebox`: a proxy or load balancer whose upstream hangs. It keeps reading and holds the bytes,
 *   and delivers them once it resumes, even those of a client that has gone since.
 */
export type Stall = 'link' | 'middlebox';

interface Direction {
  from: Socket;
  to: Socket;
  held: Buffer[];
  fromClosed: boolean;
}

/** A loopback TCP proxy in front of a server that can stall (see Stall), resume and cut connections. */
export class StallingProxy {
  private server?: Server;
  private readonly directions = new Set<Direction>();
  private stalled: Stall | null = null;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.target);
      this.forward(client, upstream);
      this.forward(upstream, client);
    });
    this.port = await listenOnLoopback(server, this.port);
    this.server = server;
  }

  stall(how: Stall): void {
    this.stalled = how;
    if (how === 'link') for (const direction of this.directions) direction.from.pause();
  }

  /** Forwards again on the same connections, first delivering whatever waited, as a healed path does. */
  resume(): void {
    this.stalled = null;
    for (const direction of this.directions) {
      for (const chunk of direction.held.splice(0)) direction.to.write(chunk);
      if (direction.fromClosed) this.finish(direction);
      else direction.from.resume();
    }
  }

  /** Cuts every open connection, dropping what was held, as a restarted middlebox does. */
  cut(): void {
    for (const direction of this.directions) {
      direction.held.length = 0;
      direction.from.destroy();
      direction.to.destroy();
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const sockets = new Set([...this.directions].map((direction) => direction.from));
    this.directions.clear();
    await closeAbruptly(server, sockets);
  }

  private forward(from: Socket, to: Socket): void {
    const direction: Direction = { from, to, held: [], fromClosed: false };
    this.directions.add(direction);
    from.on('data', (chunk: Buffer) => {
      if (this.stalled === 'middlebox') direction.held.push(chunk);
      else to.write(chunk);
    });
    const closed = (): void => {
      direction.fromClosed = true;
      // While stalled, the other side stays open until what was held is delivered.
      if (this.stalled === null) this.finish(direction);
    };
    from.on('end', closed);
    from.on('error', closed);
    from.on('close', closed);
    if (this.stalled === 'link') from.pause();
  }

  private finish(direction: Direction): void {
    direction.to.end();
    this.directions.delete(direction);
  }
}
