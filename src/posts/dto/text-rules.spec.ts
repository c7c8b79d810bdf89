import { describe, expect, it } from 'vitest';
import { AUTHOR_RULE, CONTENT_RULE, TITLE_RULE } from './post-input.dto.js';
import { checkText, codePointLength, type TextRule } from '../../common/validation/text-rules.js';

const SCRIPT_A = '\u{1d49c}'; // '𝒜', one code point, two UTF-16 units
const FAMILY = '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}'; // man ZWJ woman ZWJ girl

describe('codePointLength', () => {
  it.each([
    { label: 'an empty string', value: '', expected: 0 },
    { label: 'an ASCII string', value: 'hello', expected: 5 },
    { label: 'a single surrogate pair', value: SCRIPT_A, expected: 1 },
    { label: 'three surrogate pairs', value: SCRIPT_A.repeat(3), expected: 3 },
    { label: 'ASCII mixed with a surrogate pair', value: `a${SCRIPT_A}b`, expected: 3 },
    { label: 'a lone high surrogate', value: '\ud800', expected: 1 },
    { label: 'a lone low surrogate', value: '\udc00', expected: 1 },
    { label: 'a lone high surrogate between letters', value: 'a\ud800b', expected: 3 },
    { label: 'a high surrogate at the end of the string', value: 'ab\ud83d', expected: 3 },
    { label: 'a low surrogate followed by a high surrogate', value: '\udc00\ud800', expected: 2 },
    { label: 'two high surrogates in a row', value: '\ud800\ud800', expected: 2 },
    { label: 'a ZWJ family emoji (three emoji and two joiners)', value: FAMILY, expected: 5 },
  ])('counts $label as $expected code points', ({ value, expected }) => {
    // Arrange: the input comes from the table.

    // Act
    const length = codePointLength(value);

    // Assert
    expect(length).toBe(expected);
  });

  it('agrees with the number of code points Array.from sees for the ZWJ family emoji', () => {
    const length = codePointLength(FAMILY);

    expect(length).toBe(Array.from(FAMILY).length);
  });
});

