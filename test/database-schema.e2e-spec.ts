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
import { PostRevision } from '../src/posts/post-revision.entity.js';
import { Post, type PostStatus } from '../src/posts/post.entity.js';
import { TrashedPost } from '../src/posts/trashed-post.entity.js';
import { interleavedAuthors, seedPosts } from './factories/seed-posts.js';
import { captureListSql, LISTING_ADMIN } from './helpers/list-query-sql.js';
import { effectiveScopes, Scope, type Principal } from '../src/auth/principal.js';
import type { PageQuery } from '../src/posts/dto/list-posts-query.dto.js';
import { PostsService } from '../src/posts/posts.service.js';
import { createTestDatabase, dialect, type TestDatabase } from './helpers/test-database.js';
import { useTestApp } from './helpers/use-test-app.js';

const CREATE_POSTS = 'CreatePosts1795000000000';
const ADD_API_KEYS_AND_POST_OWNERS = 'AddApiKeysAndPostOwners1795000100000';
const ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS = 'AddPostVersionsAndIdempotencyKeys1795000200000';
const ADD_EVENTS = 'AddEvents1795000300000';
const ADD_WEBHOOKS = 'AddWebhooks1795000400000';
const KEY_EVENTS_BY_POSITION = 'KeyEventsByPosition1795000500000';
const ADD_EDITORIAL_LIFE = 'AddEditorialLife1795000600000';
/** Every migration, in the order they apply. */
const MIGRATIONS = [
  CREATE_POSTS,
  ADD_API_KEYS_AND_POST_OWNERS,
  ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
  ADD_EVENTS,
  ADD_WEBHOOKS,
  KEY_EVENTS_BY_POSITION,
  ADD_EDITORIAL_LIFE,
];
/** Every table the migrations create, in name order (as tableNames returns them), with the migrations table. */
const ALL_TABLES = [
  'api_keys',
  'event_sequence',
  'events',
  'idempotency_keys',
  'migrations',
  'post_revisions',
  'posts',
  'posts_trash',
  'webhook_attempts',
  'webhook_deliveries',
  'webhook_dispatch',
  'webhooks',
];
/** The tables before the editorial-life migration (revisions and trash). */
const TABLES_BEFORE_EDITORIAL_LIFE = ALL_TABLES.filter((name) => name !== 'post_revisions' && name !== 'posts_trash');
/** The tables before the webhooks migration. */
const TABLES_BEFORE_WEBHOOKS = ['api_keys', 'event_sequence', 'events', 'idempotency_keys', 'migrations', 'posts'];
/** The tables before the events migration. */
const TABLES_BEFORE_EVENTS = ['api_keys', 'idempotency_keys', 'migrations', 'posts'];

