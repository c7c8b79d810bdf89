export interface ProblemType {
  /** Stable identifier of the kind of error: clients switch on it, never on `title` or `detail`. */
  type: string;
  title: string;
  status: number;
}

const define = (slug: string, status: number, title: string): ProblemType => ({
  type: `urn:problem-type:posts-api:${slug}`,
  status,
  title,
});

// The catalogue of every problem the service answers with; docs/problems.md describes each one.
export const ProblemTypes = {
  validationFailed: define('validation-failed', 400, 'The request is not valid'),
  malformedJson: define('malformed-json', 400, 'The request body is not valid JSON'),
  badRequest: define('bad-request', 400, 'The request is malformed'),
  invalidRequest: define('invalid-request', 400, 'Credentials sent the wrong way'),
  unauthorized: define('unauthorized', 401, 'Authentication required'),
  invalidToken: define('invalid-token', 401, 'Invalid access token'),
  insufficientScope: define('insufficient-scope', 403, 'Insufficient scope'),
  forbidden: define('forbidden', 403, 'Forbidden'),
  notFound: define('not-found', 404, 'Resource not found'),
  routeNotFound: define('route-not-found', 404, 'No such route'),
  methodNotAllowed: define('method-not-allowed', 405, 'Method not allowed'),
  conflict: define('conflict', 409, 'Conflict'),
  idempotencyKeyInUse: define(
    'idempotency-key-in-use',
    409,
    'A request with this idempotency key is still in progress',
  ),
  eventsExpired: define('events-expired', 410, 'Events after this cursor are no longer kept'),
  preconditionFailed: define('precondition-failed', 412, 'Precondition failed'),
  payloadTooLarge: define('payload-too-large', 413, 'Request body too large'),
  unsupportedMediaType: define('unsupported-media-type', 415, 'Unsupported media type'),
  idempotencyKeyReused: define('idempotency-key-reused', 422, 'Idempotency key reused with another request'),
  preconditionRequired: define('precondition-required', 428, 'Precondition required'),
  headerFieldsTooLarge: define('request-header-fields-too-large', 431, 'Request header fields too large'),
  requestTimeout: define('request-timeout', 408, 'Request timeout'),
  rateLimited: define('rate-limited', 429, 'Too many requests'),
  serviceUnavailable: define('service-unavailable', 503, 'Service temporarily unavailable'),
  internalError: define('internal-error', 500, 'Internal server error'),
} satisfies Record<string, ProblemType>;

/** One entry of `errors`: `pointer` (RFC 6901) for body members, `parameter` for path/query. */
export type FieldError = { pointer: string; detail: string } | { parameter: string; detail: string };
