import type { Request, Response } from 'express';
import { closeConnectionAfterResponse } from './lingering-close.js';
import { ProblemException } from '../problem/problem.exception.js';
import { ProblemTypes } from '../problem/problem-types.js';

/** A body-parser middleware: reads the body into request.body, or calls next with an error. */
export type BodyParserMiddleware = (request: Request, response: Response, next: (error?: unknown) => void) => void;

export interface BodyLimits {
  /** Bytes on the wire, and bytes once decoded (body-parser's own limit). */
  maxBytes: number;
  /** From the first byte the service asks for to the last. */
  timeoutMs: number;
}

/**
 * Reads a request body with a body-parser middleware, bounded in size and in time, every failure a
 * problem. body-parser alone is not bounded: after an error (too large, malformed) it drains the
 * request to its end before answering, so an anonymous client could push 300 MB, or trickle bytes for
 * minutes, at a connection the service has already refused. Here the declared length is refused
 * before anything is read, the bytes are counted as they arrive, and a body that is too large or too
 * slow is answered at once with `Connection: close`, and the connection is closed instead of drained.
 */
export function boundedBodyReader(
  parser: BodyParserMiddleware,
  limits: BodyLimits,
): (request: Request, response: Response) => Promise<void> {
  return (request, response) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limits.maxBytes) return Promise.reject(closing(response, payloadTooLarge(limits.maxBytes)));
    return new Promise((resolve, reject) => {
      let received = 0;
      // The parser still calls back after a stop, when the closed connection aborts the body.
      let settled = false;
      const stop = (problem: ProblemException): void => {
        finish();
        reject(closing(response, problem));
      };
      const onData = (chunk: Buffer): void => {
        received += chunk.length;
        if (received > limits.maxBytes) stop(payloadTooLarge(limits.maxBytes));
      };
      const timer = setTimeout(
        () =>
          stop(
            new ProblemException(
              ProblemTypes.requestTimeout,
              `The request body did not arrive within ${limits.timeoutMs / 1000} seconds.`,
            ),
          ),
        limits.timeoutMs,
      );
      const finish = (): void => {
        settled = true;
        clearTimeout(timer);
        request.off('data', onData);
      };
      parser(request, response, (error?: unknown) => {
        if (settled) return;
        finish();
        if (error === undefined) resolve();
        else reject(toProblem(error, response));
      });
      // After the parser has its own listener (attached synchronously): a 'data' listener alone would
      // start the flow and its chunks would be lost to the parser.
      if (!request.complete) request.on('data', onData);
    });
  };
}

// The rest of the body is not wanted: close the connection after the answer rather than reading it.
function closing(response: Response, problem: ProblemException): ProblemException {
  closeConnectionAfterResponse(response);
  return problem;
}

function payloadTooLarge(limit: number | undefined): ProblemException {
  return new ProblemException(ProblemTypes.payloadTooLarge, `The request body exceeds the limit of ${limit} bytes.`);
}

interface BodyParserError {
  type?: string;
  limit?: number;
}

// body-parser marks its errors with a `type`; each maps to a problem a client can act on.
function toProblem(error: unknown, response: Response): ProblemException {
  const { type, limit } = error as BodyParserError;
  switch (type) {
    case 'entity.too.large':
      return closing(response, payloadTooLarge(limit));
    case 'entity.parse.failed':
      return new ProblemException(ProblemTypes.malformedJson, 'The request body could not be parsed as a JSON object.');
    case 'entity.verify.failed':
      return new ProblemException(ProblemTypes.malformedJson, 'The request body is not valid UTF-8.');
    case 'encoding.unsupported':
      return new ProblemException(
        ProblemTypes.unsupportedMediaType,
        'Unsupported Content-Encoding; use identity, gzip, deflate or br.',
      );
    case 'charset.unsupported':
      return new ProblemException(ProblemTypes.unsupportedMediaType, 'Unsupported charset; use UTF-8.');
    case 'request.size.invalid':
    case 'request.aborted':
      return new ProblemException(ProblemTypes.badRequest, 'The request body ended before its declared length.');
    default:
      return new ProblemException(ProblemTypes.badRequest, 'The request body could not be read.', { cause: error });
  }
}