type TableName =
  | 'posts'
  | 'post_revisions'
  | 'posts_trash'
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
  /** The condition of a partial index (SQLite only), as written in its CREATE INDEX. */
  where?: string;
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
        ['status', 'varchar(9)'],
        ['published_at', 'datetime'],
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
        ['status', 'varchar(9)'],
        ['published_at', 'datetime(3)'],
      ],
    },
    // owner_id: NULL for posts that predate ownership; published_at: NULL for a draft.
    nullable: ['owner_id', 'published_at'],
    // Every post, including those that predate versions, starts at version 1; every post that
    // predates the editorial life is published.
    defaults: { version: '1', status: "'published'" },
    // The list's keyset indexes, one per filter, each led by the status; and the due scheduled posts.
    indexes: [
      { name: 'idx_posts_author_status_id', columns: ['author', 'status', 'id'], unique: false },
      { name: 'idx_posts_owner_status_id', columns: ['owner_id', 'status', 'id'], unique: false },
      { name: 'idx_posts_scheduled', columns: ['status', 'published_at'], unique: false },
      { name: 'idx_posts_status_id', columns: ['status', 'id'], unique: false },
    ],
    only: {
      // Partial: only the scheduled posts are in it (MySQL has no partial index).
      sqlite: {
        indexes: [
          { name: 'idx_posts_author_status_id', columns: ['author', 'status', 'id'], unique: false },
          {
            name: 'idx_posts_owner_status_id',
            columns: ['owner_id', 'status', 'id'],
            unique: false,
            where: `"status" <> 'published'`,
          },
          { name: 'idx_posts_scheduled', columns: ['published_at'], unique: false, where: `"status" = 'scheduled'` },
          { name: 'idx_posts_status_id', columns: ['status', 'id'], unique: false },
        ],
      },
    },
  },
  post_revisions: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['post_id', 'integer'],
        ['version', 'integer'],
        ['title', 'varchar(200)'],
        ['content', 'text'],
        ['author', 'varchar(100)'],
        ['status', 'varchar(9)'],
        ['published_at', 'datetime'],
        ['revised_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['post_id', 'bigint unsigned'],
        ['version', 'int unsigned'],
        ['title', 'varchar(200)'],
        ['content', 'mediumtext'],
        ['author', 'varchar(100)'],
        ['status', 'varchar(9)'],
        ['published_at', 'datetime(3)'],
        ['revised_at', 'datetime(3)'],
      ],
    },
    nullable: ['published_at'],
    defaults: {},
    indexes: [{ name: 'uq_post_revisions_post_version', columns: ['post_id', 'version'], unique: true }],
  },
  posts_trash: {
    columns: {
      sqlite: [
        ['id', 'integer'],
        ['title', 'varchar(200)'],
        ['content', 'text'],
        ['author', 'varchar(100)'],
        ['owner_id', 'varchar(300)'],
        ['version', 'integer'],
        ['status', 'varchar(9)'],
        ['published_at', 'datetime'],
        ['created_at', 'datetime'],
        ['updated_at', 'datetime'],
        ['deleted_at', 'datetime'],
      ],
      mysql: [
        ['id', 'bigint unsigned'],
        ['title', 'varchar(200)'],
        ['content', 'mediumtext'],
        ['author', 'varchar(100)'],
        ['owner_id', 'varchar(300)'],
        ['version', 'int unsigned'],
        ['status', 'varchar(9)'],
        ['published_at', 'datetime(3)'],
        ['created_at', 'datetime(3)'],
        ['updated_at', 'datetime(3)'],
        ['deleted_at', 'datetime(3)'],
      ],
    },
    nullable: ['owner_id', 'published_at'],
    defaults: {},
    indexes: [
      { name: 'idx_posts_trash_deleted_at', columns: ['deleted_at', 'id'], unique: false },
      { name: 'idx_posts_trash_owner_id', columns: ['owner_id', 'id'], unique: false },
    ],
    // The post's own id, kept for a restore.
    autoIncrementId: false,
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
/** The columns of posts as the first six migrations leave them, before status and published_at are added. */
const SIXTH_MIGRATION_POST_COLUMNS = ALL_POST_COLUMNS.filter((name) => name !== 'status' && name !== 'published_at');
/** The columns of posts as the first two migrations leave them, before version is added. */
const SECOND_MIGRATION_POST_COLUMNS = SIXTH_MIGRATION_POST_COLUMNS.filter((name) => name !== 'version');
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
    entities: [
      Post,
      PostRevision,
      TrashedPost,
      ApiKey,
      IdempotencyRecord,
      EventRecord,
      Webhook,
      WebhookDelivery,
      WebhookAttempt,
    ],
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

/** Inserts a post in a state of the editorial life (the columns exist from the seventh migration on). */
async function insertPostRowWithStatus(
  dataSource: DataSource,
  title: string,
  status: PostStatus,
  publishedAt: string | null,
): Promise<void> {
  const timestamp = '2026-11-24 10:00:00.123';
  await dataSource.query(
    'INSERT INTO posts (title, content, author, created_at, updated_at, status, published_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    [title, `Content of ${title}`, 'Ada', timestamp, timestamp, status, publishedAt],
  );
}

function buildRevision(overrides: Partial<PostRevision> = {}): Omit<PostRevision, 'id'> {
  return {
    postId: 1,
    version: 1,
    title: 'Before the edit',
    content: 'The content before the edit',
    author: 'Ada',
    status: 'published',
    publishedAt: new Date('2026-11-20T10:00:00.000Z'),
    revisedAt: new Date('2026-11-24T10:00:00.000Z'),
    ...overrides,
  };
}

function buildTrashedPost(overrides: Partial<TrashedPost> = {}): TrashedPost {
  return {
    id: 1,
    title: 'Deleted',
    content: 'The content of a deleted post',
    author: 'Ada',
    ownerId: 'api-key:1',
    version: 2,
    status: 'draft',
    publishedAt: null,
    createdAt: new Date('2026-11-20T10:00:00.000Z'),
    updatedAt: new Date('2026-11-20T10:00:00.000Z'),
    deletedAt: new Date('2026-11-24T10:00:00.000Z'),
    ...overrides,
  };
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
  const indexList = await dataSource.query<Array<{ name: string; unique: number; partial: number }>>(
    `PRAGMA index_list("${table}")`,
  );
  const indexes: IndexShape[] = [];
  for (const index of indexList) {
    const parts = await dataSource.query<Array<{ seqno: number; name: string }>>(`PRAGMA index_info("${index.name}")`);
    indexes.push({
      name: index.name,
      columns: parts.sort((left, right) => left.seqno - right.seqno).map((part) => part.name),
      unique: index.unique === 1,
      ...(index.partial === 1 && { where: await partialIndexCondition(dataSource, index.name) }),
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

/** The WHERE of a partial index: no PRAGMA reports it, only the CREATE INDEX kept in sqlite_master. */
async function partialIndexCondition(dataSource: DataSource, index: string): Promise<string> {
  const [{ sql }] = await dataSource.query<Array<{ sql: string }>>(
    "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?",
    [index],
  );
  const condition = /\bWHERE\s+([\s\S]+)$/i.exec(sql)?.[1];
  if (condition === undefined) throw new Error(`no WHERE in the partial index ${index}: ${sql}`);
  return condition.trim();
}

async function describeMysqlTable(dataSource: DataSource, table: TableName): Promise<TableShape> {
  const columns = await dataSource.query<
    Array<{
      COLUMN_NAME: string;
      DATA_TYPE: string;
      COLUMN_TYPE: string;
      IS_NULLABLE: string;
      COLUMN_DEFAULT: string | null;
      EXTRA: string;
    }>
  >(
    `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS
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
      default: reportedDefault(column),
      autoIncrement: column.EXTRA.toLowerCase().includes('auto_increment'),
    })),
    primaryKey: indexes.get('PRIMARY')?.columns ?? [],
    // Sorted here: information_schema's collation may place '_' after letters.
    indexes: [...indexes.values()]
      .filter((index) => index.name !== 'PRIMARY')
      .sort((left, right) => left.name.localeCompare(right.name)),
  };
}

/**
 * A MySQL column's default as MariaDB and SQLite report it. MariaDB reports the implicit DEFAULT NULL
 * of a nullable column as the word NULL, and a string default quoted; MySQL 8 reports a string
 * default bare, so it is quoted here.
 */
function reportedDefault(column: { DATA_TYPE: string; COLUMN_DEFAULT: string | null }): string | null {
  const value = column.COLUMN_DEFAULT;
  if (value === null || value === 'NULL') return null;
  return /char|text/i.test(column.DATA_TYPE) && !value.startsWith("'") ? `'${value}'` : value;
}

/** The driver's code for a duplicate key in a UNIQUE index. */
const DUPLICATE_KEY_CODE = dialect === 'mysql' ? 'ER_DUP_ENTRY' : 'SQLITE_CONSTRAINT_UNIQUE';
/** The driver's code for a duplicate primary key. */
const DUPLICATE_PRIMARY_KEY_CODE = dialect === 'mysql' ? 'ER_DUP_ENTRY' : 'SQLITE_CONSTRAINT_PRIMARYKEY';

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

    it('applies all seven migrations in order, which create posts, api_keys, idempotency_keys, the events, the webhooks, the revisions and the trash tables, and records them', async () => {
      expect(await tableNames(dataSource)).toEqual([]);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await columnNames(dataSource, 'posts')).toEqual(ALL_POST_COLUMNS);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await dataSource.showMigrations()).toBe(false);
    });

    it('reverts the editorial-life migration: posts keep their rows and columns of the sixth release, the trash and revisions are gone', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      await setPostOwner(dataSource, 'api-key:1', ['Kept two']);
      await dataSource.query('UPDATE posts SET version = 3 WHERE title = ?', ['Kept one']);
      await dataSource.getRepository(TrashedPost).insert(buildTrashedPost({ id: 99 }));
      await dataSource.getRepository(PostRevision).insert(buildRevision({ postId: 1 }));
      const before = await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS);

      await dataSource.undoLastMigration();

      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -1));
      expect(await tableNames(dataSource)).toEqual(TABLES_BEFORE_EDITORIAL_LIFE);
      const posts = await describeTable(dataSource, 'posts');
      expect(posts.columns.map((column) => [column.name, column.type])).toEqual(
        EXPECTED_TABLES.posts.columns[dialect].filter(([name]) => SIXTH_MIGRATION_POST_COLUMNS.includes(name)),
      );
      expect(posts.columns.filter((column) => column.default !== null).map((column) => column.name)).toEqual([
        'version',
      ]);
      expect(posts.indexes).toEqual([{ name: 'idx_posts_author_id', columns: ['author', 'id'], unique: false }]);
      expect(await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS)).toEqual(before);
      expect(before.map((row) => [row.title, row.owner_id, row.version])).toEqual([
        ['Kept one', null, 3],
        ['Kept two', 'api-key:1', 1],
      ]);
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('applies the editorial-life migration again after it was reverted: the posts kept meanwhile published at their creation, an empty trash and no revisions', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      await dataSource.getRepository(TrashedPost).insert(buildTrashedPost({ id: 99 }));
      await dataSource.getRepository(PostRevision).insert(buildRevision({ postId: 1 }));
      await dataSource.undoLastMigration();
      const before = await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([ADD_EDITORIAL_LIFE]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await columnNames(dataSource, 'posts')).toEqual(ALL_POST_COLUMNS);
      expect((await describeTable(dataSource, 'posts')).indexes).toEqual(onThisDatabase(EXPECTED_TABLES.posts).indexes);
      expect(before).toHaveLength(2);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({ ...row, status: 'published', published_at: row.created_at })),
      );
      expect(await dataSource.getRepository(TrashedPost).count()).toBe(0);
      expect(await dataSource.getRepository(PostRevision).count()).toBe(0);
    });

    it('refuses to revert the editorial-life migration while a draft or a scheduled post exists, and changes nothing', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Published']);
      await insertPostRowWithStatus(dataSource, 'Draft', 'draft', null);
      await insertPostRowWithStatus(dataSource, 'Scheduled', 'scheduled', '2099-01-01 09:00:00.000');
      await dataSource.getRepository(TrashedPost).insert(buildTrashedPost({ id: 99 }));
      await dataSource.getRepository(PostRevision).insert(buildRevision({ postId: 1 }));
      const before = await selectPostRows(dataSource, ALL_POST_COLUMNS);
      const shape = await describeTable(dataSource, 'posts');

      const reverted = dataSource.undoLastMigration();

      await expect(reverted).rejects.toThrow(
        new Error(
          '2 draft or scheduled posts would become public if this migration were reverted; publish or delete them first',
        ),
      );
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await describeTable(dataSource, 'posts')).toEqual(shape);
      expect(shape.columns.map((column) => column.name)).toEqual(ALL_POST_COLUMNS);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(before);
      expect(before.map((row) => [row.title, row.status])).toEqual([
        ['Published', 'published'],
        ['Draft', 'draft'],
        ['Scheduled', 'scheduled'],
      ]);
      expect(await dataSource.getRepository(TrashedPost).count()).toBe(1);
      expect(await dataSource.getRepository(PostRevision).count()).toBe(1);
      // A scheduled post alone is refused too: it is not public yet either.
      await dataSource.query('DELETE FROM posts WHERE title = ?', ['Draft']);
      await expect(dataSource.undoLastMigration()).rejects.toThrow(
        new Error(
          '1 draft or scheduled posts would become public if this migration were reverted; publish or delete them first',
        ),
      );
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
    });

    it('reverts the five newest migrations: the trash and revisions tables, status and published_at, the webhooks and events tables, version and idempotency_keys are gone, api_keys, owner_id and the rows remain', async () => {
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

      for (let undone = 1; undone <= 5; undone += 1) await dataSource.undoLastMigration();

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

    it('reverts the key-events-by-position migration after the newest one: events keyed by id again, with their positions, data and the last position; applied again, keyed by position', async () => {
      await dataSource.runMigrations();
      await insertEventRows(dataSource, 3);
      await dataSource.query('DELETE FROM events WHERE position = 1');
      await dataSource.query('UPDATE event_sequence SET purged_through = 1 WHERE id = 1');
      const events = await selectEventRows(dataSource);

      await dataSource.undoLastMigration();
      await dataSource.undoLastMigration();

      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -2));
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

      expect((await dataSource.runMigrations()).map((migration) => migration.name)).toEqual([
        KEY_EVENTS_BY_POSITION,
        ADD_EDITORIAL_LIFE,
      ]);
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

    it('reverts the webhooks migration after the two newer ones: the webhooks tables are gone, every other table and row remains', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      const before = await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS);

      for (let undone = 1; undone <= 3; undone += 1) await dataSource.undoLastMigration();

      expect(await tableNames(dataSource)).toEqual(TABLES_BEFORE_WEBHOOKS);
      expect(await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS)).toEqual(before);
      expect(before).toHaveLength(2);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -3));
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('reverts the events migration after the three newer ones: events and event_sequence are gone, every other table and row remains', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      const before = await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS);

      for (let undone = 1; undone <= 4; undone += 1) await dataSource.undoLastMigration();

      expect(await tableNames(dataSource)).toEqual(TABLES_BEFORE_EVENTS);
      expect(await selectPostRows(dataSource, SIXTH_MIGRATION_POST_COLUMNS)).toEqual(before);
      expect(before).toHaveLength(2);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS.slice(0, -4));
      expect(await dataSource.showMigrations()).toBe(true);
    });

    it('reverts the migrations newest first when undone seven times: only the empty migrations table is left', async () => {
      await dataSource.runMigrations();

      const remaining: string[][] = [];
      for (let undone = 1; undone <= MIGRATIONS.length; undone += 1) {
        await dataSource.undoLastMigration();
        remaining.push(await appliedMigrations(dataSource));
      }

      expect(remaining).toEqual([
        [
          CREATE_POSTS,
          ADD_API_KEYS_AND_POST_OWNERS,
          ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
          ADD_EVENTS,
          ADD_WEBHOOKS,
          KEY_EVENTS_BY_POSITION,
        ],
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

    it('applies the five newest migrations again after they were reverted, and gives the posts kept meanwhile version 1, published at their creation', async () => {
      await dataSource.runMigrations();
      await insertPostRows(dataSource, ['Kept one', 'Kept two']);
      for (let undone = 1; undone <= 5; undone += 1) await dataSource.undoLastMigration();
      const before = await selectPostRows(dataSource, SECOND_MIGRATION_POST_COLUMNS);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_POST_VERSIONS_AND_IDEMPOTENCY_KEYS,
        ADD_EVENTS,
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
        ADD_EDITORIAL_LIFE,
      ]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await columnNames(dataSource, 'posts')).toEqual(ALL_POST_COLUMNS);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(before).toHaveLength(2);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({ ...row, version: 1, status: 'published', published_at: row.created_at })),
      );
    });

    it('applies the events and webhooks migrations again after they were reverted: an empty feed at position 0', async () => {
      await dataSource.runMigrations();
      for (let undone = 1; undone <= 4; undone += 1) await dataSource.undoLastMigration();

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_EVENTS,
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
        ADD_EDITORIAL_LIFE,
      ]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await dataSource.query('SELECT COUNT(*) AS n FROM events')).toEqual([{ n: 0 }]);
      expect(await dataSource.query('SELECT id, last_position, purged_through FROM event_sequence')).toEqual([
        { id: 1, last_position: 0, purged_through: 0 },
      ]);
      expect(await dataSource.query('SELECT id, dispatched_through FROM webhook_dispatch')).toEqual([
        { id: 1, dispatched_through: 0 },
      ]);
    });

    it('applies all seven migrations again after all were reverted', async () => {
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
        status: 'draft',
        publishedAt: null,
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
        { ownerId: 'api-key:1', version: 4, status: 'draft', publishedAt: null },
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

    it('applies the six newer migrations to posts of the first release: NULL owner_id, version 1, published at their creation', async () => {
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
        ADD_EDITORIAL_LIFE,
      ]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(before).toHaveLength(3);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({
          ...row,
          owner_id: null,
          version: 1,
          status: 'published',
          published_at: row.created_at,
        })),
      );
      const posts = await dataSource.getRepository(Post).find({ order: { id: 'ASC' } });
      expect(posts.map((post) => [post.title, post.ownerId, post.version, post.status])).toEqual([
        ['First', null, 1, 'published'],
        ['Second', null, 1, 'published'],
        ['Third', null, 1, 'published'],
      ]);
      expect(posts.map((post) => post.publishedAt)).toEqual(posts.map((post) => post.createdAt));
    });

    it('applies the five newest migrations to posts of the second release: owners kept, every post at version 1 and published at its creation', async () => {
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
        ADD_EDITORIAL_LIFE,
      ]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(before).toHaveLength(3);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({ ...row, version: 1, status: 'published', published_at: row.created_at })),
      );
      const posts = await dataSource.getRepository(Post).find({ order: { id: 'ASC' } });
      expect(posts.map((post) => [post.title, post.ownerId, post.version, post.status])).toEqual([
        ['First', 'api-key:7', 1, 'published'],
        ['Second', null, 1, 'published'],
        ['Third', 'api-key:7', 1, 'published'],
      ]);
    });

    it('applies the events and webhooks migrations to a database of the third release: posts and versions kept, no events made up', async () => {
      const olderRelease = await openRelease(database.url, 3);
      await olderRelease.runMigrations();
      await insertPostRows(olderRelease, ['First', 'Second']);
      await olderRelease.query('UPDATE posts SET version = 5 WHERE title = ?', ['Second']);
      const before = await selectPostRows(olderRelease, SIXTH_MIGRATION_POST_COLUMNS);
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_EVENTS,
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
        ADD_EDITORIAL_LIFE,
      ]);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({ ...row, status: 'published', published_at: row.created_at })),
      );
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

      expect(applied.map((migration) => migration.name)).toEqual([
        ADD_WEBHOOKS,
        KEY_EVENTS_BY_POSITION,
        ADD_EDITORIAL_LIFE,
      ]);
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

      expect(applied.map((migration) => migration.name)).toEqual([KEY_EVENTS_BY_POSITION, ADD_EDITORIAL_LIFE]);
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

    it('applies the editorial-life migration to a database of the sixth release: every post published with publishedAt = createdAt, no revisions, an empty trash', async () => {
      const olderRelease = await openRelease(database.url, 6);
      await olderRelease.runMigrations();
      await insertPostRows(olderRelease, ['First', 'Second', 'Third']);
      await setPostOwner(olderRelease, 'api-key:7', ['Second']);
      await olderRelease.query('UPDATE posts SET version = 4 WHERE title = ?', ['Third']);
      const before = await selectPostRows(olderRelease, SIXTH_MIGRATION_POST_COLUMNS);
      await olderRelease.destroy();
      dataSource = await openDataSource(database.url);

      const applied = await dataSource.runMigrations();

      expect(applied.map((migration) => migration.name)).toEqual([ADD_EDITORIAL_LIFE]);
      expect(await appliedMigrations(dataSource)).toEqual(MIGRATIONS);
      expect(await tableNames(dataSource)).toEqual(ALL_TABLES);
      expect(before).toHaveLength(3);
      expect(await selectPostRows(dataSource, ALL_POST_COLUMNS)).toEqual(
        before.map((row) => ({ ...row, status: 'published', published_at: row.created_at })),
      );
      const posts = await dataSource.getRepository(Post).find({ order: { id: 'ASC' } });
      expect(posts.map((post) => [post.title, post.ownerId, post.version, post.status])).toEqual([
        ['First', null, 1, 'published'],
        ['Second', 'api-key:7', 1, 'published'],
        ['Third', null, 4, 'published'],
      ]);
      // Each its own: the three posts were created on three different days.
      expect(posts.map((post) => post.publishedAt)).toEqual(posts.map((post) => post.createdAt));
      expect(new Set(posts.map((post) => post.createdAt.getTime())).size).toBe(3);
      expect(await dataSource.getRepository(PostRevision).count()).toBe(0);
      expect(await dataSource.getRepository(TrashedPost).count()).toBe(0);
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

  describe('the post_revisions table', () => {
    const migrated = useMigratedDatabase();

    it('refuses a second revision of the same post with the same version', async () => {
      const repository = migrated.dataSource.getRepository(PostRevision);
      await repository.insert(buildRevision({ postId: 10, version: 3 }));

      const duplicate = repository.insert(buildRevision({ postId: 10, version: 3, title: 'Another state' }));

      await expect(duplicate).rejects.toMatchObject({ driverError: { code: DUPLICATE_KEY_CODE } });
      expect(await repository.countBy({ postId: 10, version: 3 })).toBe(1);
    });

    it('accepts another version of the same post, and the same version of another post', async () => {
      const repository = migrated.dataSource.getRepository(PostRevision);
      await repository.insert(buildRevision({ postId: 11, version: 1 }));

      await repository.insert(buildRevision({ postId: 11, version: 2 }));
      await repository.insert(buildRevision({ postId: 12, version: 1 }));

      expect(await repository.countBy({ postId: 11 })).toBe(2);
      expect(await repository.countBy({ version: 1, postId: 12 })).toBe(1);
    });
  });

  describe('the posts_trash table', () => {
    const migrated = useMigratedDatabase();

    it('refuses a second trashed post with the same id', async () => {
      const repository = migrated.dataSource.getRepository(TrashedPost);
      await repository.insert(buildTrashedPost({ id: 20 }));

      const duplicate = repository.insert(buildTrashedPost({ id: 20, title: 'Another post' }));

      await expect(duplicate).rejects.toMatchObject({ driverError: { code: DUPLICATE_PRIMARY_KEY_CODE } });
      expect(await repository.countBy({ id: 20 })).toBe(1);
    });

    it("keeps the post's id, a draft's NULL publishedAt and its owner", async () => {
      const repository = migrated.dataSource.getRepository(TrashedPost);
      const trashed = buildTrashedPost({ id: 123_456, ownerId: 'oauth:someone', status: 'draft', publishedAt: null });
      await repository.insert(trashed);

      const [stored] = await repository.findBy({ id: 123_456 });

      expect(stored).toEqual(trashed);
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
      // Every tenth post is a draft and every tenth a scheduled post; this author's are all published.
      const AUTHOR = 'author-08';
      const OWNER = 'api-key:owner-a';
      const owner: Principal = { id: OWNER, kind: 'api-key', scopes: effectiveScopes([Scope.postsWrite]) };

      interface ListCase {
        name: string;
        status: PostStatus;
        principal?: Principal;
        order: 'asc' | 'desc';
        author?: string;
        /** Posts listed before the measured page; 0 is the first page, without a cursor. */
        depth: number;
        /** The index the seek of the page's posts uses. */
        index: string;
      }

      const cases: ListCase[] = [];
      for (const order of ['desc', 'asc'] as const) {
        const newest = order === 'desc' ? 'newest first' : 'oldest first';
        const published = { status: 'published' as const, order, index: 'idx_posts_status_id' };
        const byAuthor = { ...published, author: AUTHOR, index: 'idx_posts_author_status_id' };
        cases.push(
          { ...published, name: `the first page of published posts, ${newest}`, depth: 0 },
          { ...published, name: `a page of published posts 2,000 deep, ${newest}`, depth: 2_000 },
          { ...byAuthor, name: `the first page of one author's published posts, ${newest}`, depth: 0 },
          { ...byAuthor, name: `a page of one author's published posts 75 deep, ${newest}`, depth: 75 },
          {
            name: `a page of every draft 200 deep (admin), ${newest}`,
            status: 'draft',
            order,
            depth: 200,
            index: 'idx_posts_status_id',
          },
          {
            name: `a page of one owner's drafts 100 deep, ${newest}`,
            status: 'draft',
            principal: owner,
            order,
            depth: 100,
            index: 'idx_posts_owner_status_id',
          },
          {
            name: `a page of every scheduled post 200 deep (admin), ${newest}`,
            status: 'scheduled',
            order,
            depth: 200,
            index: 'idx_posts_status_id',
          },
        );
      }

      beforeAll(async () => {
        const { dataSource } = context.app;
        const inAYear = new Date(Date.now() + 365 * 86_400_000);
        const posts = interleavedAuthors({ authors: AUTHORS, postsPerAuthor: POSTS_PER_AUTHOR }).map((post, index) => {
          const ownerId = index % 20 < 10 ? OWNER : 'api-key:owner-b';
          if (index % 10 === 3) return { ...post, ownerId, status: 'draft' as const, publishedAt: null };
          if (index % 10 === 7) return { ...post, ownerId, status: 'scheduled' as const, publishedAt: inAYear };
          return { ...post, ownerId };
        });
        await seedPosts(dataSource, posts);
        await dataSource.query(dialect === 'mysql' ? 'ANALYZE TABLE posts' : 'ANALYZE');
      });

      const explain = (sql: string, parameters: unknown[]) =>
        context.app.dataSource.query<Array<Record<string, unknown>>>(
          `${dialect === 'mysql' ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN'} ${sql}`,
          parameters,
        );

      for (const listCase of cases) {
        it(`reads ${listCase.name} from an index in order, without OFFSET`, async () => {
          const principal = listCase.principal ?? LISTING_ADMIN;
          const base = {
            limit: PAGE_SIZE,
            order: listCase.order,
            author: listCase.author,
            status: listCase.status,
            count: false,
          };
          const query =
            listCase.depth === 0 ? base : { ...base, cursor: await cursorAt(base, listCase.depth, principal) };

          const { page, sql, parameters } = await captureListSql(context.app, query, principal);
          const plan = await explain(sql, parameters);

          expect(page.posts).toHaveLength(PAGE_SIZE);
          expect(page.posts.every((post) => post.status === listCase.status)).toBe(true);
          expect(sql).not.toMatch(/\bOFFSET\b/i);
          // Published pages are two seeks: the stored ones in index order, and the scheduled ones due
          // but not yet stored by the sweep (seconds' worth), sorted; then the two short lists merged.
          const seeks = listCase.status === 'published' ? 2 : 1;
          if (dialect === 'mysql') {
            const reads = plan.filter((row) => row.table === 'posts');
            expect(reads).toHaveLength(seeks);
            expect(reads.map((row) => row.type).every((type) => type === 'ref' || type === 'range')).toBe(true);
            expect(reads[0].key).toBe(listCase.index);
            expect(String(reads[0].Extra)).not.toMatch(/filesort|temporary/i);
            if (seeks === 2) expect([listCase.index, 'idx_posts_scheduled']).toContain(reads[1].key);
          } else {
            const reads = plan.map((row) => String(row.detail)).filter((detail) => / posts\b/.test(detail));
            expect(reads).toHaveLength(seeks);
            expect(reads.every((detail) => detail.startsWith('SEARCH posts USING '))).toBe(true);
            // SQLite may seek the primary key instead where the status index saves nothing (most posts published).
            const seek =
              listCase.status === 'published' && !listCase.author
                ? `(INDEX ${listCase.index} |INTEGER PRIMARY KEY )`
                : `INDEX ${listCase.index} `;
            expect(reads[0]).toMatch(new RegExp(`^SEARCH posts USING ${seek}`));
            if (seeks === 2) expect(reads[1]).toMatch(/USING INDEX (idx_posts_scheduled|idx_posts_author_status_id) /);
            // Nothing sorts the stored posts: a temporary b-tree only ever sorts the due ones and the merge.
            const storedBranch = plan.find((row) => String(row.detail) === 'CO-ROUTINE stored_published');
            const sortsStored = plan.some(
              (row) =>
                storedBranch !== undefined && row.parent === storedBranch.id && /TEMP B-TREE/.test(String(row.detail)),
            );
            expect(sortsStored).toBe(false);
          }
        });
      }

      async function cursorAt(query: PageQuery, depth: number, principal: Principal): Promise<string> {
        const { nextCursor } = await context.app.app.get(PostsService).findPage({ ...query, limit: depth }, principal);
        expect(nextCursor).toBeDefined();
        return nextCursor!;
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
