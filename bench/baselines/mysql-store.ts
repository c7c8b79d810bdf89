// The MySQL half of B0 and of F (--floor): a mysql2 pool with the service's settings, the service's SQL.
import { createPool, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import { parseDatabaseUrl } from '../../src/database/database-url.js';
import type { BaselineSettings, PostStore, StoredPost } from './post-http.js';

// The statements TypeORM sends for findOneBy({ id }) and insert() (the text protocol, as TypeORM's
// mysql driver uses: query(), not execute()). The service then also re-reads `version` after the
// INSERT (TypeORM fetches defaulted columns back); B0 does not need to, its response is complete.
const SELECT_BY_ID =
  'SELECT `Post`.`id` AS `Post_id`, `Post`.`title` AS `Post_title`, `Post`.`content` AS `Post_content`, ' +
  '`Post`.`author` AS `Post_author`, `Post`.`owner_id` AS `Post_owner_id`, `Post`.`version` AS `Post_version`, ' +
  '`Post`.`created_at` AS `Post_created_at`, `Post`.`updated_at` AS `Post_updated_at` ' +
  'FROM `posts` `Post` WHERE ((`Post`.`id` = ?)) LIMIT 1';
const INSERT =
  'INSERT INTO `posts`(`id`, `title`, `content`, `author`, `owner_id`, `version`, `created_at`, `updated_at`) ' +
  'VALUES (DEFAULT, ?, ?, ?, ?, ?, ?, ?)';

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
    enableKeepAlive: true,
  });

  return {
    async findById(id) {
      const [rows] = await pool.query<RowDataPacket[]>(SELECT_BY_ID, [id]);
      if (rows.length === 0) return undefined;
      const row = rows[0];
      return {
        id: Number(row.Post_id),
        title: row.Post_title as string,
        content: row.Post_content as string,
        author: row.Post_author as string,
        version: Number(row.Post_version),
        createdAt: row.Post_created_at as Date,
        updatedAt: row.Post_updated_at as Date,
      } satisfies StoredPost;
    },
    async insert(input, ownerId, now) {
      const [result] = await pool.query<ResultSetHeader>(INSERT, [
        input.title,
        input.content,
        input.author,
        ownerId,
        1,
        now,
        now,
      ]);
      return result.insertId;
    },
    close: () => pool.end(),
  };
}
