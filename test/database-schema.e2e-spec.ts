// @module-tag database
// (inspects the schema, the migrations and the query plans)
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type LoggerOptions, type MigrationInterface } from 'typeorm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiKey } from '../src/auth/api-keys/api-key.entity.js';
import { IdempotencyRecord } from '../src/idempotency/idempotency-record.entity.js';
import { parseDatabaseUrl } from '../src/config/database-url.js';
import { buildDataSourceOptions } from '../src/database/database.options.js';
import { MIGRATIONS as MIGRATION_CLASSES } from '../src/database/migrations/index.js';
import { EventRecord } from '../src/events/event-record.entity.js';
import { WebhookAttempt } from '../src/webhooks/webhook-attempt.entity.js';
import { WebhookDelivery } from '../src/webhooks/webhook-delivery.entity.js';
import { Webhook } from '../src/webhooks/webhook.entity.js';
import { Post } from '../src/posts/post.entity.js';
import { interleavedAuthors, seedPosts } from './factories/seed-posts.js';
import { captureListSql, pageQueryAt } from './helpers/list-query-sql.js';
import { createTestDatabase, dialect, type TestDatabase } from './helpers/test-database.js';
import { useTestApp } from './helpers/use-test-app.js';

const CREATE_POSTS = 'CreatePosts1795000000000';
const ADD_API_KEYS_AND_POST_OWNERS = 'AddApiKeysAndPostOwners1795000100000';
const ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS = 'AddPostVersionsAndIdempotencyKeys1795000200000';
const ADD_EVENTS = 'AddEvents1795000300000';
const ADD_WEBHOOKS = 'AddWebhooks1795000400000';
const KEY_EVENTS_BY_POSITION = 'KeyEventsByPosition1795000500000';
/** Every migration, in the order they apply. */
const MIGRATIONS = [
  CREATE_POSTS,
  ADD_API_KEYS_AND_POST_OWNERS,
  ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
  ADD_EVENTS,
  ADD_WEBHOOKS,
  KEY_EVENTS_BY_POSITION,
];
/** Every table the migrations create, in name order (as tableNames returns them), with the migrations table. */
const ALL_TABLES = [
  'api_keys',
  'event_sequence',
  'events',
  'idempotency_keys',
  'migrations',
  'posts',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_dispatch',
  'webhooks',
];
/** The tables before the webhooks migration. */
const TABLES_BEFORE_WEBHOOKS = ['api_keys', 'event_sequence', 'events', 'idempotency_keys', 'migrations', 'posts'];
/** The tables before the events migration. */
const TABLES_BEFORE_EVENTS = ['api_keys', 'idempotency_keys', 'migrations', 'posts'];

type TableName =
  | 'posts'
  | 'api_keys'
  | 'idempotency_keys'
  | 'events'
  | 'event_sequence'
  | 'webhooks'
  | 'webhook_deliveries'
  | 'webhook_attempts'
  | 'webhook_dispatch';

