import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from './config/environment.js';
import { configureHttpPlatform } from './http/http-platform.js';
import { RequestLogMiddleware } from './logging/request-log.middleware.js';
import { RequestMetricsMiddleware } from './metrics/request-metrics.middleware.js';
import { serveOpenApi } from './openapi/openapi.js';

export { APP_OPTIONS, createHttpAdapter } from './http/http-platform.js';

/** What must sit on the app object itself; shared by main.ts and the e2e helper. */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  // Every request is logged and measured, whatever its path (outside API_PREFIX, Swagger UI, paths no
  // route matches). Mounted on the app rather than as Nest module middleware, which Nest mounts under
  // the prefix only and wraps in a promise and a WeakSet entry per request.
  const requestLog = app.get(RequestLogMiddleware);
  const requestMetrics = app.get(RequestMetricsMiddleware);
  configureHttpPlatform(app, config, [requestLog.use.bind(requestLog), requestMetrics.use.bind(requestMetrics)]);
  serveOpenApi(app);
}
