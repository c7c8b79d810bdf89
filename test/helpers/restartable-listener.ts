import type { Server } from 'node:net';
import type { Socket } from 'node:net';

/**
 * Listens on loopback at `port` (0: any free port the first time) and returns the port, so a test
 * server can be stopped and started again at the same address its clients were configured with.
 */
export async function listenOnLoopback(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return (server.address() as { port: number }).port;
}

/** Refuses new connections and cuts the open ones, as a crashed or unreachable server would. */
export async function closeAbruptly(server: Server | undefined, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}
