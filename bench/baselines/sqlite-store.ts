// The SQLite half of B0s and of F (--floor): better-sqlite3 with the service's pragmas, the service's SQL.
import Database from 'better-sqlite3';
import { parseDatabaseUrl } from '../../src/database/database-url.js';
import type { BaselineSettings, PostStore } from './post-http.js';

// TypeORM's statements for findOneBy({ id }) and insert(), prepared once. (TypeORM's SQLite driver
// writes numeric parameters into the SQL text, so the service compiles a statement per id it has not
// seen lately; see BENCHMARKS.md.)
const SELECT_BY_ID =
  'SELECT "Post"."id" AS "Post_id", "Post"."title" AS "Post_title", "Post"."content" AS "Post_content", ' +
  '"Post"."author" AS "Post_author", "Post"."owner_id" AS "Post_owner_id", "Post"."version" AS "Post_version", ' +
  '"Post"."created_at" AS "Post_created_at", "Post"."updated_at" AS "Post_updated_at" ' +
  'FROM "posts" "Post" WHERE (("Post"."id" = ?)) LIMIT 1';
const INSERT =
  'INSERT INTO "posts"("id", "title", "content", "author", "owner_id", "version", "created_at", "updated_at") ' +
  'VALUES (NULL, ?, ?, ?, ?, 1, ?, ?)';

interface PostRow {
  Post_id: number;
  Post_title: string;
  Post_content: string;
  Post_author: string;
  Post_version: number;
  Post_created_at: string;
  Post_updated_at: string;
}

export function openSqliteStore(settings: BaselineSettings): PostStore {
  const database = parseDatabaseUrl(settings.databaseUrl, { poolSize: settings.poolSize });
  if (database.kind !== 'sqlite') throw new Error('the SQLite store needs a sqlite: DATABASE_URL');

  // The connection settings of the service (src/database/database.options.ts).
  const sqlite = new Database(database.path, { timeout: 5_000 });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  const selectById = sqlite.prepare<[number], PostRow>(SELECT_BY_ID);
  const insert = sqlite.prepare<[string, string, string, string, string, string]>(INSERT);

  return {
    findById(id) {
      const row = selectById.get(id);
      if (row === undefined) return Promise.resolve(undefined);
      return Promise.resolve({
        id: row.Post_id,
        title: row.Post_title,
        content: row.Post_content,
        author: row.Post_author,
        version: row.Post_version,
        createdAt: fromSqliteDatetime(row.Post_created_at),
        updatedAt: fromSqliteDatetime(row.Post_updated_at),
      });
    },
    insert(input, ownerId, now) {
      const stamp = toSqliteDatetime(now);
      const result = insert.run(input.title, input.content, input.author, ownerId, stamp, stamp);
      return Promise.resolve(Number(result.lastInsertRowid));
    },
    close: () => Promise.resolve(void sqlite.close()),
  };
}

// TypeORM stores a DATETIME as UTC text with milliseconds, 'YYYY-MM-DD HH:MM:SS.mmm'.
function toSqliteDatetime(date: Date): string {
  return date.toISOString().replace('T', ' ').slice(0, 23);
}

function fromSqliteDatetime(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
