import { ClsServiceManager } from 'nestjs-cls';
import type { DataSource, QueryRunner } from 'typeorm';

/** How long a statement or a transaction waits for its turn on the connection before it gives up (503). */
export const SQLITE_GATE_WAIT_MS = 5_000;

/** Raised when the turn did not come in time; its code makes it a SQLITE_BUSY (503) like the lock it stands for. */
export class SqliteGateTimeoutError extends Error {
  readonly code = 'SQLITE_BUSY_GATE';

  constructor(waitedMs: number) {
    super(`the SQLite connection was held by a transaction for more than ${waitedMs} ms`);
  }
}

// Marks the async context of the transaction that holds the connection.
const GATE_TOKEN = Symbol('sqlite-gate-holder');

interface Waiter {
  kind: 'statement' | 'transaction';
  token: object;
  grant: () => void;
}

/**
 * Turns on SQLite's one connection. better-sqlite3 is synchronous and TypeORM's driver runs every
 * statement of the process through one query runner on one connection, so an open transaction is a
 * state of that connection, shared by every request:
 *
 * - a statement of another request, run while a transaction is open, runs inside it, and that
 *   transaction's rollback undoes a write the other request has already acknowledged;
 * - a transaction begun while another is open becomes a SAVEPOINT inside it (TypeORM counts the
 *   depth on the shared runner), and the outer one's rollback undoes the inner one's commit.
 *
 * So one transaction holds the connection at a time; statements from outside it wait until it ends,
 * and it waits for the statements already running. Who is inside is known from the async context
 * the transaction runs in. Turns are granted in arrival order (neither side starves), and no one
 * waits longer than `waitMs`. MySQL needs none of this: each transaction has a pooled connection.
 */
export class SqliteTransactionGate {
  // Who is inside is read from nestjs-cls's async context: the service's one AsyncLocalStorage.
  private readonly cls = ClsServiceManager.getClsService();
  private holder: object | undefined;
  private statementsRunning = 0;
  private readonly queue: Waiter[] = [];

  constructor(private readonly waitMs = SQLITE_GATE_WAIT_MS) {}

  /** Runs one statement: at once inside the open transaction or when none is open or waiting, else in turn. */
  statement<T>(run: () => Promise<T>): Promise<T> {
    if (this.holder === undefined && this.queue.length === 0) {
      // The path of nearly every statement: no promise of the gate's own, one `finally`.
      this.statementsRunning++;
      return this.running(run);
    }
    if (this.holder !== undefined && this.insideHolder()) return run();
    return this.turn('statement', {}).then(() => this.running(run));
  }

  private running<T>(run: () => Promise<T>): Promise<T> {
    try {
      return run().finally(this.statementDone);
    } catch (error) {
      this.statementDone();
      throw error;
    }
  }

  private readonly statementDone = (): void => {
    this.statementsRunning--;
    this.dispatch();
  };

  /** Runs a whole transaction, holding the connection from its BEGIN to its COMMIT or ROLLBACK. */
  async transaction<T>(run: () => Promise<T>): Promise<T> {
    // A transaction begun inside the open one is TypeORM's savepoint of it, in the same context.
    if (this.holder !== undefined && this.insideHolder()) return run();
    const token = {};
    if (this.holder === undefined && this.statementsRunning === 0 && this.queue.length === 0) this.holder = token;
    else await this.turn('transaction', token);
    try {
      return await this.cls.runWith({ ...this.cls.get(), [GATE_TOKEN]: token }, run);
    } finally {
      this.holder = undefined;
      this.dispatch();
    }
  }

  private insideHolder(): boolean {
    return (this.cls.get() as Record<symbol, unknown> | undefined)?.[GATE_TOKEN] === this.holder;
  }

  /** Waiting statements and transactions, for tests and metrics. */
  get waiting(): number {
    return this.queue.length;
  }

  private turn(kind: Waiter['kind'], token: object): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        kind,
        token,
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.queue.splice(this.queue.indexOf(waiter), 1);
        reject(new SqliteGateTimeoutError(this.waitMs));
        // A transaction that gave up may have been all that held back the statements behind it.
        this.dispatch();
      }, this.waitMs);
      this.queue.push(waiter);
    });
  }

  private dispatch(): void {
    while (this.holder === undefined && this.queue.length > 0) {
      const next = this.queue[0];
      if (next.kind === 'transaction') {
        if (this.statementsRunning > 0) return;
        this.queue.shift();
        this.holder = next.token;
        next.grant();
        return;
      }
      this.queue.shift();
      this.statementsRunning++;
      next.grant();
    }
  }
}

/**
 * Puts every statement and every `manager.transaction(…)` of a better-sqlite3 data source through the
 * gate. Installed after the SQLITE_BUSY retry, so a turn is waited for once and the retries happen in it.
 */
export function gateSqliteTransactions(
  dataSource: DataSource,
  gate = new SqliteTransactionGate(),
): SqliteTransactionGate {
  const queryRunner = dataSource.driver.createQueryRunner('master');
  const query = queryRunner.query.bind(queryRunner) as (...args: unknown[]) => Promise<unknown>;
  queryRunner.query = ((...args: unknown[]) => gate.statement(() => query(...args))) as QueryRunner['query'];
  const { manager } = dataSource;
  const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
  manager.transaction = (...args: unknown[]) => gate.transaction(() => transaction(...args));
  return gate;
}
