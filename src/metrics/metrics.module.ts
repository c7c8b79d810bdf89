import { Module, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsService } from './metrics.service.js';
import { RequestMetricsMiddleware } from './request-metrics.middleware.js';

/** GET /metrics (Prometheus) and the middleware that measures every request. */
@Module({ controllers: [MetricsController], providers: [MetricsService, MetricsTokenGuard] })
export class MetricsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    // Every path, unknown ones included, so router 404s are counted too. Nest mounts module
    // middleware under API_PREFIX, so paths outside it are not counted; nor is Swagger UI, whose
    // routes configureApp() registers before any module middleware.
    consumer.apply(RequestMetricsMiddleware).forRoutes('{*path}');
  }
}
