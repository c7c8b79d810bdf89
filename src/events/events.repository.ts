import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { DataSource, EntityManager, QueryRunner, Repository } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';
import { EntityRows, insertedId, type SqlStatement } from '../database/entity-rows.js';
import { EventRecord } from './event-record.entity.js';
import type { EventType, NewEvent, NewEventOfInsert } from './event-types.js';

/** Set on the query runner of a transaction that appended an event: its commit wakes the sequencer. */
export const EVENTS_APPENDED = Symbol('events-appended');

export interface SequenceState {
  lastPosition: number;
  purgedThrough: number;
}

/**
 * All SQL about events. Appends run in the transaction of the change (TransactionHost); the
 * sequencer's and the retention's statements run in transactions of their own, at READ COMMITTED on
 * MySQL so they take no gap locks that could deadlock with writers inserting events.
 */
@Injectable()
export class EventsRepository {
  private readonly rows: EntityRows<EventRecord>;
  private readonly mysql: boolean;
  private readonly occurredAtColumn: ColumnMetadata;

  constructor(
    @InjectRepository(EventRecord) private readonly events: Repository<EventRecord>,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.rows = new EntityRows(events);
    this.mysql = dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb';
    this.occurredAtColumn = events.metadata.findColumnWithPropertyName('occurredAt')!;
  }

  /**
   * Writes the event in the caller's transaction; there must be one, or a change could commit without
   * it. On SQLite the event's position is its rowid, taken by this INSERT: SQLite runs one write
   * transaction at a time (its write lock, and the service's SqliteTransactionGate within the
   * process), so rowids are taken in commit order, and a rolled-back insert gives its rowid back
   * (AUTOINCREMENT's counter rolls back with it): no gap, no sequencer run per write (migration
   * 1795000500000). MySQL commits concurrent transactions in any order, so there the position comes
   * after the commit (sequence()).
   */
  async append(event: NewEvent): Promise<void> {
    const manager = this.txHost.tx;
    const runner = manager.queryRunner;
    if (runner === undefined || !runner.isTransactionActive) {
      throw new Error('an event is appended in the transaction of the change it records');
    }
    const data = JSON.stringify(event.data);
    let position: number | true = true;
    if (this.mysql) {
      const record = this.events.create({
        position: null,
        type: event.type,
        postId: event.postId,
        occurredAt: event.occurredAt,
        data,
      });
      await this.rows.insert(record, manager);
    } else {
      // A statement that returns no rows: TypeORM's better-sqlite3 runner answers with the rowid.
      const rowid = await manager.query<number | bigint>(
        'INSERT INTO events (type, post_id, occurred_at, data) VALUES (?, ?, ?, ?)',
        [
          event.type,
          event.postId,
          this.dataSource.driver.preparePersistentValue(event.occurredAt, this.occurredAtColumn),
          data,
        ],
      );
      position = Number(rowid);
    }
    // After the commit: the position to announce (SQLite), or `true`, the sequencer's turn (MySQL).
    (runner.data as Record<symbol, unknown>)[EVENTS_APPENDED] = position;
  }

  /**
   * Whether insertWithEvent() can be used: MySQL, outside a transaction. SQLite needs no batch (its
   * statements make no network round trip), and within a transaction each statement joins it.
   */
  get batchesInserts(): boolean {
    return this.mysql && !this.txHost.isTransactionActive();
  }

  /**
   * Runs `insert` and the event of the row it inserts in one transaction, sent to MySQL as one
   * statement batch: START TRANSACTION, the INSERT, the event's INSERT (its id and data from
   * LAST_INSERT_ID()), COMMIT. One network round trip where the transaction's statements one by one
   * take four; each costs the service about as much CPU as the rest of a create (BENCHMARKS.md).
   * MySQL stops a batch at its first failing statement, so a failure leaves the transaction open:
   * it is rolled back on the same connection before the connection goes back to the pool. Returns
   * the inserted row's id; the sequencer numbers the event after the commit, as any other.
   */
  async insertWithEvent(insert: SqlStatement, event: NewEventOfInsert): Promise<number> {
    return this.inBatchedTransaction(async (runner) => {
      const results = (await runner.query(
        `START TRANSACTION; ${insert.sql}; ` +
          'INSERT INTO events (type, post_id, occurred_at, data) ' +
          'VALUES (?, LAST_INSERT_ID(), ?, CONCAT(?, LAST_INSERT_ID(), ?)); COMMIT',
        [
          ...insert.parameters,
          event.type,
          this.dataSource.driver.preparePersistentValue(event.occurredAt, this.occurredAtColumn),
          ...event.dataAroundId,
        ],
      )) as unknown[];
      return insertedId(results[1]);
    });
  }

