// Long file: the window, the bound on tracked clients and the memory tests share one hand-moved clock.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_TRACKED_CLIENTS, MemoryRateLimitStore, type RateLimitRecord } from './memory-rate-limit.store.js';

const T0 = 1_700_000_000_000;
const LIMIT = 3;
const TTL_MS = 60_000;

/** A clock the test moves by hand, and a store that reads it. */
function storeWithClock(maxTrackedClients?: number) {
  const clock = { now: T0 };
  const store = new MemoryRateLimitStore(maxTrackedClients, () => clock.now);
  const advance = (milliseconds: number) => {
    clock.now += milliseconds;
  };
  return { store, clock, advance };
}

async function hitRepeatedly(
  store: MemoryRateLimitStore,
  key: string,
  times: number,
  ttlMs = TTL_MS,
  blockMs = TTL_MS,
): Promise<RateLimitRecord[]> {
  const records: RateLimitRecord[] = [];
  for (let hit = 0; hit < times; hit++) records.push(await store.increment(key, ttlMs, LIMIT, blockMs));
  return records;
}

/** A real garbage collector: --expose-gc's, else the one V8 exposes to a new context; undefined if neither. */
function garbageCollector(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

function heapUsedAfterGc(gc: (() => void) | undefined): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

describe('MemoryRateLimitStore', () => {
  describe('fixed window', () => {
    it('lets hits 1 to limit through and counts each of them', async () => {
      const { store } = storeWithClock();

      const records = await hitRepeatedly(store, 'client', LIMIT);

      expect(records).toEqual([
        { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
        { totalHits: 2, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
        { totalHits: 3, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 },
      ]);
    });

    it('blocks hit limit + 1 for the block duration, rounded up to whole seconds', async () => {
      const { store } = storeWithClock();
      await hitRepeatedly(store, 'client', LIMIT, TTL_MS, 1_500);

      const record = await store.increment('client', TTL_MS, LIMIT, 1_500);

      expect(record).toEqual({ totalHits: LIMIT + 1, timeToExpire: 60, isBlocked: true, timeToBlockExpire: 2 });
    });

    it('does not count the calls a blocked client makes', async () => {
      const { store, advance } = storeWithClock();
      await hitRepeatedly(store, 'client', LIMIT + 1, TTL_MS, 30_000);

      const records: RateLimitRecord[] = [];
      for (let call = 0; call < 5; call++) {
        advance(5_000);
        records.push(await store.increment('client', TTL_MS, LIMIT, 30_000));
      }

      expect(records.map((record) => record.totalHits)).toEqual(Array<number>(5).fill(LIMIT + 1));
      expect(records.every((record) => record.isBlocked)).toBe(true);
      expect(records.map((record) => record.timeToBlockExpire)).toEqual([25, 20, 15, 10, 5]);
    });

    it('starts the count again at 1 once the window and the block have both passed', async () => {
      const { store, advance } = storeWithClock();
      await hitRepeatedly(store, 'client', LIMIT + 1);

      advance(TTL_MS);
      const record = await store.increment('client', TTL_MS, LIMIT, TTL_MS);

      expect(record).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    });

    it('keeps a client blocked after its window has passed while the block lasts', async () => {
      const { store, advance } = storeWithClock();
      await hitRepeatedly(store, 'client', LIMIT + 1, TTL_MS, 90_000);

      advance(TTL_MS + 1_000);
      const stillBlocked = await store.increment('client', TTL_MS, LIMIT, 90_000);
      advance(29_000);
      const released = await store.increment('client', TTL_MS, LIMIT, 90_000);

      expect(stillBlocked).toEqual({ totalHits: LIMIT + 1, timeToExpire: 0, isBlocked: true, timeToBlockExpire: 29 });
      expect(released).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
    });

    it('keeps counting in the same window until the window has fully passed', async () => {
      const { store, advance } = storeWithClock();
      await hitRepeatedly(store, 'client', 2);

      advance(TTL_MS - 1);
      const record = await store.increment('client', TTL_MS, LIMIT, TTL_MS);

      expect(record).toMatchObject({ totalHits: 3, timeToExpire: 1, isBlocked: false });
    });

    it('counts timeToExpire down in whole seconds, rounded up', async () => {
      const { store, clock } = storeWithClock();
      const elapsed = [0, 1, 999, 1_000, 1_001, 30_500, 59_000, 59_001, 59_999];

      const remaining: number[] = [];
      for (const milliseconds of elapsed) {
        clock.now = T0 + milliseconds;
        remaining.push((await store.increment('client', TTL_MS, 100, TTL_MS)).timeToExpire);
      }

      expect(remaining).toEqual([60, 60, 60, 59, 59, 30, 1, 1, 1]);
    });

    it('keeps separate counts for different keys', async () => {
      const { store } = storeWithClock();
      await hitRepeatedly(store, 'first', LIMIT + 1);

      const second = await store.increment('second', TTL_MS, LIMIT, TTL_MS);
      const first = await store.increment('first', TTL_MS, LIMIT, TTL_MS);

      expect(second).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
      expect(first).toMatchObject({ totalHits: LIMIT + 1, isBlocked: true });
      expect(store.size).toBe(2);
    });

    it('lets exactly the limit through 200 concurrent calls for one key with a limit of 100', async () => {
      const { store } = storeWithClock();

      const records = await Promise.all(
        Array.from({ length: 200 }, () => store.increment('burst', TTL_MS, 100, TTL_MS)),
      );

      const allowed = records.filter((record) => !record.isBlocked);
      expect(allowed).toHaveLength(100);
      expect(new Set(allowed.map((record) => record.totalHits))).toEqual(
        new Set(Array.from({ length: 100 }, (_, index) => index + 1)),
      );
      expect(records.filter((record) => record.isBlocked)).toHaveLength(100);
    });
  });

  describe('bounded memory', () => {
    it('tracks at most maxTrackedClients windows however many distinct keys arrive', async () => {
      const { store } = storeWithClock(1_000);

      for (let client = 0; client < 100_000; client++) await store.increment(`client-${client}`, TTL_MS, LIMIT, TTL_MS);

      expect(store.size).toBe(1_000);
      // The most recent clients are the ones still counted.
      expect((await store.increment('client-99999', TTL_MS, LIMIT, TTL_MS)).totalHits).toBe(2);
      expect((await store.increment('client-99000', TTL_MS, LIMIT, TTL_MS)).totalHits).toBe(2);
      expect(store.size).toBe(1_000);
    });

    it('drops expired windows before it evicts live ones', async () => {
      // The 10 oldest windows last a minute; the 990 behind them expire after one second.
      const { store, advance } = storeWithClock(1_000);
      for (let client = 0; client < 10; client++) await store.increment(`steady-${client}`, TTL_MS, LIMIT, TTL_MS);
      for (let client = 0; client < 990; client++) await store.increment(`old-${client}`, 1_000, LIMIT, 1_000);
      advance(2_000);

      for (let client = 0; client < 990; client++) await store.increment(`new-${client}`, TTL_MS, LIMIT, TTL_MS);

      expect(store.size).toBe(1_000);
      const live = [
        ...Array.from({ length: 10 }, (_, client) => `steady-${client}`),
        ...Array.from({ length: 990 }, (_, client) => `new-${client}`),
      ];
      const again = await Promise.all(live.map((key) => store.increment(key, TTL_MS, LIMIT, TTL_MS)));
      expect(live.filter((_, index) => again[index].totalHits !== 2)).toEqual([]);
      expect(store.size).toBe(1_000);
    });

    it('drops an expired window as soon as its key comes back, and counts from 1', async () => {
      const { store, advance } = storeWithClock(2);
      await store.increment('a', 1_000, LIMIT, 1_000);
      await store.increment('b', TTL_MS, LIMIT, TTL_MS);
      advance(1_000);

      const record = await store.increment('a', TTL_MS, LIMIT, TTL_MS);
      await store.increment('c', TTL_MS, LIMIT, TTL_MS);

      expect(record.totalHits).toBe(1);
      expect(store.size).toBe(2);
      // 'b' (created before 'a' came back) is now the oldest window and the one evicted for 'c'.
      expect((await store.increment('a', TTL_MS, LIMIT, TTL_MS)).totalHits).toBe(2);
      expect((await store.increment('b', TTL_MS, LIMIT, TTL_MS)).totalHits).toBe(1);
    });

    it('drops expired windows before it evicts a window whose block outlasts its place in line', async () => {
      // The oldest 64 windows are blocked (their blocks end at 1,900 ms); the 36 after them expire at 1,100 ms.
      const { store, clock } = storeWithClock(100);
      for (let client = 0; client < 64; client++) await store.increment(`abuser-${client}`, 1_000, 1, 1_000);
      clock.now = T0 + 100;
      for (let client = 0; client < 36; client++) await store.increment(`idle-${client}`, 1_000, 1, 1_000);
      clock.now = T0 + 900;
      for (let client = 0; client < 64; client++) await store.increment(`abuser-${client}`, 1_000, 1, 1_000);
      clock.now = T0 + 1_200;

      await store.increment('newcomer', 1_000, 1, 1_000);
      const abusers = await Promise.all(
        Array.from({ length: 64 }, (_, client) => store.increment(`abuser-${client}`, 1_000, 1, 1_000)),
      );

      expect(abusers.filter((record) => !record.isBlocked)).toEqual([]);
    });

    it('stays at the default cap of 50,000 windows, and its heap stops growing there', async ({ annotate }) => {
      const { store } = storeWithClock();
      const gc = garbageCollector();
      const track = async (from: number, to: number) => {
        for (let client = from; client < to; client++) {
          await store.increment(`tracker-${client}`, TTL_MS, LIMIT, TTL_MS);
        }
      };
      const empty = heapUsedAfterGc(gc);

      await track(0, 100_000);
      const sizeAt100k = store.size;
      const heapAt100k = heapUsedAfterGc(gc);
      await track(100_000, 200_000);
      const sizeAt200k = store.size;
      const heapAt200k = heapUsedAfterGc(gc);

      const footprint = heapAt100k - empty;
      const growth = heapAt200k - heapAt100k;
      const kb = (bytes: number) => `${Math.round(bytes / 1024)} KiB`;
      await annotate(
        `gc: ${gc ? 'yes' : 'no'}; size at 100k: ${sizeAt100k}, at 200k: ${sizeAt200k}; ` +
          `heapUsed empty ${kb(empty)}, at 100k ${kb(heapAt100k)} (store ${kb(footprint)}), ` +
          `at 200k ${kb(heapAt200k)} (growth ${kb(growth)})`,
      );
      expect(DEFAULT_MAX_TRACKED_CLIENTS).toBe(50_000);
      expect(sizeAt100k).toBe(50_000);
      expect(sizeAt200k).toBe(50_000);
      if (gc) {
        // 50,000 more windows would take about as much again as the first 50,000 did.
        expect(footprint).toBeGreaterThan(0);
        expect(growth).toBeLessThan(Math.max(footprint * 0.1, 512 * 1024));
      } else {
        // Without a collection, garbage blurs the figures (tens of MB): only a gross leak shows.
        expect(growth).toBeLessThan(64 * 1024 * 1024);
      }
    }, 120_000);
  });
});
