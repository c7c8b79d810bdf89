import { Inject, Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Logger as Pino, Level } from 'pino';
import { routeTemplateOf } from '../http/route-template.js';
import { requestContext, requestLogFields } from './request-context.js';
import { ROOT_LOGGER } from './root-logger.js';

// The principal BearerAuthGuard set, by its id (the logger need not know what else a principal holds).
type LoggedRequest = Request & { user?: { id: string } };
type LoggedResponse = Response & { [STARTED_AT]?: number; [LOGGER]?: Pino };

const STARTED_AT = Symbol('startedAt');
const LOGGER = Symbol('requestLogger');

/**
 * One line per request when its response is done: method, route template, path, status, duration,
 * request id and principal; at warn for 4xx, error for 5xx and for responses cut off before they
 * were complete. Nothing that could carry a credential is logged: no headers, no query string (where
 * a misplaced access_token would be). It also opens the request's logging context (RequestContext).
 *
 * Built for the hot path: no logger object per request, one 'close' listener shared by all of them,
 * and nothing is serialized for a level that is off.
 */
@Injectable()
export class RequestLogMiddleware implements NestMiddleware {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Pino) {}

  use(request: Request, response: Response, next: NextFunction): void {
    const logged = response as LoggedResponse;
    logged[STARTED_AT] = performance.now();
    logged[LOGGER] = this.logger;
    // 'close' follows 'finish', and also comes alone when the connection ends before the response did.
    response.on('close', logRequest);
    requestContext.run(request, next);
  }
}

function logRequest(this: LoggedResponse): void {
  const logger = this[LOGGER]!;
  const request = this.req as LoggedRequest;
  const complete = this.writableFinished;
  const status = this.statusCode;
  const level: Level = !complete || status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const route = routeTemplateOf(request);
  logger[level](
    {
      req: requestLogFields(request),
      res: { statusCode: status },
      responseTime: Math.round((performance.now() - this[STARTED_AT]!) * 10) / 10,
      route,
      principal: request.user?.id,
      ...(complete ? {} : { aborted: true }),
    },
    `${request.method} ${route} ${complete ? status : 'aborted'}`,
  );
}
