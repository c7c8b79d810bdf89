import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { METRICS_CONFIG, type MetricsConfig } from '../config/config.module.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';

// Its own realm: the metrics token is not an API key and BearerAuthGuard knows nothing of it.
const REALM = 'Bearer realm="metrics"';

// RFC 6750 §2.1: the scheme is case-insensitive, the token is a b64token.
const BEARER_HEADER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** With METRICS_TOKEN set, /metrics needs `Authorization: Bearer <METRICS_TOKEN>`; without it, nothing. */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  private readonly expectedDigest: Buffer | null;

  constructor(@Inject(METRICS_CONFIG) config: MetricsConfig) {
    this.expectedDigest = config.metricsToken === null ? null : digest(config.metricsToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expectedDigest === null) return true;
    const header = context.switchToHttp().getRequest<Request>().headers.authorization;
    if (header === undefined) {
      throw new ProblemException(
        ProblemTypes.unauthorized,
        'Send the metrics token as Authorization: Bearer <token>.',
        {
          headers: { 'WWW-Authenticate': REALM },
        },
      );
    }
    const token = BEARER_HEADER.exec(header)?.[1];
    // Digests have one length whatever was sent, so the comparison is constant-time and reveals
    // nothing about the token's length either.
    if (token === undefined || !timingSafeEqual(digest(token), this.expectedDigest)) {
      throw new ProblemException(ProblemTypes.invalidToken, 'The metrics token is not valid.', {
        headers: { 'WWW-Authenticate': `${REALM}, error="invalid_token"` },
      });
    }
    return true;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
