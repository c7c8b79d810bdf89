import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
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

describe('SIGTERM', { timeout: 60_000 }, () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-shutdown-'));
  let server: ChildProcess | undefined;

  afterAll(() => {
    server?.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  });

  it('finishes every request in flight, refuses new connections, closes the database and exits 0', async () => {
    const port = await freePort();
    const token = generateApiKeyToken();
    const databasePath = join(directory, 'posts.sqlite');
    server = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${databasePath}`,
        BOOTSTRAP_API_KEY: token,
        SHUTDOWN_TIMEOUT: '10000',
        THROTTLE_LIMIT: '100000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server!.on('exit', (code) => resolve(code)));
    for (let wait = 0; wait < 100 && !output.includes('Listening on'); wait++)
      await new Promise((r) => setTimeout(r, 100));
    expect(output).toContain('Listening on');

    const inFlight = Array.from({ length: 5 }, (_, index) =>
      slowPost(port, token, JSON.stringify({ title: `in flight ${index}`, content: 'c', author: 'a' }), 1_500),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const signalledAt = Date.now();
    server.kill('SIGTERM');
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
    expect(output).toContain('SIGTERM received');
    // Every acknowledged write is in the database.
    const database = new Database(databasePath, { readonly: true });
    const titles = database.prepare("SELECT title FROM posts WHERE title LIKE 'in flight %'").all() as Array<{
      title: string;
    }>;
    database.close();
    expect(titles).toHaveLength(5);
  });
});
