import { Inject, Injectable, type LoggerService } from '@nestjs/common';
import type { Logger as Pino, Level } from 'pino';
import { ROOT_LOGGER } from './root-logger.js';
import { requestContext, requestLogFields } from './request-context.js';

/**
 * Nest's logger (`new Logger('Context')` anywhere in the app) writing through the service's pino
 * logger: one JSON line per message, `context` naming the class, objects merged into the line, errors
 * under `err`, and `req` when the message was logged while serving a request.
 */
@Injectable()
export class AppLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) private readonly logger: Pino) {}

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.write('trace', message, optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.write('debug', message, optionalParams);
  }

  log(message: unknown, ...optionalParams: unknown[]): void {
    this.write('info', message, optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.write('warn', message, optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.write('error', message, optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.write('fatal', message, optionalParams);
  }

  // Nest calls (message, ...params, context): the last parameter names the context, when there is one.
  // error() may also get (message, stack, context), as Nest's own exception handlers call it.
  private write(level: Level, message: unknown, optionalParams: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const line: Record<string, unknown> = {};
    const params = optionalParams.slice();
    if (params.length > 0) line.context = params.pop();
    const request = requestContext.getStore();
    if (request !== undefined) line.req = requestLogFields(request);
    let text: string | undefined;
    if (message instanceof Error) {
      line.err = message;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(line, message);
    } else {
      text = String(message);
      if (level === 'error' && typeof params[0] === 'string' && isStackTrace(params[0])) {
        const error = new Error(text);
        error.stack = params.shift() as string;
        line.err = error;
      }
    }
    if (text === undefined) this.logger[level](line);
    else this.logger[level](line, text);
  }
}

// A V8 stack has a line starting "    at ". A fixed string rather than /\n\s*at /, which is
// quadratic on a long run of newlines, and the message may quote request input.
function isStackTrace(text: string): boolean {
  return text.includes('\n    at ');
}
