import type { DataSource } from 'typeorm';

export interface DatabasePoolState {
  /** Connections open now, busy or idle. */
  open: number;
  idle: number;
  /** Requests queued for a connection because all of them are busy. */
  waiting: number;
  /** The pool's connection limit (DATABASE_POOL_SIZE); null when the pool has none. */
  limit: number | null;
}

// The parts of mysql2's Pool this reads. They are private (underscored), so every one is checked
// before use: a driver upgrade that renames them costs the gauges, never a scrape.
interface MysqlPoolInternals {
  _allConnections?: { length?: unknown };
  _freeConnections?: { length?: unknown };
  _connectionQueue?: { length?: unknown };
  config?: { connectionLimit?: unknown };
}

/**
 * The connection pool of the MySQL/MariaDB driver, or null when there is none to report: SQLite has
 * one connection and no pool, and a closed data source has no pool left. Never throws.
 */
export function readDatabasePool(dataSource: DataSource): DatabasePoolState | null {
  try {
    const pool = (dataSource.driver as { pool?: MysqlPoolInternals }).pool;
    if (pool === undefined || pool === null) return null;
    const open = pool._allConnections?.length;
    const idle = pool._freeConnections?.length;
    if (!isCount(open) || !isCount(idle)) return null;
    const waiting = pool._connectionQueue?.length;
    const limit = pool.config?.connectionLimit;
    return { open, idle, waiting: isCount(waiting) ? waiting : 0, limit: isCount(limit) && limit > 0 ? limit : null };
  } catch {
    return null;
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
