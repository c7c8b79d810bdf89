import type { Request } from 'express';
import { ClsServiceManager } from 'nestjs-cls';
import { requestIdOf } from '../http/request-id.middleware.js';
import { requestPath } from '../http/request-path.js';

const cls = ClsServiceManager.getClsService();
const REQUEST = Symbol('request');

/**
 * The request being served, for the lines logged while serving it (a database error, a JWKS outage):
 * they carry the request's id, method and path, like its request log line. RequestLogMiddleware sets
 * it; nothing is computed unless such a line is written.
 *
 * Kept in nestjs-cls's async context, the one the transactions use too (TransactionHost): each
 * AsyncLocalStorage in use costs every promise of the process a property write in Node 20 (one more
 * made a GET about 10% dearer in CPU), so the service has exactly one.
 */
export const requestContext = {
  run<R>(request: Request, callback: () => R): R {
    return cls.runWith({ [REQUEST]: request }, callback);
  },
  getStore(): Request | undefined {
    return (cls.get() as Record<symbol, unknown> | undefined)?.[REQUEST] as Request | undefined;
  },
};

/** The `req` object of a log line: never headers, never the query string (a misplaced token). */
export interface RequestLogFields {
  id: string | undefined;
  method: string;
  path: string;
}

export function requestLogFields(request: Request): RequestLogFields {
  return {
    id: request.res === undefined ? undefined : requestIdOf(request.res),
    method: request.method,
    path: requestPath(request),
  };
}
