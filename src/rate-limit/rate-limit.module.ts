import { Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerStorage } from '@nestjs/throttler';
import { RATE_LIMIT_CONFIG, type RateLimitConfig } from '../config/config.module.js';
import { MemoryRateLimitStore } from './memory-rate-limit.store.js';
import { RedisRateLimitStore } from './redis-rate-limit.store.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { RATE_LIMIT_STORE } from './rate-limit.store.js';

@Module({
  providers: [
    {
      provide: RATE_LIMIT_STORE,
      inject: [RATE_LIMIT_CONFIG],
      useFactory: (config: RateLimitConfig): ThrottlerStorage =>
        config.redisUrl === null
          ? new MemoryRateLimitStore()
          : new RedisRateLimitStore(config.redisUrl, config.redisKeyPrefix),
    },
  ],
  exports: [RATE_LIMIT_STORE],
})
class RateLimitStoreModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(RATE_LIMIT_STORE) private readonly store: ThrottlerStorage) {}

  async onModuleInit(): Promise<void> {
    if (this.store instanceof RedisRateLimitStore) await this.store.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.store instanceof RedisRateLimitStore) await this.store.close();
  }
}

/**
 * Counters (in memory, or in Redis with REDIS_URL), the throttler that uses them for the per-principal
 * budget (RateLimitGuard), and the brute-force cap on failed authentications (AuthFailureLimiter).
 * The store and the header writer stay inside this folder.
 */
@Module({
  imports: [
    RateLimitStoreModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [RATE_LIMIT_CONFIG, RATE_LIMIT_STORE],
      useFactory: (config: RateLimitConfig, storage: ThrottlerStorage) => ({
        throttlers: [{ name: 'default', limit: config.limit, ttl: config.windowSeconds * 1000 }],
        storage,
      }),
    }),
  ],
  providers: [AuthFailureLimiter],
  exports: [AuthFailureLimiter],
})
export class RateLimitModule {}
