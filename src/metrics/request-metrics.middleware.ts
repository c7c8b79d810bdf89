import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { routeTemplateOf } from '../common/http/route-template.js';
import { MetricsService } from './metrics.service.js';

/**
 * Counts and times every response, errors included. It is middleware rather than an interceptor
 * because interceptors never see what is refused before them: guard refusals (401, 429) and the
 * router's 404. The route is read on 'finish', once Express has matched one (or none).
 *
 * /metrics and /health/* are labelled like any other route: a flood of probes or scrapes is worth
 * seeing, and they are a handful of series.
 */
@Injectable()
export class RequestMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: MetricsService) {}

  use(request: Request, response: Response, next: NextFunction): void {
    const started = process.hrtime.bigint();
    // A request the client aborts before the response ends never finishes and is not counted.
    response.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.metrics.observeRequest(request.method, routeTemplateOf(request), response.statusCode, seconds);
    });
    next();
  }
}
