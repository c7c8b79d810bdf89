import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import { isDatabaseUnavailable } from '../../database/database-errors.js';
import { requestIdOf } from '../request-id.middleware.js';
import { requestPath } from '../request-path.js';
import { ProblemException } from './problem.exception.js';
import { ProblemTypes, type ProblemType } from './problem-types.js';
import { sendProblem, type Problem } from './send-problem.js';

// Seconds a client should wait before retrying while the database is unreachable.
const DATABASE_RETRY_AFTER_SECONDS = '5';

/**
 * The only place an error becomes a response: every failure, whatever threw it, leaves as an
 * RFC 9457 application/problem+json body with a stable `type`, and a 5xx says nothing internal.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Problem');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();

    if (response.headersSent) {
      // Too late for a problem body: cut the connection so the client sees a truncated response.
      this.logger.error({ message: 'error after the response started', error: describe(exception) });
      response.destroy();
      return;
    }

    const problem = toProblem(exception);
    if (problem.problemType.status >= 500) {
      this.logger.error({
        message: problem.problemType.title,
        requestId: requestIdOf(response),
        method: request.method,
        path: requestPath(request),
        error: describe(exception),
      });
    }

    sendProblem(request, response, problem);
  }
}

function toProblem(exception: unknown): Problem {
  if (exception instanceof ProblemException) {
    return {
      problemType: exception.problemType,
      detail: exception.detail,
      errors: exception.errors,
      headers: exception.headers,
    };
  }
  if (exception instanceof HttpException) return fromHttpException(exception);
  if (isDatabaseUnavailable(exception)) {
    return {
      problemType: ProblemTypes.serviceUnavailable,
      detail: 'The database is unavailable. Retry the request later.',
      headers: { 'Retry-After': DATABASE_RETRY_AFTER_SECONDS },
    };
  }
  return {
    problemType: ProblemTypes.internalError,
    detail: 'The server could not complete the request. Quote the requestId when reporting it.',
  };
}

const STATUS_TYPES: Record<number, ProblemType> = {
  400: ProblemTypes.badRequest,
  404: ProblemTypes.notFound,
  405: ProblemTypes.methodNotAllowed,
  409: ProblemTypes.conflict,
  413: ProblemTypes.payloadTooLarge,
  415: ProblemTypes.unsupportedMediaType,
  503: ProblemTypes.serviceUnavailable,
};

// Exceptions thrown by Nest or libraries (guards, URIError in a path, ...): keep their status and a
// message that is safe to show; a status we have no type for is described by about:blank (RFC 9457 §4.2.1).
function fromHttpException(exception: HttpException): Problem {
  const status = exception.getStatus();
  if (status >= 500)
    return { problemType: ProblemTypes.internalError, detail: 'The server could not complete the request.' };
  const known = STATUS_TYPES[status];
  const response = exception.getResponse();
  const message = typeof response === 'string' ? response : (response as { message?: unknown }).message;
  const detail = Array.isArray(message)
    ? message.join('; ')
    : typeof message === 'string'
      ? message
      : exception.message;
  return { problemType: known ?? { type: 'about:blank', title: STATUS_CODES[status] ?? 'Error', status }, detail };
}

function describe(exception: unknown): unknown {
  return exception instanceof Error
    ? { name: exception.name, message: exception.message, stack: exception.stack }
    : exception;
}
