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
// When full, room is made for this share of the cap at once: one pass per many insertions keeps the
// cost per new client constant (single deletions at the front of a large Map get slower and slower).
const EVICTION_SHARE = 0.1;

/**
 * Fixed-window counters for one process, in bounded memory. The library's default store keeps a
 * timer per key and grows with every distinct client (throttler#2629, #2665); this one has no timers,
 * and never holds more than `maxTrackedClients` windows. When full it drops every expired window and,
 * if that is not enough, the oldest live ones (their clients start afresh: under such a flood,
 * REDIS_URL is the answer). Map order is expiry order: a window moves to the end when it is blocked.
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
      if (window.hits > limit) {
        window.blockedUntil = now + blockDurationMs;
        // Blocked windows live longer than windows created after them: keep the Map in expiry order.
        this.windows.delete(key);
        this.windows.set(key, window);
      }
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
    const target = Math.floor(this.maxTrackedClients * (1 - EVICTION_SHARE));
    for (const [key, window] of this.windows) {
      if (window.resetAt <= now && window.blockedUntil <= now) this.windows.delete(key);
    }
    for (const key of this.windows.keys()) {
      if (this.windows.size <= target) break;
      this.windows.delete(key);
    }
  }
}

function seconds(milliseconds: number): number {
  return Math.max(0, Math.ceil(milliseconds / 1000));
}
