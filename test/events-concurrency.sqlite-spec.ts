import { describe, expect, it } from 'vitest';
import { client } from './helpers/http.js';
import { writeWhileReadingTheFeed } from './helpers/feed-concurrency.js';
import { useTestApp } from './helpers/use-test-app.js';

// SQLite is single-instance: 8 writers on one instance while a reader walks the feed.
describe('the events feed under concurrent writers (SQLite)', () => {
  const context = useTestApp();

  it('8 writers, 2,000 writes: the reader sees every event once, in version order', async () => {
    const reader = client(
      () => context.app.baseUrl,
      () => context.app.adminToken,
    );
    const result = await writeWhileReadingTheFeed([context.api], reader, { writers: 8, writesPerApi: 2_000 });
    process.stdout.write(
      `events feed, SQLite, 8 writers: ${result.writes} writes, ${result.events} events read once each, ${result.seconds.toFixed(1)} s\n`,
    );
    expect(result.writes).toBe(2_000);
  }, 180_000);
});
