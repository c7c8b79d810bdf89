import { describe, expect, it } from 'vitest';
import { ProblemException } from '../http/problem/problem.exception.js';
import { parseIdempotencyKey } from './idempotency-key.js';

describe('parseIdempotencyKey', () => {
  it.each([
    ['a bare key', 'abc-123', 'abc-123'],
    ['a key with spaces and tabs around it', ' \tabc-123\t ', 'abc-123'],
    ['a structured-field string', '"a\\"b\\\\c"', 'a"b\\c'],
  ])('reads %s', (_, header, key) => {
    expect(parseIdempotencyKey(header)).toBe(key);
  });

  // Found by the fuzz suite: String#trim stripped U+00A0 (the header byte 0xA0), so the key
  // `abc<0xA0>` was accepted and stored as `abc`.
  it.each([
    ['after the key', 'abc\u00a0'],
    ['before the key', '\u00a0abc'],
    ['around a structured-field string', '\u00a0"abc"\u00a0'],
  ])('refuses a no-break space %s: a key is printable ASCII', (_, header) => {
    expect(() => parseIdempotencyKey(header)).toThrow(ProblemException);
  });
});
