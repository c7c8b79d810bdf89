import { AsyncLocalStorage } from 'node:async_hooks';
import type { Request } from 'express';
import { requestIdOf } from '../http/request-id.middleware.js';
import { requestPath } from '../http/request-path.js';

/**
 * The request being served, for the lines logged while serving it (a database error, a JWKS outage):
 * they carry the request's id, method and path, like its request log line. RequestLogMiddleware sets
 * it; nothing is computed unless such a line is written.
 */
export const requestContext = new AsyncLocalStorage<Request>();

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