describe('checkText', () => {
  describe('lengths, counted in code points', () => {
    const rules: Array<{ field: string; rule: TextRule; max: number }> = [
      { field: 'title', rule: TITLE_RULE, max: 200 },
      { field: 'content', rule: CONTENT_RULE, max: 100_000 },
      { field: 'author', rule: AUTHOR_RULE, max: 100 },
    ];

    it.each(rules)('rejects an empty $field', ({ rule, max }) => {
      const message = checkText('', rule);

      expect(message).toBe(`must be 1 to ${max} characters long (it has 0)`);
    });

    it.each(rules)('accepts a $field of one character', ({ rule }) => {
      const message = checkText('x', rule);

      expect(message).toBeNull();
    });

    it.each(rules)('accepts a $field of exactly its maximum of $max ASCII characters', ({ rule, max }) => {
      const message = checkText('x'.repeat(max), rule);

      expect(message).toBeNull();
    });

    it.each(rules)('rejects a $field one ASCII character longer than its maximum of $max', ({ rule, max }) => {
      const message = checkText('x'.repeat(max + 1), rule);

      expect(message).toBe(`must be 1 to ${max} characters long (it has ${max + 1})`);
    });

    it.each(rules)(
      'accepts a $field of its maximum of $max astral characters (twice as many UTF-16 units)',
      ({ rule, max }) => {
        const value = SCRIPT_A.repeat(max);

        const message = checkText(value, rule);

        expect(value.length).toBe(2 * max);
        expect(message).toBeNull();
      },
    );

    it.each(rules)('rejects a $field of one astral character more than its maximum of $max', ({ rule, max }) => {
      const message = checkText(SCRIPT_A.repeat(max + 1), rule);

      expect(message).toBe(`must be 1 to ${max} characters long (it has ${max + 1})`);
    });

    it('accepts a title of 200 × 𝒜', () => {
      expect(checkText(SCRIPT_A.repeat(200), TITLE_RULE)).toBeNull();
    });

    it('rejects a title of 201 × 𝒜', () => {
      expect(checkText(SCRIPT_A.repeat(201), TITLE_RULE)).toBe('must be 1 to 200 characters long (it has 201)');
    });

    it('rejects a title of 201 characters', () => {
      expect(checkText('t'.repeat(201), TITLE_RULE)).toBe('must be 1 to 200 characters long (it has 201)');
    });

    it('counts a ZWJ emoji sequence per code point', () => {
      // 20 families are 100 code points (but 160 UTF-16 units): the author limit exactly.
      const author = FAMILY.repeat(20);

      expect(checkText(author, AUTHOR_RULE)).toBeNull();
      expect(checkText(author + 'x', AUTHOR_RULE)).toBe('must be 1 to 100 characters long (it has 101)');
    });
  });

  describe('non-string values', () => {
    it.each([
      ['a number', 42, 'must be a string, not number'],
      ['null', null, 'must be a string, not null'],
      ['an array', ['a title'], 'must be a string, not an array'],
      ['an empty array', [], 'must be a string, not an array'],
      ['an object', { title: 'a title' }, 'must be a string, not object'],
      ['a boolean', true, 'must be a string, not boolean'],
      ['undefined', undefined, 'must be a string, not undefined'],
    ])('rejects %s with its own message', (_label, value, expected) => {
      const message = checkText(value, TITLE_RULE);

      expect(message).toBe(expected);
    });
  });

  describe('well-formed Unicode', () => {
    it.each([
      ['a lone high surrogate', '\ud800'],
      ['a lone low surrogate', '\udc00'],
      ['a lone high surrogate between letters', 'a\ud800b'],
      ['a reversed surrogate pair', '\udc00\ud800'],
    ])('rejects %s in every field', (_label, value) => {
      const messages = [TITLE_RULE, CONTENT_RULE, AUTHOR_RULE].map((rule) => checkText(value, rule));

      expect(messages).toEqual(Array(3).fill('must be well-formed Unicode (it contains an unpaired surrogate)'));
    });
  });

  describe('visible characters', () => {
    it.each([
      ['spaces', '   '],
      ['a no-break space and an em space', '\u00a0\u2003'],
      ['a lone newline', '\n'],
    ])('rejects a title of only %s', (_label, value) => {
      expect(checkText(value, TITLE_RULE)).toBe('must contain at least one non-whitespace character');
    });

    it.each([
      ['spaces', '   '],
      ['a no-break space and an em space', '\u00a0\u2003'],
    ])('rejects an author of only %s', (_label, value) => {
      expect(checkText(value, AUTHOR_RULE)).toBe('must contain at least one non-whitespace character');
    });

    it('accepts content of only white space, which needs nothing visible', () => {
      expect(checkText('   ', CONTENT_RULE)).toBeNull();
    });

    it('accepts a title with white space around visible text', () => {
      expect(checkText('  a title\u00a0', TITLE_RULE)).toBeNull();
    });
  });

  describe('control characters', () => {
    const controls: Array<[string, string, string]> = [
      ['a newline', '\n', 'U+000A'],
      ['a tab', '\t', 'U+0009'],
      ['NUL', '\u0000', 'U+0000'],
      ['DEL', '\u007f', 'U+007F'],
      ['NEL', '\u0085', 'U+0085'],
    ];

    it.each(controls)('rejects a title containing %s and names it', (_label, control, codePoint) => {
      const message = checkText(`a${control}b`, TITLE_RULE);

      expect(message).toBe(`must not contain control characters (found ${codePoint})`);
    });

    it.each(controls)('rejects an author containing %s and names it', (_label, control, codePoint) => {
      const message = checkText(`a${control}b`, AUTHOR_RULE);

      expect(message).toBe(`must not contain control characters (found ${codePoint})`);
    });

    it('names the first control character of a title', () => {
      expect(checkText('a\u007fb\nc', TITLE_RULE)).toBe('must not contain control characters (found U+007F)');
    });

    it.each([
      ['newlines', 'first line\nsecond line\r\n'],
      ['tabs', 'a\tb'],
      ['DEL and NEL', 'a\u007f\u0085b'],
    ])('accepts content containing %s', (_label, value) => {
      expect(checkText(value, CONTENT_RULE)).toBeNull();
    });

    it('rejects content containing NUL', () => {
      expect(checkText('before\u0000after', CONTENT_RULE)).toBe('must not contain NUL (U+0000) characters');
    });
  });

  it.each([
    ['title', TITLE_RULE, 'A title: ünïcödé 𝒜 👨‍👩‍👧'],
    ['content', CONTENT_RULE, 'Some content.\n\n\tIndented 𝒜.'],
    ['author', AUTHOR_RULE, 'Zoë 𝒜'],
  ])('accepts an ordinary %s', (_field, rule, value) => {
    expect(checkText(value, rule)).toBeNull();
  });
});
