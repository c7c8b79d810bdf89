import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { isUniqueViolation } from './database-errors.js';

/**
 * Sends TypeORM's messages through Nest's logger (levels, format, destination) instead of
 * console.log. Query parameters are left out: they hold client content, up to 100,000 characters a field.
 */
export class TypeOrmNestLogger implements TypeOrmLogger {
  private readonly logger = new Logger('Database');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    // A duplicate is an answer, not a fault: the idempotency claim and the key bootstrap insert
    // first and handle the refusal (a retry, a replay). The message would quote the duplicate value.
    if (isUniqueViolation(error)) {
      this.logger.debug({ message: 'query refused a duplicate; the caller handles it', query });
      return;
    }
    this.logger.error({ message: 'query failed', error: error instanceof Error ? error.message : error, query });
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn({ message: 'slow query', milliseconds: time, query });
  }

  logSchemaBuild(message: string): void {
    this.logger.debug(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(message);
    else this.logger.log(message);
  }
}
