import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ProblemTypes, type ProblemType } from './problem/problem-types.js';

/** What Node's HTTP parser refuses before a request exists, and the problem it becomes. */
function problemFor(code: string | undefined): { problemType: ProblemType; detail: string } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      problemType: ProblemTypes.headerFieldsTooLarge,
      detail: 'The request line and headers together exceed 16 KiB.',
    };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { problemType: ProblemTypes.requestTimeout, detail: 'The request did not arrive in time.' };
  }
  return {
    problemType: ProblemTypes.badRequest,
    detail: 'The request is not valid HTTP/1.1 (for example a raw non-ASCII byte in its path or a header).',
  };
}

/**
 * Node's HTTP parser answers requests it cannot parse (a raw byte ≥ 0x80 in the path, headers over
 * 16 KiB, a malformed request line) with a bare 400/431/408 before any middleware runs. This gives
 * them the API's problem+json body like every other error. There is no parsed path, so `instance`
 * is "/"; the request id is new (no X-Request-Id header could be read).
 */
export function answerClientErrorsWithProblems(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
      socket.destroy();
      return;
    }
    const { problemType, detail } = problemFor(error.code);
    const requestId = randomUUID();
    const body = JSON.stringify({ ...problemType, detail, instance: '/', requestId });
    socket.end(
      `HTTP/1.1 ${problemType.status} ${STATUS_CODES[problemType.status]}\r\n` +
        'Content-Type: application/problem+json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
