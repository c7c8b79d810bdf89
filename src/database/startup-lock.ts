import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type Migration } from 'typeorm';

// How long an instance waits for another one's migrations or first-run key before it gives up.
// Generous: an ALTER TABLE of a large table can take minutes, and giving up only means a restart.
export const STARTUP_LOCK_TIMEOUT_MS = 120_000;
// How often a waiting SQLite instance tries the lock again (MySQL waits inside GET_LOCK).
const SQLITE_POLL_INTERVAL_MS = 50;

export class StartupLockTimeoutError extends Error {}

/**
 * Runs `work` while no other instance of the service starting on the same database runs its own.
 * TypeORM's MigrationExecutor reads the applied migrations once, before it starts, and never looks
 * again inside each migration's transaction: two instances starting together both run every pending
 * migration, and the loser fails half-way (on MySQL after DDL that committed on its own). Likewise
 * "no key yet, so create the first-run key" is a check then a write.
 */
export async function withStartupLock<T>(
  options: DataSourceOptions,
  work: () => Promise<T>,
  timeoutMs = STARTUP_LOCK_TIMEOUT_MS,
): Promise<T> {
  if (options.type === 'mysql' || options.type === 'mariadb') return withMysqlLock(options, work, timeoutMs);
  // An in-memory database belongs to its process: nobody to wait for.
  if (options.type === 'better-sqlite3' && options.database !== ':memory:') {
    return withSqliteLock(options.database, work, timeoutMs);
  }
  return work();
}

/** The start-up lock through Nest's injector, for what runs after the data source is up. */
@Injectable()
export class StartupLock {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    return withStartupLock(this.dataSource.options, work);
  }
}

/** A data source whose migrations (migrationsRun on start, or a direct call) run under the start-up lock. */
export class StartupLockedDataSource extends DataSource {
  override runMigrations(options?: Parameters<DataSource['runMigrations']>[0]): Promise<Migration[]> {
    return withStartupLock(this.options, () => super.runMigrations(options));
  }
}

async function withMysqlLock<T>(
  options: Extract<DataSourceOptions, { type: 'mysql' | 'mariadb' }>,
  work: () => Promise<T>,
  timeoutMs: number,
): Promise<T> {
  // GET_LOCK belongs to the session that took it, so one connection takes and releases it. It is a
  // pool of its own, not one of the service's: `work` may need every connection of a pool of one.
  const lockSource = new DataSource({
    ...options,
    entities: [],
    migrations: [],
    subscribers: [],
    migrationsRun: false,
    poolSize: 1,
  });
  await lockSource.initialize();
  const session = lockSource.createQueryRunner();
  try {
    const name = mysqlLockName(options.database ?? '');
    const [{ acquired }] = (await session.query('SELECT GET_LOCK(?, ?) AS acquired', [
      name,
      Math.ceil(timeoutMs / 1_000),
    ])) as Array<{ acquired: number | string | null }>;
    if (Number(acquired) !== 1) {
      const [{ holder }] = (await session.query('SELECT IS_USED_LOCK(?) AS holder', [name])) as Array<{
        holder: number | string | null;
      }>;
      throw new StartupLockTimeoutError(
        `Another instance held the start-up lock (GET_LOCK '${name}', MySQL connection ${holder ?? 'unknown'}) ` +
          `for more than ${timeoutMs / 1_000} s while applying migrations or creating the first API key; ` +
          'is one stuck?',
      );
    }
    try {
      return await work();
    } finally {
      // Never hides what `work` threw: if the session is gone, the server has released its lock.
      await session.query('SELECT RELEASE_LOCK(?)', [name]).catch(() => undefined);
    }
  } finally {
    await session.release();
    await lockSource.destroy();
  }
}

// Lock names are server-wide: the database's own name keeps services on other databases of the same
// server (and parallel test runs) from waiting for each other. MySQL caps them at 64 characters.
export function mysqlLockName(database: string): string {
  const name = `posts-startup:${database}`;
  return name.length <= 64 ? name : `posts-startup:${createHash('sha256').update(database).digest('hex').slice(0, 40)}`;
}

async function withSqliteLock<T>(path: string, work: () => Promise<T>, timeoutMs: number): Promise<T> {
  // Loaded here, as TypeORM loads its driver: a MySQL deployment never loads the native module.
  const { default: Database } = await import('better-sqlite3');
  // An exclusive transaction on a database file of its own beside the service's: the operating system
  // drops its lock when the process dies, so a crashed instance leaves no stale lock behind (a lock
  // file made with open(…, 'wx') would stay). The file is never deleted: an instance waiting on the
  // old file and one creating a new file would then both "hold" the lock.
  const lock = new Database(`${path}.startup-lock`, { timeout: 0 });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        lock.exec('BEGIN EXCLUSIVE');
        break;
      } catch (error) {
        if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
        if (Date.now() >= deadline) {
          throw new StartupLockTimeoutError(
            `Another process held the start-up lock (${path}.startup-lock) for more than ${timeoutMs / 1_000} s ` +
              'while applying migrations or creating the first API key; is one stuck?',
          );
        }
        await new Promise((resolve) => setTimeout(resolve, SQLITE_POLL_INTERVAL_MS));
      }
    }
    try {
      return await work();
    } finally {
      lock.exec('ROLLBACK');
    }
  } finally {
    lock.close();
  }
}
