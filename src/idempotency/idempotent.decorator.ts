import { Inject } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Request, Response } from 'express';
import { parseIdempotencyKey, requestDigest } from './idempotency-key.js';
import { IdempotencyService, type StoredResponse } from './idempotency.service.js';

export interface IdempotentOptions {
  /**
   * What makes two requests with one key the same request, as a JSON value (e.g. the route and the
   * body's fields in a fixed order): a repeat with another fingerprint is 422.
   */
  fingerprint: (request: Request) => unknown;
}

type Handler = (...args: unknown[]) => Promise<unknown>;

// The controller's IdempotencyService, injected as a property by the decorator (per application,
// so two applications in one process never share one).
const SERVICE = Symbol('IdempotencyService');

/**
 * Makes a route honour Idempotency-Key. Without the header the handler runs as it is; with one, it
 * runs inside IdempotencyService.execute (once per key and principal, in the transaction that stores
 * its response), and the response goes out as the stored bytes, so a replay is identical to the
 * first. What is stored: the status, the JSON body, and the headers the handler set (Location, ETag…).
 *
 * It wraps the handler itself, as nestjs-cls's @Transactional() does, rather than adding a Nest
 * interceptor: a route interceptor puts every request of the route through Nest's RxJS pipeline,
 * which made a keyless POST /posts about 8% dearer in CPU. So only keyed requests pay, and only on
 * the routes that carry it. The handler must take the response (`@Res({ passthrough: true })`),
 * which is where the wrapper finds the request and writes the stored headers.
 */
export function Idempotent(options: IdempotentOptions): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const responseIndex = responseParameterIndex(target, propertyKey);
    Inject(IdempotencyService)(target, SERVICE);
    const handler = descriptor.value as unknown as Handler;

    function idempotentHandler(this: Record<symbol, IdempotencyService>, ...args: unknown[]): Promise<unknown> {
      const response = args[responseIndex] as Response;
      const header = response.req.get('idempotency-key');
      if (header === undefined) return handler.apply(this, args);
      return respondOnce(this[SERVICE], options, response, header, () => handler.apply(this, args));
    }
    for (const key of Reflect.getOwnMetadataKeys(handler)) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, handler), idempotentHandler);
    }
    Object.defineProperty(idempotentHandler, 'name', { value: handler.name });
    (descriptor as PropertyDescriptor).value = idempotentHandler;
  };
}

async function respondOnce(
  idempotency: IdempotencyService,
  { fingerprint }: IdempotentOptions,
  response: Response,
  header: string,
  handle: () => Promise<unknown>,
): Promise<string> {
  const request = response.req as Request & { user?: { id: string } };
  const key = parseIdempotencyKey(header);
  const scope = { principalId: request.user!.id, key, requestDigest: requestDigest(fingerprint(request)) };

  const run = async (): Promise<StoredResponse> => {
    const before = new Set(response.getHeaderNames());
    const body = await handle();
    const headers: Record<string, string> = {};
    // Raw names: as the handler wrote them (Location, ETag), so a replay sends them the same way.
    for (const name of (response as Response & RawHeaderNames).getRawHeaderNames()) {
      if (!before.has(name.toLowerCase())) headers[name] = String(response.getHeader(name));
    }
    return { status: response.statusCode, body: JSON.stringify(body), headers };
  };
  const { response: stored, replayed } = await idempotency.execute(scope, run);
  for (const [name, value] of Object.entries(stored.headers)) response.setHeader(name, value);
  if (replayed) response.setHeader('Idempotent-Replayed', 'true');
  response.status(stored.status).setHeader('Content-Type', 'application/json; charset=utf-8');
  return stored.body;
}

/** Where the handler takes the response (`@Res()`): its parameter decorators ran before this one. */
function responseParameterIndex(target: object, propertyKey: string | symbol): number {
  const parameters = (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, propertyKey) ?? {}) as Record<
    string,
    { index: number }
  >;
  const entry = Object.entries(parameters).find(([key]) => key.startsWith(`${RouteParamtypes.RESPONSE}:`));
  if (entry === undefined) {
    throw new Error(`@Idempotent() on ${String(propertyKey)}: the handler must take @Res({ passthrough: true })`);
  }
  return entry[1].index;
}

/** Node's OutgoingMessage has it (v14.17), though @types/node declares it on ClientRequest only. */
interface RawHeaderNames {
  getRawHeaderNames(): string[];
}
