import type { Server } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import helmet from 'helmet';
import { answerClientErrorsWithProblems } from './common/http/client-errors.js';
import { hostHeaderMiddleware } from './common/http/host-header.middleware.js';
import { refuseRequestsAfterClose } from './common/http/lingering-close.js';
import { requestIdMiddleware } from './common/http/request-id.middleware.js';
import type { AppConfig } from './config/environment.js';
import { RequestLogMiddleware } from './logging/request-log.middleware.js';
import { RequestMetricsMiddleware } from './metrics/request-metrics.middleware.js';
import { serveOpenApi } from './openapi/openapi.js';

// Bodies are read by JsonBodyGuard, the last guard, never by a global parser.
export const APP_OPTIONS: NestApplicationOptions = { bodyParser: false, abortOnError: false };

/**
 * The Express instance under Nest. Routing settings must be in place before Nest first touches the
 * router, which Express builds once, from the settings of that moment.
 */
export function createHttpAdapter(): ExpressAdapter {
  const instance = express();
  // Paths are case-sensitive (RFC 3986): /Posts is not /posts.
  instance.set('case sensitive routing', true);
  return new ExpressAdapter(instance);
}

/** What must sit on the app object itself; shared by main.ts and the e2e helper. */
export function configureApp(app: NestExpressApplication, config: AppConfig): void {
  const server = app.getHttpServer();
  answerClientErrorsWithProblems(server);
  // A request without Host reaches hostHeaderMiddleware, which answers it with a problem, instead of
  // Node's bare 400 with no body and no request id (an option of Node 20's server, not in its types).
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  app.use(refuseRequestsAfterClose);
  app.use(requestIdMiddleware);
  // Every request is logged and measured, whatever its path (outside API_PREFIX, Swagger UI, paths no
  // route matches). Mounted here rather than as Nest module middleware, which Nest mounts under the
  // prefix only and wraps in a promise and a WeakSet entry per request.
  const requestLog = app.get(RequestLogMiddleware);
  const requestMetrics = app.get(RequestMetricsMiddleware);
  app.use(requestLog.use.bind(requestLog));
  app.use(requestMetrics.use.bind(requestMetrics));
  // Security headers (nosniff, frame denial, HSTS, no referrer leaks). The CSP is tight; Swagger UI,
  // the only HTML served, needs nothing beyond its own scripts, inline styles and data: images.
  app.use(
    helmet({
      contentSecurityPolicy: {
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'", "'unsafe-inline'"],
          imgSrc: ["'self'", 'data:'],
          // The service may sit behind plain HTTP on a private network; TLS is the edge's business.
          upgradeInsecureRequests: null,
        },
      },
    }),
  );
  // After helmet, so its refusals carry the security headers too.
  app.use(hostHeaderMiddleware);
  // CORS is off unless CORS_ORIGINS names the browser origins allowed to call the API.
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins.includes('*') ? '*' : config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'Idempotency-Key', 'X-Request-Id'],
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: 600,
    });
  }
  if (config.apiPrefix !== '') app.setGlobalPrefix(config.apiPrefix);
  app.disable('x-powered-by');
  // X-Forwarded-For is believed only for as many hops as TRUST_PROXY says (none by default), so a
  // client cannot pick the address it is rate limited under.
  app.set('trust proxy', config.trustProxy === 0 ? false : config.trustProxy);
  // Flat query strings only: `author[x]=1` is a parameter named "author[x]", never an object.
  app.set('query parser', 'simple');
  // Express's automatic weak ETag would answer conditional requests behind the service's back.
  app.set('etag', false);
  serveOpenApi(app);
}

// Response headers a browser client may read: the ones this API's contract gives meaning to.
const CORS_EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Link',
  'X-Total-Count',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Request-Id',
  'Idempotent-Replayed',
  'WWW-Authenticate',
];
