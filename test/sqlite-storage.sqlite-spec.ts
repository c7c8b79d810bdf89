import { randomUUID } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageQuery } from '../src/posts/dto/list-posts-query.dto.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { interleavedAuthors, seedPosts } from './factories/seed-posts.js';
import { client } from './helpers/http.js';
import { captureListSql, pageQueryAt } from './helpers/list-query-sql.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { useTestApp } from './helpers/use-test-app.js';

// SQLite only: this file runs in the e2e-sqlite project alone (vitest.config.ts).

describe('SQLite storage', () => {
  describe('a file database', () => {
    const root = join(tmpdir(), `posts-sqlite-spec-${randomUUID()}`);
    /** A database path in directories that do not exist yet, different for every test. */
    const freshPath = () => join(root, randomUUID(), 'nested', 'posts.sqlite');
    const started: TestApp[] = [];

    const start = async (sqlitePath: string): Promise<TestApp> => {
      const testApp = await startTestApp({ sqlitePath });
      started.push(testApp);
      return testApp;
    };

    afterAll(async () => {
      for (const testApp of started) await testApp.close().catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    });

    it('is created, with its missing parent directories, when the app starts', async () => {
      const path = freshPath();
      expect(existsSync(dirname(path))).toBe(false);

      await start(path);

      expect(statSync(path).isFile()).toBe(true);
    });

    it('runs in WAL mode', async () => {
      const { dataSource } = await start(freshPath());

      const rows = await dataSource.query<Array<{ journal_mode: string }>>('PRAGMA journal_mode');

      expect(rows).toEqual([{ journal_mode: 'wal' }]);
    });

    it('keeps its posts when the app is restarted on the same file', async () => {
      const path = freshPath();
      const first = await start(path);
      const created = await client(
        () => first.baseUrl,
        () => first.writerToken,
      ).post<PostResource>('/posts', buildPost({ author: 'Restart' }));
      expect(created.status).toBe(201);
      await first.close();
      started.splice(started.indexOf(first), 1);

      const second = await start(path);
      const read = await client(
        () => second.baseUrl,
        () => second.writerToken,
      ).get<PostResource>(`/posts/${created.body.id}`);

      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });
  });

  describe('the plan of a list query', () => {
    const context = useTestApp();
    const PAGE_SIZE = 20;
    const AUTHORS = 30;
    const AUTHOR = 'author-07';

    beforeAll(async () => {
      const { dataSource } = context.app;
      await seedPosts(dataSource, interleavedAuthors({ authors: AUTHORS, postsPerAuthor: 100 }));
      await dataSource.query('ANALYZE');
    });

    /** EXPLAIN QUERY PLAN of the list query PostsService.findPage runs for the page `depth` posts in. */
    const planAt = async (query: PageQuery, depth: number): Promise<string[]> => {
      const { page, sql, parameters } = await captureListSql(context.app, await pageQueryAt(context.app, query, depth));
      expect(page.posts).toHaveLength(PAGE_SIZE);
      const plan = await context.app.dataSource.query<Array<{ detail: string }>>(
        `EXPLAIN QUERY PLAN ${sql}`,
        parameters,
      );
      return plan.map((row) => row.detail);
    };

    const listings: Array<{ name: string; query: PageQuery; near: number; deep: number }> = [
      {
        name: 'all posts, newest first',
        query: { limit: PAGE_SIZE, order: 'desc', status: 'published', count: false },
        near: 20,
        deep: 2_900,
      },
      {
        name: 'all posts, oldest first',
        query: { limit: PAGE_SIZE, order: 'asc', status: 'published', count: false },
        near: 20,
        deep: 2_900,
      },
      {
        name: "one author's posts, newest first",
        query: { limit: PAGE_SIZE, order: 'desc', author: AUTHOR, status: 'published', count: false },
        near: 20,
        deep: 75,
      },
      {
        name: "one author's posts, oldest first",
        query: { limit: PAGE_SIZE, order: 'asc', author: AUTHOR, status: 'published', count: false },
        near: 20,
        deep: 75,
      },
    ];

    for (const listing of listings) {
      it(`seeks a page of ${listing.name} ${listing.deep} deep with the plan of the second page`, async () => {
        const nearPlan = await planAt(listing.query, listing.near);

        const deepPlan = await planAt(listing.query, listing.deep);

        expect(deepPlan).toEqual(nearPlan);
        // The stored published posts, then the due scheduled ones (database-schema.e2e-spec.ts has the rest).
        const seeks = deepPlan.filter((detail) => / posts\b/.test(detail));
        expect(seeks).toHaveLength(2);
        expect(seeks[0]).toMatch(/^SEARCH posts USING INDEX (idx_posts_status_id|idx_posts_author_status_id) \(/);
      });
    }
  });
});
