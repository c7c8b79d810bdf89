import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { acknowledgedIds, startLoad, type LoadResult } from './helpers/load.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { expectProblem } from './helpers/use-test-app.js';

describe('when MySQL becomes unreachable', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let testApp: TestApp;
  const api = client(
    () => testApp.baseUrl,
    () => testApp.writerToken,
  );

  beforeAll(async () => {
    database = await createTestDatabase();
    const direct = new URL(database.url);
    proxy = new TcpProxy({ host: direct.hostname, port: Number(direct.port || 3306) });
    await proxy.start();
    const proxied = new URL(database.url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    testApp = await startTestApp({ databaseUrl: proxied.toString() });
  });

  afterAll(async () => {
    await testApp?.close();
    await proxy?.stop();
    await database?.drop();
  });

  it('answers 503 with Retry-After while the database is away, and recovers without a restart', async () => {
    const before = await api.post<{ id: number }>('/posts', buildPost());
    expect(before.status).toBe(201);

    await proxy.stop();
    const [read, list, write] = await Promise.all([
      api.get(`/posts/${before.body.id}`),
      api.get('/posts'),
      api.post('/posts', buildPost({ title: 'written during the outage' })),
    ]);

    for (const response of [read, list, write]) {
      const problem = expectProblem(response, 503, 'service-unavailable');
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(problem.detail).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|mysql|SELECT|INSERT/i);
    }

    await proxy.start();
    const after = await api.get<Array<{ id: number; title: string }>>('/posts');
    expect(after.status).toBe(200);
    expect(after.body.map((post) => post.id)).toEqual([before.body.id]);
    expect(after.body.some((post) => post.title === 'written during the outage')).toBe(false);
    expect((await api.post('/posts', buildPost())).status).toBe(201);
  });

  it('survives requests that are in flight when the connection drops', async () => {
    const inFlight = Array.from({ length: 20 }, (_, index) =>
      index % 2 === 0 ? api.get('/posts') : api.post('/posts', buildPost()),
    );
    await proxy.stop();
    const responses = await Promise.all(inFlight);

    // Each request either completed before the cut or failed cleanly: never a 500, never a hang.
    for (const response of responses) expect([200, 201, 503]).toContain(response.status);
    const created = responses
      .filter((response) => response.status === 201)
      .map((response) => (response.body as { id: number }).id);

    await proxy.start();
    // Every write acknowledged with 201 is there afterwards.
    for (const id of created) expect((await api.get(`/posts/${id}`)).status).toBe(200);
  });

  it('under load: 503s while the database is away, /health/ready 503, recovery, no acknowledged write lost', async () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const load = startLoad(testApp.baseUrl, testApp.writerToken, { workers: 16 });
      await sleep(1_500);
      const cutAt = Date.now();
      await proxy.stop();
      await sleep(500);
      const ready = await fetch(`${testApp.baseUrl}/health/ready`);
      await sleep(1_500);
      const restoringAt = Date.now();
      await proxy.start();
      const restoredAt = Date.now();
      await sleep(3_000);
      const results = await load.stop();

      const between = (from: number, to: number) => (result: LoadResult) => result.sentAt >= from && result.sentAt < to;
      const during = results.filter(between(cutAt + 200, restoringAt - 200));
      const settled = results.filter(between(restoredAt + 1_500, Infinity));
      const statuses = new Map<string, number>();
      for (const result of results) {
        const key = String(result.status ?? result.error);
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
      process.stdout.write(
        `database outage under load: ${results.length} requests, by status ${JSON.stringify(Object.fromEntries(statuses))}; ` +
          `${during.length} sent while the database was away, ${settled.length} after it was back\n`,
      );

      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(results.filter((result) => result.status === undefined)).toEqual([]);
      expect([...statuses.keys()].filter((status) => !['200', '201', '503'].includes(status))).toEqual([]);
      for (const result of results.filter((each) => each.status === 503)) {
        expect(result.headers?.['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(result.headers?.['retry-after']).toMatch(/^\d+$/);
      }
      expect(during.length).toBeGreaterThan(0);
      expect(during.filter((result) => result.status !== 503)).toEqual([]);
      expect(settled.length).toBeGreaterThan(0);
      expect(settled.filter((result) => result.status !== 200 && result.status !== 201)).toEqual([]);
      const acknowledged = acknowledgedIds(results);
      const stored = await testApp.dataSource.query<Array<{ id: number | string }>>('SELECT id FROM posts');
      const storedIds = new Set(stored.map((row) => Number(row.id)));
      expect(acknowledged.filter((id) => !storedIds.has(id))).toEqual([]);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
});
