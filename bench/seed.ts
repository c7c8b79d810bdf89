import { performance } from 'node:perf_hooks';
import { digestToken } from '../src/auth/api-keys/api-key-token.js';
import { queryRows, withConnection, type BenchDatabase, type DatabaseConnection } from './databases.js';

export interface SeedReport {
  rowsInserted: number;
  rowsInTable: number;
  seconds: number;
}

export interface PostIdRange {
  min: number;
  max: number;
  count: number;
}

// Rows per multi-row INSERT on MySQL: about 1 MB of SQL, well under the default max_allowed_packet.
const MYSQL_BATCH_ROWS = 2_000;
const AUTHORS = 100;
const EPOCH = Date.UTC(2026, 0, 1);
// Published at their creation, as the service's own creates are.
const COLUMNS = '(title, content, author, owner_id, version, status, published_at, created_at, updated_at)';

/**
 * The principal the service gives the bootstrap key (`api-key:<id>`): seeded posts belong to it, as
 * if it had created them over HTTP.
 */
export async function ownerIdOfApiKey(database: BenchDatabase, token: string): Promise<string> {
  const rows = await withConnection(database, (connection) =>
    queryRows<{ id: number }>(connection, 'SELECT id FROM api_keys WHERE token_digest = ?', [digestToken(token)]),
  );
  if (rows.length !== 1) throw new Error('the service did not create the bootstrap API key');
  return `api-key:${rows[0].id}`;
}

/** Inserts rows until the posts table holds `total` rows, straight into the database (not over HTTP). */
export async function seedPostsUpTo(database: BenchDatabase, total: number, ownerId: string): Promise<SeedReport> {
  return withConnection(database, async (connection) => {
    const before = (await postIdRange(connection)).count;
    const rowsToInsert = Math.max(0, total - before);
    const started = performance.now();
    if (connection.kind === 'sqlite') seedSqlite(connection, before, rowsToInsert, ownerId);
    else await seedMysql(connection, before, rowsToInsert, ownerId);
    const seconds = (performance.now() - started) / 1000;
    const after = (await postIdRange(connection)).count;
    if (after !== before + rowsToInsert)
      throw new Error(`seeding left ${after} rows instead of ${before + rowsToInsert}`);
    return { rowsInserted: rowsToInsert, rowsInTable: after, seconds };
  });
}

export async function postIdRange(connection: DatabaseConnection): Promise<PostIdRange> {
  const [row] = await queryRows<{ min: number | null; max: number | null; count: number }>(
    connection,
    'SELECT MIN(id) AS min, MAX(id) AS max, COUNT(*) AS count FROM posts',
  );
  return { min: Number(row.min ?? 0), max: Number(row.max ?? 0), count: Number(row.count) };
}

// One prepared statement in one transaction: SQLite's fastest way without leaving SQL.
function seedSqlite(
  connection: Extract<DatabaseConnection, { kind: 'sqlite' }>,
  first: number,
  count: number,
  ownerId: string,
): void {
  const { sqlite } = connection;
  const insert = sqlite.prepare(`INSERT INTO posts ${COLUMNS} VALUES (?, ?, ?, ?, 1, 'published', ?, ?, ?)`);
  sqlite.transaction(() => {
    for (let index = first; index < first + count; index++) {
      const post = seededPost(index);
      insert.run(post.title, post.content, post.author, ownerId, post.createdAt, post.createdAt, post.createdAt);
    }
  })();
  // Folds the WAL back into the database file, so the service does not start with a huge WAL to search.
  sqlite.pragma('wal_checkpoint(TRUNCATE)');
}

// Multi-row INSERTs of MYSQL_BATCH_ROWS rows each, committed per statement.
async function seedMysql(
  connection: Extract<DatabaseConnection, { kind: 'mysql' }>,
  first: number,
  count: number,
  ownerId: string,
): Promise<void> {
  for (let start = first; start < first + count; start += MYSQL_BATCH_ROWS) {
    const rows: unknown[][] = [];
    for (let index = start; index < Math.min(start + MYSQL_BATCH_ROWS, first + count); index++) {
      const post = seededPost(index);
      rows.push([
        post.title,
        post.content,
        post.author,
        ownerId,
        1,
        'published',
        post.createdAt,
        post.createdAt,
        post.createdAt,
      ]);
    }
    await connection.mysql.query(`INSERT INTO posts ${COLUMNS} VALUES ?`, [rows]);
  }
}

/**
 * Post number `index`: valid by the API's rules (visible title and author, no control characters),
 * a paragraph of content (about 300 characters), one of 100 authors, one post a second since 2026.
 */
function seededPost(index: number): { title: string; content: string; author: string; createdAt: string } {
  const number = index + 1;
  return {
    title: `Benchmark post ${number}: notes on keyset pagination`,
    content:
      `Post ${number}. Keyset pagination seeks to the last id of the previous page instead of counting ` +
      'rows with OFFSET, so the cost of a page does not grow with its depth. This paragraph is filler of a ' +
      'realistic length, so that responses carry a few hundred bytes of content like a short blog post.',
    author: `author-${String(index % AUTHORS).padStart(2, '0')}`,
    // UTC, milliseconds, the text form both TypeORM drivers write for a DATETIME column.
    createdAt: new Date(EPOCH + index * 1_000).toISOString().replace('T', ' ').slice(0, 23),
  };
}
