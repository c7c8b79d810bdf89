import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';

/** How long a connection closed with its request body unread goes on discarding what the client sends. */
export const LINGER_MS = 2_000;

const lingering = new WeakSet<Socket>();

/**
 * Ends the connection after this response, without reading the rest of the request body.
 *
 * Closing a socket with unread bytes makes the kernel reset the connection, and a reset can destroy
 * the response before the client has read it: a client still uploading would see "connection reset"
 * instead of the 413 that explains why. So the connection closes in stages, as RFC 9112 §9.6 asks: the
 * response, then a half-close (FIN), then the client's bytes are read and thrown away until it closes
 * its side or LINGER_MS have passed, and only then is the socket destroyed. Node would otherwise
 * destroy it as soon as the response is written (its http server calls socket.destroySoon()).
 */
export function closeConnectionAfterResponse(response: ServerResponse): void {
  response.setHeader('Connection', 'close');
  const socket = response.socket;
  if (socket === null || lingering.has(socket)) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket): void {
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
    this.end();
  };
}

/**
 * RFC 9112 §9.6: after a response that closes the connection, no further request on it is processed.
 * Node's parser still reads requests a client pipelines behind it (behind a body refused unread, or
 * after a `Connection: close` response before the socket is gone): the connection is dropped here,
 * before any other middleware sees them.
 */
export function refuseRequestsAfterClose(request: Request, _response: Response, next: NextFunction): void {
  if (lingering.has(request.socket) || request.socket.writableEnded) {
    request.socket.destroy();
    return;
  }
  next();
}
