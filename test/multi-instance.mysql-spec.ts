import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from './helpers/http.js';
import { acknowledgedIds, startLoad } from './helpers/load.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// MySQL only: two instances of the service on one MariaDB database and one Redis, as a fleet runs.
// (The fleet-wide rate limit has its own tests in rate-limit.e2e-spec.ts, "with REDIS_URL".)
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('two instances sharing MariaDB and Redis', () => {
  let database: TestDatabase;
  const instances: TestApp[] = [];
  const apis: Client[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `test:${randomUUID()}:` };
    instances.push(await startTestApp({ databaseUrl: database.url, env }));
    instances.push(await startTestApp({ databaseUrl: database.url, env }));
    // One writer key, made on the first instance, used on both.
    for (const instance of instances) {
      apis.push(
        client(
          () => instance.baseUrl,
          () => instances[0].writerToken,
        ),
      );
    }
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await database?.drop();
  });

  it('under concurrent load on both, every post created on either is readable from both', async () => {
    const loads = instances.map((instance) => startLoad(instance.baseUrl, instances[0].writerToken, { workers: 8 }));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const results = (await Promise.all(loads.map((load) => load.stop()))).flat();

    const failed = results.filter((result) => result.status !== 200 && result.status !== 201);
    const created = acknowledgedIds(results);
    process.stdout.write(
      `two instances under load: ${results.length} requests, ${created.length} posts created, ${failed.length} failed\n`,
    );
    expect(failed).toEqual([]);
    expect(created.length).toBeGreaterThan(100);
    for (let start = 0; start < created.length; start += 50) {
      const batch = created.slice(start, start + 50);
      const reads = await Promise.all(batch.flatMap((id) => apis.map((api) => api.get(`/posts/${id}`))));
      expect(reads.filter((read) => read.status !== 200)).toEqual([]);
    }
    for (const api of apis) {
      const listing = await api.get('/posts?limit=1&count=true');
      expect(listing.headers.get('x-total-count')).toBe(String(created.length));
    }
  });

  it('loses no update when 40 clients race on one post through both instances with If-Match, retrying on 412', async () => {
    const created = await apis[0].post<{ id: number }>('/posts', { title: 'race', content: 'start', author: 'fleet' });
    expect(created.status).toBe(201);
    const path = `/posts/${created.body.id}`;
    let conflicts = 0;

    const appendMarker = async (client: number): Promise<void> => {
      const api = apis[client % 2];
      for (let attempt = 0; attempt < 200; attempt++) {
        const current = await api.get<{ content: string }>(path);
        const patched = await api.patch(
          path,
          { content: `${current.body.content} ${client}` },
          { 'if-match': current.headers.get('etag')! },
        );
        if (patched.status === 200) return;
        expect(patched.status).toBe(412);
        conflicts++;
      }
      throw new Error(`client ${client} never won a write`);
    };
    await Promise.all(Array.from({ length: 40 }, (_, client) => appendMarker(client)));

    for (const api of apis) {
      const final = await api.get<{ content: string }>(path);
      const markers = final.body.content.split(' ').slice(1).map(Number);
      expect(markers.sort((left, right) => left - right)).toEqual(Array.from({ length: 40 }, (_, index) => index));
      expect(final.headers.get('etag')).toBe(`"${created.body.id}.41"`);
    }
    process.stdout.write(`40 racing writers through two instances: 40 updates kept, ${conflicts} retried after 412\n`);
  });
});
