/** The counters (MemoryRateLimitStore, or RedisRateLimitStore with REDIS_URL); private to rate-limit/. */
export const RATE_LIMIT_STORE = Symbol('RATE_LIMIT_STORE');
