// @module-tag instance
// (starts its own instance, whose Redis sits behind a proxy that stalls)
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RATE_LIMIT_STORE } from '../src/rate-limit/rate-limit.store.js';
import {
  COMMAND_TIMEOUT_MS,
  MAX_QUEUED_COMMANDS,
  type RedisRateLimitStore,
} from '../src/rate-limit/redis-rate-limit.store.js';
import { client, type Client, type HttpResult } from './helpers/http.js';
import { type Stall, StallingProxy } from './helpers/stalling-proxy.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { TEST_REDIS_URL, testRedis } from './helpers/test-redis.js';

const LIMIT = 10;
const WINDOW_MS = 60_000;
const MEGABYTE = 1024 * 1024;

// Heap readings after a full collection compare live objects, not garbage the GC has not reached yet.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** ioredis' own queues: what a stalled link used to grow without bound. */
function queuedCommands(store: RedisRateLimitStore): number {
  const { redis } = store as unknown as {
    redis: { commandQueue: { length: number }; offlineQueue: { length: number } };
  };
  return redis.commandQueue.length + redis.offlineQueue.length;
}

/** Runs `count` tasks, at most `concurrency` at a time, and returns their results in order. */
async function inParallel<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

describe('rate limiting when Redis stalls', () => {
  const { admin, whyUnreachable } = testRedis();
  // Why Redis could not be reached; then every test fails with it (never a skip).
  let unreachable: Error | undefined;
  let proxy: StallingProxy;
  let prefix: string;
  let app: TestApp | undefined;

  const start = async (): Promise<{ api: Client; store: RedisRateLimitStore }> => {
    app = await startTestApp({
      env: {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        REDIS_KEY_PREFIX: prefix,
        THROTTLE_LIMIT: String(LIMIT),
        THROTTLE_TTL: String(WINDOW_MS / 1000),
      },
    });
    const started = app;
    const api = client(
      () => started.baseUrl,
      () => started.writerToken,
    );
    return { api, store: started.app.get<RedisRateLimitStore>(RATE_LIMIT_STORE) };
  };

  /** Until an increment is counted again (on a key of its own, so the client's count stays untouched). */
  const waitUntilCounting = async (store: RedisRateLimitStore): Promise<void> => {
    const deadline = Date.now() + 15_000;
    while ((await store.increment('probe', WINDOW_MS, 1_000_000, WINDOW_MS)).totalHits === 0) {
      if (Date.now() > deadline) throw new Error('Redis did not count again within 15 s of the link coming back');
      await sleep(100);
    }
  };

  /** The writer's counter (its key is a hash of the principal): the only per-principal key in the run. */
  const principalKeys = async (): Promise<string[]> => (await admin.keys(`${prefix}rl:default:*`)).sort();

  beforeAll(async () => {
    unreachable = (await whyUnreachable()) ?? undefined;
  });

  beforeEach(async () => {
    if (unreachable) throw unreachable;
    const { hostname, port } = new URL(TEST_REDIS_URL);
    proxy = new StallingProxy({ host: hostname, port: Number(port || 6379) });
    await proxy.start();
    prefix = `test:${randomUUID()}:`;
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    await proxy?.stop();
    if (admin.status !== 'ready') return;
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  });

  afterAll(async () => {
    if (admin.status === 'ready') await admin.quit();
    else admin.disconnect();
  });

  it(
    'keeps the ioredis queues and the heap flat over 20,000 requests while answering 2xx',
    { timeout: 90_000 },
    async () => {
      const { api, store } = await start();
      proxy.stall('middlebox');
      collectGarbage();
      const heapBefore = process.memoryUsage().heapUsed;
      let mostQueued = 0;

      // Straight to the store, 500 at a time: 20,000 requests over HTTP would take minutes on two cores.
      for (let batch = 0; batch < 40; batch++) {
        const calls = Array.from({ length: 500 }, () => store.increment('flood', WINDOW_MS, LIMIT, WINDOW_MS));
        mostQueued = Math.max(mostQueued, queuedCommands(store));
        await Promise.all(calls);
      }
      const responses = await inParallel(300, 10, async () => {
        const response = await api.get('/posts');
        mostQueued = Math.max(mostQueued, queuedCommands(store));
        return response;
      });
      collectGarbage();
      const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

      expect(responses.filter((response) => response.status !== 200)).toEqual([]);
      expect(mostQueued).toBeLessThanOrEqual(MAX_QUEUED_COMMANDS);
      // Unbounded, 20,000 queued commands hold about 40 MB; bounded, the growth does not depend on the count.
      expect(heapGrowth).toBeLessThan(24 * MEGABYTE);
    },
  );

  it(
    'answers within about the command timeout, and only the first requests wait that long',
    {
      timeout: 60_000,
    },
    async () => {
      const { api } = await start();
      proxy.stall('middlebox');

      const concurrency = 10;
      const calls = await inParallel(200, concurrency, async () => {
        const started = performance.now();
        const response = await api.get('/posts');
        return { status: response.status, milliseconds: performance.now() - started };
      });

      expect(calls.filter((call) => call.status !== 200)).toEqual([]);
      expect(Math.max(...calls.map((call) => call.milliseconds))).toBeLessThan(COMMAND_TIMEOUT_MS + 1_500);
      // The first wave waits for the timeout that reveals the stall; later requests do not wait for one.
      const waited = calls.filter((call) => call.milliseconds >= COMMAND_TIMEOUT_MS);
      expect(waited.length).toBeLessThanOrEqual(2 * concurrency);
    },
  );

  it.each<{ comesBack: string; stall: Stall; restore: (stalled: StallingProxy) => void }>([
    { comesBack: 'the link heals', stall: 'link', restore: (stalled) => stalled.resume() },
    { comesBack: 'a middlebox delivers what it held', stall: 'middlebox', restore: (stalled) => stalled.resume() },
    {
      comesBack: 'the connection is cut and made again',
      stall: 'middlebox',
      restore: (stalled) => {
        stalled.cut();
        stalled.resume();
      },
    },
  ])('counts none of the requests served during a stall once $comesBack', { timeout: 60_000 }, async (path) => {
    const { api, store } = await start();
    proxy.stall(path.stall);
    const duringStall = await inParallel(LIMIT * 3, 10, () => api.get('/posts'));
    // The stall outlasts the deadline of every increment sent during it.
    await sleep(COMMAND_TIMEOUT_MS);

    path.restore(proxy);
    await waitUntilCounting(store);
    const afterwards: HttpResult[] = [];
    for (let request = 0; request < 3; request++) afterwards.push(await api.get('/posts'));

    expect(duringStall.filter((response) => response.status !== 200)).toEqual([]);
    expect(afterwards.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(afterwards.map((response) => response.headers.get('x-ratelimit-remaining'))).toEqual(
      [1, 2, 3].map((hits) => String(LIMIT - hits)),
    );
    const keys = await principalKeys();
    expect(keys).toHaveLength(1);
    expect(await admin.get(keys[0])).toBe('3');
  });
});
