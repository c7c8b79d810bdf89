import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { useTestApp } from './helpers/use-test-app.js';

describe('security headers and CORS', () => {
  const context = useTestApp();
  const { api } = context;

  it('sends helmet’s headers on API responses and problems alike, and no X-Powered-By', async () => {
    for (const response of [await api.get('/posts'), await api.get('/posts/abc'), await api.as(null).get('/posts')]) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
      expect(response.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(response.headers.get('x-powered-by')).toBeNull();
    }
  });

  it('answers no CORS headers by default: browsers on other origins cannot call the API', async () => {
    const preflight = await api.as(null).send('OPTIONS', '/posts', undefined, {
      origin: 'https://evil.example',
      'access-control-request-method': 'POST',
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const simple = await api.get('/posts', { origin: 'https://evil.example' });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses form-encoded bodies (no urlencoded parser) with 415', async () => {
    const response = await api.post('/posts', 'title=t&content=c&author=a', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(response.status).toBe(415);
  });
});

describe('with CORS_ORIGINS', { tags: ['instance'] }, () => {
  let testApp: TestApp;
  const api = client(
    () => testApp.baseUrl,
    () => testApp.writerToken,
  );

  beforeAll(async () => {
    testApp = await startTestApp({ env: { CORS_ORIGINS: 'https://app.example.com' } });
  });
  afterAll(async () => {
    await testApp.close();
  });

  it('answers a preflight from an allowed origin with the methods and headers the API uses', async () => {
    const preflight = await api.as(null).send('OPTIONS', '/posts/1', undefined, {
      origin: 'https://app.example.com',
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization,content-type,if-match',
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('PATCH');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('if-match');
  });

  it('exposes the contract’s response headers to the allowed origin, and nothing to another', async () => {
    const allowed = await api.post('/posts', buildPost(), { origin: 'https://app.example.com' });
    expect(allowed.status).toBe(201);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(allowed.headers.get('access-control-expose-headers')).toEqual(expect.stringContaining('ETag'));
    for (const name of ['Location', 'Link', 'X-Total-Count', 'RateLimit', 'Retry-After', 'X-Request-Id']) {
      expect(allowed.headers.get('access-control-expose-headers')).toContain(name);
    }
    const other = await api.get('/posts', { origin: 'https://evil.example' });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});
