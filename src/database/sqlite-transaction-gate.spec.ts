import { describe, expect, it } from 'vitest';
import { SqliteGateTimeoutError, SqliteTransactionGate } from './sqlite-transaction-gate.js';
import { isSqliteBusy } from './sqlite-busy-retry.js';

/** A promise and the function that settles it. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A statement or transaction that only notes that it ran. */
function record(events: string[], event: string): () => Promise<void> {
  return () => {
    events.push(event);
    return Promise.resolve();
  };
}

describe('SqliteTransactionGate', () => {
  it('lets statements run side by side while no transaction holds the connection', async () => {
    const gate = new SqliteTransactionGate();
    const first = deferred();
    const events: string[] = [];

    const a = gate.statement(async () => {
      events.push('a starts');
      await first.promise;
      events.push('a ends');
    });
    const b = gate.statement(record(events, 'b runs'));
    await b;
    first.resolve();
    await a;

    expect(events).toEqual(['a starts', 'b runs', 'a ends']);
  });

  it('holds back a statement from outside an open transaction until it ends', async () => {
    const gate = new SqliteTransactionGate();
    const release = deferred();
    const events: string[] = [];

    const transaction = gate.transaction(async () => {
      events.push('begin');
      await release.promise;
      events.push('commit');
    });
    const outside = gate.statement(record(events, 'outside'));
    await tick();
    expect(gate.waiting).toBe(1);
    release.resolve();
    await Promise.all([transaction, outside]);

    expect(events).toEqual(['begin', 'commit', 'outside']);
  });

  it('runs the statements of the transaction itself, and a transaction nested in it, at once', async () => {
    const gate = new SqliteTransactionGate();
    const events: string[] = [];

    await gate.transaction(async () => {
      await gate.statement(record(events, 'inside'));
      await gate.transaction(async () => {
        events.push('savepoint');
        await gate.statement(record(events, 'inside the savepoint'));
      });
    });

    expect(events).toEqual(['inside', 'savepoint', 'inside the savepoint']);
  });

  it('runs one transaction at a time, and a transaction waits for the statements already running', async () => {
    const gate = new SqliteTransactionGate();
    const statement = deferred();
    const first = deferred();
    const events: string[] = [];

    const running = gate.statement(async () => {
      await statement.promise;
      events.push('statement ends');
    });
    const t1 = gate.transaction(async () => {
      events.push('t1 begins');
      await first.promise;
      events.push('t1 ends');
    });
    const t2 = gate.transaction(record(events, 't2 runs'));
    await tick();
    expect(events).toEqual([]);
    statement.resolve();
    await tick();
    first.resolve();
    await Promise.all([running, t1, t2]);

    expect(events).toEqual(['statement ends', 't1 begins', 't1 ends', 't2 runs']);
  });

  it('grants turns in arrival order: a statement that came before a waiting transaction runs first', async () => {
    const gate = new SqliteTransactionGate();
    const release = deferred();
    const events: string[] = [];

    const t1 = gate.transaction(() => release.promise);
    const statement = gate.statement(record(events, 'statement'));
    const t2 = gate.transaction(record(events, 't2'));
    const late = gate.statement(record(events, 'late statement'));
    release.resolve();
    await Promise.all([t1, statement, t2, late]);

    expect(events).toEqual(['statement', 't2', 'late statement']);
  });

  it('gives up after waitMs with a SQLITE_BUSY error (503), and the turn passes on', async () => {
    const gate = new SqliteTransactionGate(50);
    const release = deferred();

    const holder = gate.transaction(() => release.promise);
    const waiting = gate.statement(() => Promise.resolve('never'));
    const error: unknown = await waiting.catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(SqliteGateTimeoutError);
    expect(isSqliteBusy(error)).toBe(true);
    expect(gate.waiting).toBe(0);
    release.resolve();
    await holder;
    await expect(gate.statement(() => Promise.resolve('runs'))).resolves.toBe('runs');
  });

  it('releases the connection when a transaction fails', async () => {
    const gate = new SqliteTransactionGate();

    await expect(gate.transaction(() => Promise.reject(new Error('rollback')))).rejects.toThrow('rollback');

    await expect(gate.statement(() => Promise.resolve('runs'))).resolves.toBe('runs');
    await expect(gate.transaction(() => Promise.resolve('commits'))).resolves.toBe('commits');
  });
});
