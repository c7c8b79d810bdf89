import { TypeORMError } from 'typeorm';

// Driver error codes that mean "the database cannot serve us right now", as opposed to "this query
// is wrong": network and pool failures (mysql2, Node), server shutdown or overload, lock timeouts,
// and SQLite's locked database. They become 503 + Retry-After; anything else is a 500.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_QUERY_INTERRUPTED',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_LOCK_DEADLOCK',
  'ER_CLIENT_INTERACTION_TIMEOUT',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);

// TypeORM's own errors for a data source that is not (or no longer) connected.
const UNAVAILABLE_TYPEORM_ERRORS = new Set([
  'CannotExecuteNotConnectedError',
  'ConnectionIsNotSetError',
  'QueryRunnerAlreadyReleasedError',
]);

// mysql2 reports a closed or saturated pool by message only.
const UNAVAILABLE_MESSAGES = [
  /^Pool is closed\.?$/,
  /^Queue limit reached\.?$/,
  /connect ETIMEDOUT/,
  /Connection lost/,
];

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const failure: Error = current;
    const code = (failure as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_BUSY'))) return true;
    if (failure instanceof TypeORMError && UNAVAILABLE_TYPEORM_ERRORS.has(failure.name)) return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(failure.message))) return true;
    // TypeORM wraps driver errors: QueryFailedError.driverError, or a plain `cause`.
    current = (failure as { driverError?: unknown }).driverError ?? failure.cause;
  }
  return false;
}

/** InnoDB rolled the transaction back to break a deadlock (ER_LOCK_DEADLOCK, errno 1213). */
export function isDeadlock(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    if ((current as { code?: unknown }).code === 'ER_LOCK_DEADLOCK') return true;
    current = (current as { driverError?: unknown }).driverError ?? current.cause;
  }
  return false;
}

/** A unique index refused the write (MySQL ER_DUP_ENTRY, SQLite SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: { code?: unknown } } | null)?.driverError ?? error;
  const code = (driverError as { code?: unknown } | null)?.code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
