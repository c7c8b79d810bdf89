import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import bodyParser from 'body-parser';
import { isUtf8 } from 'node:buffer';
import contentType from 'content-type';
import type { Request, Response } from 'express';
import { HTTP_CONFIG, type HttpConfig } from '../../config/config.module.js';
import { ProblemException } from '../problem/problem.exception.js';
import { ProblemTypes } from '../problem/problem-types.js';
import { boundedBodyReader } from './body-reader.js';

const JSON_TYPES = ['application/json'];
// RFC 7396 merge patches have their own media type; PATCH accepts both.
const PATCH_TYPES = ['application/json', 'application/merge-patch+json'];

const ACCEPTED_TYPES: Record<string, string[]> = { POST: JSON_TYPES, PUT: JSON_TYPES, PATCH: PATCH_TYPES };

// No body of this API nests deeper than 2 levels (an API key's scopes); deeply nested JSON would only
// cost stack: class-transformer walks it recursively and overflows at about 1,500 levels (a 500).
export const MAX_JSON_DEPTH = 64;

/**
 * Reads JSON request bodies. It runs as the last global guard rather than as app-level middleware:
 * an anonymous or throttled client is refused before the service spends time reading and parsing up
 * to BODY_LIMIT bytes, auth errors win over body errors, and the pipes see the parsed body. A guard
 * rather than an interceptor (which would run at the same point) because an app with no interceptor
 * spares every request Nest's rxjs interceptor chain, a few percent of the CPU of a GET.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  private readonly readJson: (request: Request, response: Response) => Promise<void>;

  constructor(@Inject(HTTP_CONFIG) config: HttpConfig) {
    // Content-Type was checked already; strict: only objects and arrays at the top level (RFC 8259 allows
    // any value, but a post is always an object and this rejects `null` or `"x"` before parsing).
    // verify: invalid UTF-8 would otherwise be decoded to U+FFFD and stored silently altered.
    const parser = bodyParser.json({
      limit: config.bodyLimitBytes,
      strict: true,
      type: () => true,
      verify: (_request, _response, buffer) => {
        if (!isUtf8(buffer)) throw Object.assign(new Error('invalid UTF-8'), { status: 400 });
      },
    });
    this.readJson = boundedBodyReader(parser, { maxBytes: config.bodyLimitBytes, timeoutMs: config.bodyTimeoutMs });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const accepted = ACCEPTED_TYPES[request.method];
    // No content is not content of an unsupported type (RFC 9110 §15.5.16): a POST that carries
    // nothing (an action such as rotate-secret) passes, and a route that needs a body says so in 400.
    if (accepted && hasContent(request)) {
      assertMediaType(request, accepted);
      await this.readJson(request, http.getResponse<Response>());
      if (nestsDeeperThan(request.body, MAX_JSON_DEPTH)) {
        throw new ProblemException(
          ProblemTypes.malformedJson,
          `The request body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels.`,
        );
      }
    }
    return true;
  }
}

/** Whether the request carries a body: chunked, or a Content-Length other than 0 (RFC 9112 §6.3). */
function hasContent(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/** Whether objects and arrays nest deeper than `limit` (the top level is 1); iterative, for it is given deep values. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (!isObject(current)) continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) if (isObject(child)) pending.push([child, depth + 1]);
  }
  return false;
}

function assertMediaType(request: Request, accepted: string[]): void {
  const header = request.headers['content-type'];
  let mediaType: string | undefined;
  let charset: string | undefined;
  try {
    if (header !== undefined)
      ({
        type: mediaType,
        parameters: { charset },
      } = contentType.parse(header));
  } catch {
    mediaType = undefined;
  }
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
    // RFC 8259 §8.1: JSON exchanged between systems is UTF-8.
    throw new ProblemException(ProblemTypes.unsupportedMediaType, `JSON bodies must be UTF-8, not ${charset}.`);
  }
  if (mediaType === undefined || !accepted.includes(mediaType)) {
    throw new ProblemException(
      ProblemTypes.unsupportedMediaType,
      `${request.method} needs a body with Content-Type ${accepted.join(' or ')}` +
        (header === undefined ? '; the request has no Content-Type.' : '.'),
      { headers: request.method === 'PATCH' ? { 'Accept-Patch': PATCH_TYPES.join(', ') } : {} },
    );
  }
}
