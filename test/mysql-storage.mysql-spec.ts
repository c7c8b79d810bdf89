import { beforeAll, describe, expect, it } from 'vitest';
import { clearNoBackslashEscapes } from '../src/database/mysql-session.js';
import { IdempotencyRecord } from '../src/idempotency/idempotency-record.entity.js';
import type { PageQuery } from '../src/posts/dto/list-posts-query.dto.js';
import { Post } from '../src/posts/post.entity.js';
import { interleavedAuthors, seedPosts } from './factories/seed-posts.js';
import { captureListSql, pageQueryAt } from './helpers/list-query-sql.js';
import { buildPost } from './factories/post.factory.js';
import { useTestApp } from './helpers/use-test-app.js';

// MySQL/MariaDB only: this file runs in the e2e-mysql project alone (vitest.config.ts).

/** The columns that hold text, per table, tables and columns in name order. */
const TEXT_COLUMNS: Record<string, string[]> = {
  api_keys: ['name', 'scopes', 'token_digest', 'token_hint'],
  events: ['data', 'type'],
  idempotency_keys: ['idempotency_key', 'principal_id', 'request_digest', 'response_body', 'response_headers'],
  post_revisions: ['author', 'content', 'status', 'title'],
  posts: ['author', 'content', 'owner_id', 'status', 'title'],
  posts_trash: ['author', 'content', 'owner_id', 'status', 'title'],
};
const TABLES = Object.keys(TEXT_COLUMNS);
/** `(?, ?, ?)`, one placeholder per table, for `TABLE_NAME IN ...`. */
const TABLE_PLACEHOLDERS = `(${TABLES.map(() => '?').join(', ')})`;

