import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { normalizeIp, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { RATE_LIMIT_CONFIG, type RateLimitConfig } from '../config/config.module.js';
import { applyRateLimit, type RateLimitPolicy } from './rate-limit.headers.js';
import { RATE_LIMIT_STORE } from './rate-limit.store.js';

/**
 * The brute-force cap: every failed authentication (no token, a wrong one, a misplaced one) counts
 * against the client IP; past the cap the answer is 429 whatever token comes next. This is also what
 * limits anonymous floods, which never reach the per-principal RateLimitGuard. BearerAuthGuard
 * reports failures only after verification, so clients behind one NAT with valid keys are unaffected.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly policy: RateLimitPolicy;

  constructor(
    @Inject(RATE_LIMIT_CONFIG) config: RateLimitConfig,
    @Inject(RATE_LIMIT_STORE) private readonly store: ThrottlerStorage,
  ) {
    this.policy = {
      name: 'auth-failures',
      limit: config.authFailureLimit,
      windowSeconds: config.windowSeconds,
    };
  }

  /** Counts one failure of this request's client; sets the RateLimit headers, 429 once over the cap. */
  async countFailure(request: Request, response: Response): Promise<void> {
    const ip = normalizeIp(request.ip ?? 'unknown');
    const key = `${this.policy.name}:${createHash('sha256').update(ip).digest('base64url')}`;
    const windowMs = this.policy.windowSeconds * 1000;
    const record = await this.store.increment(key, windowMs, this.policy.limit, windowMs, this.policy.name);
    applyRateLimit(response, this.policy, record);
  }
}
