import type { DataSourceOptions } from 'typeorm';
import type { DatabaseConfig } from '../config/database-url.js';
import { MIGRATIONS } from './migrations/index.js';
import { TypeOrmNestLogger } from './typeorm-logger.js';

// The one place that turns configuration into TypeORM options: used by the Nest module and by
// ormconfig.ts (the TypeORM CLI), so the CLI migrates exactly the database the service uses.
export function buildDataSourceOptions(database: DatabaseConfig): DataSourceOptions {
  const common = {
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    // Schema comes from migrations only; synchronize would silently diverge between databases.
    synchronize: false,
    migrationsRun: false,
    // Decides on its own what to report (errors, slow queries, migrations), so no `logging` option.
    logger: new TypeOrmNestLogger(),
    // Reported through the logger above; a page query is a handful of milliseconds.
    maxQueryExecutionTime: 1_000,
  };

  if (database.kind === 'sqlite') {
    return {
      ...common,
      type: 'better-sqlite3',
      database: database.path,
      // WAL lets readers proceed while a write is in progress; it does not apply to :memory:.
      enableWAL: database.path !== ':memory:',
      // How long a statement waits for another process's write lock before SQLITE_BUSY, while the
      // service starts (and in the migration CLI). Once it serves, SQLite waits no more: better-sqlite3
      // would block the event loop for that long; see sqlite-busy-retry.ts.
      timeout: 5_000,
      prepareDatabase: (db: { pragma: (statement: string) => unknown }) => {
        db.pragma('foreign_keys = ON');
      },
    };
  }

  return {
    ...common,
    type: 'mysql',
    host: database.host,
    port: database.port,
    username: database.username,
    password: database.password,
    database: database.database,
    poolSize: database.poolSize,
    // utf8mb4 on the wire, so emoji and other astral characters survive the round trip.
    charset: 'utf8mb4',
    timezone: 'Z',
    // BIGINT ids come back as numbers (they stay within Number.MAX_SAFE_INTEGER, see posts-api docs).
    supportBigNumbers: true,
    bigNumberStrings: false,
    // Fail fast when the server is unreachable: a request gets a 503 instead of hanging for 10 s.
    connectTimeout: 3_000,
    // mysql2 captures a stack trace on every query to decorate the errors of its promise API: a few
    // percent of the CPU of a request. TypeORM wraps every driver error in a QueryFailedError with
    // its own stack, so the capture adds nothing to what is logged.
    trace: false,
    // A create sends its transaction (START TRANSACTION, the post, its event, COMMIT) as one batch:
    // one round trip instead of four (EventsRepository.insertWithEvent). Every statement of the
    // service binds its values as parameters, so no client input can add a statement to a batch.
    multipleStatements: true,
    extra: {
      enableKeepAlive: true,
      // Bounded wait queue: under an outage requests fail fast instead of piling up without limit.
      queueLimit: 1_000,
    },
  };
}