describe('MySQL/MariaDB storage', () => {
  const context = useTestApp();

  describe('the sessions of the pool', () => {
    interface PoolConnection {
      query(sql: string, callback: (error: Error | null, rows: Array<{ mode: string }>) => void): void;
      destroy(): void;
      release(): void;
    }
    const pool = () =>
      (
        context.app.dataSource.driver as unknown as {
          pool: {
            listeners(event: 'connection'): unknown[];
            getConnection(callback: (error: Error | null, connection: PoolConnection) => void): void;
          };
        }
      ).pool;
    const run = (connection: PoolConnection, sql: string) =>
      new Promise<Array<{ mode: string }>>((resolve, reject) =>
        connection.query(sql, (error, rows) => (error ? reject(error) : resolve(rows))),
      );

    it('read backslashes as escapes: every new connection takes NO_BACKSLASH_ESCAPES off its sql_mode, keeping the rest', async () => {
      expect(pool().listeners('connection')).toEqual([clearNoBackslashEscapes]);
      const connection = await new Promise<PoolConnection>((resolve, reject) =>
        pool().getConnection((error, connection) => (error ? reject(error) : resolve(connection))),
      );
      try {
        // A session as a server whose default has the mode would open it.
        await run(connection, "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES,NO_ZERO_DATE'");
        await new Promise<void>((resolve) => {
          clearNoBackslashEscapes(connection);
          connection.query('SELECT 1', () => resolve());
        });
        expect(await run(connection, 'SELECT @@SESSION.sql_mode AS mode')).toEqual([
          { mode: 'STRICT_TRANS_TABLES,NO_ZERO_DATE' },
        ]);
      } finally {
        connection.destroy();
      }
    });

    it('store a value that ends in a backslash or holds quotes and semicolons as it was sent', async () => {
      const tricky = buildPost({ title: "x\\', 'y'); DROP TABLE posts; --", content: "\\'; SELECT 1; --\\" });
      const created = await context.api.post<{ id: number; title: string; content: string }>('/posts', tricky);
      expect(created.status).toBe(201);
      const [row] = await context.app.dataSource.query<Array<{ title: string; content: string }>>(
        'SELECT title, content FROM posts WHERE id = ?',
        [created.body.id],
      );
      expect(row).toEqual({ title: tricky.title, content: tricky.content });
    });
  });

  /** The binary NO PAD utf8mb4 collation of this server flavour. */
  const expectedCollation = async (): Promise<string> => {
    const [{ version }] = await context.app.dataSource.query<Array<{ version: string }>>('SELECT VERSION() AS version');
    return version.includes('MariaDB') ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
  };

  describe('the tables with text columns', () => {
    it('are InnoDB tables in utf8mb4 with the binary NO PAD collation of this server', async () => {
      const collation = await expectedCollation();

      const rows = await context.app.dataSource.query<
        Array<{ TABLE_NAME: string; ENGINE: string; TABLE_COLLATION: string; CHARACTER_SET_NAME: string }>
      >(
        `SELECT t.TABLE_NAME, t.ENGINE, t.TABLE_COLLATION, c.CHARACTER_SET_NAME
         FROM information_schema.TABLES t JOIN information_schema.COLLATIONS c ON c.COLLATION_NAME = t.TABLE_COLLATION
         WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME IN ${TABLE_PLACEHOLDERS}`,
        TABLES,
      );

      expect(rows.sort((left, right) => left.TABLE_NAME.localeCompare(right.TABLE_NAME))).toEqual(
        TABLES.map((table) => ({
          TABLE_NAME: table,
          ENGINE: 'InnoDB',
          TABLE_COLLATION: collation,
          CHARACTER_SET_NAME: 'utf8mb4',
        })),
      );
    });

    it('give every text column of those tables utf8mb4 and that collation', async () => {
      const collation = await expectedCollation();

      const rows = await context.app.dataSource.query<
        Array<{ TABLE_NAME: string; COLUMN_NAME: string; CHARACTER_SET_NAME: string; COLLATION_NAME: string }>
      >(
        `SELECT TABLE_NAME, COLUMN_NAME, CHARACTER_SET_NAME, COLLATION_NAME FROM information_schema.COLUMNS
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ${TABLE_PLACEHOLDERS} AND CHARACTER_SET_NAME IS NOT NULL`,
        TABLES,
      );

      // Both sides sorted here, by code unit: information_schema's collation may place '_' after letters.
      const byTableAndName = (left: { TABLE_NAME: string; COLUMN_NAME: string }, right: typeof left): number => {
        const [a, b] = [left, right].map((row) => `${row.TABLE_NAME}.${row.COLUMN_NAME}`);
        return a < b ? -1 : a > b ? 1 : 0;
      };
      expect(rows.sort(byTableAndName)).toEqual(
        Object.entries(TEXT_COLUMNS)
          .flatMap(([table, columns]) =>
            columns.map((name) => ({
              TABLE_NAME: table,
              COLUMN_NAME: name,
              CHARACTER_SET_NAME: 'utf8mb4',
              COLLATION_NAME: collation,
            })),
          )
          .sort(byTableAndName),
      );
    });

    it('compares authors byte for byte: case, accents and trailing spaces all count', async () => {
      const repository = context.app.dataSource.getRepository(Post);
      const now = new Date();
      const authors = ['Ada', 'Ada ', 'ada', 'Adá', 'ADA'];
      await repository.insert(
        authors.map((author) => ({ title: 'Collation', content: author, author, createdAt: now, updatedAt: now })),
      );

      const matches = await context.app.dataSource.query<Array<{ author: string }>>(
        "SELECT author FROM posts WHERE title = 'Collation' AND author = ?",
        ['Ada'],
      );

      expect(matches).toEqual([{ author: 'Ada' }]);
    });

    it('tells idempotency keys and principals apart byte for byte in the unique index', async () => {
      const repository = context.app.dataSource.getRepository(IdempotencyRecord);
      const now = new Date();
      const record = (principalId: string, idempotencyKey: string) => ({
        principalId,
        idempotencyKey,
        requestDigest: 'f'.repeat(64),
        lockedAt: now,
        expiresAt: new Date(now.getTime() + 86_400_000),
      });
      const keys = ['Key', 'Key ', 'key', 'Kéy', 'KEY'];
      const principals = ['oauth:Ada', 'oauth:Ada ', 'oauth:ada'];

      // A case-insensitive or PAD SPACE collation would refuse all but one of each as a duplicate.
      await repository.insert(keys.map((key) => record('oauth:Ada', key)));
      await repository.insert(principals.slice(1).map((principal) => record(principal, 'Key')));

      const matches = await context.app.dataSource.query<Array<{ principal_id: string; idempotency_key: string }>>(
        'SELECT principal_id, idempotency_key FROM idempotency_keys WHERE principal_id = ? AND idempotency_key = ?',
        ['oauth:Ada', 'Key'],
      );

      expect(matches).toEqual([{ principal_id: 'oauth:Ada', idempotency_key: 'Key' }]);
      expect(await repository.countBy({ idempotencyKey: 'Key' })).toBe(principals.length);
    });
  });

  describe('the cost of a page, in rows the storage engine reads', () => {
    const AUTHORS = 30;
    const POSTS_PER_AUTHOR = 100;
    const PAGE_SIZE = 20;
    const AUTHOR = 'author-07';
    // Handler_read_* count index entries and rows read by InnoDB, whatever the plan. The _rnd ones
    // count the reads of a published page's temporary tables (its two seeks' rows, merged): rows of
    // the page, not of the table, so they are left out.
    const HANDLER_READS = 'Handler_read%';

    beforeAll(async () => {
      const { dataSource } = context.app;
      await seedPosts(dataSource, interleavedAuthors({ authors: AUTHORS, postsPerAuthor: POSTS_PER_AUTHOR }));
      await dataSource.query('ANALYZE TABLE posts');
    });

    /** The SQL and parameters of the list query PostsService.findPage runs for `query`. */
    const listSql = async (query: PageQuery): Promise<{ sql: string; parameters: unknown[] }> => {
      const { page, sql, parameters } = await captureListSql(context.app, query);
      expect(page.posts).toHaveLength(query.limit);
      return { sql, parameters };
    };

    /** Runs `sql` on one connection between FLUSH STATUS and SHOW SESSION STATUS; returns rows returned and read. */
    const measure = async (sql: string, parameters: unknown[]): Promise<{ returned: number; read: number }> => {
      const queryRunner = context.app.dataSource.createQueryRunner();
      await queryRunner.connect();
      try {
        await queryRunner.query('FLUSH STATUS');
        const rows = (await queryRunner.query(sql, parameters)) as unknown[];
        const counters = (await queryRunner.query(`SHOW SESSION STATUS LIKE '${HANDLER_READS}'`)) as Array<{
          Variable_name: string;
          Value: string;
        }>;
        expect(counters.length).toBeGreaterThan(0);
        const indexReads = counters.filter((counter) => !counter.Variable_name.startsWith('Handler_read_rnd'));
        return { returned: rows.length, read: indexReads.reduce((sum, counter) => sum + Number(counter.Value), 0) };
      } finally {
        await queryRunner.release();
      }
    };

    const listings: Array<{ name: string; query: PageQuery; deep: number }> = [
      {
        name: 'all posts, newest first',
        query: { limit: PAGE_SIZE, order: 'desc', status: 'published', count: false },
        deep: 2_900,
      },
      {
        name: 'all posts, oldest first',
        query: { limit: PAGE_SIZE, order: 'asc', status: 'published', count: false },
        deep: 2_900,
      },
      {
        name: "one author's posts, newest first",
        query: { limit: PAGE_SIZE, order: 'desc', author: AUTHOR, status: 'published', count: false },
        deep: 75,
      },
      {
        name: "one author's posts, oldest first",
        query: { limit: PAGE_SIZE, order: 'asc', author: AUTHOR, status: 'published', count: false },
        deep: 75,
      },
    ];

    for (const listing of listings) {
      it(`reads about one page of rows for a page of ${listing.name} ${listing.deep} deep, as for the first`, async () => {
        const first = await listSql(listing.query);
        const deep = await listSql(await pageQueryAt(context.app, listing.query, listing.deep));

        const firstCost = await measure(first.sql, first.parameters);
        const deepCost = await measure(deep.sql, deep.parameters);

        expect(firstCost.returned).toBe(PAGE_SIZE + 1);
        expect(deepCost.returned).toBe(PAGE_SIZE + 1);
        expect(firstCost.read).toBeLessThanOrEqual(PAGE_SIZE + 2);
        expect(deepCost.read).toBeLessThanOrEqual(PAGE_SIZE + 2);
        expect(deepCost.read).toBe(firstCost.read);
      });
    }

    it('does see depth: the same page reached with OFFSET reads every row it skips', async () => {
      const cost = await measure(
        "SELECT * FROM posts FORCE INDEX (idx_posts_status_id) WHERE status = 'published' ORDER BY id DESC LIMIT ? OFFSET 2900",
        [PAGE_SIZE + 1],
      );

      expect(cost.returned).toBe(PAGE_SIZE + 1);
      expect(cost.read).toBeGreaterThanOrEqual(2_900 + PAGE_SIZE);
    });
  });
});
