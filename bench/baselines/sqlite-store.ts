// The SQLite half of B0s and of F (--floor): better-sqlite3 with the service's pragmas, the service's SQL.
import Database from 'better-sqlite3';
import { parseDatabaseUrl } from '../../src/config/database-url.js';
import type { BaselineSettings, PostStore } from './post-http.js';

// The service's statements, the fixed by-id SELECT and INSERT of src/database/entity-rows.ts,
// prepared once.
export const SELECT_BY_ID =
  'SELECT "id", "title", "content", "author", "owner_id", "version", "status", "published_at", "created_at", "updated_at" ' +
  'FROM "posts" WHERE "id" = ?';
export const INSERT =
  'INSERT INTO "posts" ("title", "content", "author", "owner_id", "version", "status", "published_at", "created_at", "updated_at") ' +
  'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';

interface PostRow {
  id: number;
  title: string;
  content: string;
  author: string;
  version: number;
  status: string;
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

export function openSqliteStore(settings: BaselineSettings): PostStore {
  const database = parseDatabaseUrl(settings.databaseUrl, { poolSize: settings.poolSize });
  if (database.kind !== 'sqlite') throw new Error('the SQLite store needs a sqlite: DATABASE_URL');

  // The connection settings of the service (src/database/database.options.ts).
  const sqlite = new Database(database.path, { timeout: 5_000 });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  const selectById = sqlite.prepare<[number], PostRow>(SELECT_BY_ID);
  const insert = sqlite.prepare<[string, string, string, string, number, string, string, string, string]>(INSERT);

  return {
    findById(id) {
      const row = selectById.get(id);
      if (row === undefined) return Promise.resolve(undefined);
      return Promise.resolve({
        id: row.id,
        title: row.title,
        content: row.content,
        author: row.author,
        version: row.version,
        status: row.status,
        publishedAt: row.published_at === null ? null : fromSqliteDatetime(row.published_at),
        createdAt: fromSqliteDatetime(row.created_at),
        updatedAt: fromSqliteDatetime(row.updated_at),
      });
    },
    insert(input, ownerId, now) {
      const stamp = toSqliteDatetime(now);
      const result = insert.run(input.title, input.content, input.author, ownerId, 1, 'published', stamp, stamp, stamp);
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
