import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { IsNull, LessThan, LessThanOrEqual, type Repository } from 'typeorm';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import { isUniqueViolation } from '../database/database-errors.js';
import { IdempotencyRecord } from './idempotency-record.entity.js';

// How long a key is remembered (documented): a retry within this window replays the first response.
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 60 * 60 * 1000;
// A first request that holds a key this long without finishing is presumed dead (its process
// crashed); a retry may then take the key over. Its writes were rolled back with its transaction.
const ABANDONED_AFTER_MS = 30_000;
const CLEANUP_INTERVAL_MS = 10 * 60 * 1000;
const CLEANUP_BATCH = 1_000;

export interface StoredResponse {
  status: number;
  /** The exact bytes of the JSON body, replayed as they are. */
  body: string;
  headers: Record<string, string>;
}

export interface IdempotentResult {
  response: StoredResponse;
  replayed: boolean;
}

export interface IdempotencyScope {
  principalId: string;
  key: string;
  requestDigest: string;
}

/**
 * Idempotency-Key (draft-ietf-httpapi-idempotency-key-header, Stripe's semantics): the first request
 * with a key runs and its response is stored in the same transaction as its writes; a repeat with the
 * same key and the same request gets that response again, a repeat with another request 422, and a
 * repeat while the first still runs 409. Keys are per principal and expire after 24 hours.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private cleanupTimer?: NodeJS.Timeout;

  constructor(
    @InjectRepository(IdempotencyRecord) private readonly recordRepository: Repository<IdempotencyRecord>,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {}

  /**
   * Runs `operation` once per key: in a transaction that also stores its response, so the writes
   * it makes (through repositories that read the transaction from the context) and the stored
   * response commit or roll back together. A repeat gets the stored response instead.
   */
  async execute(scope: IdempotencyScope, operation: () => Promise<StoredResponse>): Promise<IdempotentResult> {
    const claim = await this.claim(scope);
    if ('replay' in claim) return { response: claim.replay, replayed: true };
    try {
      const response = await this.txHost.withTransaction(async () => {
        const result = await operation();
        await this.txHost.tx.update(
          IdempotencyRecord,
          { id: claim.id },
          {
            responseStatus: result.status,
            responseBody: result.body,
            responseHeaders: JSON.stringify(result.headers),
          },
        );
        return result;
      });
      return { response, replayed: false };
    } catch (error) {
      // Nothing was written: release the key so that the client's retry runs again.
      await this.recordRepository.delete({ id: claim.id, responseStatus: IsNull() }).catch((cleanup: Error) => {
        this.logger.warn({ message: 'could not release an idempotency key', error: cleanup.message });
      });
      throw error;
    }
  }

  onModuleInit(): void {
    // Expired keys are deleted in the background, a bounded batch at a time through the expires_at
    // index; requests never scan for them (an expired key is simply treated as unused).
    this.cleanupTimer = setInterval(() => void this.deleteExpired(), CLEANUP_INTERVAL_MS);
    this.cleanupTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.cleanupTimer);
  }

  async deleteExpired(now = new Date()): Promise<number> {
    try {
      const expired = await this.recordRepository.find({
        select: { id: true },
        where: { expiresAt: LessThanOrEqual(now) },
        take: CLEANUP_BATCH,
      });
      if (expired.length === 0) return 0;
      await this.recordRepository.delete(expired.map((record) => record.id));
      return expired.length;
    } catch (error) {
      this.logger.warn({ message: 'could not delete expired idempotency keys', error: (error as Error).message });
      return 0;
    }
  }

  private async claim(scope: IdempotencyScope): Promise<{ id: number } | { replay: StoredResponse }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = new Date();
      try {
        const result = await this.recordRepository.insert({
          principalId: scope.principalId,
          idempotencyKey: scope.key,
          requestDigest: scope.requestDigest,
          responseStatus: null,
          responseBody: null,
          responseHeaders: null,
          lockedAt: now,
          expiresAt: new Date(now.getTime() + IDEMPOTENCY_KEY_TTL_MS),
        });
        return { id: Number(result.identifiers[0].id) };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }

      const existing = await this.recordRepository.findOneBy({
        principalId: scope.principalId,
        idempotencyKey: scope.key,
      });
      if (!existing) continue; // released or expired-and-deleted in between: try to claim again
      if (existing.expiresAt.getTime() <= now.getTime()) {
        await this.recordRepository.delete({ id: existing.id, expiresAt: LessThanOrEqual(now) });
        continue;
      }
      if (existing.requestDigest !== scope.requestDigest) {
        throw new ProblemException(
          ProblemTypes.idempotencyKeyReused,
          'This Idempotency-Key was already used with a different request; use a new key for a new request.',
        );
      }
      if (existing.responseStatus !== null) {
        return {
          replay: {
            status: existing.responseStatus,
            body: existing.responseBody ?? '',
            headers: JSON.parse(existing.responseHeaders ?? '{}') as Record<string, string>,
          },
        };
      }
      const abandonedBefore = new Date(now.getTime() - ABANDONED_AFTER_MS);
      const takeover = await this.recordRepository.update(
        { id: existing.id, responseStatus: IsNull(), lockedAt: LessThan(abandonedBefore) },
        { lockedAt: now },
      );
      if (takeover.affected) return { id: existing.id };
      throw new ProblemException(
        ProblemTypes.idempotencyKeyInUse,
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        { headers: { 'Retry-After': '1' } },
      );
    }
    throw new ProblemException(ProblemTypes.idempotencyKeyInUse, 'The Idempotency-Key is contended; retry shortly.', {
      headers: { 'Retry-After': '1' },
    });
  }
}
