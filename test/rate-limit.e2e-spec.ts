// @module-tag instance
// (starts instances with low limits of their own)
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';
import { Scope } from '../src/auth/principal.js';
import { buildPost } from './factories/post.factory.js';
import { client, type HttpResult } from './helpers/http.js';
import { startTestApp, type TestApp, type TestAppOptions } from './helpers/test-app.js';
import { expectProblem } from './helpers/use-test-app.js';

const LIMIT = 5;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function limits(extra: Record<string, string> = {}): Record<string, string> {
  return { THROTTLE_LIMIT: String(LIMIT), THROTTLE_TTL: '60', THROTTLE_AUTH_FAILURE_LIMIT: String(LIMIT), ...extra };
}

/** The parameters of a structured-field item such as `"default";r=4;t=60`. */
function parameters(field: string | null): Record<string, string> {
  expect(field).not.toBeNull();
  const [name, ...pairs] = field!.split(';');
  const entries = pairs.map((pair): [string, string] => {
    const [key, value] = pair.split('=');
    return [key, value];
  });
  return { name, ...Object.fromEntries(entries) };
}

function expectBudgetHeaders(response: HttpResult, policy: string, remaining: number): void {
  expect(parameters(response.headers.get('ratelimit-policy'))).toEqual({
    name: `"${policy}"`,
    q: String(LIMIT),
    w: '60',
  });
  const current = parameters(response.headers.get('ratelimit'));
  expect(current).toMatchObject({ name: `"${policy}"`, r: String(remaining) });
  expect(Number(current.t)).toBeGreaterThan(0);
  expect(Number(current.t)).toBeLessThanOrEqual(60);
  expect(response.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
  expect(response.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
  const reset = Number(response.headers.get('x-ratelimit-reset'));
  expect(Math.abs(reset - (Math.ceil(Date.now() / 1000) + Number(current.t)))).toBeLessThanOrEqual(2);
}

function expectRateLimited(response: HttpResult, policy: string): void {
  const problem = expectProblem(response, 429, 'rate-limited');
  expect(problem.detail).toContain(policy);
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  // RateLimit's t and Retry-After tell the client the same thing.
  expect(parameters(response.headers.get('ratelimit')).t).toBe(retryAfter);
  expect(parameters(response.headers.get('ratelimit')).r).toBe('0');
}

describe('rate limiting', () => {
  const started: TestApp[] = [];
  const directories: string[] = [];

  const start = async (options: TestAppOptions): Promise<TestApp> => {
    const app = await startTestApp(options);
    started.push(app);
    return app;
  };
  /** Two instances on one database (a file for SQLite) sharing one Redis key space. */
  const startFleet = async (env: Record<string, string>): Promise<[TestApp, TestApp]> => {
    const directory = mkdtempSync(join(tmpdir(), 'posts-fleet-'));
    directories.push(directory);
    const first = await start({ env, sqlitePath: join(directory, 'posts.sqlite') });
    const second = await start({ env, databaseUrl: first.databaseUrl });
    return [first, second];
  };

  afterEach(async () => {
    for (const app of started.splice(0).reverse()) await app.close();
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('lets a principal make exactly the limit of requests, then answers 429 with the headers', async () => {
    const app = await start({ env: limits() });
    const api = client(
      () => app.baseUrl,
      () => app.writerToken,
    );

    for (let request = 1; request <= LIMIT; request++) {
      const response = await api.get('/posts');
      expect(response.status).toBe(200);
      expectBudgetHeaders(response, 'default', LIMIT - request);
    }
    const refused = await api.post('/posts', buildPost());

    expectRateLimited(refused, 'default');
    expect(parameters(refused.headers.get('ratelimit-policy')).q).toBe(String(LIMIT));
    // The refused POST created nothing.
    const [row] = await app.dataSource.query<Array<{ n: number | string }>>('SELECT COUNT(*) AS n FROM posts');
    expect(Number(row.n)).toBe(0);
  });

  it('counts one budget per principal across routes, and gives each principal its own', async () => {
    const app = await start({ env: limits() });
    const first = client(
      () => app.baseUrl,
      () => app.writerToken,
    );
    const second = client(() => app.baseUrl).as(await app.createToken([Scope.postsRead]));

    const created = await first.post<{ id: number }>('/posts', buildPost());
    await first.get(`/posts/${created.body.id}`);
    await first.get('/posts');
    await first.patch(`/posts/${created.body.id}`, { title: 'x' });
    expect((await first.get('/posts')).status).toBe(200);
    expectRateLimited(await first.get(`/posts/${created.body.id}`), 'default');

    const other = await second.get('/posts');
    expect(other.status).toBe(200);
    expectBudgetHeaders(other, 'default', LIMIT - 1);
  });

  it('caps failed authentications per client IP: fresh random tokens get 429 once the cap is reached', async () => {
    const app = await start({ env: limits() });
    const api = client(() => app.baseUrl);

    for (let attempt = 1; attempt <= LIMIT; attempt++) {
      const response = await api.as(generateApiKeyToken()).get('/posts');
      expectProblem(response, 401, 'invalid-token');
      expectBudgetHeaders(response, 'auth-failures', LIMIT - attempt);
    }

    expectRateLimited(await api.as(generateApiKeyToken()).get('/posts'), 'auth-failures');
    expectRateLimited(await api.as(`Zm9v${randomBytes(30).toString('base64url')}`).get('/posts'), 'auth-failures');
    expectRateLimited(await api.as(null).get('/posts'), 'auth-failures');
    // A client with a valid key behind the same address is not punished for the attacker.
    expect((await api.as(app.writerToken).get('/posts')).status).toBe(200);
  });

  it('limits anonymous floods too', async () => {
    const app = await start({ env: limits() });
    const anonymous = client(() => app.baseUrl);
    const statuses = [];
    for (let request = 0; request < LIMIT + 3; request++) statuses.push((await anonymous.get('/posts')).status);
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429, 429, 429]);
  });

  it('ignores a spoofed X-Forwarded-For unless TRUST_PROXY says there is a proxy', async () => {
    const app = await start({ env: limits() });
    const api = client(() => app.baseUrl);
    const statuses = [];
    for (let attempt = 0; attempt <= LIMIT; attempt++) {
      const spoofed = { 'x-forwarded-for': `203.0.113.${attempt + 1}` };
      statuses.push((await api.as(generateApiKeyToken()).get('/posts', spoofed)).status);
    }
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429]);
  });

  it('believes X-Forwarded-For for TRUST_PROXY hops, so clients behind a proxy have budgets of their own', async () => {
    const app = await start({ env: limits({ TRUST_PROXY: '1' }) });
    const api = client(() => app.baseUrl);
    const from = (address: string) => ({ 'x-forwarded-for': address });

    for (let attempt = 0; attempt < LIMIT; attempt++) {
      expect((await api.as(generateApiKeyToken()).get('/posts', from('198.51.100.7'))).status).toBe(401);
    }
    expectRateLimited(await api.as(generateApiKeyToken()).get('/posts', from('198.51.100.7')), 'auth-failures');
    expect((await api.as(generateApiKeyToken()).get('/posts', from('198.51.100.8'))).status).toBe(401);
  });

  it('never throttles the health probes', async () => {
    const app = await start({ env: limits() });
    const anonymous = client(() => app.baseUrl);
    for (let probe = 0; probe < LIMIT * 3; probe++) {
      const response = await anonymous.get(probe % 2 === 0 ? '/health/live' : '/health/ready');
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit')).toBeNull();
    }
    // The probes spent nothing: the anonymous failure budget is whole.
    expectBudgetHeaders(await anonymous.get('/posts'), 'auth-failures', LIMIT - 1);
  });

  it('lets exactly the limit through a concurrent burst of twice the limit (in-process counters)', async () => {
    const app = await start({ env: limits() });
    const api = client(
      () => app.baseUrl,
      () => app.writerToken,
    );

    const responses = await Promise.all(Array.from({ length: LIMIT * 2 }, () => api.get('/posts')));

    expect(responses.filter((response) => response.status === 200)).toHaveLength(LIMIT);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(LIMIT);
  });

  describe('with REDIS_URL', () => {
    const redis = () => ({ REDIS_URL: REDIS_URL, REDIS_KEY_PREFIX: `test:${randomUUID()}:` });

    it('enforces one combined limit for two instances', async () => {
      const [first, second] = await startFleet(limits(redis()));
      const onFirst = client(
        () => first.baseUrl,
        () => first.writerToken,
      );
      const onSecond = client(
        () => second.baseUrl,
        () => first.writerToken,
      );

      const statuses = [];
      for (let request = 0; request < LIMIT * 2; request++) {
        statuses.push((await (request % 2 === 0 ? onFirst : onSecond).get('/posts')).status);
      }

      expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
      expect(statuses.slice(LIMIT)).toEqual(Array<number>(LIMIT).fill(429));
    });

    it('lets exactly the limit through a concurrent burst of twice the limit spread over two instances', async () => {
      const [first, second] = await startFleet(limits(redis()));
      const apis = [
        client(
          () => first.baseUrl,
          () => first.writerToken,
        ),
        client(
          () => second.baseUrl,
          () => first.writerToken,
        ),
      ];

      const responses = await Promise.all(
        Array.from({ length: LIMIT * 2 }, (_, index) => apis[index % 2].get('/posts')),
      );

      expect(responses.filter((response) => response.status === 200)).toHaveLength(LIMIT);
      expect(responses.filter((response) => response.status === 429)).toHaveLength(LIMIT);
    });

    it('shares the brute-force cap across instances', async () => {
      const [first, second] = await startFleet(limits(redis()));
      const apis = [client(() => first.baseUrl), client(() => second.baseUrl)];
      const statuses = [];
      for (let attempt = 0; attempt <= LIMIT; attempt++) {
        statuses.push((await apis[attempt % 2].as(generateApiKeyToken()).get('/posts')).status);
      }
      expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429]);
    });

    it('fails open when Redis cannot be reached: requests are served, never a 500', async () => {
      const app = await start({ env: limits({ REDIS_URL: 'redis://127.0.0.1:1' }) });
      const api = client(
        () => app.baseUrl,
        () => app.writerToken,
      );
      for (let request = 0; request < LIMIT * 2; request++) {
        expect((await api.get('/posts')).status).toBe(200);
      }
      expect((await api.as(generateApiKeyToken()).get('/posts')).status).toBe(401);
    });
  });
});
