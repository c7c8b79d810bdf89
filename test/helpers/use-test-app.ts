import { afterAll, beforeAll, expect } from 'vitest';
import { countPostsOverHttp, deploymentUrl, findPostOverHttp } from './deployment.js';
import { client, type HttpResult } from './http.js';
import { startTestApp, type TestApp, type TestAppOptions } from './test-app.js';

/** Starts one app for the calling test file (beforeAll) and stops it afterwards. */
export function useTestApp(options: TestAppOptions = {}) {
  let testApp: TestApp | undefined;
  beforeAll(async () => {
    testApp = await startTestApp(options);
  });
  afterAll(async () => {
    await testApp?.close();
  });
  const current = (): TestApp => {
    if (!testApp) throw new Error('the test app is not started');
    return testApp;
  };
  return {
    /** Authenticated with the app's writer key (posts:read, posts:write). */
    api: client(
      () => current().baseUrl,
      () => current().writerToken,
    ),
    get app(): TestApp {
      return current();
    },
    /** Rows in the posts table; against a deployment, the API's X-Total-Count. */
    async countPosts(): Promise<number> {
      if (deploymentUrl !== undefined) return countPostsOverHttp(current());
      const [row] = await current().dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM posts');
      return Number(row.n);
    },
    /**
     * The stored post: its database row (with ownerId and version); against a deployment, what
     * GET /posts/:id shows the admin key, which is all a client can check there.
     */
    async findPostRow(id: number): Promise<Record<string, unknown> | undefined> {
      if (deploymentUrl !== undefined) return findPostOverHttp(current(), id);
      const repository = current().dataSource.getRepository('Post');
      return (await repository.findOneBy({ id })) ?? undefined;
    },
  };
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  requestId: string;
  errors?: Array<{ pointer?: string; parameter?: string; detail: string }>;
}

/** Asserts an RFC 9457 problem response of the given status and type slug, and returns its body. */
export function expectProblem(response: HttpResult, status: number, typeSlug: string): ProblemBody {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  const body = response.body as ProblemBody;
  expect(body).toMatchObject({ type: `urn:problem-type:posts-api:${typeSlug}`, status });
  expect(typeof body.title).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expect(body.instance.startsWith('/')).toBe(true);
  expect(body.requestId).toBe(response.headers.get('x-request-id'));
  return body;
}
