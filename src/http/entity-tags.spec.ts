import { describe, expect, it } from 'vitest';
import { ProblemException } from './problem/problem.exception.js';
import { MAX_ENTITY_TAG_LIST_LENGTH, parseEntityTagCondition } from './entity-tags.js';

describe('parseEntityTagCondition', () => {
  it('reads * and lists of strong and weak tags, with spaces and tabs around the members', () => {
    expect(parseEntityTagCondition(' * ', 'If-Match')).toBe('*');
    expect(parseEntityTagCondition('"5.1" ,\tW/"5.2"', 'If-Match')).toEqual([
      { weak: false, opaque: '"5.1"' },
      { weak: true, opaque: '"5.2"' },
    ]);
  });

  // Found by the fuzz suite: String#trim stripped U+00A0 (the header byte 0xA0), so the PATCH with
  // `If-Match: <0xA0>"1.1"` applied to post 1 as if the header had been `"1.1"`.
  it.each([
    ['before the header', '\u00a0"5.1"'],
    ['after the header', '"5.1"\u00a0'],
    ['around a member', '"x",\u00a0"5.1"'],
    ['before *', '\u00a0*'],
  ])('refuses a no-break space %s, which is not optional whitespace', (_, header) => {
    expect(() => parseEntityTagCondition(header, 'If-Match')).toThrow(ProblemException);
  });
});

describe('the length of a conditional header', () => {
  it('reads a list of 4,096 characters and refuses a longer one with 431 before parsing it', () => {
    const tags = Array.from({ length: 1_000 }, (_, index) => `"${index}.1"`).join(',');
    const fitting = tags.slice(0, tags.lastIndexOf(',', MAX_ENTITY_TAG_LIST_LENGTH));

    expect(parseEntityTagCondition(fitting, 'If-Match')).toHaveLength(fitting.split(',').length);
    expect(() => parseEntityTagCondition(tags, 'If-Match')).toThrow(ProblemException);
    expect(() => parseEntityTagCondition(tags, 'If-Match')).toThrow(/at most 4096/);
  });
});
