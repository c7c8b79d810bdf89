// @module-tag instance
// (counts exact request totals of instances nothing else calls, some with their own environment)
import contentType from 'content-type';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PostsService } from '../src/posts/posts.service.js';
import { buildPost } from './factories/post.factory.js';
import { client, type HttpResult } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { dialect } from './helpers/test-database.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const METRICS_TOKEN = 'metrics-token-of-the-scraper-0123456789';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [, name, labelText = '', value] = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line) ?? [];
      expect(name, `unparsable sample line: ${line}`).toBeDefined();
      const labels = Object.fromEntries(
        [...labelText.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, key, labelValue]) => [key, labelValue]),
      );
      return { name, labels, value: Number(value) };
    });
}

/** The value of the one sample with exactly these labels, or undefined when there is none. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const matching = samples.filter(
    (sample) =>
      sample.name === name &&
      Object.keys(sample.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  expect(matching.length, `${name} ${JSON.stringify(labels)} appears more than once`).toBeLessThanOrEqual(1);
  return matching[0]?.value;
}

function expectScrape(response: HttpResult): Sample[] {
  expect(response.status).toBe(200);
  // Prometheus text format 0.0.4 (Express puts the charset parameter first; the order means nothing).
  expect(contentType.parse(response.headers.get('content-type')!)).toEqual({
    type: 'text/plain',
    parameters: { version: '0.0.4', charset: 'utf-8' },
  });
  expect(response.headers.get('cache-control')).toBe('no-store');
  return parseSamples(response.text);
}

describe('GET /metrics', () => {
  describe('without METRICS_TOKEN', () => {
    const context = useTestApp();
    const anonymous = context.api.as(null);
    let samples: Sample[];
    let scrapeText: string;

    beforeAll(async () => {
      expect((await context.api.get('/posts')).status).toBe(200);
      expect((await context.api.post('/posts', buildPost())).status).toBe(201);
      expect((await context.api.post('/posts', buildPost({ title: '' }))).status).toBe(400);
      expect((await anonymous.get('/posts')).status).toBe(401);
      expect((await context.api.get('/posts/12345')).status).toBe(404);
      expect((await context.api.get('/posts/99999')).status).toBe(404);
      expect((await context.api.get('/no/such/route/12345')).status).toBe(404);
      expect((await context.api.get('/health/live')).status).toBe(200);
      const failure = vi
        .spyOn(context.app.app.get(PostsService), 'findPage')
        .mockRejectedValueOnce(new Error('a fault in the service'));
      expect((await context.api.get('/posts')).status).toBe(500);
      failure.mockRestore();

      const response = await anonymous.get('/metrics');
      samples = expectScrape(response);
      scrapeText = response.text;
    });

    const requests = (method: string, route: string, status: string) =>
      valueOf(samples, 'http_requests_total', { method, route, status });

    it('is public and counts every response by method, route template and status', () => {
      expect(requests('GET', '/posts', '200')).toBe(1);
      expect(requests('POST', '/posts', '201')).toBe(1);
      expect(requests('POST', '/posts', '400')).toBe(1);
      expect(requests('GET', '/posts', '401')).toBe(1);
      expect(requests('GET', '/posts', '500')).toBe(1);
      expect(requests('GET', '/health/live', '200')).toBe(1);
    });

    it('puts /posts/12345 and /posts/99999 in the one series of route /posts/:id', () => {
      expect(requests('GET', '/posts/:id', '404')).toBe(2);
      const routes = new Set(samples.flatMap((sample) => (sample.labels.route ? [sample.labels.route] : [])));
      expect([...routes].sort()).toEqual(['/health/live', '/posts', '/posts/:id', 'unmatched']);
    });

    it('labels a path no route matches as route="unmatched", never with the path itself', () => {
      expect(requests('GET', 'unmatched', '404')).toBe(1);
      const labelValues = samples.flatMap((sample) => Object.values(sample.labels));
      for (const fragment of ['/no/such/route', '12345', '99999']) {
        expect(labelValues.filter((value) => value.includes(fragment))).toEqual([]);
      }
    });

    it('times every response in a histogram with cumulative buckets, a count and a sum', () => {
      const labels = { method: 'GET', route: '/posts/:id', status: '404' };
      const buckets = samples.filter(
        (sample) =>
          sample.name === 'http_request_duration_seconds_bucket' &&
          sample.labels.route === labels.route &&
          sample.labels.status === labels.status,
      );
      expect(buckets.length).toBeGreaterThan(5);
      expect(buckets.at(-1)).toMatchObject({ labels: { ...labels, le: '+Inf' }, value: 2 });
      const bounds = buckets.slice(0, -1).map((bucket) => Number(bucket.labels.le));
      expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
      buckets.slice(1).forEach((bucket, index) => expect(bucket.value).toBeGreaterThanOrEqual(buckets[index].value));
      expect(valueOf(samples, 'http_request_duration_seconds_count', labels)).toBe(2);
      expect(valueOf(samples, 'http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    });

    it('counts its own scrapes on the next one', async () => {
      const next = expectScrape(await anonymous.get('/metrics'));
      expect(valueOf(next, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
    });

    it('reports the events feed: reads waiting for an event and open event streams', () => {
      expect(valueOf(samples, 'events_feed_waiting_reads')).toBe(0);
      expect(valueOf(samples, 'events_open_streams')).toBe(0);
    });

    it('reports webhook deliveries by outcome and the age of the oldest one waiting', () => {
      for (const outcome of ['succeeded', 'retrying', 'failed', 'gone']) {
        expect(valueOf(samples, 'webhook_delivery_attempts_total', { outcome })).toBe(0);
      }
      expect(valueOf(samples, 'webhook_oldest_pending_delivery_seconds')).toBe(0);
    });

    it('reports the process metrics', () => {
      expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(valueOf(samples, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    });

    it('reports the connection pool of MySQL/MariaDB, and no pool on SQLite', () => {
      const inUse = valueOf(samples, 'database_pool_connections', { state: 'in_use' });
      const idle = valueOf(samples, 'database_pool_connections', { state: 'idle' });
      const limit = valueOf(samples, 'database_pool_max_connections');
      if (dialect === 'mysql') {
        expect(inUse).toBeGreaterThanOrEqual(0);
        expect(idle).toBeGreaterThanOrEqual(1);
        expect(limit).toBe(10);
        expect(inUse! + idle!).toBeLessThanOrEqual(limit!);
        expect(valueOf(samples, 'database_pool_waiting_requests')).toBe(0);
      } else {
        expect(samples.filter((sample) => sample.name.startsWith('database_pool_'))).toEqual([]);
      }
    });

    it('never shows a token the requests carried', () => {
      expect(scrapeText).not.toContain(context.app.writerToken);
      expect(scrapeText).not.toContain(context.app.adminToken);
      expect(scrapeText).not.toContain('psk_');
    });
  });

  describe('with a low THROTTLE_LIMIT', () => {
    let testApp: TestApp;
    beforeAll(async () => {
      testApp = await startTestApp({ env: { THROTTLE_LIMIT: '2' } });
    });
    afterAll(async () => {
      await testApp.close();
    });

    it('counts the 429s and is never throttled itself', async () => {
      const api = client(
        () => testApp.baseUrl,
        () => testApp.writerToken,
      );
      const statuses = [];
      for (let attempt = 0; attempt < 3; attempt++) statuses.push((await api.get('/posts')).status);
      expect(statuses).toEqual([200, 200, 429]);

      for (let scrape = 0; scrape < 4; scrape++) {
        const response = await api.as(null).get('/metrics');
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit')).toBeNull();
      }
      // With a token too: the scrape is not charged to the key's budget.
      const samples = expectScrape(await api.get('/metrics'));
      expect(valueOf(samples, 'http_requests_total', { method: 'GET', route: '/posts', status: '200' })).toBe(2);
      expect(valueOf(samples, 'http_requests_total', { method: 'GET', route: '/posts', status: '429' })).toBe(1);
      expect(valueOf(samples, 'http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(4);
    });
  });

  describe('with API_PREFIX', () => {
    const context = useTestApp({ env: { API_PREFIX: '/api/v1' } });

    it('labels routes with the template the router matched, prefix included', async () => {
      expect((await context.api.get('/posts/12345')).status).toBe(404);
      expect((await context.api.get('/no/such/route')).status).toBe(404);
      const samples = expectScrape(await context.api.get('/metrics'));
      const requests = (route: string) =>
        valueOf(samples, 'http_requests_total', { method: 'GET', route, status: '404' });
      expect(requests('/api/v1/posts/:id')).toBe(1);
      expect(requests('unmatched')).toBe(1);
    });

    it('counts requests outside the prefix too, as unmatched', async () => {
      const outside = await fetch(new URL('/outside/the/prefix', context.app.baseUrl));
      await outside.arrayBuffer();
      expect(outside.status).toBe(404);

      const samples = expectScrape(await context.api.get('/metrics'));
      expect(valueOf(samples, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(2);
    });
  });

  describe('with METRICS_TOKEN', () => {
    const context = useTestApp({ env: { METRICS_TOKEN } });
    const scraper = () => context.api.as(METRICS_TOKEN);

    it('answers 401 without a token, with WWW-Authenticate naming the metrics realm', async () => {
      const response = await context.api.as(null).get('/metrics');
      expectProblem(response, 401, 'unauthorized');
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(response.text).not.toContain('http_requests_total');
    });

    it('answers 401 invalid-token to a wrong token, an API key included', async () => {
      for (const token of [`${METRICS_TOKEN}x`, METRICS_TOKEN.slice(0, -1), context.app.adminToken]) {
        const response = await context.api.as(token).get('/metrics');
        expectProblem(response, 401, 'invalid-token');
        expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics", error="invalid_token"');
      }
      const malformed = await context.api.get('/metrics', { authorization: `Basic ${METRICS_TOKEN}` });
      expectProblem(malformed, 401, 'invalid-token');
    });

    it('answers 200 with the metrics to the token, whatever the case of the scheme', async () => {
      expectScrape(await scraper().get('/metrics'));
      expectScrape(await context.api.get('/metrics', { authorization: `bearer ${METRICS_TOKEN}` }));
    });

    it('counts the refused scrapes and never shows the tokens', async () => {
      await context.api.get('/posts');
      const response = await scraper().get('/metrics');
      const samples = expectScrape(response);
      expect(valueOf(samples, 'http_requests_total', { method: 'GET', route: '/metrics', status: '401' })).toBe(5);
      expect(response.text).not.toContain(METRICS_TOKEN);
      expect(response.text).not.toContain(context.app.writerToken);
      expect(response.text).not.toContain(context.app.adminToken);
    });
  });
});
