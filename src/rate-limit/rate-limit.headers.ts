import type { Response } from 'express';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import type { RateLimitRecord } from './memory-rate-limit.store.js';

export interface RateLimitPolicy {
  /** The policy's name in RateLimit-Policy / RateLimit ("default", "auth-failures"). */
  name: string;
  limit: number;
  windowSeconds: number;
}

/**
 * Tells the client its budget: the IETF httpapi draft's structured fields (RateLimit-Policy with quota
 * q and window w; RateLimit with remaining r and seconds to reset t) and the classic X-RateLimit-*
 * trio (Reset as Unix time, as GitHub sends it). Over the limit: 429 with Retry-After equal to t.
 */
export function applyRateLimit(response: Response, policy: RateLimitPolicy, record: RateLimitRecord): void {
  const remaining = record.isBlocked ? 0 : Math.max(0, policy.limit - record.totalHits);
  const reset = record.isBlocked ? record.timeToBlockExpire : record.timeToExpire;
  response.setHeader('RateLimit-Policy', `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`);
  response.setHeader('RateLimit', `"${policy.name}";r=${remaining};t=${reset}`);
  response.setHeader('X-RateLimit-Limit', String(policy.limit));
  response.setHeader('X-RateLimit-Remaining', String(remaining));
  response.setHeader('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + reset));
  if (record.isBlocked) {
    throw new ProblemException(
      ProblemTypes.rateLimited,
      `Rate limit of ${policy.limit} requests per ${policy.windowSeconds} s exceeded (${policy.name}); retry in ${reset} s.`,
      { headers: { 'Retry-After': String(reset) } },
    );
  }
}
