import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request as ExpressRequest } from 'express';
import { Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { pino, type DestinationStream, type Level } from 'pino';
import type { Options } from 'pino-http';
import type { Principal } from '../auth/principal.js';
import { routeTemplateOf } from '../common/http/route-template.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig, LogLevelName } from '../config/environment.js';

/** Where log lines go: null for stdout (pretty when it is a terminal). Tests replace it to read the logs. */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');

const PINO_LEVELS: Record<LogLevelName, Level> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

type Request = IncomingMessage & ExpressRequest & { user?: Principal };
type Response = ServerResponse & { locals?: { requestId?: string } };

@Global()
@Module({ providers: [{ provide: LOG_DESTINATION, useValue: null }], exports: [LOG_DESTINATION] })
class LogDestinationModule {}

/**
 * Structured JSON logs (nestjs-pino): one line per request with method, route template, path, status,
 * duration, request id and principal id, and Nest's own messages in the same format. Nothing that
 * could carry a credential is logged: no headers, and no query string (where a misplaced
 * access_token would be).
 */
export const LoggingModule = LoggerModule.forRootAsync({
  imports: [LogDestinationModule],
  inject: [APP_CONFIG, LOG_DESTINATION],
  useFactory: (config: AppConfig, destination: DestinationStream | null) => {
    const options: Options<Request, Response> = {
      level: PINO_LEVELS[config.logLevel],
      // The id RequestIdMiddleware chose (echoed or generated), so logs and X-Request-Id agree.
      genReqId: (_request, response) => response.locals?.requestId ?? randomUUID(),
      // Added when the response is logged (customProps would also stamp the request's start, before
      // routing and authentication, and duplicate the keys).
      customSuccessObject: (request, _response, value: object) => withOutcome(request, value),
      customErrorObject: (request, _response, _error, value: object) => withOutcome(request, value),
      serializers: {
        req: (request: { id: unknown; method: string; raw: Request; url?: string }) => ({
          id: request.id,
          method: request.method,
          path: pathOf(request.raw.originalUrl ?? request.url ?? ''),
        }),
        res: (response: { statusCode: number }) => ({ statusCode: response.statusCode }),
      },
      customLogLevel: (_request, response, error) =>
        error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
      customSuccessMessage: (request, response) =>
        `${request.method} ${routeTemplateOf(request)} ${response.statusCode}`,
      customErrorMessage: (request, response) => `${request.method} ${routeTemplateOf(request)} ${response.statusCode}`,
      ...(destination === null && process.stdout.isTTY ? { transport: { target: 'pino-pretty' } } : {}),
    };
    if (destination !== null) return { pinoHttp: [options, destination] };
    if (options.transport) return { pinoHttp: options };
    // stdout that is not a terminal: written asynchronously, so a line costs no blocking write()
    // per request; under load the lines written while one write is in flight go out together.
    // pino flushes what is pending when the process exits (graceful shutdown, a crash); only a
    // SIGKILL or power loss can lose the lines of the last few milliseconds.
    return { pinoHttp: [options, pino.destination({ dest: 1, sync: false })] };
  },
});

function withOutcome(request: Request, value: object): object {
  return { ...value, route: routeTemplateOf(request), principal: request.user?.id };
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}
