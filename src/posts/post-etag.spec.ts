import { describe, expect, it } from 'vitest';
import type { EntityTag } from '../http/entity-tags.js';
import { postETag, writePrecondition } from './post-etag.js';

const strong = (opaque: string): EntityTag => ({ weak: false, opaque });

describe('writePrecondition', () => {
  it('requires nothing without If-Match and accepts any version for *', () => {
    expect(writePrecondition(5, undefined)).toEqual({ kind: 'none' });
    expect(writePrecondition(5, '*')).toEqual({ kind: 'any' });
  });

  it('accepts the versions named by the strong tags of this post', () => {
    const precondition = writePrecondition(5, [
      strong('"5.3"'),
      strong('"6.4"'),
      strong(postETag({ id: 5, version: 7 })),
    ]);

    expect(precondition).toEqual({ kind: 'versions', versions: [3, 7] });
  });

  it.each([
    ['a leading zero in the id', '"05.1"'],
    ['a leading zero in the version', '"5.01"'],
    ['leading zeros in both', '"005.001"'],
    ['a plus sign', '"+5.1"'],
    ['the id of another post', '"6.1"'],
    ['a version that is not an integer', '"5.1.0"'],
    ['a version past 2^53', '"5.99999999999999999999"'],
  ])('accepts no version for a tag with %s: strong comparison is character by character', (_, opaque) => {
    const precondition = writePrecondition(5, [strong(opaque)]);

    expect(precondition).toEqual({ kind: 'versions', versions: [] });
  });

  it('accepts no version for the weak form of the current ETag', () => {
    const precondition = writePrecondition(5, [{ weak: true, opaque: '"5.1"' }]);

    expect(precondition).toEqual({ kind: 'versions', versions: [] });
  });
});