interface ColumnShape {
  name: string;
  type: string;
  nullable: boolean;
  /** The declared default as the database reports it; null when there is none (or it is NULL). */
  default: string | null;
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

interface ExpectedTable {
  /** Column names and types as each database reports them (integer display widths such as bigint(20) dropped). */
  columns: Record<typeof dialect, Array<[string, string]>>;
  nullable: string[];
  /** The only columns with a default, and that default. */
  defaults: Record<string, string>;
  /** Secondary indexes, in name order. */
  indexes: IndexShape[];
  /** false for a table whose `id` is assigned, not auto-incremented (default true). */
  autoIncrementId?: boolean;
  /** The primary key when it is not `id` (it auto-increments unless autoIncrementId is false). */
  key?: string;
  /** What differs on one database. */
  only?: Partial<Record<typeof dialect, Partial<Pick<ExpectedTable, 'nullable' | 'indexes' | 'key'>>>>;
}

/** The expectations for the database under test. */
function onThisDatabase(expected: ExpectedTable): ExpectedTable {
  return { ...expected, ...expected.only?.[dialect] };
}

// Columns added by a later migration come last: ALTER TABLE ... ADD COLUMN appends.
const EXPECTED_TABLES: Record<TableName, ExpectedTable> = {
  posts: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['title', 'varchar(200)'],
        ['content', 'text'],
        ['author', 'varchar(100)'],
        ['created_at', 'datetime'],
        ['updated_at', 'datetime'],
        ['owner_id', 'varchar(300)'],
        ['version', 'integer'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['title', 'varchar(200)'],
        ['content', 'mediumtext'],
        ['author', 'varchar(100)'],
        ['created_at', 'datetime(3)'],
        ['updated_at', 'datetime(3)'],
        ['owner_id', 'varchar(300)'],
        ['version', 'int unsigned'],
      ],
    },
    // NULL for posts that predate ownership.
    nullable: ['owner_id'],
    // Every post, including those that predate versions, starts at version 1.
    defaults: { version: '1' },
    indexes: [{ name: 'idx_posts_author_id', columns: ['author', 'id'], unique: false }],
  },
  api_keys: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['name', 'varchar(100)'],
        ['token_digest', 'char(64)'],
        ['token_hint', 'varchar(16)'],
        ['scopes', 'varchar(200)'],
        ['expires_at', 'datetime'],
        ['created_at', 'datetime'],
        ['last_used_at', 'datetime'],
        ['revoked_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['name', 'varchar(100)'],
        ['token_digest', 'char(64)'],
        ['token_hint', 'varchar(16)'],
        ['scopes', 'varchar(200)'],
        ['expires_at', 'datetime(3)'],
        ['created_at', 'datetime(3)'],
        ['last_used_at', 'datetime(3)'],
        ['revoked_at', 'datetime(3)'],
      ],
    },
    nullable: ['expires_at', 'last_used_at', 'revoked_at'],
    defaults: {},
    indexes: [{ name: 'uq_api_keys_token_digest', columns: ['token_digest'], unique: true }],
  },
  idempotency_keys: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['principal_id', 'varchar(300)'],
        ['idempotency_key', 'varchar(255)'],
        ['request_digest', 'char(64)'],
        ['response_status', 'integer'],
        ['response_body', 'text'],
        ['response_headers', 'text'],
        ['locked_at', 'datetime'],
        ['expires_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['principal_id', 'varchar(300)'],
        ['idempotency_key', 'varchar(255)'],
        ['request_digest', 'char(64)'],
        ['response_status', 'smallint unsigned'],
        ['response_body', 'mediumtext'],
        ['response_headers', 'text'],
        ['locked_at', 'datetime(3)'],
        ['expires_at', 'datetime(3)'],
      ],
    },
    // NULL while the first request with the key is still running.
    nullable: ['response_status', 'response_body', 'response_headers'],
    defaults: {},
    indexes: [
      { name: 'idx_idempotency_keys_expires_at', columns: ['expires_at'], unique: false },
      { name: 'uq_idempotency_keys_principal_key', columns: ['principal_id', 'idempotency_key'], unique: true },
    ],
  },
  events: {
    columns: {
      // id: generated from position, the key (migration 1795000500000).
      sqlite: [
        ['id', 'integer'],
        ['position', 'integer'],
        ['type', 'varchar(40)'],
        ['post_id', 'integer'],
        ['occurred_at', 'datetime'],
        ['data', 'text'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['position', 'bigint unsigned'],
        ['type', 'varchar(40)'],
        ['post_id', 'bigint unsigned'],
        ['occurred_at', 'datetime(3)'],
        ['data', 'mediumtext'],
      ],
    },
    // NULL until the sequencer gives the committed event its feed position.
    nullable: ['position'],
    defaults: {},
    indexes: [
      { name: 'idx_events_type_position', columns: ['type', 'position'], unique: false },
      { name: 'uq_events_position', columns: ['position'], unique: true },
    ],
    only: {
      // The position is the rowid, taken by the INSERT; id, a generated column, is never stored.
      sqlite: {
        key: 'position',
        nullable: ['id'],
        indexes: [{ name: 'idx_events_type_position', columns: ['type', 'position'], unique: false }],
      },
    },
  },
  event_sequence: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['last_position', 'integer'],
        ['purged_through', 'integer'],
      ],
      mysql: [
        ['id', 'tinyint unsigned'],
        ['last_position', 'bigint unsigned'],
        ['purged_through', 'bigint unsigned'],
      ],
    },
    nullable: [],
    defaults: {},
    indexes: [],
    autoIncrementId: false,
  },
  webhooks: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['url', 'varchar(2048)'],
        ['event_types', 'varchar(200)'],
        ['description', 'varchar(500)'],
        ['enabled', 'boolean'],
        ['disabled_reason', 'varchar(300)'],
        ['secret', 'varchar(300)'],
        ['previous_secret', 'varchar(300)'],
        ['previous_secret_expires_at', 'datetime'],
        ['created_at', 'datetime'],
        ['updated_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['url', 'varchar(2048)'],
        ['event_types', 'varchar(200)'],
        ['description', 'varchar(500)'],
        ['enabled', 'tinyint'],
        ['disabled_reason', 'varchar(300)'],
        ['secret', 'varchar(300)'],
        ['previous_secret', 'varchar(300)'],
        ['previous_secret_expires_at', 'datetime(3)'],
        ['created_at', 'datetime(3)'],
        ['updated_at', 'datetime(3)'],
      ],
    },
    nullable: ['disabled_reason', 'previous_secret', 'previous_secret_expires_at'],
    defaults: {},
    indexes: [],
  },
  webhook_deliveries: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['webhook_id', 'integer'],
        ['event_id', 'integer'],
        ['state', 'varchar(16)'],
        ['attempts', 'integer'],
        ['next_attempt_at', 'datetime'],
        ['lease_until', 'datetime'],
        ['created_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['webhook_id', 'bigint unsigned'],
        ['event_id', 'bigint unsigned'],
        ['state', 'varchar(16)'],
        ['attempts', 'int unsigned'],
        ['next_attempt_at', 'datetime(3)'],
        ['lease_until', 'datetime(3)'],
        ['created_at', 'datetime(3)'],
      ],
    },
    nullable: ['lease_until'],
    defaults: {},
    indexes: [
      { name: 'idx_webhook_deliveries_state_next', columns: ['state', 'next_attempt_at'], unique: false },
      { name: 'uq_webhook_deliveries_webhook_event', columns: ['webhook_id', 'event_id'], unique: true },
    ],
  },
  webhook_attempts: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['delivery_id', 'integer'],
        ['webhook_id', 'integer'],
        ['event_id', 'integer'],
        ['attempt', 'integer'],
        ['started_at', 'datetime'],
        ['status_code', 'integer'],
        ['error', 'varchar(500)'],
        ['duration_ms', 'integer'],
        ['next_retry_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['delivery_id', 'bigint unsigned'],
        ['webhook_id', 'bigint unsigned'],
        ['event_id', 'bigint unsigned'],
        ['attempt', 'int unsigned'],
        ['started_at', 'datetime(3)'],
        ['status_code', 'smallint unsigned'],
        ['error', 'varchar(500)'],
        ['duration_ms', 'int unsigned'],
        ['next_retry_at', 'datetime(3)'],
      ],
    },
    nullable: ['status_code', 'error', 'next_retry_at'],
    defaults: {},
    indexes: [{ name: 'idx_webhook_attempts_webhook_id', columns: ['webhook_id', 'id'], unique: false }],
  },
  webhook_dispatch: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['dispatched_through', 'integer'],
      ],
      mysql: [
        ['id', 'tinyint unsigned'],
        ['dispatched_through', 'bigint unsigned'],
      ],
    },
    nullable: [],
    defaults: {},
    indexes: [],
    autoIncrementId: false,
  },
};

