import { readFileSync } from 'node:fs';
import type { ChildServer } from './processes.js';

// Before anything is measured: the service runs its whole pipeline, and the baseline answers what the
// service answers. A benchmark of 401s, or of a baseline that does less than the service must, is worthless.

interface Answer {
  status: number;
  headers: Headers;
  body: string;
  /** The body as received, before decoding. */
  bytes: Buffer;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body: bytes.toString('utf8'), bytes };
}

function expect(condition: boolean, message: string): void {
  if (!condition) throw new Error(`pre-flight check failed: ${message}`);
}

/** Authentication, the throttler, metrics and the request log are on; returns what was checked. */
export async function checkServicePipeline(service: ChildServer, apiKey: string, postId: number): Promise<string> {
  const url = `${service.baseUrl}/posts/${postId}`;
  const anonymous = await call(url);
  expect(anonymous.status === 401, `GET /posts/${postId} without a token answered ${anonymous.status}, not 401`);

  const authorized = await call(url, { headers: { authorization: `Bearer ${apiKey}` } });
  expect(authorized.status === 200, `GET /posts/${postId} with the API key answered ${authorized.status}`);
  expect(authorized.headers.has('ratelimit-policy'), 'no RateLimit-Policy header: is the throttler on?');
  expect(authorized.headers.get('x-ratelimit-limit') === '999999999', 'the throttler does not use THROTTLE_LIMIT');

  const metrics = await call(`${service.baseUrl}/metrics`);
  expect(
    metrics.status === 200 &&
      metrics.body.includes('http_requests_total{method="GET",route="/posts/:id",status="200"}'),
    'GET /metrics does not count the requests by route',
  );

  const log = readFileSync(service.logPath, 'utf8');
  expect(log.includes('"msg":"GET /posts/:id 200"'), `no request log line in ${service.logPath}`);
  return 'auth (401 without token, 200 with the key), throttler headers, /metrics, request log';
}

/**
 * The baseline's GET and POST answer with the service's status, JSON, Content-Type, ETag and Location
 * (the GET's body byte for byte).
 */
export async function checkBaselineParity(
  service: ChildServer,
  baseline: ChildServer,
  apiKey: string,
  postId: number,
): Promise<void> {
  await checkGetParity(service, baseline, 'the baseline', apiKey, postId);
  await checkCreateParity(service, baseline, 'baseline', apiKey);
}

/** F answers GET /posts/:id with the service's status, Content-Type and ETag, and its body byte for byte. */
export async function checkFloorParity(
  service: ChildServer,
  floor: ChildServer,
  apiKey: string,
  postIds: number[],
): Promise<void> {
  for (const postId of postIds) await checkGetParity(service, floor, 'F', apiKey, postId);
}

/**
 * F answers POST /posts with 201, the service's Content-Type, a Location /posts/<id>, an ETag "<id>.1"
 * and a body with the service's fields.
 */
export async function checkFloorCreateParity(service: ChildServer, floor: ChildServer, apiKey: string): Promise<void> {
  await checkCreateParity(service, floor, 'F', apiKey);
}

async function checkCreateParity(service: ChildServer, other: ChildServer, who: string, apiKey: string): Promise<void> {
  const headers = { authorization: `Bearer ${apiKey}` };
  const body = JSON.stringify({ title: 'Parity check', content: 'Created by the benchmark', author: 'bench' });
  const created = await Promise.all(
    [service, other].map((server) =>
      call(`${server.baseUrl}/posts`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body,
      }),
    ),
  );
  const [serviceContentType] = created.map((answer) => answer.headers.get('content-type'));
  for (const [index, answer] of created.entries()) {
    const name = index === 0 ? 'service' : who;
    expect(answer.status === 201, `POST /posts (${name}) answered ${answer.status}`);
    const post = JSON.parse(answer.body) as Record<string, unknown>;
    expect(
      Object.keys(post).join() === 'id,title,content,author,status,publishedAt,createdAt,updatedAt',
      `POST /posts (${name}): fields ${Object.keys(post).join()}`,
    );
    expect(answer.headers.get('location') === `/posts/${String(post.id)}`, `POST /posts (${name}): Location`);
    expect(answer.headers.get('etag') === `"${String(post.id)}.1"`, `POST /posts (${name}): ETag`);
    expect(answer.headers.get('content-type') === serviceContentType, `POST /posts (${name}): Content-Type`);
  }
}

async function checkGetParity(
  service: ChildServer,
  other: ChildServer,
  who: string,
  apiKey: string,
  postId: number,
): Promise<void> {
  const headers = { authorization: `Bearer ${apiKey}` };
  const [fromService, fromOther] = await Promise.all(
    [service, other].map((server) => call(`${server.baseUrl}/posts/${postId}`, { headers })),
  );
  const what = `GET /posts/${postId}`;
  expect(fromOther.status === fromService.status, `${what}: status ${fromOther.status} ≠ ${fromService.status}`);
  expect(fromOther.bytes.equals(fromService.bytes), `${what}: the body of ${who} differs from the service's`);
  for (const name of ['content-type', 'etag']) {
    const [expected, actual] = [fromService.headers.get(name), fromOther.headers.get(name)];
    expect(actual === expected, `${what}: ${name} of ${who} ${actual} ≠ ${expected}`);
  }
}
