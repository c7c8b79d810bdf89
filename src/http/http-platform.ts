import type { Server } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type RequestHandler } from 'express';
import helmet from 'helmet';
import type { AppConfig } from '../config/environment.js';
import { refuseRequestsAfterClose } from './body/lingering-close.js';
import { answerClientErrorsWithProblems } from './client-errors.js';
import { hostHeaderMiddleware } from './host-header.middleware.js';
import { requestIdMiddleware } from './request-id.middleware.js';
import { FallbackExpressAdapter, routeFallback } from './route-fallback.js';
import { RouteTable } from './route-table.js';

// Bodies are read by JsonBodyGuard, a guard, never by a global parser.
export const APP_OPTIONS: NestApplicationOptions = { bodyParser: false, abortOnError: false };

/**
 * The Express instance under Nest. Routing settings must be in place before Nest first touches the
 * router, which Express builds once, from the settings of that moment.
 */
export function createHttpAdapter(): FallbackExpressAdapter {
  const instance = express();
  // Paths are case-sensitive (RFC 3986): /Posts is not /posts.
  instance.set('case sensitive routing', true);
  return new FallbackExpressAdapter(instance);
}

/**
 * The HTTP platform on the app object: parser errors as problems, the request id, `observers` (the
 * middleware that must see every request: logs, metrics), security headers, Host, CORS, the API
 * prefix, Express settings, and the fallback after the router (404, 405, OPTIONS).
 */
export function configureHttpPlatform(
  app: NestExpressApplication,
  config: Pick<AppConfig, 'apiPrefix' | 'corsOrigins' | 'trustProxy'>,
  observers: RequestHandler[],
): void {
  const server = app.getHttpServer();
  answerClientErrorsWithProblems(server);
  // A request without Host reaches hostHeaderMiddleware, which answers it with a problem, instead of
  // Node's bare 400 with no body and no request id (an option of Node 20's server, not in its types).
  (server as Server & { requireHostHeader: boolean }).requireHostHeader = false;
  app.use(refuseRequestsAfterClose);
  app.use(requestIdMiddleware);
  for (const observer of observers) app.use(observer);
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
  (app.getHttpAdapter() as FallbackExpressAdapter).useFallback(routeFallback(app.get(RouteTable)));
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
