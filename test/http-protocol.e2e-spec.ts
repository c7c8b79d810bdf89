import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { exchangeBytes, parseRawResponse, rawRequest } from './helpers/raw-http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

describe('HTTP protocol rules', () => {
  const context = useTestApp();
  const { api } = context;

  describe('request bodies', () => {
    it.each([
      ['text/plain', 'POST'],
      ['application/x-www-form-urlencoded', 'POST'],
      ['application/merge-patch+json', 'POST'],
      ['application/merge-patch+json', 'PUT'],
      ['application/jsonx', 'PUT'],
      ['application/xml', 'PATCH'],
      ['not a media type', 'PATCH'],
    ])('answers 415 to Content-Type %s on %s and stores nothing', async (contentType, method) => {
      const existing = (await api.post<{ id: number }>('/posts', buildPost())).body;
      const countBefore = await context.countPosts();
      const path = method === 'POST' ? '/posts' : `/posts/${existing.id}`;

      const response = await api.send(method, path, JSON.stringify(buildPost()), { 'content-type': contentType });

      expectProblem(response, 415, 'unsupported-media-type');
      expect(await context.countPosts()).toBe(countBefore);
    });

    it('answers 415 when a write has no Content-Type at all', async () => {
      const response = await rawRequest(`${context.app.baseUrl}/posts`, {
        method: 'POST',
        headers: api.headers({ 'content-length': '2' }),
        body: '{}',
      });
      expect(response.status).toBe(415);
      expect((JSON.parse(response.text) as { detail: string }).detail).toContain('has no Content-Type');
    });

    it('advertises the accepted patch formats with Accept-Patch on a 415 to PATCH', async () => {
      const response = await api.patch('/posts/1', 'title=x', { 'content-type': 'text/plain' });
      expectProblem(response, 415, 'unsupported-media-type');
      expect(response.headers.get('accept-patch')).toBe('application/json, application/merge-patch+json');
    });

    it('accepts application/json with a UTF-8 charset parameter in any case', async () => {
      const response = await api.post('/posts', JSON.stringify(buildPost()), {
        'content-type': 'Application/JSON; Charset="UTF-8"',
      });
      expect(response.status).toBe(201);
    });

    it.each(['latin1', 'utf-16', 'iso-8859-1'])(
      'answers 415 to a JSON body declared as charset=%s',
      async (charset) => {
        const response = await api.post('/posts', JSON.stringify(buildPost()), {
          'content-type': `application/json; charset=${charset}`,
        });
        const problem = expectProblem(response, 415, 'unsupported-media-type');
        expect(problem.detail).toContain('UTF-8');
      },
    );

    it.each([
      ['truncated JSON', '{"title": "t", "content": '],
      ['a trailing comma', '{"title": "t",}'],
      ['single quotes', "{'title': 't'}"],
      ['a bare string', '"just a string"'],
      ['null', 'null'],
      ['a number', '42'],
      ['an empty body', ''],
    ])('answers 400 malformed-json to %s and stores nothing', async (_, raw) => {
      const countBefore = await context.countPosts();
      const response = await rawRequest(`${context.app.baseUrl}/posts`, {
        method: 'POST',
        headers: api.headers({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(raw)) }),
        body: raw,
      });
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      const problem = JSON.parse(response.text) as { type: string };
      // An empty body parses to nothing at all, which validation reports as "not a JSON object".
      expect(problem.type).toMatch(/:(malformed-json|validation-failed)$/);
      expect(await context.countPosts()).toBe(countBefore);
    });

    it('answers 400 to a body that is not valid UTF-8 instead of storing replacement characters', async () => {
      const countBefore = await context.countPosts();
      const body = Buffer.concat([
        Buffer.from('{"title": "bad '),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('", "content": "c", "author": "a"}'),
      ]);

      const response = await api.post('/posts', new Uint8Array(body), { 'content-type': 'application/json' });

      const problem = expectProblem(response, 400, 'malformed-json');
      expect(problem.detail).toContain('UTF-8');
      expect(await context.countPosts()).toBe(countBefore);
    });

    it('reads gzip-compressed bodies', async () => {
      const post = buildPost();
      const response = await api.post('/posts', new Uint8Array(gzipSync(JSON.stringify(post))), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      expect(response.status).toBe(201);
      expect(response.body).toMatchObject(post);
    });

    it('answers 415 to an unknown Content-Encoding', async () => {
      const response = await api.post('/posts', JSON.stringify(buildPost()), {
        'content-type': 'application/json',
        'content-encoding': 'compress',
      });
      expectProblem(response, 415, 'unsupported-media-type');
    });

    it('answers 413 to a body over the 1 MiB default limit and stores nothing', async () => {
      const countBefore = await context.countPosts();
      const body = JSON.stringify(buildPost({ content: 'x'.repeat(1024 * 1024) }));

      const response = await api.post('/posts', body, { 'content-type': 'application/json' });

      const problem = expectProblem(response, 413, 'payload-too-large');
      expect(problem.detail).toContain('1048576 bytes');
      expect(await context.countPosts()).toBe(countBefore);
    });

    it('answers 413 from the declared Content-Length without reading the body', async () => {
      const response = await rawRequest(`${context.app.baseUrl}/posts`, {
        method: 'POST',
        headers: api.headers({ 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) }),
        body: '{}',
      });
      expect(response.status).toBe(413);
    });

    it('answers 413 when a small compressed body inflates past the limit', async () => {
      const bomb = gzipSync(JSON.stringify(buildPost({ content: ' '.repeat(4 * 1024 * 1024) })));
      expect(bomb.length).toBeLessThan(64 * 1024);
      const response = await api.post('/posts', new Uint8Array(bomb), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      });
      expectProblem(response, 413, 'payload-too-large');
    });
  });

  describe('routing', () => {
    it.each([
      ['POST', '/posts/1', 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS'],
      ['PUT', '/posts', 'GET, HEAD, POST, OPTIONS'],
      ['DELETE', '/posts', 'GET, HEAD, POST, OPTIONS'],
      ['PATCH', '/posts', 'GET, HEAD, POST, OPTIONS'],
    ])('answers %s %s with 405 and an Allow header', async (method, path, allow) => {
      const response = await api.send(method, path);
      const problem = expectProblem(response, 405, 'method-not-allowed');
      expect(response.headers.get('allow')).toBe(allow);
      expect(problem.detail).toContain(method);
    });

    it('answers OPTIONS with 204 and the allowed methods', async () => {
      const response = await api.send('OPTIONS', '/posts');
      expect(response.status).toBe(204);
      expect(response.headers.get('allow')).toBe('GET, HEAD, POST, OPTIONS');
      expect(response.text).toBe('');
    });

    it.each(['/nope', '/posts/1/comments', '/Posts', '/posts/1/', '/'])(
      'answers 404 route-not-found for %s',
      async (path) => {
        const response = await api.get(path);
        if (path === '/posts/1/') {
          // A trailing slash still names the post (Express non-strict routing), so this is a post lookup.
          expect([200, 404]).toContain(response.status);
          return;
        }
        const problem = expectProblem(response, 404, 'route-not-found');
        expect(problem.instance).toBe(path);
      },
    );

    it('answers 404 route-not-found to an unknown method on an unknown path', async () => {
      expectProblem(await api.send('DELETE', '/nowhere'), 404, 'route-not-found');
    });

    it('answers 400, not 500, to a path with broken percent-encoding', async () => {
      const response = await rawRequest(`${context.app.baseUrl}/posts/%E0%A4%A`, {
        method: 'GET',
        headers: api.headers(),
      });
      expect(response.status).toBe(400);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    });
  });

  describe('X-Request-Id', () => {
    it('generates a request id when the client sends none, on success and on error', async () => {
      const ok = await api.get('/posts');
      const failed = await api.get('/posts/abc');
      expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(failed.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(ok.headers.get('x-request-id')).not.toBe(failed.headers.get('x-request-id'));
    });

    it('echoes a sane client request id, also inside problem bodies', async () => {
      const response = await api.get('/posts/abc', { 'x-request-id': 'client-trace_01.A:b' });
      expect(response.headers.get('x-request-id')).toBe('client-trace_01.A:b');
      expect((response.body as { requestId: string }).requestId).toBe('client-trace_01.A:b');
    });

    it.each([
      ['too long', 'a'.repeat(129)],
      ['with spaces', 'has spaces'],
      ['with a quote', 'x"y'],
      ['with non-ASCII', 'caf\u00e9'],
    ])('replaces a client request id that is %s', async (_, id) => {
      const response = await rawRequest(`${context.app.baseUrl}/posts`, {
        method: 'GET',
        headers: api.headers({ 'x-request-id': Buffer.from(id, 'utf8').toString('latin1') }),
      });
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('requests Node cannot parse', () => {
    const exchange = (bytes: Buffer): Promise<string> => exchangeBytes(context.app.baseUrl, bytes);
    const problemOf = parseRawResponse;

    it.each([
      [
        'a raw non-ASCII byte in the path',
        Buffer.from('GET /posts/\xe9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
        400,
        'bad-request',
      ],
      ['a request line that is not HTTP', Buffer.from('HELLO THERE\r\n\r\n'), 400, 'bad-request'],
      [
        'headers over 16 KiB',
        Buffer.from(`GET /posts?author=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
        431,
        'request-header-fields-too-large',
      ],
    ])('answers %s with a problem+json %i, not a bare status line', async (_label, bytes, status, slug) => {
      const { statusLine, headers, body } = problemOf(await exchange(bytes));

      expect(statusLine).toBe(
        `HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Request Header Fields Too Large'}`,
      );
      expect(headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(headers.get('connection')).toBe('close');
      expect(body).toMatchObject({ type: `urn:problem-type:posts-api:${slug}`, status, instance: '/' });
      expect(body.requestId).toBe(headers.get('x-request-id'));
      expect(String(body.detail).length).toBeGreaterThan(0);
    });
  });

  // RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without Host or with more than one.
  describe('the Host header', () => {
    const path = () => `${new URL(context.app.baseUrl).pathname.replace(/\/$/, '')}/posts`;
    const exchange = (head: string): Promise<string> => exchangeBytes(context.app.baseUrl, Buffer.from(head));

    it.each([
      ['no Host header', (target: string) => `GET ${target} HTTP/1.1\r\n\r\n`],
      ['two Host headers', (target: string) => `GET ${target} HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`],
      ['a Host header that is not a host', (target: string) => `GET ${target} HTTP/1.1\r\nHost: a b/c\r\n\r\n`],
    ])('answers an HTTP/1.1 request with %s with a 400 problem and a request id', async (_, head) => {
      const { statusLine, headers, body } = parseRawResponse(await exchange(head(path())));

      expect(statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(headers.get('connection')).toBe('close');
      expect(headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      expect(headers.get('x-content-type-options')).toBe('nosniff');
      expect(body).toMatchObject({ type: 'urn:problem-type:posts-api:bad-request', status: 400, instance: path() });
      expect(body.requestId).toBe(headers.get('x-request-id'));
      expect(String(body.detail)).toContain('Host');
    });

    it('answers an HTTP/1.0 request without Host, which that version allows', async () => {
      // HTTP/1.0 closes the connection after the answer, so the request may take its time.
      const raw = await exchangeBytes(
        context.app.baseUrl,
        Buffer.from(`GET ${path()} HTTP/1.0\r\nAuthorization: Bearer ${context.app.writerToken}\r\n\r\n`),
        { halfClose: false },
      );
      expect(raw.slice(0, raw.indexOf('\r\n'))).toBe('HTTP/1.1 200 OK');
    });
  });

  it('sends no X-Powered-By header and no automatic ETag', async () => {
    const response = await api.get('/posts');
    expect(response.headers.get('x-powered-by')).toBeNull();
    expect(response.headers.get('etag')).toBeNull();
  });
});

describe('with API_PREFIX and PUBLIC_BASE_URL', { tags: ['instance'] }, () => {
  let testApp: TestApp;
  const api = client(
    () => testApp.baseUrl,
    () => testApp.writerToken,
  );

  beforeAll(async () => {
    testApp = await startTestApp({ env: { API_PREFIX: '/api/v1', PUBLIC_BASE_URL: 'https://blog.example.com' } });
  });
  afterAll(async () => {
    await testApp.close();
  });

  it('serves the posts under the prefix and builds Location from the public base URL', async () => {
    const response = await api.post<{ id: number }>('/posts', buildPost());
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`https://blog.example.com/api/v1/posts/${response.body.id}`);
  });

  it('builds Link from the public base URL and the prefix', async () => {
    await api.post('/posts', buildPost());
    const response = await api.get('/posts?limit=1');
    expect(response.headers.get('link')).toMatch(
      /^<https:\/\/blog\.example\.com\/api\/v1\/posts\?limit=1&order=desc&cursor=[^>]+>; rel="next"$/,
    );
  });

  it('knows the allowed methods under the prefix', async () => {
    const response = await api.send('POST', '/posts/1');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH, DELETE, OPTIONS');
  });

  it('answers 404 route-not-found outside the prefix', async () => {
    const response = await fetch(testApp.baseUrl.replace('/api/v1', '') + '/posts');
    expect(response.status).toBe(404);
  });
});
