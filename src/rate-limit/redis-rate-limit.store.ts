import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import type { RateLimitRecord } from './memory-rate-limit.store.js';

// One round trip, atomic: concurrent requests from every instance see one count, so a burst can never
// overshoot the limit. Returns hits, ms until the window resets, blocked (0/1), ms until unblocked.
const INCREMENT_SCRIPT = `
local key, blockKey = KEYS[1], KEYS[2]
local ttl, limit, block = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local blocked = redis.call('PTTL', blockKey)
if blocked > 0 then
  return { tonumber(redis.call('GET', key) or '0'), math.max(redis.call('PTTL', key), 0), 1, blocked }
end
local hits = redis.call('INCR', key)
local expires = redis.call('PTTL', key)
if expires < 0 then
  redis.call('PEXPIRE', key, ttl)
  expires = ttl
end
if hits > limit then
  redis.call('SET', blockKey, '1', 'PX', block)
  return { hits, expires, 1, block }
end
return { hits, expires, 0, 0 }
`;

const FAILURE_LOG_INTERVAL_MS = 10_000;

type IncrementCommand = (
  key: string,
  blockKey: string,
  ttlMs: number,
  limit: number,
  blockMs: number,
) => Promise<[number, number, number, number]>;

/**
 * Counters shared by every instance through Redis. If Redis cannot be reached the store fails OPEN:
 * the request is let through (uncounted) and a warning is logged at most every 10 seconds. Rate
 * limiting protects the service; it must not become the reason the service is down.
 */
export class RedisRateLimitStore implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private lastFailureLog = 0;

  constructor(
    url: string,
    private readonly keyPrefix: string,
  ) {
    this.redis = new Redis(url, {
      // Fail fast instead of queueing commands while disconnected: a request must not wait for Redis.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      commandTimeout: 500,
      lazyConnect: true,
    });
    this.redis.on('error', (error: Error) => this.reportFailure(error));
    // EVALSHA with the script cached server-side; ioredis falls back to EVAL after a Redis restart.
    this.redis.defineCommand('rateLimitIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
  }

  /** Connects before the service takes traffic, so the first requests are counted too. */
  async connect(): Promise<void> {
    try {
      await this.redis.connect();
    } catch (error) {
      this.reportFailure(error as Error);
    }
  }

  async increment(key: string, ttlMs: number, limit: number, blockDurationMs: number): Promise<RateLimitRecord> {
    const counter = `${this.keyPrefix}rl:${key}`;
    try {
      const redis = this.redis as Redis & { rateLimitIncrement: IncrementCommand };
      const [hits, expiresMs, blocked, blockedMs] = await redis.rateLimitIncrement(
        counter,
        `${counter}:blocked`,
        ttlMs,
        limit,
        blockDurationMs,
      );
      return {
        totalHits: hits,
        timeToExpire: Math.ceil(expiresMs / 1000),
        isBlocked: blocked === 1,
        timeToBlockExpire: Math.ceil(blockedMs / 1000),
      };
    } catch (error) {
      this.reportFailure(error as Error);
      return { totalHits: 0, timeToExpire: Math.ceil(ttlMs / 1000), isBlocked: false, timeToBlockExpire: 0 };
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private reportFailure(error: Error): void {
    const now = Date.now();
    if (now - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.lastFailureLog = now;
    this.logger.warn({
      message: 'Redis is unavailable: requests are not rate limited (fail-open)',
      error: error.message,
    });
  }
}
