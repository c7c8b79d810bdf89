import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import { Public } from '../auth/auth.decorators.js';
import { ApiProblems } from '../openapi/api-responses.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus scrape endpoint. Not an API key route: METRICS_TOKEN, when set, is checked by its own guard. */
@ApiTags('metrics')
@Controller('metrics')
@Public()
// A scraper polls on a fixed schedule; a throttled scrape is a gap in every graph.
@SkipThrottle()
@UseGuards(MetricsTokenGuard)
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @ApiOperation({
    summary: 'Prometheus metrics, text exposition format (Authorization: Bearer <METRICS_TOKEN> when it is set)',
    description:
      'Public unless METRICS_TOKEN is set; then 401 without that token. API keys and OAuth tokens do not apply here.',
  })
  @ApiOkResponse({
    description: 'Request counters and durations by route template, process and database pool metrics',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ApiProblems(401)
  scrape(@Res({ passthrough: true }) response: Response): Promise<string> {
    response.setHeader('Content-Type', this.metrics.contentType).setHeader('Cache-Control', 'no-store');
    return this.metrics.scrape();
  }
}
