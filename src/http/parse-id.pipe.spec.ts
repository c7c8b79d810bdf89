import { describe, expect, it } from 'vitest';
import { ProblemException } from './problem/problem.exception.js';
import { ProblemTypes } from './problem/problem-types.js';
import { ParseIdPipe } from './parse-id.pipe.js';

/** The error the pipe throws for `value`, or undefined when it returns. */
function errorFor(value: string, data: string | undefined = 'id'): unknown {
  try {
    new ParseIdPipe().transform(value, { type: 'param', data });
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('ParseIdPipe', () => {
  it.each([
    ['1', 1],
    ['42', 42],
    ['1000000', 1_000_000],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('accepts %s as the number %i', (value, expected) => {
    const pipe = new ParseIdPipe();

    const id = pipe.transform(value, { type: 'param', data: 'id' });

    expect(id).toBe(expected);
  });

  it.each([
    ['zero', '0'],
    ['a negative number', '-1'],
    ['a leading zero', '01'],
    ['a decimal fraction', '1.5'],
    ['a decimal point with a zero fraction', '1.0'],
    ['exponent notation', '1e3'],
    ['a hexadecimal literal', '0x10'],
    ['a leading space', ' 1'],
    ['a trailing space', '1 '],
    ['a plus sign', '+1'],
    ['letters', 'abc'],
    ['an empty string', ''],
    ['2^53, one past the largest safe integer', '9007199254740992'],
    ['a 17-digit number', '10000000000000000'],
    ['a 23-digit number', '99999999999999999999999'],
    ['Arabic-Indic digits', '١٢'],
    ['full-width digits', '１２'],
    ['Infinity', 'Infinity'],
  ])('rejects %s (%j) with a 400 problem naming the parameter', (_label, value) => {
    const error = errorFor(value);

    expect(error).toBeInstanceOf(ProblemException);
    const problem = error as ProblemException;
    expect(problem.problemType.status).toBe(400);
    expect(problem.problemType).toBe(ProblemTypes.validationFailed);
    expect(problem.getStatus()).toBe(400);
    expect(problem.errors?.[0]).toEqual({
      parameter: 'id',
      detail: 'id must be a positive integer no greater than 9007199254740991',
    });
  });

  it('names the route parameter it was given in the problem', () => {
    const error = errorFor('abc', 'postId');

    expect((error as ProblemException).errors?.[0]).toMatchObject({ parameter: 'postId' });
    expect((error as ProblemException).detail).toBe(
      'Invalid postId: postId must be a positive integer no greater than 9007199254740991.',
    );
  });

  it('falls back to the name id when the metadata has no parameter name', () => {
    const error = errorFor('abc', undefined);

    expect((error as ProblemException).errors?.[0]).toMatchObject({ parameter: 'id' });
  });
});
