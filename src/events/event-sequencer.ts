import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntitySubscriberInterface, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';
import { EVENTS_APPENDED, EventsRepository } from './events.repository.js';
import { FeedSignal } from './feed-signal.js';

const BATCH = 500;
// The backstop: events whose writer's process stopped between its commit and its sequencing, and
// retries after a database error. Commits on this instance are sequenced at once.
const SWEEP_INTERVAL_MS = 1_000;
// Another instance holds the turn: try again shortly (never wait on its lock).
const BUSY_RETRY_MS = 20;
// Commits within this long of one another are numbered in one run: under a steady stream of writes
// one run per 10 ms instead of one per commit, for at most 10 ms more before an event is in the feed.
const GATHER_MS = 10;

/**
 * Gives committed events their feed positions on MySQL/MariaDB (EventsRepository.sequence), within
 * GATHER_MS of the commit of a transaction that appended one (a TypeORM subscriber on the data source
 * sees it) and every second as a backstop. One run at a time per instance; a request for a run during
 * one makes one more run after it, so no commit is left waiting for the sweep. On SQLite events take
 * their position in their own INSERT: the subscriber only tells the waiting readers, and nothing runs.
 */
@Injectable()
export class EventSequencer implements OnModuleInit, OnApplicationShutdown, EntitySubscriberInterface {
  private readonly logger = new Logger('Events');
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private sweepTimer?: NodeJS.Timeout;
  private retryTimer?: NodeJS.Timeout;
  private gatherTimer?: NodeJS.Timeout;
  private readonly numbersAfterCommit: boolean;

  constructor(
    private readonly events: EventsRepository,
    private readonly signal: FeedSignal,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.numbersAfterCommit = dataSource.options.type !== 'better-sqlite3';
  }

  onModuleInit(): void {
    this.dataSource.subscribers.push(this);
    if (!this.numbersAfterCommit) return;
    this.sweepTimer = setInterval(() => this.schedule(), SWEEP_INTERVAL_MS).unref();
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweepTimer);
    clearTimeout(this.retryTimer);
    clearTimeout(this.gatherTimer);
    const index = this.dataSource.subscribers.indexOf(this);
    if (index >= 0) this.dataSource.subscribers.splice(index, 1);
    await this.running;
  }

  // The outermost commit of a transaction that appended an event (a savepoint's release is not one):
  // on SQLite its event has its position already, which readers waiting here learn at once; on
  // MySQL the sequencer numbers it now.
  afterTransactionCommit({ queryRunner }: TransactionCommitEvent): void {
    const data = queryRunner.data as Record<symbol, unknown>;
    const appended = data[EVENTS_APPENDED];
    if (queryRunner.isTransactionActive || appended === undefined) return;
    delete data[EVENTS_APPENDED];
    if (typeof appended === 'number') this.signal.advance(appended);
    else this.committed();
  }

  /** An event was committed without a position (MySQL): numbers it within GATHER_MS. */
  committed(): void {
    // Later than the commit's own bookkeeping in any case: this may run inside TypeORM's commitTransaction().
    this.gatherTimer ??= setTimeout(this.gathered, GATHER_MS);
  }

  private readonly gathered = (): void => {
    this.gatherTimer = undefined;
    this.schedule();
  };

  afterTransactionRollback({ queryRunner }: TransactionRollbackEvent): void {
    if (!queryRunner.isTransactionActive) delete (queryRunner.data as Record<symbol, unknown>)[EVENTS_APPENDED];
  }

  /** Runs the sequencer now, or once more after the run in progress. */
  schedule(): void {
    if (this.stopped || !this.numbersAfterCommit) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = this.run().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves when every event committed before the call has a position (tests, benchmarks). */
  async settle(): Promise<void> {
    this.schedule();
    while (this.running !== undefined) await this.running;
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      try {
        let numbered: number;
        do {
          const turn = await this.events.sequence(BATCH);
          if (turn === null) {
            this.retryTimer = setTimeout(() => this.schedule(), BUSY_RETRY_MS).unref();
            return;
          }
          this.signal.advance(turn.lastPosition);
          numbered = turn.numbered;
        } while (numbered === BATCH && !this.stopped);
      } catch (error) {
        if (this.stopped) return;
        this.logger.warn(`sequencing events failed; the next sweep retries: ${(error as Error).message}`);
        return;
      }
    } while (this.again && !this.stopped);
  }
}
