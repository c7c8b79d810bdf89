import type { DataSource, QueryRunner } from 'typeorm';

// How long a statement or a transaction keeps trying against another process's write lock before its
// SQLITE_BUSY is answered with 503: the 5 s the busy timeout used to give, now spent without
// blocking the event loop.
export const SQLITE_BUSY_RETRY_BUDGET_MS = 5_000;
const FIRST_RETRY_DELAY_MS = 5;
const MAX_RETRY_DELAY_MS = 100;

/** What is used here of better-sqlite3's connection. */
export interface SqliteConnectionState {
  /** False in autocommit mode, true inside BEGIN … COMMIT (sqlite3_get_autocommit). */
  readonly inTransaction: boolean;
}

/**
 * better-sqlite3 is synchronous: while a statement waits out the busy timeout for another process's
 * write lock, the whole event loop waits with it (liveness probes, reads, every other request). So
 * SQLite no longer waits, and SQLITE_BUSY is retried here after asynchronous pauses, for the two
 * units SQLite says may simply run again (https://www.sqlite.org/rescode.html#busy):
 *
 * - a statement outside any transaction: it changed nothing and left nothing open. TypeORM's driver
 *   runs every statement through its one query runner on its one connection
 *   (BetterSqlite3Driver.createQueryRunner), so wrapping that runner's query() covers insert(),
 *   update(), delete() and raw queries alike;
 * - a whole `dataSource.transaction(…)`, once rolled back. Never a statement inside one: TypeORM
 *   begins it deferred (AbstractSqliteQueryRunner.startTransaction: BEGIN TRANSACTION), and once it
 *   has read, its first write gets SQLITE_BUSY without waiting, or SQLITE_BUSY_SNAPSHOT if the other
 *   writer committed, which no repetition of the statement cures. The callback runs again, so it
 *   must do nothing but database work (true of the idempotency service's).
 *
 * Which unit an attempt was is read from the connection (before and after it), not from TypeORM's
 * isTransactionActive, which belongs to the runner every request shares. What cannot be retried
 * soundly (a statement inside a transaction, a transaction nested into another, the transaction
 * save() opens by itself) fails at once with SQLITE_BUSY, hence 503, instead of blocking.
 */
export function retrySqliteBusyWithoutBlocking(dataSource: DataSource, budgetMs = SQLITE_BUSY_RETRY_BUDGET_MS): void {
  const { databaseConnection: connection } = dataSource.driver as unknown as {
    databaseConnection: SqliteConnectionState & { pragma(source: string): unknown };
  };
  // From now on SQLite never waits. The start-up (WAL switch, migrations) ran with the configured
  // busy timeout: blocking did no harm before anything was served.
  connection.pragma('busy_timeout = 0');
  // TypeORM logs every failed attempt as an error before it reaches the retry: up to fifty lines for
  // one waiting write. The attempt that finally fails reaches its caller, which reports it (a 503 is
  // logged with its request).
  const { logger } = dataSource;
  const logQueryError = logger.logQueryError.bind(logger);
  logger.logQueryError = (error, ...rest) => {
    if (!isSqliteBusy(error)) logQueryError(error, ...rest);
  };
  const queryRunner = dataSource.driver.createQueryRunner('master');
  const query = queryRunner.query.bind(queryRunner) as (...args: unknown[]) => Promise<unknown>;
  queryRunner.query = ((...args: unknown[]) =>
    retryWhileBusy(() => query(...args), connection, budgetMs)) as QueryRunner['query'];
  const { manager } = dataSource;
  const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
  manager.transaction = (...args: unknown[]) => retryWhileBusy(() => transaction(...args), connection, budgetMs);
}

/**
 * `attempt()`, run again after a pause (5 ms doubling up to 100 ms) while it fails with SQLITE_BUSY
 * and began and ended outside any transaction, until `budgetMs` has passed; then its last error.
 */
export async function retryWhileBusy<T>(
  attempt: () => Promise<T>,
  connection: SqliteConnectionState,
  budgetMs: number,
  sleep: (ms: number) => Promise<unknown> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<T> {
  const deadline = Date.now() + budgetMs;
  for (let retry = 0; ; retry++) {
    const inTransactionBefore = connection.inTransaction;
    try {
      return await attempt();
    } catch (error) {
      const delay = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** retry);
      const repeatable = isSqliteBusy(error) && !inTransactionBefore && !connection.inTransaction;
      if (!repeatable || Date.now() + delay > deadline) throw error;
      await sleep(delay);
    }
  }
}

/** SQLITE_BUSY or one of its extended codes, from better-sqlite3 or wrapped by TypeORM. */
export function isSqliteBusy(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) return true;
    current = (current as { driverError?: unknown }).driverError ?? current.cause;
  }
  return false;
}
