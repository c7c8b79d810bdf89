import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
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
});
