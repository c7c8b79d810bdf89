import { request } from 'node:http';

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
