import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { expectProblem } from './helpers/use-test-app.js';

// The holder of the lock in the tests below that release it while the service waits: a process of
// its own, as in production (a CLI, a backup), so its timer runs however the service's event loop fares.
const HOLD_WRITE_LOCK = `
const Database = require('better-sqlite3');
const database = new Database(process.argv[1]);
database.prepare('BEGIN IMMEDIATE').run();
process.stdout.write('locked\\n');
setTimeout(() => {
  database.prepare('ROLLBACK').run();
  database.close();
}, Number(process.argv[2]));
`;

/** Another process takes the write lock of the database at `path` and releases it `releaseAfterMs` later. */
async function holdWriteLock(path: string, releaseAfterMs: number): Promise<{ released: Promise<void> }> {
  const holder = spawn(process.execPath, ['-e', HOLD_WRITE_LOCK, path, String(releaseAfterMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const released = new Promise<void>((resolve, reject) =>
    holder.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`the lock holder exited with ${code}`)))),
  );
  await new Promise<void>((resolve, reject) => {
    holder.stdout.once('data', () => resolve());
    released.catch(reject);
  });
  return { released };
}

const median = (values: number[]): number => [...values].sort((left, right) => left - right)[values.length >> 1];

describe('when another process holds the SQLite write lock', () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-busy-'));
  const path = join(directory, 'posts.sqlite');
  let testApp: TestApp;
  const api = client(
    () => testApp.baseUrl,
    () => testApp.writerToken,
  );

  /**
   * GET /health/live every 50 ms for `durationMs`, each latency counted from when the probe was due:
   * a probe that could not even be sent because the event loop was blocked counts the whole stall.
   */
  async function probeLiveness(durationMs: number): Promise<number[]> {
    const started = performance.now();
    const probes: Array<Promise<number>> = [];
    for (let due = started; due < started + durationMs; due += 50) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      const probeDue = due;
      probes.push(
        api.get('/health/live').then((response) => {
          expect(response.status).toBe(200);
          return performance.now() - probeDue;
        }),
      );
    }
    return Promise.all(probes);
  }

  beforeAll(async () => {
    testApp = await startTestApp({ sqlitePath: path });
  });

  afterAll(async () => {
    await testApp?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('answers writes with 503 and Retry-After once the busy timeout passes, keeps serving reads, and recovers', async () => {
    const existing = await api.post<{ id: number }>('/posts', buildPost());
    const other = new Database(path);
    other.prepare('BEGIN IMMEDIATE').run();

    try {
      const write = await api.post('/posts', buildPost({ title: 'blocked' }));
      expectProblem(write, 503, 'service-unavailable');
      expect(write.headers.get('retry-after')).toMatch(/^\d+$/);
      // WAL mode: readers are not blocked by the other connection's write lock.
      expect((await api.get(`/posts/${existing.body.id}`)).status).toBe(200);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }

    expect((await api.post('/posts', buildPost())).status).toBe(201);
    const titles = (await api.get<Array<{ title: string }>>('/posts')).body.map((post) => post.title);
    expect(titles).not.toContain('blocked');
  });

  it('keeps answering /health/live within a second while a write waits for the lock', async () => {
    const { released } = await holdWriteLock(path, 3_000);

    const write = api.post('/posts', buildPost({ title: 'waited' }));
    const latencies = await probeLiveness(2_500);
    const created = await write;
    await released;

    process.stdout.write(
      `/health/live while a write waits on the SQLite lock: ${latencies.length} probes, ` +
        `median ${median(latencies).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms\n`,
    );
    expect(created.status).toBe(201);
    // A blocked event loop showed the whole wait (3 s); a second leaves room for a loaded machine.
    expect(Math.max(...latencies)).toBeLessThan(1_000);
  });

  it('creates a post, with or without Idempotency-Key, when the lock is released 300 ms after the write meets it', async () => {
    const requests: Array<Record<string, string>> = [{}, { 'idempotency-key': `busy-${Date.now()}` }];
    for (const headers of requests) {
      const { released } = await holdWriteLock(path, 300);
      const sentAt = performance.now();

      const created = await api.post<{ id: number; title: string }>('/posts', buildPost({ title: 'late' }), headers);
      const waited = performance.now() - sentAt;
      await released;

      expect(created.status, created.text).toBe(201);
      // It did meet the lock: it was answered only once the other process let go.
      expect(waited).toBeGreaterThan(200);
      expect((await api.get<{ title: string }>(`/posts/${created.body.id}`)).body.title).toBe('late');
    }
  });
});
