// @module-tag instance
// (reads the log lines of the instance it starts)
import { describe, expect, it } from 'vitest';
import { Scope } from '../src/auth/principal.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { useTestApp } from './helpers/use-test-app.js';

interface RequestLogLine {
  level: number;
  msg: string;
  req: { id: string; method: string; path: string };
  res: { statusCode: number };
  responseTime: number;
  route: string;
  principal?: string;
}

describe('structured request logs', () => {
  const logLines: string[] = [];
  const context = useTestApp({ logLines });
  const { api } = context;

  const requestLines = (): RequestLogLine[] =>
    logLines.map((line) => JSON.parse(line) as RequestLogLine).filter((entry) => entry.req !== undefined);
  const lineFor = (requestId: string): RequestLogLine => {
    const found = requestLines().filter((entry) => entry.req.id === requestId);
    expect(found, `one log line for request ${requestId}`).toHaveLength(1);
    return found[0];
  };

  it('writes one JSON line per request with method, route template, path, status, duration, request id and principal', async () => {
    const created = await api.post<PostResource>('/posts', buildPost(), { 'x-request-id': 'log-test-create' });
    await api.get(`/posts/${created.body.id}`, { 'x-request-id': 'log-test-read' });

    const read = lineFor('log-test-read');
    expect(read).toMatchObject({
      req: { method: 'GET', path: `/posts/${created.body.id}` },
      res: { statusCode: 200 },
      route: '/posts/:id',
      msg: 'GET /posts/:id 200',
    });
    expect(read.principal).toMatch(/^api-key:\d+$/);
    expect(typeof read.responseTime).toBe('number');
    expect(lineFor('log-test-create')).toMatchObject({ res: { statusCode: 201 }, route: '/posts' });
  });

  it('writes each field once (no duplicate keys from the start of the request)', async () => {
    await api.get('/posts', { 'x-request-id': 'log-test-keys' });
    const line = logLines.find((candidate) => candidate.includes('"log-test-keys"'))!;
    expect(line.match(/"route":/g)).toHaveLength(1);
    expect(line.match(/"principal":/g)).toHaveLength(1);
  });

  it('logs refusals and unknown routes too, at warn level, without a principal when there is none', async () => {
    await api.as(null).get('/posts', { 'x-request-id': 'log-test-anonymous' });
    await api.get('/nowhere/at/all', { 'x-request-id': 'log-test-unknown' });

    expect(lineFor('log-test-anonymous')).toMatchObject({ res: { statusCode: 401 }, level: 40 });
    expect(lineFor('log-test-anonymous').principal).toBeUndefined();
    expect(lineFor('log-test-unknown')).toMatchObject({ res: { statusCode: 404 }, route: 'unmatched' });
  });

  it('never logs a token: not from the Authorization header, the query string or a refused key', async () => {
    const token = await context.app.createToken([Scope.postsRead]);
    await api.as(token).get('/posts', { 'x-request-id': 'log-test-header' });
    await api.as(null).get(`/posts?access_token=${token}`, { 'x-request-id': 'log-test-query' });
    await api.as(`${token}x`).get('/posts');

    expect(lineFor('log-test-query')).toMatchObject({ req: { path: '/posts' }, res: { statusCode: 400 } });
    const everything = logLines.join('');
    expect(everything).not.toContain(token.slice(4, 40));
    expect(everything.toLowerCase()).not.toContain('authorization');
  });
});
