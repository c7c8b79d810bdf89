import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';
import { RequestMetricsMiddleware } from './request-metrics.middleware.js';

/** GET /metrics (Prometheus) and the middleware that measures every request (mounted by configureApp). */
@Module({
  imports: [EventsModule, WebhooksModule],
  controllers: [MetricsController],
  providers: [MetricsService, MetricsTokenGuard, RequestMetricsMiddleware],
  exports: [RequestMetricsMiddleware],
})
export class MetricsModule {}
