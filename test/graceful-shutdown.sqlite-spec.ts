import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';

// SQLite only: runs the compiled service (built once by the project's global setup) as its own
// process, because what is tested is the process's answer to a signal.
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A POST whose body trickles in over `durationMs`: in flight for that long once its headers are sent. */
function slowPost(
  port: number,
  token: string,
  body: string,
  durationMs: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/posts',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    outgoing.on('error', reject);
    const half = Math.floor(body.length / 2);
    outgoing.write(body.slice(0, half));
    setTimeout(() => outgoing.end(body.slice(half)), durationMs);
  });
}

interface LoadResult {
  /** When the request was written, in Date.now() time. */
  sentAt: number;
  status?: number;
  error?: string;
  body?: string;
}

/**
 * `workers` clients on keep-alive connections, each sending POST /posts then GET of what it
 * created, back to back, until `stop()`; never more requests than connections, so every request
 * goes on the wire when it is sent.
 */
function startLoad(port: number, token: string, workers: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: workers });
  const results: LoadResult[] = [];
  let running = true;
  const send = (method: string, path: string, body?: string): Promise<LoadResult> =>
    new Promise((resolve) => {
      const result: LoadResult = { sentAt: Date.now() };
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(body);
      }
      const outgoing = request({ host: '127.0.0.1', port, method, path, agent, headers }, (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ ...result, status: response.statusCode, body: text }));
        response.on('error', (error) => resolve({ ...result, error: error.message }));
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
      if (created.status !== 201) break;
      const { id } = JSON.parse(created.body!) as { id: number };
      const read = await send('GET', `/posts/${id}`);
      results.push(read);
      if (read.status !== 200) break;
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  return {
    results,
    stop: async (): Promise<LoadResult[]> => {
      running = false;
      await done;
      agent.destroy();
      return results;
    },
  };
}

describe('SIGTERM', { timeout: 60_000 }, () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-shutdown-'));
  let server: ChildProcess | undefined;

  afterAll(() => {
    server?.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  });

  /** The compiled service on a free port and its own SQLite file, once it listens. */
  async function startService(name: string) {
    const port = await freePort();
    const token = generateApiKeyToken();
    const databasePath = join(directory, `${name}.sqlite`);
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${databasePath}`,
        BOOTSTRAP_API_KEY: token,
        SHUTDOWN_TIMEOUT: '10000',
        THROTTLE_LIMIT: '1000000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let wait = 0; wait < 100 && !output.includes('Listening on'); wait++)
      await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain('Listening on');
    return { child, port, token, databasePath, exited, output: () => output };
  }

  /** Titles of the posts in a stopped service's database. */
  function storedTitles(databasePath: string): string[] {
    const database = new Database(databasePath, { readonly: true });
    try {
      return (database.prepare('SELECT title FROM posts').all() as Array<{ title: string }>).map((row) => row.title);
    } finally {
      database.close();
    }
  }

  it('finishes every request in flight, refuses new connections, closes the database and exits 0', async () => {
    const { child, port, token, databasePath, exited, output } = await startService('slow-requests');

    const inFlight = Array.from({ length: 5 }, (_, index) =>
      slowPost(port, token, JSON.stringify({ title: `in flight ${index}`, content: 'c', author: 'a' }), 1_500),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalledAt = Date.now();
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));

    const refused = await fetch(`http://127.0.0.1:${port}/health/live`).then(
      () => 'answered',
      () => 'refused',
    );
    const responses = await Promise.all(inFlight);
    const code = await exited;

    expect(refused).toBe('refused');
    for (const response of responses) expect(response.status, response.text).toBe(201);
    expect(code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    expect(output()).toContain('SIGTERM received');
    // Every acknowledged write is in the database.
    expect(storedTitles(databasePath).filter((title) => title.startsWith('in flight '))).toHaveLength(5);
  });

  it('under load: answers every request sent before the signal, refuses the rest, and loses no acknowledged write', async () => {
    const { child, port, token, databasePath, exited } = await startService('under-load');
    const load = startLoad(port, token, 32);
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const signalledAt = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    const stoppedAt = Date.now();
    const results = await load.stop();

    const beforeSignal = results.filter((result) => result.sentAt < signalledAt);
    const unanswered = beforeSignal.filter((result) => result.status === undefined || result.status >= 300);
    const afterSignal = results.filter((result) => result.sentAt >= signalledAt);
    process.stdout.write(
      `graceful shutdown under load: ${beforeSignal.length} requests sent before SIGTERM, ` +
        `${unanswered.length} of them not answered 2xx; ${afterSignal.length} sent after it ` +
        `(${afterSignal.filter((result) => result.status !== undefined).length} answered); ` +
        `exit ${code} after ${stoppedAt - signalledAt} ms\n`,
    );
    expect(beforeSignal.length).toBeGreaterThan(200);
    expect(unanswered).toEqual([]);
    expect(code).toBe(0);
    expect(stoppedAt - signalledAt).toBeLessThan(10_000);
    // Answered after the signal means answered in full: 2xx, never a 5xx or a half response.
    for (const result of afterSignal) if (result.status !== undefined) expect(result.status).toBeLessThan(300);
    const acknowledged = results
      .filter((result) => result.status === 201)
      .map((result) => (JSON.parse(result.body!) as { title: string }).title);
    const stored = new Set(storedTitles(databasePath));
    expect(acknowledged.filter((title) => !stored.has(title))).toEqual([]);
  });
});
