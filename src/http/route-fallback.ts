import type { Request, RequestHandler, Response } from 'express';
import { ExpressAdapter } from '@nestjs/platform-express';
import { ProblemTypes } from './problem/problem-types.js';
import { sendProblem } from './problem/send-problem.js';
import { requestPath } from './request-path.js';
import type { RouteTable } from './route-table.js';

/**
 * What answers a request no route matched, after the router: OPTIONS on a path some route serves is
 * 204 with Allow (RFC 9110 §9.3.7), another method there 405 with Allow (§15.5.6), and a path no
 * route serves 404 route-not-found. The exception filter then only renders errors.
 */
export function routeFallback(routeTable: RouteTable): RequestHandler {
  return (request: Request, response: Response) => {
    const path = requestPath(request);
    const allowed = routeTable.allowedMethods(path);
    if (allowed.length === 0) {
      sendProblem(request, response, { problemType: ProblemTypes.routeNotFound, detail: `No route matches ${path}.` });
    } else if (request.method === 'OPTIONS') {
      response.status(204).setHeader('Allow', allowed.join(', '));
      response.end();
    } else {
      sendProblem(request, response, {
        problemType: ProblemTypes.methodNotAllowed,
        detail: `${request.method} is not supported on ${path}; use ${allowed.join(', ')}.`,
        headers: { Allow: allowed.join(', ') },
      });
    }
  };
}

/**
 * Nest's Express adapter, with a place for the fallback: Nest mounts its not-found handler after the
 * routes when the application starts, and the fallback goes in right before it.
 */
export class FallbackExpressAdapter extends ExpressAdapter {
  private fallback?: RequestHandler;

  useFallback(fallback: RequestHandler): void {
    this.fallback = fallback;
  }

  override setNotFoundHandler(handler: RequestHandler, prefix?: string): this {
    const { fallback } = this;
    if (fallback !== undefined) this.use(fallback);
    return super.setNotFoundHandler(handler, prefix) as this;
  }
}
