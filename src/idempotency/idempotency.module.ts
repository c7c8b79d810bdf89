import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyRecord } from './idempotency-record.entity.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * Idempotency-Key for the routes marked @Idempotent(): its table, the service that claims keys and
 * stores responses (@Idempotent() wraps the handlers with it), and the background cleanup of expired keys.
 */
@Module({
  imports: [TypeOrmModule.forFeature([IdempotencyRecord])],
  providers: [IdempotencyService],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
