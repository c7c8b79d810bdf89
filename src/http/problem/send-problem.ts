import type { Request, Response } from 'express';
import { closeConnectionAfterResponse } from '../body/lingering-close.js';
import { requestIdOf } from '../request-id.middleware.js';
import { requestPath } from '../request-path.js';
import type { FieldError, ProblemType } from './problem-types.js';

export interface Problem {
  problemType: ProblemType;
  detail: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
}

/** Writes a problem as the RFC 9457 application/problem+json response, the one shape of every error. */
export function sendProblem(request: Request, response: Response, problem: Problem): void {
  const body = {
    type: problem.problemType.type,
    title: problem.problemType.title,
    status: problem.problemType.status,
    detail: problem.detail,
    instance: requestPath(request),
    requestId: requestIdOf(response),
    ...(problem.errors && { errors: problem.errors }),
  };
  for (const [name, value] of Object.entries(problem.headers ?? {})) response.setHeader(name, value);
  // A body the service has not read (refused before reading it) would otherwise be drained by Node to
  // keep the connection alive, however large or slow it is: close the connection instead.
  if (!request.complete) closeConnectionAfterResponse(response);
  response
    .status(body.status)
    .setHeader('Content-Type', 'application/problem+json; charset=utf-8')
    .setHeader('Cache-Control', 'no-store')
    .send(JSON.stringify(body));
}
