import { Logger } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';
import { Redis } from 'ioredis';
import type { RateLimitRecord } from './memory-rate-limit.store.js';

// One round trip, atomic: concurrent requests from every instance see one count, so a burst can never
// overshoot the limit. Returns hits, ms until the window resets, blocked (0/1), ms until unblocked, and
// Redis' clock in ms. An increment that arrives after its deadline (ARGV[4], Redis' clock; 0: none)
// changes nothing and returns hits -1: the client gave up on it and served the request uncounted, so
// bytes a stalled link delivers late must not count it again.
const INCREMENT_SCRIPT = `
local key, blockKey = KEYS[1], KEYS[2]
local ttl, limit, block, deadline = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if deadline > 0 and now > deadline then
  return { -1, 0, 0, 0, now }
end
local blocked = redis.call('PTTL', blockKey)
if blocked > 0 then
  return { tonumber(redis.call('GET', key) or '0'), math.max(redis.call('PTTL', key), 0), 1, blocked, now }
end
local hits = redis.call('INCR', key)
local expires = redis.call('PTTL', key)
if expires < 0 then
  redis.call('PEXPIRE', key, ttl)
  expires = ttl
end
if hits > limit then
  redis.call('SET', blockKey, '1', 'PX', block)
  return { hits, expires, 1, block, now }
end
return { hits, expires, 0, 0, now }
`;

export const COMMAND_TIMEOUT_MS = 500;
// ioredis keeps a command that timed out in its queue until a reply comes, which on a stalled link is
// never. A healthy Redis answers in well under a millisecond, so a few hundred outstanding commands
// already mean a stall; past this bound a request is served uncounted without sending anything.
export const MAX_QUEUED_COMMANDS = 256;
// ioredis' Command#setTimeout rejects with exactly this message.
const COMMAND_TIMED_OUT = 'Command timed out';
const FAILURE_LOG_INTERVAL_MS = 10_000;

type IncrementCommand = (
  key: string,
  blockKey: string,
  ttlMs: number,
  limit: number,
  blockMs: number,
  deadline: number,
) => Promise<[number, number, number, number, number]>;

/**
 * Counters shared by every instance through Redis. If Redis cannot be reached, or stops answering, the
 * store fails OPEN: the request is let through (uncounted) and a warning is logged at most every 10
 * seconds. Rate limiting protects the service; it must not be the reason the service is down. A stalled
 * link costs each request at most COMMAND_TIMEOUT_MS and holds at most MAX_QUEUED_COMMANDS commands,
 * and no request served uncounted is counted later.
 */
export class RedisRateLimitStore implements ThrottlerStorage {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: Redis;
  private lastFailureLog = 0;
  // Redis' clock minus performance.now(), to give each increment a deadline on Redis' clock.
  private serverClockOffsetMs: number | undefined;
  private serverClockRead: Promise<void> = Promise.resolve();

  constructor(
    url: string,
    private readonly keyPrefix: string,
  ) {
    this.redis = new Redis(url, {
      // Fail fast instead of queueing commands while disconnected: a request must not wait for Redis.
      enableOfflineQueue: false,
      // On every close ioredis fails the commands still waiting for a reply (with 0, it flushes the queue
      // at each reconnection attempt) and never writes them again on the next connection: each of them
      // was already served, uncounted.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectTimeout: 2_000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      lazyConnect: true,
    });
    this.redis.on('error', (error: Error) => this.reportFailure(error.message));
    // Each connection may reach another server (a failover), with a clock of its own.
    this.redis.on('ready', () => {
      this.serverClockRead = this.readServerClock();
    });
    // EVALSHA with the script cached server-side; ioredis falls back to EVAL after a Redis restart.
    this.redis.defineCommand('rateLimitIncrement', { numberOfKeys: 2, lua: INCREMENT_SCRIPT });
  }

  /** Connects before the service takes traffic, so the first requests are counted, with a deadline. */
  async connect(): Promise<void> {
    try {
      await this.redis.connect();
      await this.serverClockRead;
    } catch (error) {
      this.reportFailure((error as Error).message);
    }
  }

  async increment(key: string, ttlMs: number, limit: number, blockDurationMs: number): Promise<RateLimitRecord> {
    const uncounted = { totalHits: 0, timeToExpire: Math.ceil(ttlMs / 1000), isBlocked: false, timeToBlockExpire: 0 };
    if (this.redis.commandQueue.length >= MAX_QUEUED_COMMANDS) {
      this.reportFailure(`${MAX_QUEUED_COMMANDS} commands are waiting for a reply`);
      return uncounted;
    }
    const counter = `${this.keyPrefix}rl:${key}`;
    const stream = this.redis.stream;
    const sentAt = performance.now();
    try {
      const redis = this.redis as Redis & { rateLimitIncrement: IncrementCommand };
      const [hits, expiresMs, blocked, blockedMs, serverNowMs] = await redis.rateLimitIncrement(
        counter,
        `${counter}:blocked`,
        ttlMs,
        limit,
        blockDurationMs,
        this.deadline(sentAt),
      );
      this.learnServerClock(sentAt, serverNowMs);
      if (hits < 0) return uncounted;
      return {
        totalHits: hits,
        timeToExpire: Math.ceil(expiresMs / 1000),
        isBlocked: blocked === 1,
        timeToBlockExpire: Math.ceil(blockedMs / 1000),
      };
    } catch (error) {
      if ((error as Error).message === COMMAND_TIMED_OUT) this.dropStalledConnection(stream);
      this.reportFailure((error as Error).message);
      return uncounted;
    }
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  // Redis has not answered this command for COMMAND_TIMEOUT_MS, nor (replies come in order) anything sent
  // after it: the link is stalled. ioredis removes a command from its queue only when its reply arrives,
  // so the one way to empty the queue is to drop the connection; ioredis then fails what was queued and
  // reconnects on its own (retryStrategy), while requests are served uncounted at once.
  private dropStalledConnection(stream: Redis['stream']): void {
    // Only the connection the command went out on, and only once.
    if (!stream || this.redis.stream !== stream || stream.destroyed) return;
    try {
      // RST rather than FIN: the kernel discards what it has not sent yet instead of delivering it
      // when the link heals.
      stream.resetAndDestroy();
    } catch {
      // TLS and Unix sockets cannot send an RST.
      stream.destroy();
    }
  }

  // Even with the connection dropped, bytes already on the wire may reach Redis once a link heals; the
  // deadline makes the script ignore them. It is the client's own timeout, on Redis' clock.
  private deadline(sentAt: number): number {
    if (this.serverClockOffsetMs === undefined) return 0;
    return Math.ceil(sentAt + this.serverClockOffsetMs + COMMAND_TIMEOUT_MS);
  }

  // Off by at most half the round trip, which is under half the command timeout (later replies never
  // reach us): the line between an increment in time and a late one moves by that much, no more.
  private learnServerClock(sentAt: number, serverNowMs: number): void {
    this.serverClockOffsetMs = serverNowMs - (sentAt + performance.now()) / 2;
  }

  private async readServerClock(): Promise<void> {
    const sentAt = performance.now();
    try {
      const [seconds, microseconds] = await this.redis.time();
      this.learnServerClock(sentAt, Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000));
    } catch {
      // The next increment reads it instead.
    }
  }

  private reportFailure(reason: string): void {
    const now = Date.now();
    if (now - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.lastFailureLog = now;
    this.logger.warn({
      message: 'Redis is unavailable: requests are not rate limited (fail-open)',
      error: reason,
    });
  }
}
