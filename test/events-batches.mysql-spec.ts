import type { QueryRunner } from 'typeorm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EventSequencer } from '../src/events/event-sequencer.js';
import type { FeedEvent } from '../src/events/event-types.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// MySQL only: the sequencer opens and ends its transaction in statement batches, and MySQL stops a
// batch at its first failing statement with the transaction still open. Its connection must not go
// back to the pool that way, holding the sequence row's lock: every later run would skip the locked
// row and the feed would stop. (The create's batch: events-outbox.e2e-spec.ts.)
describe("the sequencer's statement batches", () => {
  let database: TestDatabase;
  let instance: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    // No webhook worker: its transactions would roll back a transaction left open on a pooled
    // connection they happen to get (TypeORM does when their first statement fails), hiding a leak.
    instance = await startTestApp({ databaseUrl: database.url, env: { EVENTS_DELIVERY: 'false' } });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await instance?.close();
    await database?.drop();
  });

  it('a run that fails after taking the lock releases it: the next run numbers the event', async () => {
    const api = client(
      () => instance.baseUrl,
      () => instance.writerToken,
    );
    const admin = client(
      () => instance.baseUrl,
      () => instance.adminToken,
    );
    const head = await admin.get<FeedEvent[]>('/events?limit=1');
    const after = new URL(head.headers.get('link')!.slice(1, -'>; rel="next"'.length), 'http://x').searchParams.get(
      'after',
    )!;
    // The sequencer's second batch (positions, sequence row, COMMIT) fails at its first statement.
    let failed = 0;
    const createQueryRunner = instance.dataSource.createQueryRunner.bind(instance.dataSource);
    vi.spyOn(instance.dataSource, 'createQueryRunner').mockImplementation((mode) => {
      const runner: QueryRunner = createQueryRunner(mode);
      const query = runner.query.bind(runner) as (sql: string, ...rest: unknown[]) => Promise<unknown>;
      let sequencerRun = false;
      runner.query = ((sql: string, ...rest: unknown[]) => {
        if (sql.startsWith('SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION; SELECT last_position')) {
          sequencerRun = true;
        } else if (sequencerRun && failed === 0 && sql.endsWith('; COMMIT')) {
          failed += 1;
          return query(`SELECT no_such_column FROM event_sequence; ${sql}`, ...rest);
        }
        return query(sql, ...rest);
      }) as QueryRunner['query'];
      return runner;
    });

    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    await vi.waitFor(() => expect(failed).toBe(1), { timeout: 5_000 });
    vi.restoreAllMocks();
    await instance.app.get(EventSequencer).settle();

    const feed = await admin.get<FeedEvent[]>(`/events?after=${after}&wait=5`);
    expect(feed.body.map((event) => [event.type, event.data.post])).toEqual([['post.created', post]]);
  });
});
