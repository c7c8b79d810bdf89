import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../src/http/body/lingering-close.js';
import { buildPost } from './factories/post.factory.js';
import { rawRequest } from './helpers/raw-http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { useTestApp } from './helpers/use-test-app.js';

const MiB = 1024 * 1024;

interface OpenRequest {
  socket: Socket;
  /** Writes part of the body; false when the socket wants a 'drain' first. */
  write(chunk: Buffer): boolean;
  /** Bytes of the body written so far. */
  sent(): number;
  /** Resolves with what the server sent and when, once it closes the connection (or after 10 s). */
  closed: Promise<{ raw: string; respondedAfterBytes: number | null; closedByServer: boolean }>;
  /** Resolves when the server has ended its side of the connection (its FIN). */
  ended: Promise<void>;
  /** Socket errors seen so far: a reset shows here as ECONNRESET or EPIPE. */
  errors: NodeJS.ErrnoException[];
}

/** Opens a connection and sends a request head; the test then writes (or withholds) the body. */
function openRequest(baseUrl: string, head: string, options: { allowHalfOpen?: boolean } = {}): OpenRequest {
  const { hostname, port, pathname } = new URL(baseUrl);
  // allowHalfOpen: the client may go on writing after the server's FIN, as a client still uploading does.
  const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: options.allowHalfOpen ?? false });
  socket.write(head.replace('{path}', pathname.replace(/\/$/, '')));
  let bytes = 0;
  let respondedAfterBytes: number | null = null;
  const chunks: Buffer[] = [];
  const errors: NodeJS.ErrnoException[] = [];
  const ended = new Promise<void>((resolve) => socket.once('end', resolve));
  const closed = new Promise<{ raw: string; respondedAfterBytes: number | null; closedByServer: boolean }>(
    (resolve) => {
      const timer = setTimeout(() => {
        socket.destroy();
        resolve({ raw: Buffer.concat(chunks).toString('latin1'), respondedAfterBytes, closedByServer: false });
      }, 10_000);
      socket.on('data', (chunk: Buffer) => {
        respondedAfterBytes ??= bytes;
        chunks.push(chunk);
      });
      // A server that closes while the client still writes shows as a reset: that is the point.
      socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error));
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ raw: Buffer.concat(chunks).toString('latin1'), respondedAfterBytes, closedByServer: true });
      });
    },
  );
  const write = (chunk: Buffer): boolean => {
    bytes += chunk.length;
    return socket.write(chunk);
  };
  return { socket, write, sent: () => bytes, closed, ended, errors };
}

/** Writes `chunk` over and over, minding back-pressure, until `limit` bytes or the socket is gone. */
async function stream(request: OpenRequest, chunk: Buffer, limit: number): Promise<void> {
  while (request.sent() < limit && !request.socket.destroyed && request.socket.writable) {
    if (!request.write(chunk)) {
      await new Promise<void>((resolve) => {
        request.socket.once('drain', resolve);
        request.socket.once('close', resolve);
      });
    }
  }
}

function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
}

function headerOf(raw: string, name: string): string | undefined {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  return new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1];
}

/** One chunk of a chunked body: `size` bytes of 'a' in chunked framing. */
function chunked(size: number): Buffer {
  return Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), Buffer.alloc(size, 'a'), Buffer.from('\r\n')]);
}

const formHead = (extra: string) =>
  'POST {path}/posts HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\n' + extra + '\r\n';

