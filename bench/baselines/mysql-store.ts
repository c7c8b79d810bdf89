// The MySQL half of B0 and of F (--floor): a mysql2 pool with the service's settings, the service's SQL.
import { createPool, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { parseDatabaseUrl } from '../../src/config/database-url.js';
import type { BaselineSettings, PostStore, StoredPost } from './post-http.js';

// The statements the service sends, the fixed by-id SELECT and INSERT of src/database/entity-rows.ts,
// over the text protocol as TypeORM's mysql driver uses it (query(), not execute()). Neither reads
// anything back after the INSERT.
export const SELECT_BY_ID =
  'SELECT `id`, `title`, `content`, `author`, `owner_id`, `version`, `status`, `published_at`, `created_at`, `updated_at` ' +
  'FROM `posts` WHERE `id` = ?';
export const INSERT =
  'INSERT INTO `posts` (`title`, `content`, `author`, `owner_id`, `version`, `status`, `published_at`, `created_at`, `updated_at`) ' +
  'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';

export function openMysqlStore(settings: BaselineSettings): PostStore {
  const database = parseDatabaseUrl(settings.databaseUrl, { poolSize: settings.poolSize });
  if (database.kind !== 'mysql') throw new Error('the MySQL store needs a mysql:// DATABASE_URL');

  // The pool settings of the service (src/database/database.options.ts).
  const pool = createPool({
    host: database.host,
    port: database.port,
    user: database.username,
    password: database.password,
    database: database.database,
    connectionLimit: database.poolSize,
    queueLimit: 1_000,
    charset: 'utf8mb4',
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: false,
    connectTimeout: 3_000,
    trace: false,
    enableKeepAlive: true,
  });

  return {
    async findById(id) {
      const [rows] = await pool.query<RowDataPacket[]>(SELECT_BY_ID, [id]);
      if (rows.length === 0) return undefined;
      const row = rows[0];
      return {
        id: Number(row.id),
        title: row.title as string,
        content: row.content as string,
        author: row.author as string,
        version: Number(row.version),
        status: row.status as string,
        publishedAt: row.published_at as Date | null,
        createdAt: row.created_at as Date,
        updatedAt: row.updated_at as Date,
      } satisfies StoredPost;
    },
    async insert(input, ownerId, now) {
      const [result] = await pool.query<ResultSetHeader>(INSERT, [
        input.title,
        input.content,
        input.author,
        ownerId,
        1,
        'published',
        now,
        now,
        now,
      ]);
      return result.insertId;
    },
    close: () => pool.end(),
  };
}
