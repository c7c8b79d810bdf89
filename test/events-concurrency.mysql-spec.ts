import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from './helpers/http.js';
import { writeWhileReadingTheFeed } from './helpers/feed-concurrency.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// MySQL only: two instances on one MariaDB database, where transactions of both commit out of the
// order their auto-increment ids were taken in. The feed must still never skip or repeat.
describe('the events feed under concurrent writers on two instances', () => {
  let database: TestDatabase;
  const instances: TestApp[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    instances.push(await startTestApp({ databaseUrl: database.url }));
    instances.push(await startTestApp({ databaseUrl: database.url }));
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await database?.drop();
  });

  it('8 writers on each of 2 instances, 2,000 writes per instance: the reader sees every event once, in version order', async () => {
    const writerToken = instances[0].writerToken;
    const apis: Client[] = instances.map((instance) =>
      client(
        () => instance.baseUrl,
        () => writerToken,
      ),
    );
    const reader = client(
      () => instances[1].baseUrl,
      () => instances[0].adminToken,
    );
    const result = await writeWhileReadingTheFeed(apis, reader, { writers: 8, writesPerApi: 2_000 });
    process.stdout.write(
      `events feed, 2 instances x 8 writers: ${result.writes} writes, ${result.events} events read once each, ${result.seconds.toFixed(1)} s\n`,
    );
    expect(result.writes).toBe(4_000);
  }, 180_000);
});
