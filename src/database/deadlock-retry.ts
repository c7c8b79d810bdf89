import { setTimeout as delay } from 'node:timers/promises';
import type { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isDeadlock } from './database-errors.js';

// Attempts of a transaction that InnoDB keeps choosing as a deadlock's victim; then the error stands (503).
const ATTEMPTS = 4;

/**
 * Runs `work` in a transaction of its own, again when InnoDB rolled it back to break a deadlock
 * (ER_LOCK_DEADLOCK): the whole transaction is undone then, so running it again is safe, and it is
 * what MySQL's manual tells applications to do. Writes that lock rows of two tables (a post moving
 * to or from the trash) can deadlock with each other however carefully they order their locks: a
 * row's shared lock from a duplicate-key check is upgraded behind a waiting exclusive request.
 * Inside a caller's transaction the error goes to the caller, whose transaction it is.
 */
export async function inRetriedTransaction<T>(
  txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  work: () => Promise<T>,
): Promise<T> {
  if (txHost.isTransactionActive()) return txHost.withTransaction(work);
  for (let attempt = 1; ; attempt++) {
    try {
      return await txHost.withTransaction(work);
    } catch (error) {
      if (attempt >= ATTEMPTS || !isDeadlock(error)) throw error;
      // Jittered, so the transactions that deadlocked do not meet again at once.
      await delay(Math.floor(Math.random() * 10 * attempt) + 1);
    }
  }
}
