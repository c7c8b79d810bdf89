// @module-tag database
// (seeds posts and trash rows straight into the tables, and drives the sweeps directly)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostsMaintenance } from '../src/posts/posts-maintenance.js';
import { interleavedAuthors, seedPosts } from './factories/seed-posts.js';
import { useTestApp } from './helpers/use-test-app.js';

// A writer can schedule thousands of posts for one instant, or delete thousands in a day: the
// sweeps work a backlog off at the database's pace, not a fixed number of posts per run.
describe('the posts maintenance with a backlog', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: { TRASH_RETENTION: '1s' } });
  let maintenance: PostsMaintenance;
  /** The real runs, which the held timers no longer start. */
  const publishDue = (): Promise<number> => PostsMaintenance.prototype.publishDue.call(maintenance);
  const purgeTrash = (now: Date): Promise<number> => PostsMaintenance.prototype.purgeTrash.call(maintenance, now);

  beforeAll(() => {
    maintenance = context.app.app.get(PostsMaintenance);
    vi.spyOn(maintenance, 'publishDue').mockResolvedValue(0);
    vi.spyOn(maintenance, 'purgeTrash').mockResolvedValue(0);
    // Long enough for any machine: what is counted is the batches a run takes, not the clock.
    maintenance.budgetsMs.publication = 60_000;
    maintenance.budgetsMs.trash = 60_000;
  });
  afterAll(() => vi.restoreAllMocks());

  const count = async (sql: string): Promise<number> => {
    const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(sql);
    return Number(row.n);
  };

  it('publishes 350 posts due at the same instant in one run, more than one batch of 100, each with one event', async () => {
    const due = new Date(Date.now() - 1_000);
    const posts = interleavedAuthors({ authors: 5, postsPerAuthor: 70 }).map((post) => ({
      ...post,
      status: 'scheduled' as const,
      publishedAt: due,
    }));
    await seedPosts(context.app.dataSource, posts);

    const published = await publishDue();

    expect(published).toBe(350);
    expect(await count("SELECT COUNT(*) AS n FROM posts WHERE status = 'scheduled'")).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE type = 'post.published'")).toBe(350);
    expect(await publishDue()).toBe(0);
  });

  it('stops a run at its time budget after a full batch, leaving the rest to the next run', async () => {
    const due = new Date(Date.now() - 1_000);
    const posts = interleavedAuthors({ authors: 2, postsPerAuthor: 100 }).map((post) => ({
      ...post,
      status: 'scheduled' as const,
      publishedAt: due,
    }));
    await seedPosts(context.app.dataSource, posts);
    maintenance.budgetsMs.publication = 0;
    try {
      expect(await publishDue()).toBe(100);
      expect(await publishDue()).toBe(100);
      expect(await publishDue()).toBe(0);
    } finally {
      maintenance.budgetsMs.publication = 60_000;
    }
  });

  it('erases 1,200 expired trashed posts in one run, more than the 1,000 a run used to take, each with one tombstone', async () => {
    const deletedAt = new Date(Date.now() - 60_000);
    const { dataSource } = context.app;
    const repository = dataSource.getRepository('TrashedPost');
    const rows = Array.from({ length: 1_200 }, (_, index) => ({
      id: 1_000_000 + index,
      title: `Trashed ${index}`,
      content: 'Expired',
      author: 'Ada',
      ownerId: 'api-key:1',
      version: 2,
      status: 'published',
      publishedAt: deletedAt,
      createdAt: deletedAt,
      updatedAt: deletedAt,
      deletedAt,
    }));
    for (let start = 0; start < rows.length; start += 200) await repository.insert(rows.slice(start, start + 200));

    const erased = await purgeTrash(new Date());

    expect(erased).toBe(1_200);
    expect(await count('SELECT COUNT(*) AS n FROM posts_trash')).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM events WHERE type = 'post.purged'")).toBe(1_200);
  });
});
