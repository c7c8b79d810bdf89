import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { DataSource, DataSourceOptions, MigrationInterface, QueryRunner } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from './migrations/index.js';
import { mysqlLockName, StartupLockedDataSource, StartupLockTimeoutError, withStartupLock } from './startup-lock.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('withStartupLock on SQLite', () => {
  let directory: string;
  let options: DataSourceOptions;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'posts-startup-lock-'));
    options = { type: 'better-sqlite3', database: join(directory, 'posts.sqlite') };
  });

  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it('lets one caller at a time through for the same database file', async () => {
    const events: string[] = [];
    const work = (name: string) => async () => {
      events.push(`${name} in`);
      await pause(100);
      events.push(`${name} out`);
    };

    await Promise.all([withStartupLock(options, work('first')), withStartupLock(options, work('second'))]);

    expect(events).toEqual(['first in', 'first out', 'second in', 'second out']);
  });

  it('returns what the work returns and lets the next caller in when the work fails', async () => {
    const failed = withStartupLock(options, () => Promise.reject(new Error('migration failed')));
    await expect(failed).rejects.toThrow('migration failed');

    await expect(withStartupLock(options, () => Promise.resolve('next'), 500)).resolves.toBe('next');
  });

  it('gives up with StartupLockTimeoutError, without running the work, when the lock stays taken', async () => {
    const holder = new Database(`${(options as { database: string }).database}.startup-lock`);
    holder.exec('BEGIN EXCLUSIVE');
    let ran = false;

    try {
      const outcome = withStartupLock(options, () => Promise.resolve((ran = true)), 200);

      await expect(outcome).rejects.toThrow(StartupLockTimeoutError);
      expect(ran).toBe(false);
    } finally {
      holder.close();
    }
  });

  it('takes no lock for an in-memory database, which no other process can open', async () => {
    const result = await withStartupLock({ type: 'better-sqlite3', database: ':memory:' }, () =>
      Promise.resolve('done'),
    );

    expect(result).toBe('done');
    expect(existsSync(':memory:.startup-lock')).toBe(false);
  });
});

describe('StartupLockedDataSource', () => {
  let directory: string;
  const sources: DataSource[] = [];

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'posts-startup-migrations-'));
  });

  afterEach(async () => {
    await Promise.all(
      sources
        .splice(0)
        .filter((source) => source.isInitialized)
        .map((source) => source.destroy()),
    );
    rmSync(directory, { recursive: true, force: true });
  });

  // Takes its time between its DDL and the row TypeORM then records for it, as a real migration of a
  // large table does: an unserialized second instance reads "not applied" meanwhile and runs it too.
  class CreateNotesSlowly1795000000000 implements MigrationInterface {
    name = 'CreateNotesSlowly1795000000000';

    async up(queryRunner: QueryRunner): Promise<void> {
      await queryRunner.query('CREATE TABLE notes (id INTEGER PRIMARY KEY)');
      await pause(50);
    }

    down(): Promise<void> {
      return Promise.resolve();
    }
  }

  it('lets two data sources starting together on one file apply each migration once', async () => {
    const options: DataSourceOptions = {
      type: 'better-sqlite3',
      database: join(directory, 'posts.sqlite'),
      enableWAL: true,
      // Short: without the lock, the second one's migration fails on the first one's write lock.
      timeout: 100,
      migrations: [CreateNotesSlowly1795000000000],
      migrationsRun: true,
      migrationsTransactionMode: 'each',
    };
    sources.push(new StartupLockedDataSource(options), new StartupLockedDataSource(options));

    const started = await Promise.allSettled(sources.map((source) => source.initialize()));

    expect(started.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
    const applied = await sources[0].query<Array<{ name: string }>>('SELECT name FROM migrations');
    expect(applied).toEqual([{ name: 'CreateNotesSlowly1795000000000' }]);
  });

  it("applies the service's migrations as the plain DataSource would", async () => {
    const source = new StartupLockedDataSource({
      type: 'better-sqlite3',
      database: join(directory, 'service.sqlite'),
      migrations: MIGRATIONS,
    });
    sources.push(source);
    await source.initialize();

    const applied = await source.runMigrations({ transaction: 'each' });

    expect(applied.map((migration) => migration.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
  });
});

describe('mysqlLockName', () => {
  it("names the lock after the database, since GET_LOCK's names are server-wide", () => {
    expect(mysqlLockName('posts')).toBe('posts-startup:posts');
  });

  it('stays within the 64 characters MySQL allows for a long database name', () => {
    const name = mysqlLockName('d'.repeat(64));

    expect(name.length).toBeLessThanOrEqual(64);
    expect(name).not.toBe(mysqlLockName('e'.repeat(64)));
  });
});
