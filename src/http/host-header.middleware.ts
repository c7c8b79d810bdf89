import type { NextFunction, Request, Response } from 'express';
import { sendProblem } from './problem/send-problem.js';
import { ProblemTypes } from './problem/problem-types.js';
import { closeConnectionAfterResponse } from './body/lingering-close.js';

// Host = uri-host [ ":" port ] (RFC 9110 §7.2): an IP literal in brackets or a reg-name. The classes
// before the port exclude ':', so the match is linear.
const VALID_HOST = /^(\[[0-9A-Fa-f:.vV]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]*)(:[0-9]*)?$/;

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without Host, or with more than one Host line, or with an invalid
 * one, is 400. Node refuses the first case itself with a bare 400 (no body, no request id) unless its
 * server's requireHostHeader is off, as configureApp sets it; this answers all three with a problem.
 */
export function hostHeaderMiddleware(request: Request, response: Response, next: NextFunction): void {
  const host = request.headers.host;
  let detail: string | undefined;
  if (host === undefined) {
    // HTTP/1.0 predates Host and may leave it out.
    if (request.httpVersionMajor === 1 && request.httpVersionMinor === 0) return next();
    detail = 'An HTTP/1.1 request must carry a Host header.';
  } else if (countHostLines(request.rawHeaders) > 1) {
    detail = 'A request must carry exactly one Host header.';
  } else if (!VALID_HOST.test(host)) {
    detail = 'The Host header is not a valid host and port.';
  }
  if (detail === undefined) return next();
  closeConnectionAfterResponse(response);
  sendProblem(request, response, {
    problemType: ProblemTypes.badRequest,
    detail,
    errors: [{ parameter: 'Host', detail }],
  });
}

// Node keeps only the first of duplicated Host lines in request.headers; the raw list has them all.
function countHostLines(rawHeaders: string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index];
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}