/** The columns of posts once every migration has run. */
const ALL_POST_COLUMNS = EXPECTED_TABLES.posts.columns[dialect].map(([name]) => name);
/** The columns of posts as the first two migrations leave them, before version is added. */
const SECOND_MIGRATION_POST_COLUMNS = ALL_POST_COLUMNS.filter((name) => name !== 'version');
/** The columns of posts as the first migration alone creates them. */
const FIRST_MIGRATION_POST_COLUMNS = SECOND_MIGRATION_POST_COLUMNS.filter((name) => name !== 'owner_id');

interface OpenOptions {
  /** Replaces the service's list, to stand for a database deployed by an older release. */
  migrations?: Array<new () => MigrationInterface>;
  logging?: LoggerOptions;
}

/** A database as the release that shipped the first `migrations` migrations left it (not yet run). */
function openRelease(url: string, migrations: number): Promise<DataSource> {
  return openDataSource(url, { migrations: MIGRATION_CLASSES.slice(0, migrations) });
}

/** A data source exactly as the service and the TypeORM CLI build it, for driving migrations by hand. */
async function openDataSource(url: string, { migrations, logging }: OpenOptions = {}): Promise<DataSource> {
  const options = buildDataSourceOptions(parseDatabaseUrl(url, { poolSize: 2 }));
  const dataSource = new DataSource({
    ...options,
    migrations: migrations ?? options.migrations,
    entities: [Post, ApiKey, IdempotencyRecord, EventRecord, Webhook, WebhookDelivery, WebhookAttempt],
    // Only the logger differs: the service's logs every migration step, which would drown the test report.
    logger: 'simple-console',
    logging: logging ?? ['error', 'warn'],
  });
  return dataSource.initialize();
}

async function tableNames(dataSource: DataSource): Promise<string[]> {
  const sql =
    dialect === 'mysql'
      ? 'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()'
      : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
  const rows = await dataSource.query<Array<{ name: string }>>(sql);
  // Sorted here: information_schema's collation may place '_' after letters.
  return rows.map((row) => row.name).sort();
}

async function appliedMigrations(dataSource: DataSource): Promise<string[]> {
  const rows = await dataSource.query<Array<{ name: string }>>('SELECT name FROM migrations ORDER BY id');
  return rows.map((row) => row.name);
}

async function columnNames(dataSource: DataSource, table: TableName): Promise<string[]> {
  return (await describeTable(dataSource, table)).columns.map((column) => column.name);
}

/** Inserts posts with plain SQL, which works whatever columns the posts table has at the time. */
async function insertPostRows(dataSource: DataSource, titles: string[]): Promise<void> {
  for (const [index, title] of titles.entries()) {
    const timestamp = `2024-05-0${index + 1} 10:00:00.123`;
    await dataSource.query(
      'INSERT INTO posts (title, content, author, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      [title, `Content of ${title} ✓`, `author-${index}`, timestamp, timestamp],
    );
  }
}

/**
 * Appends `count` events as the service does: on SQLite the INSERT takes the next position (the
 * rowid); on MySQL the position is given here, after the last one, as the sequencer would.
 */
