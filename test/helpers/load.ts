import { Agent, request } from 'node:http';

export interface LoadResult {
  method: 'POST' | 'GET';
  /**
   * When the request went on the wire: Date.now() once it had a connected socket; Infinity when it
   * never got one (a refused connection never carried it).
   */
  sentAt: number;
  status?: number;
  /** The client-side failure (ECONNREFUSED, ECONNRESET, …) when no response came. */
  error?: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: string;
}

export interface LoadOptions {
  workers: number;
  /** A worker stops at its first request that is not answered 2xx (shutdown tests). */
  stopOnFailure?: boolean;
}

/**
 * `workers` clients on keep-alive connections, each sending POST /posts and then GET of the post
 * it created, back to back, until `stop()`; at most one request per connection at a time.
 */
export function startLoad(baseUrl: string, token: string, options: LoadOptions) {
  const { hostname, port, pathname } = new URL(baseUrl);
  const prefix = pathname.replace(/\/$/, '');
  const agent = new Agent({ keepAlive: true, maxSockets: options.workers });
  const results: LoadResult[] = [];
  let running = true;

  const send = (method: 'POST' | 'GET', path: string, body?: string): Promise<LoadResult> =>
    new Promise((resolve) => {
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const result: LoadResult = { method, sentAt: Infinity };
      const outgoing = request({ host: hostname, port, method, path: prefix + path, agent, headers }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () =>
          resolve({ ...result, status: response.statusCode, headers: response.headers, body: text }),
        );
        response.on('error', (error) => resolve({ ...result, error: error.message }));
      });
      outgoing.on('socket', (socket) => {
        if (!socket.connecting) result.sentAt = Date.now();
        else socket.once('connect', () => (result.sentAt = Date.now()));
      });
      outgoing.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ ...result, error: error.code ?? error.message }),
      );
      outgoing.end(body);
    });

  const worker = async (index: number): Promise<void> => {
    for (let round = 0; running; round++) {
      const title = `load ${index}.${round}`;
      const created = await send('POST', '/posts', JSON.stringify({ title, content: 'c', author: 'load' }));
      results.push(created);
      if (created.status !== 201) {
        if (options.stopOnFailure) return;
        continue;
      }
      const { id } = JSON.parse(created.body!) as { id: number };
      const read = await send('GET', `/posts/${id}`);
      results.push(read);
      if (read.status !== 200 && options.stopOnFailure) return;
    }
  };
  const done = Promise.all(Array.from({ length: options.workers }, (_, index) => worker(index)));

  return {
    results,
    /** Lets each worker finish its current request, then returns every result. */
    stop: async (): Promise<LoadResult[]> => {
      running = false;
      await done;
      agent.destroy();
      return results;
    },
  };
}

/** The ids of the posts the load created and was told so (201). */
export function acknowledgedIds(results: LoadResult[]): number[] {
  return results
    .filter((result) => result.method === 'POST' && result.status === 201)
    .map((result) => (JSON.parse(result.body!) as { id: number }).id);
}
