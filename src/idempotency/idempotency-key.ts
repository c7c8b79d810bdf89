import { createHash } from 'node:crypto';
import { assertHeaderLength, trimOptionalWhitespace } from '../http/optional-whitespace.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';

// IETF draft: the key is a string; printable ASCII, at most 255 characters, as Stripe accepts.
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
// A 255-character key, quoted with every character escaped, is 512: anything longer is not a key.
const MAX_KEY_HEADER_LENGTH = 1_024;

/** The header's key, unquoted if sent as a structured-field string; 400 when it is not a usable key. */
export function parseIdempotencyKey(header: string): string {
  assertHeaderLength(header, 'Idempotency-Key', MAX_KEY_HEADER_LENGTH);
  const trimmed = trimOptionalWhitespace(header);
  // RFC 8941 §3.3.3 string: only \" and \\ are escapes; anything else inside quotes is malformed.
  const quoted = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(trimmed);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : trimmed.startsWith('"') ? '' : trimmed;
  if (!KEY_PATTERN.test(key)) {
    throw new ProblemException(ProblemTypes.validationFailed, 'Invalid Idempotency-Key header.', {
      errors: [{ parameter: 'Idempotency-Key', detail: 'must be 1 to 255 printable ASCII characters without spaces' }],
    });
  }
  return key;
}

/** SHA-256 of what identifies a request (a route's fingerprint of it): a key reused for another is 422. */
export function requestDigest(fingerprint: unknown): string {
  return createHash('sha256').update(JSON.stringify(fingerprint)).digest('hex');
}
