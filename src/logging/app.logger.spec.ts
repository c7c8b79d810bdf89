import type { Request } from 'express';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { AppLogger } from './app.logger.js';
import { requestContext } from './request-context.js';

function loggerWritingTo(lines: Array<Record<string, unknown>>, level = 'info'): AppLogger {
  const destination = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) };
  return new AppLogger(pino({ level }, destination));
}

describe('AppLogger', () => {
  it('writes a message with its context as one line at the matching level', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo(lines);

    logger.log('Listening on http://127.0.0.1:3000', 'Bootstrap');
    logger.warn('slow', 'Database');

    expect(lines).toMatchObject([
      { level: 30, context: 'Bootstrap', msg: 'Listening on http://127.0.0.1:3000' },
      { level: 40, context: 'Database', msg: 'slow' },
    ]);
    expect(lines[0]).not.toHaveProperty('req');
  });

  it('merges an object message into the line and puts an error under err', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo(lines);

    logger.warn({ message: 'could not record the last use of an API key', keyId: 7 }, 'ApiKeys');
    logger.error(new Error('disk full'), 'Database');

    expect(lines[0]).toMatchObject({
      context: 'ApiKeys',
      message: 'could not record the last use of an API key',
      keyId: 7,
    });
    expect(lines[1]).toMatchObject({ level: 50, context: 'Database', err: { message: 'disk full', type: 'Error' } });
  });

  it("turns Nest's (message, stack, context) error calls into an error with that stack", () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo(lines);

    logger.error('boom', 'Error: boom\n    at handler (/app/x.js:1:1)', 'ExceptionsHandler');

    expect(lines[0]).toMatchObject({
      context: 'ExceptionsHandler',
      msg: 'boom',
      err: { message: 'boom', stack: 'Error: boom\n    at handler (/app/x.js:1:1)' },
    });
  });

  it('keeps a second string that is not a stack (a run of newlines, say) apart from the error', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo(lines);
    const newlines = `\n${'\n'.repeat(50_000)}at`;

    logger.error('boom', newlines, 'Posts');

    expect(lines[0]).toMatchObject({ context: 'Posts', msg: 'boom' });
    expect(lines[0]).not.toHaveProperty('err');
  });

  it('adds the request being served: id, method and path, never the query string', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo(lines);
    const request = {
      method: 'GET',
      originalUrl: '/posts?access_token=secret',
      url: '/posts?access_token=secret',
      res: { locals: { requestId: 'req-1' } },
    } as unknown as Request;

    requestContext.run(request, () => logger.error('query failed', 'Database'));

    expect(lines[0]).toMatchObject({ req: { id: 'req-1', method: 'GET', path: '/posts' }, msg: 'query failed' });
    expect(JSON.stringify(lines[0])).not.toContain('secret');
  });

  it('writes nothing below the configured level', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo(lines, 'warn');

    logger.log('started', 'Bootstrap');
    logger.debug('detail', 'Database');
    logger.verbose('more detail', 'Database');
    logger.warn('careful', 'Database');

    expect(lines.map((line) => line.msg)).toEqual(['careful']);
  });
});
