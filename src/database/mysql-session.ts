import type { DataSource } from 'typeorm';

/** The SQL that takes NO_BACKSLASH_ESCAPES off the session's sql_mode, leaving every other mode as it is. */
export const CLEAR_NO_BACKSLASH_ESCAPES =
  "SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ','))";

interface SessionConnection {
  query(sql: string, callback: (error: Error | null) => void): unknown;
  destroy(): void;
}

interface ConnectionPool {
  on(event: 'connection', listener: (connection: SessionConnection) => void): unknown;
}

/**
 * mysql2 binds parameters by escaping them into the SQL text with backslashes, which is safe only
 * while the server reads a backslash as an escape. Under the sql_mode NO_BACKSLASH_ESCAPES (a server
 * default an operator may set) a value ending in a backslash would close its string early, and the
 * statement batches of creates (EventsRepository.insertWithEvent) would let it add a statement. So
 * every connection of the pool takes that mode off its session when it opens, before any statement
 * of the service (mysql2 runs a connection's statements in order); one that cannot is destroyed.
 * Installed before the data source initializes, so its first connection (the migrations') has it too.
 */
export function keepBackslashEscapes(dataSource: DataSource): void {
  const driver = dataSource.driver as unknown as { mysql: { createPool(options: unknown): ConnectionPool } };
  const mysql = driver.mysql;
  driver.mysql = Object.assign(Object.create(mysql) as typeof mysql, {
    createPool(options: unknown): ConnectionPool {
      const pool = mysql.createPool(options);
      pool.on('connection', clearNoBackslashEscapes);
      return pool;
    },
  });
}

/** The pool's `connection` listener. */
export function clearNoBackslashEscapes(connection: SessionConnection): void {
  connection.query(CLEAR_NO_BACKSLASH_ESCAPES, (error) => {
    if (error !== null) connection.destroy();
  });
}