describe('request bodies the service does not want', () => {
  const context = useTestApp();

  it('refuses an anonymous form declaring 100 MB with 413 before a byte of it is sent', async () => {
    const request = openRequest(context.app.baseUrl, formHead('Content-Length: 100000000\r\n'));

    const { raw, closedByServer } = await request.closed;

    expect(statusOf(raw)).toBe(413);
    expect(headerOf(raw, 'content-type')).toBe('application/problem+json; charset=utf-8');
    expect(headerOf(raw, 'connection')).toBe('close');
    expect(closedByServer).toBe(true);
  });

  it('stops reading an anonymous chunked form at the body limit: 413, and the connection is closed', async () => {
    const request = openRequest(context.app.baseUrl, formHead('Transfer-Encoding: chunked\r\n'));
    // Before the fix the service read the whole stream (300 MB in the review) before answering.
    await stream(request, chunked(64 * 1024), 64 * MiB);
    const { raw, respondedAfterBytes, closedByServer } = await request.closed;

    expect(statusOf(raw)).toBe(413);
    expect(headerOf(raw, 'connection')).toBe('close');
    expect(closedByServer).toBe(true);
    // The 1 MiB limit, plus what the loopback socket buffers hold.
    expect(respondedAfterBytes).toBeLessThan(16 * MiB);
  });

  it('closes in stages after a 413, so a client still uploading reads the answer instead of a reset', async () => {
    const request = openRequest(context.app.baseUrl, formHead('Transfer-Encoding: chunked\r\n'), {
      allowHalfOpen: true,
    });

    // Over the 1 MiB limit, then more after the server's FIN, as a client that does not read while it
    // uploads would. A server that closes at once answers those bytes with a reset (RFC 9112 §9.6).
    await stream(request, chunked(64 * 1024), 2 * MiB);
    await request.ended;
    await stream(request, chunked(64 * 1024), 3 * MiB);
    await new Promise((resolve) => setTimeout(resolve, 300));
    request.socket.end();
    const { raw, closedByServer } = await request.closed;

    expect(request.errors.map((error) => error.code)).toEqual([]);
    expect(statusOf(raw)).toBe(413);
    expect(headerOf(raw, 'connection')).toBe('close');
    expect(closedByServer).toBe(true);
  });

  it('lingers a bounded time: a client that never closes its side is cut off after LINGER_MS', async () => {
    const request = openRequest(context.app.baseUrl, formHead('Transfer-Encoding: chunked\r\n'), {
      allowHalfOpen: true,
    });

    await stream(request, chunked(64 * 1024), 2 * MiB);
    await request.ended;
    const endedAt = performance.now();
    // A chunk every 100 ms, never the end: once the server has let go, a write meets a reset.
    const keepWriting = setInterval(() => request.write(chunked(16)), 100);
    const { raw, closedByServer } = await request.closed.finally(() => clearInterval(keepWriting));
    const lingered = performance.now() - endedAt;

    expect(statusOf(raw)).toBe(413);
    expect(closedByServer).toBe(true);
    expect(request.errors.map((error) => error.code)).not.toEqual([]);
    expect(lingered).toBeGreaterThan(LINGER_MS - 500);
    expect(lingered).toBeLessThan(LINGER_MS + 3_000);
  });

  it('does not run a request pipelined behind a body it refused unread', async () => {
    const postsBefore = await context.countPosts();
    const authorization = `Authorization: Bearer ${context.app.writerToken}\r\n`;
    const request = openRequest(
      context.app.baseUrl,
      `POST {path}/posts HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n${authorization}` +
        'Transfer-Encoding: chunked\r\n\r\n',
    );
    const post = JSON.stringify(buildPost());
    const { pathname } = new URL(context.app.baseUrl);

    await stream(request, chunked(64 * 1024), 2 * MiB);
    request.write(
      Buffer.from(
        `0\r\n\r\nPOST ${pathname.replace(/\/$/, '')}/posts HTTP/1.1\r\nHost: test\r\n${authorization}` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(post)}\r\n\r\n${post}`,
      ),
    );
    const { raw, closedByServer } = await request.closed;

    expect(statusOf(raw)).toBe(413);
    expect(raw.match(/HTTP\/1\.1 \d{3}/g)).toHaveLength(1);
    expect(closedByServer).toBe(true);
    expect(await context.countPosts()).toBe(postsBefore);
  });

  it('answers an anonymous JSON write 401 and closes rather than draining the unread body', async () => {
    const request = openRequest(
      context.app.baseUrl,
      'POST {path}/posts HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n',
    );
    request.write(Buffer.from('{"title":'));

    const { raw, closedByServer } = await request.closed;

    expect(statusOf(raw)).toBe(401);
    expect(headerOf(raw, 'connection')).toBe('close');
    expect(closedByServer).toBe(true);
  });

  it('keeps the connection open after an error when the body was read whole', async () => {
    const response = await rawRequest(`${context.app.baseUrl}/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${context.app.writerToken}` },
      body: JSON.stringify({ ...buildPost(), title: '' }),
    });

    expect(response.status).toBe(400);
    expect(response.headers.connection).toBe('keep-alive');
  });
});

describe('a body that arrives too slowly', { tags: ['instance'] }, () => {
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await startTestApp({ env: { BODY_TIMEOUT: '1000' } });
  });

  afterAll(async () => {
    await testApp?.close();
  });

  // One byte every 200 ms: each arrives well within any idle timeout, the whole body never does.
  async function trickle(request: OpenRequest): Promise<void> {
    while (!request.socket.destroyed) {
      request.write(Buffer.from('a'));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it.each([
    ['an anonymous form', () => formHead('Content-Length: 1000\r\n')],
    [
      'an authenticated JSON post',
      () =>
        'POST {path}/posts HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n' +
        `Authorization: Bearer ${testApp.writerToken}\r\n\r\n`,
    ],
  ])('answers %s with 408 once BODY_TIMEOUT passes and closes the connection', async (_, head) => {
    const start = performance.now();
    const request = openRequest(testApp.baseUrl, head());
    void trickle(request);

    const { raw, closedByServer } = await request.closed;
    const elapsed = performance.now() - start;

    expect(statusOf(raw)).toBe(408);
    expect(headerOf(raw, 'content-type')).toBe('application/problem+json; charset=utf-8');
    expect(headerOf(raw, 'connection')).toBe('close');
    expect(closedByServer).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(5_000);
  });
});