  /**
   * Numbers committed events in insert order, up to `batch` of them, after the last position handed
   * out; returns the new last position and how many it numbered, or null when another instance's
   * sequencer holds the turn. MySQL only (on SQLite the INSERT takes the position).
   * The sequence row is the lock (SKIP LOCKED: never wait for it), so positions are handed out by
   * one sequencer at a time and each commits before the next reads: positions become visible in
   * order, with no gap a late commit could fill. Two statement batches, so two round trips: the
   * lock and the events to number, then their positions, the sequence row and the commit.
   */
  async sequence(batch: number): Promise<{ lastPosition: number; numbered: number } | null> {
    return this.inBatchedTransaction(async (runner) => {
      const [, , [state], pending] = (await runner.query(
        'SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION; ' +
          'SELECT last_position FROM event_sequence WHERE id = 1 FOR UPDATE SKIP LOCKED; ' +
          'SELECT id FROM events WHERE position IS NULL ORDER BY id LIMIT ?',
        [batch],
      )) as [unknown, unknown, Array<{ last_position: number | string }>, Array<{ id: number | string }>];
      if (state === undefined) {
        await runner.query('ROLLBACK');
        return null;
      }
      const last = Number(state.last_position);
      if (pending.length === 0) {
        await runner.query('COMMIT');
        return { lastPosition: last, numbered: 0 };
      }
      const ids = pending.map((row) => Number(row.id));
      const statements: string[] = [];
      const parameters: unknown[] = [];
      for (let start = 0; start < ids.length; start += 100) {
        const chunk = ids.slice(start, start + 100);
        const cases = chunk.map(() => 'WHEN ? THEN ?').join(' ');
        statements.push(
          `UPDATE events SET position = CASE id ${cases} END WHERE id IN (${chunk.map(() => '?').join(', ')})`,
        );
        parameters.push(...chunk.flatMap((id, index) => [id, last + start + index + 1]), ...chunk);
      }
      const next = last + ids.length;
      statements.push('UPDATE event_sequence SET last_position = ? WHERE id = 1', 'COMMIT');
      parameters.push(next);
      await runner.query(statements.join('; '), parameters);
      return { lastPosition: next, numbered: ids.length };
    });
  }

  /** The last position handed out (SQLite: AUTOINCREMENT's counter) and the last one retention removed. */
  async sequenceState(): Promise<SequenceState> {
    const [row] = await this.dataSource.query<
      Array<{ last_position: number | string | null; purged_through: number | string }>
    >(
      this.mysql
        ? 'SELECT last_position, purged_through FROM event_sequence WHERE id = 1'
        : `SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'events') AS last_position, purged_through ` +
            'FROM event_sequence WHERE id = 1',
    );
    return { lastPosition: Number(row.last_position ?? 0), purgedThrough: Number(row.purged_through) };
  }

  /** Events after `after` in feed order, at most `limit`, of the given types (all when empty). */
  async page(after: number, types: readonly EventType[], limit: number): Promise<EventRecord[]> {
    const typeFilter = types.length === 0 ? '' : ` AND type IN (${types.map(() => '?').join(', ')})`;
    const rows = await this.dataSource.query<Array<Record<string, unknown>>>(
      `SELECT ${this.columns()} FROM events WHERE position > ?${typeFilter} ORDER BY position LIMIT ?`,
      [after, ...types, limit],
    );
    return rows.map((row) => this.rows.hydrate(row));
  }

  /**
   * Removes the oldest events, in feed order, up to the first one that occurred at or after `cutoff`,
   * at most `batch`; returns how many. A seek on the position key from the last removal reads at
   * most `batch` rows, so a sweep with nothing to remove costs one short index read (no index on the
   * time). An event numbered late with an older time waits for those before it: the feed never gets
   * a hole in the middle. The retention mark moves first, in its own commit, so a reader that could
   * miss a removed event sees the mark and answers 410 instead.
   */
  async purgeBefore(cutoff: Date, batch: number): Promise<number> {
    const { purgedThrough } = await this.sequenceState();
    const oldest = await this.dataSource.query<Array<{ position: number | string; occurred_at: unknown }>>(
      'SELECT position, occurred_at FROM events WHERE position > ? ORDER BY position LIMIT ?',
      [purgedThrough, batch],
    );
    let through: number | undefined;
    let count = 0;
    for (const row of oldest) {
      const occurredAt = this.dataSource.driver.prepareHydratedValue(row.occurred_at, this.occurredAtColumn) as Date;
      if (occurredAt >= cutoff) break;
      through = Number(row.position);
      count++;
    }
    if (through === undefined) return 0;
    await this.dataSource.query(`UPDATE event_sequence SET purged_through = ? WHERE id = 1 AND purged_through < ?`, [
      through,
      through,
    ]);
    await this.inOwnTransaction((manager) =>
      manager.query('DELETE FROM events WHERE position IS NOT NULL AND position <= ?', [through]),
    );
    return count;
  }

  private inOwnTransaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.mysql ? this.dataSource.transaction('READ COMMITTED', work) : this.dataSource.transaction(work);
  }

  /**
   * Runs `work`, which opens and ends a MySQL transaction in statement batches, on a connection of
   * its own. MySQL stops a batch at its first failing statement, which leaves the transaction open:
   * it is rolled back on that connection before the connection goes back to the pool. (A broken
   * connection cannot roll back; mysql2 drops it from the pool, its transaction with it.)
   */
  private async inBatchedTransaction<T>(work: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner('master');
    try {
      return await work(runner);
    } catch (error) {
      await runner.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      await runner.release();
    }
  }

  private columns(): string {
    const { driver } = this.dataSource;
    return this.events.metadata.columns.map((column) => driver.escape(column.databaseName)).join(', ');
  }
}
