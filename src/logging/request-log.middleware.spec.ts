import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { requestContext } from './request-context.js';
import { RequestLogMiddleware } from './request-log.middleware.js';

// What the middleware reads of a response: Node's ServerResponse emits 'close' once it is done or cut off.
function fakeExchange(url: string) {
  const response = Object.assign(new EventEmitter(), {
    statusCode: 200,
    writableFinished: false,
    locals: { requestId: 'req-42' },
  });
  const request = { method: 'GET', url, originalUrl: url, res: response } as unknown as Request;
  Object.assign(response, { req: request });
  return { request, response };
}

function middlewareWritingTo(lines: Array<Record<string, unknown>>, level = 'info'): RequestLogMiddleware {
  const destination = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
  return new RequestLogMiddleware(pino({ level }, destination));
}

describe('RequestLogMiddleware', () => {
  it('serves the rest of the pipeline inside the request context and logs once the response is done', () => {
    const lines: Array<Record<string, unknown>> = [];
    const { request, response } = fakeExchange('/nowhere?q=1');
    let contextDuringRequest: unknown;

    middlewareWritingTo(lines).use(request, response as unknown as Response, () => {
      contextDuringRequest = requestContext.getStore();
    });
    expect(lines).toHaveLength(0);
    Object.assign(response, { statusCode: 404, writableFinished: true });
    response.emit('close');

    expect(contextDuringRequest).toBe(request);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 40,
      req: { id: 'req-42', method: 'GET', path: '/nowhere' },
      res: { statusCode: 404 },
      route: 'unmatched',
      msg: 'GET unmatched 404',
    });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(lines[0]).not.toHaveProperty('aborted');
  });

  it('logs a response cut off before it was complete as an error, marked aborted', () => {
    const lines: Array<Record<string, unknown>> = [];
    const { request, response } = fakeExchange('/posts/1');

    middlewareWritingTo(lines).use(request, response as unknown as Response, () => {});
    response.emit('close');

    expect(lines[0]).toMatchObject({ level: 50, aborted: true, msg: 'GET unmatched aborted' });
  });

  it('writes nothing for a level that is off', () => {
    const lines: Array<Record<string, unknown>> = [];
    const { request, response } = fakeExchange('/posts/1');

    middlewareWritingTo(lines, 'warn').use(request, response as unknown as Response, () => {});
    Object.assign(response, { writableFinished: true });
    response.emit('close');

    expect(lines).toHaveLength(0);
  });
});