async function insertEventRows(dataSource: DataSource, count: number): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    const data = JSON.stringify({ post: { id: index + 1 } });
    if (dialect === 'sqlite') {
      await dataSource.query("INSERT INTO events (type, post_id, occurred_at, data) VALUES ('post.created', ?, ?, ?)", [
        index + 1,
        '2026-11-24 10:00:00.000',
        data,
      ]);
      continue;
    }
    await dataSource.query(
      "INSERT INTO events (position, type, post_id, occurred_at, data) SELECT IFNULL(MAX(position), 0) + 1, 'post.created', ?, ?, ? FROM events",
      [index + 1, '2026-11-24 10:00:00.000', data],
    );
  }
  // SQLite's last position is AUTOINCREMENT's counter; event_sequence.last_position stays behind.
  if (dialect === 'mysql') {
    await dataSource.query(
      'UPDATE event_sequence SET last_position = (SELECT IFNULL(MAX(position), 0) FROM events) WHERE id = 1',
    );
  }
}

async function selectEventRows(dataSource: DataSource): Promise<Array<Record<string, unknown>>> {
  return dataSource.query('SELECT id, position, type, post_id, occurred_at, data FROM events ORDER BY id');
}

/** Gives the posts with these titles an owner (the column exists from the second migration on). */
async function setPostOwner(dataSource: DataSource, ownerId: string, titles: string[]): Promise<void> {
  for (const title of titles) await dataSource.query('UPDATE posts SET owner_id = ? WHERE title = ?', [ownerId, title]);
}

async function selectPostRows(dataSource: DataSource, columns: string[]): Promise<Array<Record<string, unknown>>> {
  return dataSource.query(`SELECT ${columns.join(', ')} FROM posts ORDER BY id`);
}

async function describeTable(dataSource: DataSource, table: TableName): Promise<TableShape> {
  return dialect === 'mysql' ? describeMysqlTable(dataSource, table) : describeSqliteTable(dataSource, table);
}

