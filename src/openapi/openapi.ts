import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { FieldErrorSchema, ProblemSchema } from './problem.schema.js';

export const BEARER_SCHEME = 'bearer';

/** The OpenAPI document of the service, built from the controllers' and DTOs' decorators. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const options = new DocumentBuilder()
    .setTitle('Blog Posts API')
    .setVersion('1.0.0')
    .setDescription(
      'Blog posts over HTTP. Errors are RFC 9457 problem details; see docs/api.md and docs/problems.md in the repository.',
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'psk_… API key or RFC 9068 JWT',
        description: 'An API key (psk_…) or an OAuth 2.0 JWT access token (RFC 9068)',
      },
      BEARER_SCHEME,
    )
    .build();
  return SwaggerModule.createDocument(app, options, {
    extraModels: [ProblemSchema, FieldErrorSchema],
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
}

/** Serves Swagger UI at /docs and the document at /openapi.json (public: no token, not throttled). */
export function serveOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, createOpenApiDocument(app), {
    jsonDocumentUrl: 'openapi.json',
    yamlDocumentUrl: 'openapi.yaml',
    useGlobalPrefix: true,
  });
}

/** The document as committed in openapi.json (npm run openapi), byte for byte. */
export function serializeOpenApiDocument(document: object): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
