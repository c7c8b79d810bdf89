import { describe, expect, it } from 'vitest';
import { ProblemException } from './problem/problem.exception.js';
import { assertHeaderLength, trimOptionalWhitespace } from './optional-whitespace.js';

describe('trimOptionalWhitespace', () => {
  it.each([
    [' \t"5.1"\t ', '"5.1"'],
    ['"5.1"', '"5.1"'],
    ['a  b', 'a  b'],
    [' \t \t', ''],
    ['', ''],
    // U+00A0 is obs-text in a header, not whitespace; \n and \v are not OWS either.
    ['\u00a0"5.1"\u00a0', '\u00a0"5.1"\u00a0'],
    ['\n"5.1"\v', '\n"5.1"\v'],
  ])('trims only spaces and tabs at the ends of %j', (value, trimmed) => {
    expect(trimOptionalWhitespace(value)).toBe(trimmed);
  });
});

describe('assertHeaderLength', () => {
  it('accepts a value of exactly the limit and refuses one character more with 431 naming the header', () => {
    expect(() => assertHeaderLength('x'.repeat(10), 'If-Match', 10)).not.toThrow();

    const refusal = (() => {
      try {
        assertHeaderLength('x'.repeat(11), 'If-Match', 10);
      } catch (error) {
        return error;
      }
    })() as ProblemException;

    expect(refusal).toBeInstanceOf(ProblemException);
    expect(refusal.problemType.status).toBe(431);
    expect(refusal.detail).toContain('If-Match');
    expect(refusal.errors).toEqual([{ parameter: 'If-Match', detail: 'must be at most 10 characters' }]);
  });
});
