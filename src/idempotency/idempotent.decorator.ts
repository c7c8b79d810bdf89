import { applyDecorators, SetMetadata, UseInterceptors } from '@nestjs/common';
import { IDEMPOTENT_OPTIONS, IdempotencyInterceptor, type IdempotentOptions } from './idempotency.interceptor.js';

/**
 * Makes a route honour Idempotency-Key: the handler runs once per key and principal, in a
 * transaction that stores its response, and a repeat replays that response byte for byte. Only the
 * routes that carry it pay for it (a route-scoped interceptor).
 */
export function Idempotent(options: IdempotentOptions): MethodDecorator {
  return applyDecorators(SetMetadata(IDEMPOTENT_OPTIONS, options), UseInterceptors(IdempotencyInterceptor));
}
