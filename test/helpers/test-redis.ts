import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * A connection of the test's own to the Redis at TEST_REDIS_URL, to read what the service wrote.
 * `whyUnreachable()` connects and answers null, or the error every test of the file should fail with
 * when no Redis answers (under CI=true and elsewhere: never a skip).
 */
export function testRedis(): { admin: Redis; whyUnreachable(): Promise<Error | null> } {
  const admin = new Redis(TEST_REDIS_URL, { lazyConnect: true, connectTimeout: 2_000, retryStrategy: () => null });
  let lastError: Error | undefined;
  admin.on('error', (error: Error) => (lastError = error));
  return {
    admin,
    whyUnreachable: async () => {
      try {
        await admin.connect();
        await admin.ping();
        return null;
      } catch (error) {
        return new Error(
          `Redis is not reachable at ${TEST_REDIS_URL} (${(lastError ?? (error as Error)).message}): these tests ` +
            'need a real Redis. Start one (docker compose up -d redis) or set TEST_REDIS_URL=redis://host:6379.' +
            (process.env.CI === 'true' ? ' CI=true: this is a failure, never a skip.' : ''),
        );
      }
    },
  };
}
