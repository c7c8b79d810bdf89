import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import { requestIdMiddleware } from './common/http/request-id.middleware.js';
import type { AppConfig } from './config/environment.js';
import { serveOpenApi } from './openapi/openapi.js';

// Bodies are read by JsonBodyInterceptor after the guards, never by a global parser.
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
  app.use(requestIdMiddleware);
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
  app.enableShutdownHooks();
}
