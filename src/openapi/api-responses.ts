import { applyDecorators } from '@nestjs/common';
import {
  ApiHeader,
  ApiParam,
  ApiResponse,
  getSchemaPath,
  type ApiResponseOptions,
  type HeadersObject,
} from '@nestjs/swagger';
import { ProblemSchema } from './problem.schema.js';

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: body, parameters or headers (validation-failed, malformed-json, bad-request, invalid-request)',
  401: 'No credentials, or an invalid, expired or revoked token (see WWW-Authenticate)',
  403: 'The token lacks the scope (insufficient-scope) or the post belongs to someone else (forbidden)',
  404: 'No such resource',
  409: 'A request with the same Idempotency-Key is still being processed',
  410: 'The events after this cursor are no longer kept (events-expired): resync and start again',
  412: 'If-Match does not match the current ETag; nothing was changed',
  413: 'The body exceeds BODY_LIMIT',
  415: 'The body is not application/json (or merge-patch for PATCH), not UTF-8, or has an unknown Content-Encoding',
  422: 'The Idempotency-Key was used before with a different request',
  428: 'REQUIRE_IF_MATCH is on and the write has no If-Match',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'A fault in the service; quote requestId',
  503: 'The database (or the OAuth issuer) cannot be reached; see Retry-After',
};

const string = { schema: { type: 'string' } } as const;
const integer = { schema: { type: 'integer' } } as const;

export const RATE_LIMIT_HEADERS: HeadersObject = {
  'RateLimit-Policy': { ...string, description: 'IETF httpapi draft, e.g. "default";q=100;w=60' },
  RateLimit: { ...string, description: 'IETF httpapi draft, e.g. "default";r=97;t=42' },
  'X-RateLimit-Limit': { ...integer, description: 'Requests allowed per window' },
  'X-RateLimit-Remaining': { ...integer, description: 'Requests left in this window' },
  'X-RateLimit-Reset': { ...integer, description: 'Unix time (seconds) when the window resets' },
  'X-Request-Id': { ...string, description: 'Echoed when the client sent a sane one, generated otherwise' },
};

export const ETAG_HEADER: HeadersObject = {
  ETag: { ...string, description: 'Strong entity-tag of the post; send it back in If-Match' },
};

/** Problem responses (application/problem+json) for the given statuses. */
export function ApiProblems(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => {
      const headers: HeadersObject = {};
      if (status === 401 || status === 403 || status === 400) {
        headers['WWW-Authenticate'] = { ...string, description: 'RFC 6750 challenge (authentication errors)' };
      }
      if (status === 429 || status === 503 || status === 409)
        headers['Retry-After'] = { ...integer, description: 'Seconds' };
      if (status === 405) headers.Allow = string;
      const options: ApiResponseOptions = {
        status,
        description: PROBLEM_DESCRIPTIONS[status] ?? 'Problem',
        headers,
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemSchema) } } },
      };
      return ApiResponse(options);
    }),
  );
}

/** The {id} path parameter: a positive decimal integer within the JSON-safe range. */
export const ApiIdParam = (): MethodDecorator =>
  ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } });

/** The If-Match request header of a conditional write (PUT, PATCH, DELETE). */
export const ApiIfMatch = (): MethodDecorator =>
  ApiHeader({ name: 'If-Match', required: false, description: 'ETag(s) or *: 412 unless the post still matches' });
