import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';
import { acknowledgedIds, startLoad } from './helpers/load.js';
import { freePort } from './helpers/free-port.js';

// SQLite only: runs the compiled service (built once by the project's global setup) as its own
// process, because what is tested is the process's answer to a signal.
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

  /** The rows of a stopped service's posts table. */
  function storedPosts(databasePath: string): Array<{ id: number; title: string }> {
    const database = new Database(databasePath, { readonly: true });
    try {
      return database.prepare('SELECT id, title FROM posts').all() as Array<{ id: number; title: string }>;
    } finally {
      database.close();
    }
  }
  const storedIds = (databasePath: string) => storedPosts(databasePath).map((row) => row.id);

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
    expect(storedPosts(databasePath).filter((row) => row.title.startsWith('in flight '))).toHaveLength(5);
  });

  it('under load: answers every request sent before the signal, refuses the rest, and loses no acknowledged write', async () => {
    const { child, port, token, databasePath, exited } = await startService('under-load');
    const load = startLoad(`http://127.0.0.1:${port}`, token, { workers: 32, stopOnFailure: true });
    await new Promise((resolve) => setTimeout(resolve, 2_000));

    const signalledAt = Date.now();
    child.kill('SIGTERM');
    const code = await exited;
    const stoppedAt = Date.now();
    const results = await load.stop();

    const beforeSignal = results.filter((result) => result.sentAt < signalledAt);
    const unanswered = beforeSignal.filter((result) => result.status === undefined || result.status >= 300);
    // A request whose connection was refused (sentAt Infinity) never reached the server.
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
    const stored = new Set(storedIds(databasePath));
    expect(acknowledgedIds(results).filter((id) => !stored.has(id))).toEqual([]);
  });

  it('answers waiting long polls and ends event streams at once, then exits 0 long before SHUTDOWN_TIMEOUT', async () => {
    const { child, port, token, exited } = await startService('listeners');
    const base = `http://127.0.0.1:${port}`;
    const headers = { authorization: `Bearer ${token}` };
    const longPoll = fetch(`${base}/events?wait=30`, { headers }).then(async (response) => ({
      status: response.status,
      body: await response.json(),
    }));
    const stream = await fetch(`${base}/events`, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const streamText = stream.text();
    await new Promise((resolve) => setTimeout(resolve, 500));

    const signalledAt = Date.now();
    child.kill('SIGTERM');
    const [poll, text, code] = await Promise.all([longPoll, streamText, exited]);

    expect(poll).toEqual({ status: 200, body: [] });
    expect(text).toMatch(/: the server is shutting down\n\n$/);
    expect(code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(3_000);
  });
});
