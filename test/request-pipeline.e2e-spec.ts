import 'reflect-metadata';
import { GuardsConsumer } from '@nestjs/core/guards/guards-consumer.js';
import { InterceptorsConsumer } from '@nestjs/core/interceptors/interceptors-consumer.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { useTestApp } from './helpers/use-test-app.js';

// What Nest runs around a handler is part of its cost: each global guard is a call per request, and
// one interceptor anywhere (a library's no-op included) puts every request through Nest's RxJS
// pipeline. This pins the pipeline, so a module that adds an enhancer to every route says so here.
describe('the enhancers around a handler', { tags: ['instance'] }, () => {
  const context = useTestApp();
  const { api } = context;
  const guards = vi.spyOn(GuardsConsumer.prototype, 'tryActivate');
  const interceptors = vi.spyOn(InterceptorsConsumer.prototype, 'intercept');

  let postId = 0;
  beforeAll(async () => {
    postId = (await api.post<PostResource>('/posts', buildPost())).body.id;
  });
  afterAll(() => {
    guards.mockRestore();
    interceptors.mockRestore();
  });

  const pipelineOf = async (request: () => Promise<{ status: number }>, status: number) => {
    guards.mockClear();
    interceptors.mockClear();
    expect((await request()).status).toBe(status);
    return {
      guards: guards.mock.calls.flatMap(([list]) => (list ?? []).map((guard) => guard.constructor.name)),
      interceptors: interceptors.mock.calls.flatMap(([list]) => (list ?? []).map((one) => one.constructor.name)),
    };
  };

  it.each([
    ['GET /posts/:id', () => api.get(`/posts/${postId}`), 200],
    ['GET /posts', () => api.get('/posts?limit=5'), 200],
    ['POST /posts without Idempotency-Key', () => api.post('/posts', buildPost()), 201],
  ])('%s passes the four guards of AppModule and no interceptor', async (_, request, status) => {
    expect(await pipelineOf(request, status)).toEqual({
      guards: ['BearerAuthGuard', 'RateLimitGuard', 'JsonBodyGuard', 'AccessTokenInBodyGuard'],
      interceptors: [],
    });
  });

  it('POST /posts with Idempotency-Key still runs once and replays (the work is in @Idempotent())', async () => {
    const headers = { 'Idempotency-Key': 'pipeline-1' };
    const body = buildPost();
    const first = await api.post<PostResource>('/posts', body, headers);
    const replay = await api.post<PostResource>('/posts', body, headers);
    expect([first.status, replay.status]).toEqual([201, 201]);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    expect(interceptors.mock.calls.flatMap(([list]) => list ?? [])).toEqual([]);
  });
});
