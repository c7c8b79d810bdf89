import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { OpenAPIObject } from '@nestjs/swagger';
import { describe, expect, it } from 'vitest';
import { createOpenApiDocument, serializeOpenApiDocument } from '../src/openapi/openapi.js';
import { useTestApp } from './helpers/use-test-app.js';

// SQLite project only: the document does not depend on the database.
const committed = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');

describe('the OpenAPI document', () => {
  const context = useTestApp();
  const anonymous = () => context.api.as(null);

  it('is the committed openapi.json: run npm run openapi after changing routes or DTOs', () => {
    const generated = serializeOpenApiDocument(createOpenApiDocument(context.app.app));
    expect(generated, 'openapi.json is out of date: run `npm run openapi` and commit it').toBe(committed);
  });

  it('is a valid OpenAPI document (swagger-parser)', async () => {
    await expect(SwaggerParser.validate(JSON.parse(committed) as never)).resolves.toBeDefined();
  });

  it('is served at /openapi.json and as Swagger UI at /docs, without credentials', async () => {
    const json = await anonymous().get<OpenAPIObject>('/openapi.json');
    expect(json.status).toBe(200);
    expect(json.body.paths['/posts']).toBeDefined();
    const ui = await anonymous().get('/docs');
    expect(ui.status).toBe(200);
    expect(ui.headers.get('content-type')).toContain('text/html');
  });

  describe('describes the contract', () => {
    const document = JSON.parse(committed) as OpenAPIObject;
    const operation = (path: string, method: 'get' | 'post' | 'put' | 'patch' | 'delete') =>
      document.paths[path][method]!;

    // Health probes are public; /metrics is public or takes METRICS_TOKEN, never the bearer scheme.
    const outsideBearerScheme = (path: string) => path.startsWith('/health') || path === '/metrics';

    it('with the bearer scheme on every /posts and /api-keys operation, and none on health or metrics', () => {
      expect(document.components?.securitySchemes?.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
      for (const [path, item] of Object.entries(document.paths)) {
        for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
          const op = item[method];
          if (!op) continue;
          if (outsideBearerScheme(path)) expect(op.security).toBeUndefined();
          else expect(op.security, `${method} ${path}`).toEqual([{ bearer: [] }]);
        }
      }
    });

    it('with problem+json responses for 401 and 429 on every protected operation', () => {
      for (const [path, item] of Object.entries(document.paths)) {
        if (outsideBearerScheme(path)) continue;
        for (const op of Object.values(item) as Array<{ responses: Record<string, { content?: object }> }>) {
          for (const status of ['401', '429', '500']) {
            expect(op.responses[status]?.content, `${path} ${status}`).toHaveProperty(['application/problem+json']);
          }
        }
      }
    });

    it('with field lengths and required fields of a post', () => {
      const input = document.components!.schemas!.PostInputDto as {
        required: string[];
        properties: Record<string, object>;
      };
      expect(input.required.sort()).toEqual(['author', 'content', 'title']);
      expect(input.properties.title).toMatchObject({ minLength: 1, maxLength: 200 });
      expect(input.properties.content).toMatchObject({ minLength: 1, maxLength: 100_000 });
      expect(input.properties.author).toMatchObject({ minLength: 1, maxLength: 100 });
    });

    const responseHeaders = (path: string, method: 'get' | 'post', status: string): string[] =>
      Object.keys((operation(path, method).responses[status] as { headers?: object }).headers ?? {});

    it('with the headers: ETag, If-None-Match, If-Match, Idempotency-Key, Link, Location and RateLimit', () => {
      const names = (op: { parameters?: unknown[] }): unknown[] =>
        (op.parameters ?? []).map((parameter) => (parameter as { name?: string }).name);
      expect(names(operation('/posts/{id}', 'get'))).toContain('If-None-Match');
      for (const method of ['put', 'patch', 'delete'] as const)
        expect(names(operation('/posts/{id}', method))).toContain('If-Match');
      expect(names(operation('/posts', 'post'))).toContain('Idempotency-Key');
      expect(responseHeaders('/posts/{id}', 'get', '200')).toEqual(expect.arrayContaining(['ETag', 'RateLimit']));
      expect(responseHeaders('/posts', 'get', '200')).toEqual(
        expect.arrayContaining(['Link', 'X-Total-Count', 'RateLimit-Policy']),
      );
      expect(responseHeaders('/posts', 'post', '201')).toEqual(expect.arrayContaining(['Location', 'ETag']));
      expect(Object.keys(operation('/posts/{id}', 'patch').responses)).toEqual(expect.arrayContaining(['412', '428']));
      expect(Object.keys(operation('/posts', 'post').responses)).toEqual(expect.arrayContaining(['409', '422']));
      expect(operation('/posts/{id}', 'patch').requestBody).toMatchObject({
        content: { 'application/json': {}, 'application/merge-patch+json': {} },
      });
    });
  });
});
