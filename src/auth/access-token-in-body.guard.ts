import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { invalidRequest } from './bearer-errors.js';

/**
 * RFC 6750 §2.2 lets a client put its token in a form body; this API takes it from the Authorization
 * header only (see BearerAuthGuard), so a JSON body with an `access_token` member is refused too (400
 * invalid_request). Registered after JsonBodyGuard, which reads the body; a request without one
 * (every GET) passes at once.
 */
@Injectable()
export class AccessTokenInBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const body = context.switchToHttp().getRequest<Request>().body as unknown;
    if (typeof body === 'object' && body !== null && Object.hasOwn(body, 'access_token')) {
      throw invalidRequest('Send the access token in the Authorization header, never in the request body.');
    }
    return true;
  }
}
