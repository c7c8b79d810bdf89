import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { routeTemplateOf } from '../http/route-template.js';
import { MetricsService } from './metrics.service.js';

type MeasuredResponse = Response & { [STARTED_AT]?: number; [METRICS]?: MetricsService };

const STARTED_AT = Symbol('metricsStartedAt');
const METRICS = Symbol('metrics');

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

  use(_request: Request, response: Response, next: NextFunction): void {
    const measured = response as MeasuredResponse;
    measured[STARTED_AT] = performance.now();
    measured[METRICS] = this.metrics;
    // One listener shared by every response; a request the client aborts before the response ends
    // never finishes and is not counted.
    response.on('finish', observeResponse);
    next();
  }
}

function observeResponse(this: MeasuredResponse): void {
  const request = this.req;
  const seconds = (performance.now() - this[STARTED_AT]!) / 1000;
  this[METRICS]!.observeRequest(request.method, routeTemplateOf(request), this.statusCode, seconds);
}
