import type { ThrottlerStorage } from '@nestjs/throttler';

interface Window {
  hits: number;
  resetAt: number;
  blockedUntil: number;
}

export interface RateLimitRecord {
  totalHits: number;
  /** Seconds until the window's count starts again. */
  timeToExpire: number;
  isBlocked: boolean;
  /** Seconds until a blocked client may try again. */
  timeToBlockExpire: number;
}

export const DEFAULT_MAX_TRACKED_CLIENTS = 50_000;
// How many of the oldest windows one insertion may examine for expiry before evicting the oldest.
const SWEEP_BATCH = 64;

/**
 * Fixed-window counters for one process, in bounded memory. The library's default store keeps a
 * timer per key and grows with every distinct client (throttler#2629, #2665); this one has no timers,
 * drops expired windows as it goes, and never holds more than `maxTrackedClients` windows: past that,
 * the oldest window is forgotten (its client starts afresh: under such a flood, REDIS_URL is the
 * answer). Map order is creation order, so the oldest windows are the first to expire.
 */
export class MemoryRateLimitStore implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly maxTrackedClients = DEFAULT_MAX_TRACKED_CLIENTS,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.windows.size;
  }

  increment(key: string, ttlMs: number, limit: number, blockDurationMs: number): Promise<RateLimitRecord> {
    const now = this.now();
    let window = this.windows.get(key);
    if (window && window.resetAt <= now && window.blockedUntil <= now) {
      this.windows.delete(key);
      window = undefined;
    }
    if (!window) {
      window = { hits: 0, resetAt: now + ttlMs, blockedUntil: 0 };
      this.makeRoom(now);
      this.windows.set(key, window);
    }
    if (window.blockedUntil <= now) {
      window.hits++;
      if (window.hits > limit) window.blockedUntil = now + blockDurationMs;
    }
    const isBlocked = window.blockedUntil > now;
    return Promise.resolve({
      totalHits: window.hits,
      timeToExpire: seconds(window.resetAt - now),
      isBlocked,
      timeToBlockExpire: isBlocked ? seconds(window.blockedUntil - now) : 0,
    });
  }

  private makeRoom(now: number): void {
    if (this.windows.size < this.maxTrackedClients) return;
    let examined = 0;
    for (const [key, window] of this.windows) {
      if (examined++ >= SWEEP_BATCH) break;
      if (window.resetAt <= now && window.blockedUntil <= now) this.windows.delete(key);
    }
    if (this.windows.size >= this.maxTrackedClients) this.windows.delete(this.windows.keys().next().value!);
  }
}

function seconds(milliseconds: number): number {
  return Math.max(0, Math.ceil(milliseconds / 1000));
}
