import { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../src/database/database-url.js';
import { buildDataSourceOptions } from '../src/database/database.options.js';
import { Post } from '../src/posts/post.entity.js';
import { interleavedAuthors, seedPosts } from './factories/seed-posts.js';
import { captureListSql, pageQueryAt } from './helpers/list-query-sql.js';
import { createTestDatabase, dialect, type TestDatabase } from './helpers/test-database.js';
import { useTestApp } from './helpers/use-test-app.js';

const MIGRATION = 'CreatePosts1795000000000';

interface ColumnShape {
  name: string;
  type: string;
  nullable: boolean;
  autoIncrement: boolean;
}

interface IndexShape {
  name: string;
  columns: string[];
  unique: boolean;
}

interface TableShape {
  columns: ColumnShape[];
  primaryKey: string[];
  indexes: IndexShape[];
}

// Column types as each database reports them (integer display widths such as MariaDB's bigint(20) dropped).
const EXPECTED_COLUMN_TYPES: Record<typeof dialect, Array<[string, string]>> = {
  sqlite: [
    ['id', 'integer'],
    ['title', 'varchar(200)'],
    ['content', 'text'],
    ['author', 'varchar(100)'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
  ],
  mysql: [
    ['id', 'bigint unsigned'],
    ['title', 'varchar(200)'],
    ['content', 'mediumtext'],
    ['author', 'varchar(100)'],
    ['created_at', 'datetime(3)'],
    ['updated_at', 'datetime(3)'],
  ],
};

/** A data source exactly as the service and the TypeORM CLI build it, for driving migrations by hand. */
async function openDataSource(url: string): Promise<DataSource> {
  const dataSource = new DataSource({
    ...buildDataSourceOptions(parseDatabaseUrl(url, { poolSize: 2 })),
    entities: [Post],
    // Only the logger differs: the service's logs every migration step, which would drown the test report.
    logger: 'simple-console',
    logging: ['error', 'warn'],
  });
  return dataSource.initialize();
}

async function tableNames(dataSource: DataSource): Promise<string[]> {
  const sql =
    dialect === 'mysql'
      ? 'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME'
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name";
  const rows = await dataSource.query<Array<{ name: string }>>(sql);
  return rows.map((row) => row.name);
}

async function appliedMigrations(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<Array<{ name: string }>>('SELECT name FROM migrations ORDER BY id');
  return rows.map((row) => row.name);
}

async function describePostsTable(dataSource: DataSource): Promise<TableShape> {
  return dialect === 'mysql' ? describeMysqlTable(dataSource) : describeSqliteTable(dataSource);
}

async function describeSqliteTable(dataSource: DataSource): Promise<TableShape> {
  const [{ sql: ddl }] = await dataSource.query<Array<{ sql: string }>>(
    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'posts'",
  );
  const columns =
    await dataSource.query<Array<{ name: string; type: string; notnull: number; pk: number }>>(
      'PRAGMA table_info(posts)',
    );
  const indexList = await dataSource.query<Array<{ name: string; unique: number }>>('PRAGMA index_list(posts)');
  const indexes: IndexShape[] = [];
  for (const index of indexList) {
    const parts = await dataSource.query<Array<{ seqno: number; name: string }>>(`PRAGMA index_info("${index.name}")`);
    indexes.push({
      name: index.name,
      columns: parts.sort((left, right) => left.seqno - right.seqno).map((part) => part.name),
      unique: index.unique === 1,
    });
  }
  return {
    columns: columns.map((column) => ({
      name: column.name,
      type: column.type.toLowerCase(),
      nullable: column.notnull === 0,
      // Only an INTEGER PRIMARY KEY declared AUTOINCREMENT never hands out the id of a deleted row again.
      autoIncrement: new RegExp(`"${column.name}"\\s+INTEGER\\s+PRIMARY\\s+KEY\\s+AUTOINCREMENT\\b`, 'i').test(ddl),
    })),
    primaryKey: columns
      .filter((column) => column.pk > 0)
      .sort((left, right) => left.pk - right.pk)
      .map((column) => column.name),
    indexes: indexes.sort((left, right) => left.name.localeCompare(right.name)),
  };
}

async function describeMysqlTable(dataSource: DataSource): Promise<TableShape> {
  const columns = await dataSource.query<
    Array<{ COLUMN_NAME: string; COLUMN_TYPE: string; IS_NULLABLE: string; EXTRA: string }>
  >(
    `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, EXTRA FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts' ORDER BY ORDINAL_POSITION`,
  );
  const indexParts = await dataSource.query<Array<{ INDEX_NAME: string; COLUMN_NAME: string; NON_UNIQUE: number }>>(
    `SELECT INDEX_NAME, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'posts' ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
  );
  const indexes = new Map<string, IndexShape>();
  for (const part of indexParts) {
    const index = indexes.get(part.INDEX_NAME) ?? { name: part.INDEX_NAME, columns: [], unique: !part.NON_UNIQUE };
    index.columns.push(part.COLUMN_NAME);
    indexes.set(part.INDEX_NAME, index);
  }
  return {
    columns: columns.map((column) => ({
      name: column.COLUMN_NAME,
      type: column.COLUMN_TYPE.toLowerCase().replace(/^(tinyint|smallint|mediumint|int|bigint)\(\d+\)/, '$1'),
      nullable: column.IS_NULLABLE === 'YES',
      autoIncrement: column.EXTRA.toLowerCase().includes('auto_increment'),
    })),
    primaryKey: indexes.get('PRIMARY')?.columns ?? [],
    indexes: [...indexes.values()].filter((index) => index.name !== 'PRIMARY'),
  };
}

describe('database schema', () => {
  describe('migrations on a fresh database', () => {
    let database: TestDatabase;
    let dataSource: DataSource;

    beforeEach(async () => {
      database = await createTestDatabase();
      dataSource = await openDataSource(database.url);
    });

    afterEach(async () => {
      if (dataSource?.isInitialized) await dataSource.destroy();
      await database?.drop();
    });

    it('applies the one migration, which creates the posts table and is recorded', async () => {
      expect(await tableNames(dataSource)).toEqual([]);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([MIGRATION]);
      expect(await tableNames(dataSource)).toEqual(['migrations', 'posts']);
      expect(await appliedMigrations(dataSource)).toEqual([MIGRATION]);
      expect(await dataSource.showMigrations()).toBe(false);
    });

    it('reverts the migration: the posts table is dropped and the migrations table is empty', async () => {
      await dataSource.runMigrations();

      await dataSource.undoLastMigration();

      expect(await tableNames(dataSource)).toEqual(['migrations']);
      expect(await appliedMigrations(dataSource)).toEqual([]);
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('applies the migration again after it was reverted', async () => {
      await dataSource.runMigrations();
      await dataSource.undoLastMigration();

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([MIGRATION]);
      expect(await tableNames(dataSource)).toEqual(['migrations', 'posts']);
      expect(await appliedMigrations(dataSource)).toEqual([MIGRATION]);
    });

    it('treats a second run as a no-op that leaves the table and its rows alone', async () => {
      await dataSource.runMigrations();
      const now = new Date();
      await dataSource
        .getRepository(Post)
        .insert({ title: 'Kept', content: 'Still here', author: 'Ada', createdAt: now, updatedAt: now });

      const applied = await dataSource.runMigrations();

      expect(applied).toEqual([]);
      expect(await appliedMigrations(dataSource)).toEqual([MIGRATION]);
      expect(await dataSource.getRepository(Post).findBy({ title: 'Kept' })).toHaveLength(1);
    });
  });

  describe('the migrated posts table', () => {
    let database: TestDatabase;
    let dataSource: DataSource;
    let table: TableShape;

    beforeAll(async () => {
      database = await createTestDatabase();
      dataSource = await openDataSource(database.url);
      await dataSource.runMigrations();
      table = await describePostsTable(dataSource);
    });

    afterAll(async () => {
      if (dataSource?.isInitialized) await dataSource.destroy();
      await database?.drop();
    });

    it(`has exactly the expected columns, in order, with the ${dialect} types`, () => {
      expect(table.columns.map((column) => [column.name, column.type])).toEqual(EXPECTED_COLUMN_TYPES[dialect]);
    });

    it('declares every column NOT NULL', () => {
      expect(table.columns.filter((column) => column.nullable).map((column) => column.name)).toEqual([]);
    });

    it('makes id the auto-incrementing primary key, and no other column auto-increments', () => {
      expect(table.primaryKey).toEqual(['id']);
      expect(table.columns.filter((column) => column.autoIncrement).map((column) => column.name)).toEqual(['id']);
    });

    it('has idx_posts_author_id on (author, id) as its only secondary index', () => {
      expect(table.indexes).toEqual([{ name: 'idx_posts_author_id', columns: ['author', 'id'], unique: false }]);
    });
  });

  describe('the running application', () => {
    const context = useTestApp();

    it('never synchronizes the schema from the entities and applies migrations on start instead', async () => {
      const { options } = context.app.dataSource;

      expect(options.synchronize).toBe(false);
      expect(options.migrationsRun).toBe(true);
      expect(await appliedMigrations(context.app.dataSource)).toEqual([MIGRATION]);
    });

    describe('list queries with 3,000 posts', () => {
      const AUTHORS = 30;
      const POSTS_PER_AUTHOR = 100;
      const PAGE_SIZE = 20;
      // One author of 30, its posts spread over the whole table: an index on author is worth using.
      const AUTHOR = 'author-07';

      interface ListCase {
        name: string;
        order: 'asc' | 'desc';
        author?: string;
        /** Posts listed before the measured page; 0 is the first page, without a cursor. */
        depth: number;
        mysql: { key: string; type: string };
        sqlite: string;
      }

      // The cursorless unfiltered pages have no predicate to seek with: they walk the primary key in
      // order and stop after LIMIT rows (MySQL type `index`, SQLite `SCAN post`, neither sorts).
      const cases: ListCase[] = [
        {
          name: 'the first page of all posts, newest first',
          order: 'desc',
          depth: 0,
          mysql: { key: 'PRIMARY', type: 'index' },
          sqlite: 'SCAN post',
        },
        {
          name: 'a page of all posts 2,900 deep, newest first',
          order: 'desc',
          depth: 2_900,
          mysql: { key: 'PRIMARY', type: 'range' },
          sqlite: 'SEARCH post USING INTEGER PRIMARY KEY (rowid<?)',
        },
        {
          name: "the first page of one author's posts, newest first",
          order: 'desc',
          author: AUTHOR,
          depth: 0,
          mysql: { key: 'idx_posts_author_id', type: 'ref' },
          sqlite: 'SEARCH post USING INDEX idx_posts_author_id (author=?)',
        },
        {
          name: "a page of one author's posts 75 deep, newest first",
          order: 'desc',
          author: AUTHOR,
          depth: 75,
          mysql: { key: 'idx_posts_author_id', type: 'range' },
          sqlite: 'SEARCH post USING INDEX idx_posts_author_id (author=? AND id<?)',
        },
        {
          name: 'the first page of all posts, oldest first',
          order: 'asc',
          depth: 0,
          mysql: { key: 'PRIMARY', type: 'index' },
          sqlite: 'SCAN post',
        },
        {
          name: 'a page of all posts 2,900 deep, oldest first',
          order: 'asc',
          depth: 2_900,
          mysql: { key: 'PRIMARY', type: 'range' },
          sqlite: 'SEARCH post USING INTEGER PRIMARY KEY (rowid>?)',
        },
        {
          name: "the first page of one author's posts, oldest first",
          order: 'asc',
          author: AUTHOR,
          depth: 0,
          mysql: { key: 'idx_posts_author_id', type: 'ref' },
          sqlite: 'SEARCH post USING INDEX idx_posts_author_id (author=?)',
        },
        {
          name: "a page of one author's posts 75 deep, oldest first",
          order: 'asc',
          author: AUTHOR,
          depth: 75,
          mysql: { key: 'idx_posts_author_id', type: 'range' },
          sqlite: 'SEARCH post USING INDEX idx_posts_author_id (author=? AND id>?)',
        },
      ];

      beforeAll(async () => {
        const { dataSource } = context.app;
        await seedPosts(dataSource, interleavedAuthors({ authors: AUTHORS, postsPerAuthor: POSTS_PER_AUTHOR }));
        await dataSource.query(dialect === 'mysql' ? 'ANALYZE TABLE posts' : 'ANALYZE');
      });

      const explain = (sql: string, parameters: unknown[]) =>
        context.app.dataSource.query<Array<Record<string, unknown>>>(
          `${dialect === 'mysql' ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN'} ${sql}`,
          parameters,
        );

      for (const listCase of cases) {
        it(`reads ${listCase.name} from an index in order, without OFFSET and without sorting`, async () => {
          const query = await pageQueryAt(
            context.app,
            { limit: PAGE_SIZE, order: listCase.order, author: listCase.author, count: false },
            listCase.depth,
          );

          const { page, sql, parameters } = await captureListSql(context.app, query);
          const plan = await explain(sql, parameters);

          expect(page.posts).toHaveLength(PAGE_SIZE);
          expect(sql).not.toMatch(/\bOFFSET\b/i);
          expect(sql).toMatch(new RegExp(`\\bLIMIT ${PAGE_SIZE + 1}$`));
          if (dialect === 'mysql') {
            expect(plan).toHaveLength(1);
            expect({ key: plan[0].key, type: plan[0].type }).toEqual(listCase.mysql);
            expect(String(plan[0].Extra)).not.toMatch(/filesort|temporary/i);
            // A walk of the whole index is only acceptable when LIMIT stops it after one page.
            if (listCase.mysql.type === 'index') expect(Number(plan[0].rows)).toBeLessThanOrEqual(PAGE_SIZE + 1);
          } else {
            const details = plan.map((row) => String(row.detail));
            expect(details).toEqual([listCase.sqlite]);
            expect(details.join('\n')).not.toMatch(/TEMP B-TREE/);
          }
        });
      }
    });
  });
});
