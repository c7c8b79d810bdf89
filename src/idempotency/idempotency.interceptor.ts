import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { from, lastValueFrom, map, type Observable } from 'rxjs';
import { parseIdempotencyKey, requestDigest } from './idempotency-key.js';
import { IdempotencyService, type StoredResponse } from './idempotency.service.js';

export const IDEMPOTENT_OPTIONS = 'idempotency:options';

export interface IdempotentOptions {
  /**
   * What makes two requests with one key the same request, as a JSON value (e.g. the route and the
   * body's fields in a fixed order): a repeat with another fingerprint is 422.
   */
  fingerprint: (request: Request) => unknown;
}

/**
 * The work of @Idempotent(): without an Idempotency-Key the handler runs as it is; with one, the
 * handler runs inside IdempotencyService.execute (once per key, in the transaction that stores its
 * response), and the response goes out as the stored bytes, so a replay is identical to the first.
 * What is stored: the status, the JSON body, and the headers the handler set (Location, ETag…).
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly idempotency: IdempotencyService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request & { user?: { id: string } }>();
    const header = request.get('idempotency-key');
    if (header === undefined) return next.handle();
    const key = parseIdempotencyKey(header);
    const { fingerprint } = this.reflector.get<IdempotentOptions>(IDEMPOTENT_OPTIONS, context.getHandler());
    const response = http.getResponse<Response>();
    const scope = { principalId: request.user!.id, key, requestDigest: requestDigest(fingerprint(request)) };

    const run = async (): Promise<StoredResponse> => {
      const before = new Set(response.getHeaderNames());
      const body: unknown = await lastValueFrom(next.handle());
      const headers: Record<string, string> = {};
      // Raw names: as the handler wrote them (Location, ETag), so a replay sends them the same way.
      for (const name of (response as Response & RawHeaderNames).getRawHeaderNames()) {
        if (!before.has(name.toLowerCase())) headers[name] = String(response.getHeader(name));
      }
      return { status: response.statusCode, body: JSON.stringify(body), headers };
    };
    return from(this.idempotency.execute(scope, run)).pipe(
      map(({ response: stored, replayed }) => {
        for (const [name, value] of Object.entries(stored.headers)) response.setHeader(name, value);
        if (replayed) response.setHeader('Idempotent-Replayed', 'true');
        response.status(stored.status).setHeader('Content-Type', 'application/json; charset=utf-8');
        return stored.body;
      }),
    );
  }
}

/** Node's OutgoingMessage has it (v14.17), though @types/node declares it on ClientRequest only. */
interface RawHeaderNames {
  getRawHeaderNames(): string[];
}
