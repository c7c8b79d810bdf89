import { request } from 'node:http';
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request with exactly these headers and bytes (fetch would fix up Content-Length and friends). */
export function rawRequest(
  url: string,
  options: { method: string; headers: Record<string, string>; body?: Buffer | string },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method, headers: options.headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    // The server may answer (413) and close before the whole body is written: that is not a failure.
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    outgoing.end(options.body);
  });
}

/**
 * Writes these bytes on a fresh connection to the server at `baseUrl` and returns all it sends back.
 * `halfClose`: end the sending side at once; Node then aborts a request whose answer is not ready
 * yet, so a request that needs the database must leave it open (and be one the server closes after).
 */
export function exchangeBytes(baseUrl: string, bytes: Buffer, { halfClose = true } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const socket = connect({ host: hostname, port: Number(port) }, () =>
      halfClose ? socket.end(bytes) : socket.write(bytes),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
  });
}

/** The status line, headers (lower-case names) and JSON body of one raw HTTP/1.1 response. */
export function parseRawResponse(raw: string): {
  statusLine: string;
  headers: Map<string, string>;
  body: Record<string, unknown>;
} {
  const [head, body] = raw.split('\r\n\r\n');
  const headers = new Map(
    head
      .split('\r\n')
      .slice(1)
      .map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { statusLine: head.split('\r\n')[0], headers, body: JSON.parse(body) as Record<string, unknown> };
}
