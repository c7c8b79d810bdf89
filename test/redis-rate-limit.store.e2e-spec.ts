// @module-tag instance
// (drives the Redis store directly, not a service)
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RateLimitRecord } from '../src/rate-limit/memory-rate-limit.store.js';
import { RedisRateLimitStore } from '../src/rate-limit/redis-rate-limit.store.js';
import { TEST_REDIS_URL, testRedis } from './helpers/test-redis.js';

// Nothing listens on port 1: connections are refused at once.
const UNREACHABLE_REDIS_URL = 'redis://127.0.0.1:1';
// Both e2e projects run this file at the same time against the same Redis: every run has its own key space.
const RUN_PREFIX = `test:${randomUUID()}:`;
const LIMIT = 3;
const TTL_MS = 60_000;

describe('RedisRateLimitStore', () => {
  const { admin, whyUnreachable } = testRedis();
  // Why Redis could not be reached; then every test fails with it (under CI=true and elsewhere: never a skip).
  let unreachable: Error | undefined;
  const stores: RedisRateLimitStore[] = [];
  let testNumber = 0;
  let prefix: string;
  let warn: ReturnType<typeof vi.spyOn>;

  const open = async (url = TEST_REDIS_URL): Promise<RedisRateLimitStore> => {
    const store = new RedisRateLimitStore(url, prefix);
    stores.push(store);
    await store.connect();
    return store;
  };
  const counterKey = (key: string) => `${prefix}rl:${key}`;
  const blockKey = (key: string) => `${counterKey(key)}:blocked`;
  const hitRepeatedly = async (
    store: RedisRateLimitStore,
    key: string,
    times: number,
    ttlMs = TTL_MS,
    blockMs = TTL_MS,
    limit = LIMIT,
  ): Promise<RateLimitRecord[]> => {
    const records: RateLimitRecord[] = [];
    for (let hit = 0; hit < times; hit++) records.push(await store.increment(key, ttlMs, limit, blockMs));
    return records;
  };

  beforeAll(async () => {
    unreachable = (await whyUnreachable()) ?? undefined;
  });

  beforeEach(() => {
    if (unreachable) throw unreachable;
    prefix = `${RUN_PREFIX}${++testNumber}:`;
    // The store warns when it fails open; kept out of the output, and counted where it matters.
    warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    if (admin.status === 'ready') {
      const leftovers = await admin.keys(`${RUN_PREFIX}*`);
      if (leftovers.length > 0) await admin.del(...leftovers);
      await admin.quit();
    } else {
      admin.disconnect();
    }
  });

  describe('fixed window, shared through Redis', () => {
    it('lets hits 1 to limit through and counts each of them', async () => {
      const store = await open();

      const records = await hitRepeatedly(store, 'client', LIMIT);

      expect(records).toEqual([
        { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
        { totalHits: 2, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
        { totalHits: 3, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
      ]);
    });

    it('blocks hit limit + 1 for the block duration, rounded up to whole seconds', async () => {
      const store = await open();
      await hitRepeatedly(store, 'client', LIMIT, TTL_MS, 1_500);

      const record = await store.increment('client', TTL_MS, LIMIT, 1_500);

      expect(record).toEqual({ totalHits: LIMIT + 1, timeToExpire: 60, isBlocked: true, timeToBlockExpire: 2 });
    });

    it('does not count the calls a blocked client makes', async () => {
      const store = await open();
      await hitRepeatedly(store, 'client', LIMIT + 1);

      const records = await hitRepeatedly(store, 'client', 5);

      expect(records.map((record) => record.totalHits)).toEqual(Array<number>(5).fill(LIMIT + 1));
      expect(records.every((record) => record.isBlocked && record.timeToBlockExpire === 60)).toBe(true);
      expect(await admin.get(counterKey('client'))).toBe(String(LIMIT + 1));
    });

    it('starts the count again at 1 once the window and the block have both passed', async () => {
      const store = await open();
      await hitRepeatedly(store, 'client', LIMIT + 1, 1_000, 1_000);

      await sleep(1_150);
      const record = await store.increment('client', 1_000, LIMIT, 1_000);

      expect(record).toEqual({ totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 });
    });

    it('keeps a client blocked after its window has passed while the block lasts', async () => {
      const store = await open();
      await hitRepeatedly(store, 'client', LIMIT + 1, 1_000, 1_500);

      await sleep(1_100);
      const stillBlocked = await store.increment('client', 1_000, LIMIT, 1_500);
      await sleep(500);
      const released = await store.increment('client', 1_000, LIMIT, 1_500);

      expect(stillBlocked).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
      expect(released).toEqual({ totalHits: 1, timeToExpire: 1, isBlocked: false, timeToBlockExpire: 0 });
    });

    it('counts timeToExpire and timeToBlockExpire down in whole seconds, rounded up', async () => {
      const store = await open();
      const [first, blocking] = await hitRepeatedly(store, 'client', 2, 1_500, 1_500, 1);

      await sleep(700);
      const later = await store.increment('client', 1_500, 1, 1_500);

      expect(first).toEqual({ totalHits: 1, timeToExpire: 2, isBlocked: false, timeToBlockExpire: 0 });
      expect(blocking).toEqual({ totalHits: 2, timeToExpire: 2, isBlocked: true, timeToBlockExpire: 2 });
      expect(later).toEqual({ totalHits: 2, timeToExpire: 1, isBlocked: true, timeToBlockExpire: 1 });
    });

    it('keeps separate counts for different keys', async () => {
      const store = await open();
      await hitRepeatedly(store, 'first', LIMIT + 1);

      const second = await store.increment('second', TTL_MS, LIMIT, TTL_MS);
      const first = await store.increment('first', TTL_MS, LIMIT, TTL_MS);

      expect(second).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
      expect(first).toMatchObject({ totalHits: LIMIT + 1, isBlocked: true });
    });

    it('lets exactly the limit through twice the limit of concurrent calls from two instances', async () => {
      const limit = 50;
      const instances = [await open(), await open()];

      const records = await Promise.all(
        Array.from({ length: limit * 2 }, (_, call) => instances[call % 2].increment('burst', TTL_MS, limit, TTL_MS)),
      );

      const allowed = records.filter((record) => !record.isBlocked);
      expect(allowed).toHaveLength(limit);
      expect(new Set(allowed.map((record) => record.totalHits))).toEqual(
        new Set(Array.from({ length: limit }, (_, index) => index + 1)),
      );
      expect(records.filter((record) => record.isBlocked)).toHaveLength(limit);
      // The call that crossed the limit was the last one counted.
      expect(await admin.get(counterKey('burst'))).toBe(String(limit + 1));
    });
  });

  describe('keys in Redis', () => {
    it('gives the counter an expiry from its first hit', async () => {
      const store = await open();

      await store.increment('client', 1_000, LIMIT, 1_000);

      expect(await admin.keys(`${prefix}*`)).toEqual([counterKey('client')]);
      const pttl = await admin.pttl(counterKey('client'));
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(1_000);
    });

    it('keeps the counter and the block key only for the window and the block', async () => {
      const store = await open();
      await hitRepeatedly(store, 'client', LIMIT + 1, 1_000, 1_200);

      const keys = (await admin.keys(`${prefix}*`)).sort();
      const counterPttl = await admin.pttl(counterKey('client'));
      const blockPttl = await admin.pttl(blockKey('client'));
      await sleep(1_300);
      const keysAfterwards = await admin.keys(`${prefix}*`);

      expect(keys).toEqual([counterKey('client'), blockKey('client')].sort());
      expect(counterPttl).toBeGreaterThan(0);
      expect(counterPttl).toBeLessThanOrEqual(1_000);
      expect(blockPttl).toBeGreaterThan(0);
      expect(blockPttl).toBeLessThanOrEqual(1_200);
      expect(keysAfterwards).toEqual([]);
    });
  });

  describe('when Redis cannot be reached', () => {
    it('fails open: never throws, lets every call through uncounted, and answers at once', async () => {
      const store = await open(UNREACHABLE_REDIS_URL);

      const calls: { record: RateLimitRecord; milliseconds: number }[] = [];
      for (let call = 0; call < 5; call++) {
        const started = performance.now();
        const record = await store.increment('client', TTL_MS, 1, TTL_MS);
        calls.push({ record, milliseconds: performance.now() - started });
      }

      expect(calls.map((call) => call.record)).toEqual(
        Array<RateLimitRecord>(5).fill({ totalHits: 0, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 }),
      );
      expect(calls.filter((call) => call.milliseconds >= 1_000)).toEqual([]);
    });

    it('warns once, not on every failed call', async () => {
      const store = await open(UNREACHABLE_REDIS_URL);

      await hitRepeatedly(store, 'client', 5);

      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ message: expect.stringContaining('fail-open') as unknown }),
      );
    });

    it('closes a store whose connection was refused', async () => {
      const store = await open(UNREACHABLE_REDIS_URL);

      await expect(store.close()).resolves.toBeUndefined();
    });
  });

  describe('close()', () => {
    it('ends the connection: later calls fail open and count nothing', async () => {
      const store = await open();
      await store.increment('client', TTL_MS, LIMIT, TTL_MS);

      await store.close();
      const afterClose = await store.increment('client', TTL_MS, LIMIT, TTL_MS);

      expect(afterClose).toEqual({ totalHits: 0, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
      expect(await admin.get(counterKey('client'))).toBe('1');
    });

    it('closes a store that was never connected', async () => {
      const store = new RedisRateLimitStore(TEST_REDIS_URL, prefix);

      await expect(store.close()).resolves.toBeUndefined();
      expect(await store.increment('client', TTL_MS, LIMIT, TTL_MS)).toMatchObject({ totalHits: 0, isBlocked: false });
      expect(await admin.keys(`${prefix}*`)).toEqual([]);
    });

    it('can be called twice', async () => {
      const store = await open();

      await store.close();

      await expect(store.close()).resolves.toBeUndefined();
    });
  });
});
