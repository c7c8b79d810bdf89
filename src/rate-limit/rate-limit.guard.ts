import { hash } from 'node:crypto';
import { Injectable, type ExecutionContext } from '@nestjs/common';
import { normalizeIp, ThrottlerGuard, type ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { applyRateLimit } from './rate-limit.headers.js';

/**
 * The global ThrottlerGuard, registered after BearerAuthGuard: by then the principal is known, so
 * each API key or OAuth subject has one budget across routes and client addresses (a tenant behind a
 * NAT does not starve its neighbours; rotating addresses buys nothing). Requests that fail
 * authentication never get here; BearerAuthGuard counts those per client IP instead.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  // request.user: the principal BearerAuthGuard set; only its id counts here.
  protected override getTracker(request: Request & { user?: { id: string } }): Promise<string> {
    return Promise.resolve(request.user ? request.user.id : `ip:${normalizeIp(request.ip ?? 'unknown')}`);
  }

  // One budget per tracker for the whole API (the library's default is one per route).
  protected override generateKey(_: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${hash('sha256', tracker, 'base64url')}`;
  }

  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = request;
    const http = context.switchToHttp();
    const tracker = await getTracker(http.getRequest(), context);
    const name = throttler.name ?? 'default';
    const record = await this.storageService.increment(
      generateKey(context, tracker, name),
      ttl,
      limit,
      blockDuration,
      name,
    );
    applyRateLimit(http.getResponse<Response>(), { name, limit, windowSeconds: Math.round(ttl / 1000) }, record);
    return true;
  }
}
