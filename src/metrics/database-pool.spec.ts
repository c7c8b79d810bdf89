import type { DataSource } from 'typeorm';
import { describe, expect, it } from 'vitest';
import { readDatabasePool } from './database-pool.js';

const withDriver = (driver: unknown): DataSource => ({ driver }) as unknown as DataSource;

// mysql2 keeps its queues in ring buffers with a `length`; arrays stand in for them.
const mysqlPool = (open: number, idle: number, waiting: number, connectionLimit: number) => ({
  _allConnections: Array.from({ length: open }),
  _freeConnections: Array.from({ length: idle }),
  _connectionQueue: Array.from({ length: waiting }),
  config: { connectionLimit },
});

describe('readDatabasePool', () => {
  it('reads open, idle and waiting connections and the limit of a mysql2 pool', () => {
    expect(readDatabasePool(withDriver({ pool: mysqlPool(4, 1, 2, 10) }))).toEqual({
      open: 4,
      idle: 1,
      waiting: 2,
      limit: 10,
    });
  });

  it('reports no limit for a pool without one (connectionLimit 0)', () => {
    expect(readDatabasePool(withDriver({ pool: mysqlPool(3, 3, 0, 0) }))?.limit).toBeNull();
  });

  it.each([
    ['SQLite (no pool)', {}],
    ['a closed MySQL data source', { pool: undefined }],
    ['a pool whose internals were renamed', { pool: { allConnections: [], freeConnections: [] } }],
    ['a pool with nonsense counts', { pool: { _allConnections: { length: -1 }, _freeConnections: { length: 'x' } } }],
  ])('returns null for %s', (_, driver) => {
    expect(readDatabasePool(withDriver(driver))).toBeNull();
  });

  it('returns null instead of throwing when reading the driver throws', () => {
    const dataSource = {
      get driver(): never {
        throw new Error('not initialized');
      },
    } as unknown as DataSource;
    expect(readDatabasePool(dataSource)).toBeNull();
  });
});