async function describeSqliteTable(dataSource: DataSource, table: TableName): Promise<TableShape> {
  const [{ sql: ddl }] = await dataSource.query<Array<{ sql: string }>>(
    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
    [table],
  );
  const columns = await dataSource.query<
    Array<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>
  >(`PRAGMA table_xinfo("${table}")`);
  const indexList = await dataSource.query<Array<{ name: string; unique: number }>>(`PRAGMA index_list("${table}")`);
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
      default: column.dflt_value,
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

async function describeMysqlTable(dataSource: DataSource, table: TableName): Promise<TableShape> {
  const columns = await dataSource.query<
    Array<{
      COLUMN_NAME: string;
      COLUMN_TYPE: string;
      IS_NULLABLE: string;
      COLUMN_DEFAULT: string | null;
      EXTRA: string;
    }>
  >(
    `SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
    [table],
  );
  const indexParts = await dataSource.query<Array<{ INDEX_NAME: string; COLUMN_NAME: string; NON_UNIQUE: number }>>(
    `SELECT INDEX_NAME, COLUMN_NAME, NON_UNIQUE FROM information_schema.STATISTICS
     WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX`,
    [table],
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
      // MariaDB reports the implicit DEFAULT NULL of a nullable column as the word NULL (a string default is quoted).
      default: column.COLUMN_DEFAULT === 'NULL' ? null : column.COLUMN_DEFAULT,
      autoIncrement: column.EXTRA.toLowerCase().includes('auto_increment'),
    })),
    primaryKey: indexes.get('PRIMARY')?.columns ?? [],
    // Sorted here: information_schema's collation may place '_' after letters.
    indexes: [...indexes.values()]
      .filter((index) => index.name !== 'PRIMARY')
      .sort((left, right) => left.name.localeCompare(right.name)),
  };
}

/** The driver's code for a duplicate key in a UNIQUE index. */
const DUPLICATE_KEY_CODE = dialect === 'mysql' ? 'ER_DUP_ENTRY' : 'SQLITE_CONSTRAINT_UNIQUE';

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

    it('applies all six migrations in order, which create posts, api_keys, idempotency_keys, the events and the webhooks tables, and records them', async () => {
      expect(await tableNames(dataSource)).toEqual([]);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await columnNames(dataSource, 'posts')).toEqual(ALL_POST_COLUMNS);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await dataSource.showMigrations()).toBe(false);
    });

    it('reverts the four newest migrations: the webhooks and events tables, version and idempotency_keys are gone, api_keys, owner_id and the rows remain', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      await setPostOwner(dataSource, 'api-key:1', ['Kept one']);
      await dataSource.getRepository(ApiKey).insert({
        name: 'kept',
        tokenDigest: 'c'.repeat(64),
        tokenHint: 'abcd',
        scopes: 'posts:read',
        createdAt: new Date(),
      });
      const before = await selectPostRows(dataSource, SECOND_MIGRATION_POST_COLUMNS);

      for (let undone = 1; undone <= 4; undone += 1) await dataSource.undoLastMigration();

      expect(await tableNames(dataSource)).toEqual(['api_keys', 'migrations', 'posts']);
      expect(await columnNames(dataSource, 'posts')).toEqual(SECOND_MIGRATION_POST_COLUMNS);
      expect(await columnNames(dataSource, 'api_keys')).toEqual(
        EXPECTED_TABLES.api_keys.columns[dialect].map(([name]) => name),
      );
      expect(await selectPostRows(dataSource, SECOND_MIGRATION_POST_COLUMNS)).toEqual(before);
      expect(before).toHaveLength(2);
      expect(before.map((row) => row.owner_id)).toEqual(['api-key:1', null]);
      expect(await dataSource.getRepository(ApiKey).findBy({ name: 'kept' })).toHaveLength(1);
      expect(await appliedMigrations(dataSource)).toEqual([CREATE_POSTS, ADD_API_KEYS_AND_POST_OWNERS]);
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('reverts only the last migration: events keyed by id again, with their positions, data and the last position; applied again, keyed by position', async () => {
      await dataSource.runMigrations();
      await insertEventRows(dataSource, 3);
      await dataSource.query('DELETE FROM events WHERE position = 1');
      await dataSource.query('UPDATE event_sequence SET purged_through = 1 WHERE id = 1');
      const events = await selectEventRows(dataSource);

      await dataSource.undoLastMigration();

      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -1));
      expect(await selectEventRows(dataSource)).toEqual(events);
      expect(events.map((event) => event.position)).toEqual([2, 3]);
      const restored = await describeTable(dataSource, 'events');
      expect(restored.primaryKey).toEqual(['id']);
      expect(restored.indexes.map((index) => index.name)).toEqual([
        'idx_events_occurred_at',
        'idx_events_type_position',
        'uq_events_position',
      ]);
      expect(await dataSource.query('SELECT last_position, purged_through FROM event_sequence')).toEqual([
        { last_position: 3, purged_through: 1 },
      ]);
      if (dialect === 'sqlite') {
        // The earlier layout's own way: the position from event_sequence, kept in step by its trigger.
        await dataSource.query(
          'INSERT INTO events (position, type, post_id, occurred_at, data) ' +
            "VALUES ((SELECT last_position + 1 FROM event_sequence WHERE id = 1), 'post.created', 9, ?, '{}')",
          ['2026-11-24 10:00:00.000'],
        );
        expect(await dataSource.query('SELECT last_position FROM event_sequence')).toEqual([{ last_position: 4 }]);
      }

      expect((await dataSource.runMigrations()).map((migration) => migration.name)).toEqual([KEY_EVENTS_BY_POSITION]);
      const keyed = await describeTable(dataSource, 'events');
      expect(keyed.primaryKey).toEqual([onThisDatabase(EXPECTED_TABLES.events).key ?? 'id']);
      expect(keyed.indexes).toEqual(onThisDatabase(EXPECTED_TABLES.events).indexes);
      if (dialect === 'sqlite') {
        await insertEventRows(dataSource, 1);
        expect((await selectEventRows(dataSource)).map((event) => [event.id, event.position])).toEqual([
          [2, 2],
          [3, 3],
          [4, 4],
          [5, 5],
        ]);
      }
    });

    it('reverts the webhooks migration after the newest one: the webhooks tables are gone, every other table and row remains', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      const before = await selectPostRows(dataSource, ALL_POST_COLUMNS);

      await dataSource.undoLastMigration();
      await dataSource.undoLastMigration();

      expect(await tableNames(dataSource)).toEqual(TABLES_BEFORE_WEBHOOKS);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(before);
      expect(before).toHaveLength(2);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -2));
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('reverts the events migration after the two newer ones: events and event_sequence are gone, every other table and row remains', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      const before = await selectPostRows(dataSource, ALL_POST_COLUMNS);

      for (let undone = 1; undone <= 3; undone += 1) await dataSource.undoLastMigration();

      expect(await tableNames(dataSource)).toEqual(TABLES_BEFORE_EVENTS);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(before);
      expect(before).toHaveLength(2);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -3));
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('reverts the migrations newest first when undone six times: only the empty migrations table is left', async () => {
      await dataSource.runMigrations();

      const remaining: string[][] = [];
      for (let undone = 1; undone <= MIGRATIONS.length; undone += 1) {
        await dataSource.undoLastMigration();
        remaining.push(await appliedMigrations(dataSource));
      }

      expect(remaining).toEqual([
        [CREATE_POSTS, ADD_API_KEYS_AND_POST_OWNERS, ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS, ADD_EVENTS, ADD_WEBHOOKS],
        [CREATE_POSTS, ADD_API_KEYS_AND_POST_OWNERS, ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS, ADD_EVENTS],
        [CREATE_POSTS, ADD_API_KEYS_AND_POST_OWNERS, ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS],
        [CREATE_POSTS, ADD_API_KEYS_AND_POST_OWNERS],
        [CREATE_POSTS],
        [],
      ]);
      expect(await tableNames(dataSource)).toEqual(['migrations']);
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('applies the four newest migrations again after they were reverted, and gives the posts kept meanwhile version 1', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      for (let undone = 1; undone <= 4; undone += 1) await dataSource.undoLastMigration();
      const before = await selectPostRows(dataSource, SECOND_MIGRATION_POST_COLUMNS);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
        ADD_EVENTS,
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
      ]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await columnNames(dataSource, 'posts')).toEqual(ALL_POST_COLUMNS);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(before).toHaveLength(2);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(before.map((row) => ({ ...row, version: 1 })));
    });

    it('applies the events and webhooks migrations again after they were reverted: an empty feed at position 0', async () => {
      await dataSource.runMigrations();
      for (let undone = 1; undone <= 3; undone += 1) await dataSource.undoLastMigration();

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([ADD_EVENTS, ADD_WEBHOOKS, KEY_EVENTS_BY_POSITION]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await dataSource.query('SELECT COUNT(*) AS n FROM events')).toEqual([{ n: 0 }]);
      expect(await dataSource.query('SELECT id, last_position, purged_through FROM event_sequence')).toEqual([
        { id: 1, last_position: 0, purged_through: 0 },
      ]);
      expect(await dataSource.query('SELECT id, dispatched_through FROM webhook_dispatch')).toEqual([
        { id: 1, dispatched_through: 0 },
      ]);
    });

    it('applies all six migrations again after all were reverted', async () => {
      await dataSource.runMigrations();
      for (let undone = 1; undone <= MIGRATIONS.length; undone += 1) await dataSource.undoLastMigration();

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await columnNames(dataSource, 'posts')).toEqual(ALL_POST_COLUMNS);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
    });

    it('treats a second run as a no-op that leaves the tables and their rows alone', async () => {
      await dataSource.runMigrations();
      const now = new Date();
      await dataSource.getRepository(Post).insert({
        title: 'Kept',
        content: 'Still here',
        author: 'Ada',
        ownerId: 'api-key:1',
        version: 4,
        createdAt: now,
        updatedAt: now,
      });
      await dataSource.getRepository(ApiKey).insert({
        name: 'kept',
        tokenDigest: 'a'.repeat(64),
        tokenHint: 'abcd',
        scopes: 'posts:read',
        createdAt: now,
      });
      await dataSource.getRepository(IdempotencyRecord).insert({
        principalId: 'api-key:1',
        idempotencyKey: 'kept',
        requestDigest: 'd'.repeat(64),
        responseStatus: 201,
        responseBody: '{"id":1}',
        responseHeaders: '{}',
        lockedAt: now,
        expiresAt: new Date(now.getTime() + 86_400_000),
      });

      const applied = await dataSource.runMigrations();

      expect(applied).toEqual([]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await dataSource.getRepository(Post).findBy({ title: 'Kept' })).toMatchObject([
        { ownerId: 'api-key:1', version: 4 },
      ]);
      expect(await dataSource.getRepository(ApiKey).findBy({ name: 'kept' })).toHaveLength(1);
      expect(await dataSource.getRepository(IdempotencyRecord).findBy({ idempotencyKey: 'kept' })).toMatchObject([
        { principalId: 'api-key:1', responseStatus: 201, responseBody: '{"id":1}' },
      ]);
    });
  });

  describe('migrations on a database that already holds posts', () => {
    let directory: string;
    let database: TestDatabase;
    let dataSource: DataSource | undefined;

    beforeAll(() => {
      directory = mkdtempSync(join(tmpdir(), 'posts-schema-spec-'));
    });

    beforeEach(async () => {
      // A file, not :memory:, so that the posts outlive the data source of the older release.
      database = await createTestDatabase({ sqlitePath: join(directory, `${randomUUID()}.sqlite`) });
    });

    afterEach(async () => {
      if (dataSource?.isInitialized) await dataSource.destroy();
      await database?.drop();
    });

    afterAll(() => {
      rmSync(directory, { recursive: true, force: true });
    });

    it('applies the five newer migrations to posts of the first release: NULL owner_id, version 1', async () => {
      const olderRelease = await openRelease(database.url, 1);
      await olderRelease.runMigrations();
      await insertPostRows(olderRelease, ['First', 'Second', 'Third']);
      const before = await selectPostRows(olderRelease, FIRST_MIGRATION_POST_COLUMNS);
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_API_KEYS_AND_POST_OWNERS,
        ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
        ADD_EVENTS,
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
      ]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(before).toHaveLength(3);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({ ...row, owner_id: null, version: 1 })),
      );
      const posts = await dataSource.getRepository(Post).find({ order: { id: 'ASC' } });
      expect(posts.map((post) => [post.title, post.ownerId, post.version])).toEqual([
        ['First', null, 1],
        ['Second', null, 1],
        ['Third', null, 1],
      ]);
    });

    it('applies the four newest migrations to posts of the second release: owners kept, every post at version 1', async () => {
      const olderRelease = await openRelease(database.url, 2);
      await olderRelease.runMigrations();
      await insertPostRows(olderRelease, ['First', 'Second', 'Third']);
      await setPostOwner(olderRelease, 'api-key:7', ['First', 'Third']);
      const before = await selectPostRows(olderRelease, SECOND_MIGRATION_POST_COLUMNS);
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
        ADD_EVENTS,
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
      ]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(before).toHaveLength(3);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(before.map((row) => ({ ...row, version: 1 })));
      const posts = await dataSource.getRepository(Post).find({ order: { id: 'ASC' } });
      expect(posts.map((post) => [post.title, post.ownerId, post.version])).toEqual([
        ['First', 'api-key:7', 1],
        ['Second', null, 1],
        ['Third', 'api-key:7', 1],
      ]);
    });

    it('applies the events and webhooks migrations to a database of the third release: posts and versions kept, no events made up', async () => {
      const olderRelease = await openRelease(database.url, 3);
      await olderRelease.runMigrations();
      await insertPostRows(olderRelease, ['First', 'Second']);
      await olderRelease.query('UPDATE posts SET version = 5 WHERE title = ?', ['Second']);
      const before = await selectPostRows(olderRelease, ALL_POST_COLUMNS);
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([ADD_EVENTS, ADD_WEBHOOKS, KEY_EVENTS_BY_POSITION]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(before);
      expect(before.map((row) => row.version)).toEqual([1, 5]);
      expect(await dataSource.query('SELECT COUNT(*) AS n FROM events')).toEqual([{ n: 0 }]);
    });

    it('applies the webhooks migration to a database of the fourth release: fan-out starts after its newest event', async () => {
      const olderRelease = await openRelease(database.url, 4);
      await olderRelease.runMigrations();
      await olderRelease.query('UPDATE event_sequence SET last_position = 42 WHERE id = 1');
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([ADD_WEBHOOKS, KEY_EVENTS_BY_POSITION]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      // Webhooks created after the upgrade receive the events after it, never the 42 before.
      expect(await dataSource.query('SELECT id, dispatched_through FROM webhook_dispatch')).toEqual([
        { id: 1, dispatched_through: 42 },
      ]);
    });

    it('keys the events of a database of the fifth release by position: positions, data and the retention mark kept, an unnumbered event numbered after them, a removed position never handed out again', async () => {
      const olderRelease = await openRelease(database.url, 5);
      await olderRelease.runMigrations();
      // Events 1-3 numbered (1 and 2 since removed by retention, 5 handed out before them), and one
      // that its writer committed but never numbered.
      for (const [position, postId] of [
        [3, 30],
        [null, 40],
      ]) {
        await olderRelease.query(
          "INSERT INTO events (position, type, post_id, occurred_at, data) VALUES (?, 'post.updated', ?, ?, ?)",
          [position, postId, '2026-11-24 10:00:00.000', JSON.stringify({ post: { id: postId } })],
        );
      }
      await olderRelease.query('UPDATE event_sequence SET last_position = 3, purged_through = 2 WHERE id = 1');
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([KEY_EVENTS_BY_POSITION]);
      expect(await dataSource.query('SELECT purged_through FROM event_sequence')).toEqual([{ purged_through: 2 }]);
      const events = await selectEventRows(dataSource);
      expect(events.map((event) => [event.position, event.post_id, event.data])).toEqual([
        [3, 30, '{"post":{"id":30}}'],
        // MySQL numbers it after the commit, as before (the sequencer); SQLite here.
        [dialect === 'sqlite' ? 4 : null, 40, '{"post":{"id":40}}'],
      ]);
      if (dialect === 'sqlite') {
        await dataSource.query('DELETE FROM events');
        await insertEventRows(dataSource, 1);
        expect((await selectEventRows(dataSource)).map((event) => event.position)).toEqual([5]);
      }
    });
  });
  for (const [table, everywhere] of Object.entries(EXPECTED_TABLES) as Array<[TableName, ExpectedTable]>) {
    const expected = onThisDatabase(everywhere);
    describe(`the migrated ${table} table`, () => {
      let database: TestDatabase;
      let dataSource: DataSource;
      let shape: TableShape;

      beforeAll(async () => {
        database = await createTestDatabase();
        dataSource = await openDataSource(database.url);
        await dataSource.runMigrations();
        shape = await describeTable(dataSource, table);
      });

      afterAll(async () => {
        if (dataSource?.isInitialized) await dataSource.destroy();
        await database?.drop();
      });

      it(`has exactly the expected columns, in order, with the ${dialect} types`, () => {
        expect(shape.columns.map((column) => [column.name, column.type])).toEqual(expected.columns[dialect]);
      });

      it(`declares every column NOT NULL except ${expected.nullable.join(', ')}`, () => {
        expect(shape.columns.filter((column) => column.nullable).map((column) => column.name)).toEqual(
          expected.nullable,
        );
      });

      const defaults = Object.entries(expected.defaults);
      const defaultsTitle =
        defaults.length === 0
          ? 'gives no column a default'
          : `gives ${defaults.map(([name, value]) => `${name} the default ${value}`).join(', ')} and no other column a default`;
      it(defaultsTitle, () => {
        expect(
          Object.fromEntries(
            shape.columns.filter((column) => column.default !== null).map((column) => [column.name, column.default]),
          ),
        ).toEqual(expected.defaults);
      });

      const autoIncrementId = expected.autoIncrementId ?? true;
      const key = expected.key ?? 'id';
      it(
        autoIncrementId
          ? `makes ${key} the auto-incrementing primary key, and no other column auto-increments`
          : `makes ${key} the primary key, and no column auto-increments`,
        () => {
          expect(shape.primaryKey).toEqual([key]);
          expect(shape.columns.filter((column) => column.autoIncrement).map((column) => column.name)).toEqual(
            autoIncrementId ? [key] : [],
          );
        },
      );

      const indexNames = expected.indexes.map((index) => index.name).join(' and ');
      it(
        expected.indexes.length === 0
          ? 'has no secondary index'
          : `has ${indexNames} as its only secondary index${expected.indexes.length > 1 ? 'es' : ''}`,
        () => {
          expect(shape.indexes).toEqual(expected.indexes);
        },
      );
    });
  }

  describe('the api_keys table', () => {
    const migrated = useMigratedDatabase();

    it('refuses a second key with the same token digest', async () => {
      const repository = migrated.dataSource.getRepository(ApiKey);
      const key = { tokenHint: 'abcd', scopes: 'posts:read', createdAt: new Date() };
      await repository.insert({ ...key, name: 'first', tokenDigest: 'b'.repeat(64) });

      const duplicate = repository.insert({ ...key, name: 'second', tokenDigest: 'b'.repeat(64) });

      await expect(duplicate).rejects.toMatchObject({ driverError: { code: DUPLICATE_KEY_CODE } });
      expect(await repository.countBy({ tokenDigest: 'b'.repeat(64) })).toBe(1);
    });
  });

  describe('the idempotency_keys table', () => {
    const migrated = useMigratedDatabase();

    const record = (principalId: string, idempotencyKey: string) => {
      const now = new Date();
      return {
        principalId,
        idempotencyKey,
        requestDigest: 'e'.repeat(64),
        lockedAt: now,
        expiresAt: new Date(now.getTime() + 86_400_000),
      };
    };

    it('refuses a second record with the same principal and key', async () => {
      const repository = migrated.dataSource.getRepository(IdempotencyRecord);
      await repository.insert(record('api-key:1', 'same-key'));

      const duplicate = repository.insert(record('api-key:1', 'same-key'));

      await expect(duplicate).rejects.toMatchObject({ driverError: { code: DUPLICATE_KEY_CODE } });
      expect(await repository.countBy({ principalId: 'api-key:1', idempotencyKey: 'same-key' })).toBe(1);
    });

    it('accepts the same key from another principal, and another key from the same principal', async () => {
      const repository = migrated.dataSource.getRepository(IdempotencyRecord);
      await repository.insert(record('api-key:2', 'shared-key'));

      await repository.insert(record('oauth:someone', 'shared-key'));
      await repository.insert(record('api-key:2', 'other-key'));

      expect(await repository.countBy({ idempotencyKey: 'shared-key' })).toBe(2);
      expect(await repository.countBy({ principalId: 'api-key:2' })).toBe(2);
    });

    it('leaves the response columns NULL while the first request is still running', async () => {
      const repository = migrated.dataSource.getRepository(IdempotencyRecord);
      await repository.insert(record('api-key:3', 'in-flight'));

      const [stored] = await repository.findBy({ principalId: 'api-key:3', idempotencyKey: 'in-flight' });

      expect(stored).toMatchObject({ responseStatus: null, responseBody: null, responseHeaders: null });
    });
  });

  describe('the running application', () => {
    const context = useTestApp();

    it('never synchronizes the schema from the entities and applies migrations on start instead', async () => {
      const { options } = context.app.dataSource;

      expect(options.synchronize).toBe(false);
      expect(options.migrationsRun).toBe(true);
      expect(await appliedMigrations(context.app.dataSource)).toEqual(MIGRATIONS);
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

/** A fresh database with every migration applied, for the tests of one describe block. */
function useMigratedDatabase(): { readonly dataSource: DataSource } {
  let database: TestDatabase | undefined;
  let dataSource: DataSource | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    // Not 'error': the duplicate keys these tests provoke on purpose would be logged as failed queries.
    dataSource = await openDataSource(database.url, { logging: ['warn'] });
    await dataSource.runMigrations();
  });
  afterAll(async () => {
    if (dataSource?.isInitialized) await dataSource.destroy();
    await database?.drop();
  });
  return {
    get dataSource(): DataSource {
      if (!dataSource) throw new Error('the migrated database is not ready');
      return dataSource;
    },
  };
}
