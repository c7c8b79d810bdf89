import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DataSource, QueryFailedError, type Logger } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSqliteBusy, retrySqliteBusyWithoutBlocking, retryWhileBusy } from './sqlite-busy-retry.js';

function busyError(code = 'SQLITE_BUSY'): Error {
  return Object.assign(new Error('database is locked'), { code });
}

/** An attempt that runs `body` asynchronously, as a query does. */
const asynchronously =
  <T>(body: () => T) =>
  (): Promise<T> =>
    Promise.resolve().then(body);

describe('retryWhileBusy', () => {
  const noPause = () => Promise.resolve();

  it('runs an attempt that met SQLITE_BUSY outside a transaction again until it succeeds', async () => {
    const connection = { inTransaction: false };
    let attempts = 0;

    const result = await retryWhileBusy(
      asynchronously(() => {
        if (++attempts < 3) throw busyError();
        return 'written';
      }),
      connection,
      5_000,
      noPause,
    );

    expect(result).toBe('written');
    expect(attempts).toBe(3);
  });

  // SQLite may roll the transaction back itself on SQLITE_BUSY, so both ends of the attempt count.
  it.each([
    ['began inside a transaction', true, false],
    ['left a transaction open', false, true],
  ])('does not run an attempt again that %s', async (_, inTransactionBefore, inTransactionAfter) => {
    const connection = { inTransaction: inTransactionBefore };
    let attempts = 0;

    const outcome = retryWhileBusy(
      asynchronously(() => {
        attempts++;
        connection.inTransaction = inTransactionAfter;
        throw busyError();
      }),
      connection,
      5_000,
      noPause,
    );

    await expect(outcome).rejects.toThrow('database is locked');
    expect(attempts).toBe(1);
  });

  it('rethrows any other error at once', async () => {
    let attempts = 0;

    const outcome = retryWhileBusy(
      asynchronously(() => {
        attempts++;
        throw Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
      }),
      { inTransaction: false },
      5_000,
      noPause,
    );

    await expect(outcome).rejects.toThrow('UNIQUE constraint failed');
    expect(attempts).toBe(1);
  });

  it('gives up with the last SQLITE_BUSY once the budget is spent, pausing longer each time up to 100 ms', async () => {
    const pauses: number[] = [];

    const outcome = retryWhileBusy(
      asynchronously(() => {
        throw busyError();
      }),
      { inTransaction: false },
      0,
      (ms) => Promise.resolve(pauses.push(ms)),
    );

    await expect(outcome).rejects.toThrow('database is locked');
    expect(pauses).toEqual([]);

    const longer = retryWhileBusy(
      asynchronously(() => {
        if (pauses.length >= 8) return 'done';
        throw busyError();
      }),
      { inTransaction: false },
      5_000,
      (ms) => Promise.resolve(pauses.push(ms)),
    );
    await expect(longer).resolves.toBe('done');
    expect(pauses).toEqual([5, 10, 20, 40, 80, 100, 100, 100]);
  });
});

describe('isSqliteBusy', () => {
  it('recognises SQLITE_BUSY and its extended codes, also wrapped by TypeORM', () => {
    const wrapped = new QueryFailedError('INSERT …', [], busyError('SQLITE_BUSY_SNAPSHOT'));

    expect(isSqliteBusy(busyError())).toBe(true);
    expect(isSqliteBusy(wrapped)).toBe(true);
    expect(isSqliteBusy(new Error('failed', { cause: busyError('SQLITE_BUSY_RECOVERY') }))).toBe(true);
  });

  it('does not take other errors for SQLITE_BUSY', () => {
    expect(isSqliteBusy(Object.assign(new Error('locked'), { code: 'SQLITE_LOCKED' }))).toBe(false);
    expect(isSqliteBusy(new Error('database is locked'))).toBe(false);
    expect(isSqliteBusy('SQLITE_BUSY')).toBe(false);
  });
});

describe('a better-sqlite3 data source with retrySqliteBusyWithoutBlocking', () => {
  let directory: string;
  let path: string;
  let dataSource: DataSource;
  let other: Database.Database;
  let release: NodeJS.Timeout | undefined;
  let loggedErrors: string[];

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'posts-busy-retry-'));
    path = join(directory, 'test.sqlite');
    loggedErrors = [];
    const logger: Logger = {
      logQuery: () => undefined,
      logQueryError: (error) => loggedErrors.push(String(error)),
      logQuerySlow: () => undefined,
      logSchemaBuild: () => undefined,
      logMigration: () => undefined,
      log: () => undefined,
    };
    dataSource = await new DataSource({ type: 'better-sqlite3', database: path, enableWAL: true, logger }).initialize();
    await dataSource.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    other = new Database(path);
  });

  afterEach(async () => {
    clearTimeout(release);
    if (other.inTransaction) other.prepare('ROLLBACK').run();
    other.close();
    await dataSource.destroy();
    rmSync(directory, { recursive: true, force: true });
  });

  /** Another connection takes the write lock now and lets go `ms` later, on this event loop. */
  function holdWriteLock(ms: number): void {
    other.prepare('BEGIN IMMEDIATE').run();
    release = setTimeout(() => other.prepare('ROLLBACK').run(), ms);
  }

  it('writes once the other connection lets go, the event loop turning all the while', async () => {
    retrySqliteBusyWithoutBlocking(dataSource);
    holdWriteLock(150);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);

    await dataSource.query("INSERT INTO notes (body) VALUES ('after the lock')");
    clearInterval(ticker);

    // Released on this very event loop: a write that blocked it would have waited in vain.
    expect(ticks).toBeGreaterThan(5);
    expect(await dataSource.query('SELECT body FROM notes')).toEqual([{ body: 'after the lock' }]);
  });

  it('logs no error for the attempts that met the lock, and still logs any other failed query', async () => {
    retrySqliteBusyWithoutBlocking(dataSource);
    holdWriteLock(50);

    await dataSource.query("INSERT INTO notes (body) VALUES ('after the lock')");
    const failing = dataSource.query('INSERT INTO missing_table (body) VALUES (1)');

    await expect(failing).rejects.toThrow(/no such table/);
    expect(loggedErrors).toEqual([expect.stringMatching(/no such table/)]);
  });

  it('runs a whole transaction again when it meets the lock, never one of its statements on its own', async () => {
    retrySqliteBusyWithoutBlocking(dataSource);
    let runs = 0;

    await dataSource.transaction(async (manager) => {
      runs++;
      const [{ count }] = await manager.query<Array<{ count: number }>>('SELECT COUNT(*) AS count FROM notes');
      // The lock is taken after this transaction has read: its write then fails at once, and only a
      // new transaction (a new snapshot) may try again.
      if (runs === 1) holdWriteLock(100);
      await manager.query('INSERT INTO notes (body) VALUES (?)', [`seen ${count}`]);
    });

    expect(runs).toBeGreaterThan(1);
    expect(await dataSource.query('SELECT body FROM notes')).toEqual([{ body: 'seen 0' }]);
  });

  it('answers SQLITE_BUSY once the budget is spent', async () => {
    retrySqliteBusyWithoutBlocking(dataSource, 200);
    holdWriteLock(1_000);
    const startedAt = Date.now();

    const outcome = dataSource.query("INSERT INTO notes (body) VALUES ('never')");

    await expect(outcome).rejects.toSatisfy(isSqliteBusy);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(100);
    expect(Date.now() - startedAt).toBeLessThan(1_000);
  });
});
