import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec, InvalidCursorError } from './cursor-codec.js';

const SECRET = 'a-test-secret-that-is-long-enough-0123456789';
const SCOPE = 'order=desc;author=Zoë';
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

// Replicates the format of cursor-codec.ts: base64url(JSON) + '.' + base64url(first 16 bytes of HMAC-SHA256).
function signRaw(payload: string, secret = SECRET): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(payload)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

function forgeCursor(json: string, secret = SECRET): string {
  const payload = Buffer.from(json, 'utf8').toString('base64url');
  return `${payload}.${signRaw(payload, secret)}`;
}

function scopeHash(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 16);
}

/** The error decode() throws for `cursor`, or undefined when it returns a position. */
function decodeError(codec: CursorCodec, cursor: string, scope = SCOPE): unknown {
  try {
    codec.decode(cursor, scope);
    return undefined;
  } catch (error) {
    return error;
  }
}

/** Every cursor that differs from `cursor` in exactly one base64url character in [from, to). */
function singleCharacterVariants(cursor: string, from: number, to: number): string[] {
  const variants: string[] = [];
  for (let index = from; index < to; index++) {
    for (const replacement of BASE64URL_ALPHABET) {
      if (replacement !== cursor[index]) variants.push(cursor.slice(0, index) + replacement + cursor.slice(index + 1));
    }
  }
  return variants;
}

describe('CursorCodec', () => {
  describe('round trip', () => {
    it.each([0, 1, 42, 123_456, Number.MAX_SAFE_INTEGER])('decodes the position %i it encoded', (after) => {
      const codec = new CursorCodec(SECRET);

      const cursor = codec.encode({ after, scope: SCOPE });
      const decoded = codec.decode(cursor, SCOPE);

      expect(decoded).toBe(after);
    });

    it('produces a cursor of a base64url payload and a base64url signature joined by a dot', () => {
      const codec = new CursorCodec(SECRET);

      const cursor = codec.encode({ after: 7, scope: SCOPE });

      expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    });

    it('does not leak the scope into the cursor', () => {
      const codec = new CursorCodec(SECRET);

      const cursor = codec.encode({ after: 7, scope: 'author=secret-author-name' });
      const payload = Buffer.from(cursor.split('.')[0], 'base64url').toString('utf8');

      expect(payload).not.toContain('secret-author-name');
    });

    it('decodes a cursor issued by another codec with the same secret', () => {
      const issuer = new CursorCodec(SECRET);
      const receiver = new CursorCodec(SECRET);

      const decoded = receiver.decode(issuer.encode({ after: 99, scope: SCOPE }), SCOPE);

      expect(decoded).toBe(99);
    });

    it('decodes a hand-built cursor in the documented format', () => {
      const codec = new CursorCodec(SECRET);
      const cursor = forgeCursor(JSON.stringify([1, 314, scopeHash(SCOPE)]));

      const decoded = codec.decode(cursor, SCOPE);

      expect(decoded).toBe(314);
    });
  });

  describe('scope and secret', () => {
    it('rejects a cursor decoded for a different scope', () => {
      const codec = new CursorCodec(SECRET);
      const cursor = codec.encode({ after: 5, scope: 'order=desc' });

      const act = () => codec.decode(cursor, 'order=asc');

      expect(act).toThrow(InvalidCursorError);
      expect(act).toThrow('the cursor belongs to a different query; keep the same order and filters');
    });

    it('rejects a cursor signed with another secret', () => {
      const issuer = new CursorCodec('another-secret-that-is-long-enough-987654321');
      const codec = new CursorCodec(SECRET);
      const cursor = issuer.encode({ after: 5, scope: SCOPE });

      const act = () => codec.decode(cursor, SCOPE);

      expect(act).toThrow(InvalidCursorError);
      expect(act).toThrow('the cursor was not issued by this service or has been altered');
    });

    it('does not let two codecs built with a null secret accept each other’s cursors', () => {
      const first = new CursorCodec(null);
      const second = new CursorCodec(null);
      const fromFirst = first.encode({ after: 5, scope: SCOPE });
      const fromSecond = second.encode({ after: 6, scope: SCOPE });

      expect(() => second.decode(fromFirst, SCOPE)).toThrow(InvalidCursorError);
      expect(() => first.decode(fromSecond, SCOPE)).toThrow(InvalidCursorError);
      expect(first.decode(fromFirst, SCOPE)).toBe(5);
      expect(second.decode(fromSecond, SCOPE)).toBe(6);
    });
  });

  describe('tampering', () => {
    const codec = new CursorCodec(SECRET);
    const cursor = codec.encode({ after: 1234, scope: SCOPE });
    const dot = cursor.indexOf('.');

    it('rejects every cursor whose payload differs in a single character', () => {
      const variants = singleCharacterVariants(cursor, 0, dot);

      const accepted = variants.filter((variant) => !(decodeError(codec, variant) instanceof InvalidCursorError));

      expect(variants.length).toBeGreaterThan(0);
      expect(accepted).toEqual([]);
    });

    it('rejects every cursor whose signature differs in a single character', () => {
      const variants = singleCharacterVariants(cursor, dot + 1, cursor.length);

      const accepted = variants.filter((variant) => !(decodeError(codec, variant) instanceof InvalidCursorError));

      expect(variants.length).toBe(22 * 63);
      expect(accepted).toEqual([]);
    });

    it('rejects a cursor whose payload had a single ASCII bit flipped', () => {
      const flipped = String.fromCharCode(cursor.charCodeAt(0) ^ 1) + cursor.slice(1);

      expect(() => codec.decode(flipped, SCOPE)).toThrow(InvalidCursorError);
    });

    it('rejects a cursor with an extra character appended to the signature', () => {
      expect(() => codec.decode(`${cursor}A`, SCOPE)).toThrow(InvalidCursorError);
    });

    it('rejects a cursor with the last character of the signature removed', () => {
      expect(() => codec.decode(cursor.slice(0, -1), SCOPE)).toThrow(InvalidCursorError);
    });
  });

  describe('malformed input', () => {
    const codec = new CursorCodec(SECRET);
    const valid = codec.encode({ after: 1, scope: SCOPE });
    const [payload, signature] = valid.split('.');

    it.each([
      ['an empty string', ''],
      ['a lone dot', '.'],
      ['two dots', '..'],
      ['three parts', 'a.b.c'],
      ['no dot at all', 'abc'],
      ['a missing signature', `${payload}.`],
      ['a missing payload', `.${signature}`],
      ['a valid cursor with a third part', `${valid}.x`],
      ['300 letters', 'a'.repeat(300)],
      ['300 characters with a dot', `${'a'.repeat(150)}.${'b'.repeat(149)}`],
      ['a plus sign in the payload', `${payload}+.${signature}`],
      ['padding in the payload', `${payload}=.${signature}`],
      ['padding in the signature', `${payload}.${signature}==`],
      ['a slash in the signature', `${payload}.${signature.slice(0, -1)}/`],
      ['a space', `${payload} .${signature}`],
      ['non-ASCII letters', `${payload}é.${signature}`],
      ['a base64url-looking pair of garbage', 'abc.def'],
    ])('rejects %s with InvalidCursorError', (_label, input) => {
      const error = decodeError(codec, input);

      expect(error).toBeInstanceOf(InvalidCursorError);
    });

    it('rejects a validly signed cursor longer than 256 characters', () => {
      const longPayload = Buffer.from(JSON.stringify([1, 1, scopeHash(SCOPE), 'x'.repeat(300)])).toString('base64url');
      const cursor = `${longPayload}.${signRaw(longPayload)}`;

      expect(cursor.length).toBeGreaterThan(256);
      expect(() => codec.decode(cursor, SCOPE)).toThrow(InvalidCursorError);
    });
  });

  describe('validly signed payloads of the wrong shape', () => {
    const codec = new CursorCodec(SECRET);
    const hash = scopeHash(SCOPE);

    it.each([
      ['version 2', JSON.stringify([2, 5, hash])],
      ['version 0', JSON.stringify([0, 5, hash])],
      ['version "1" as a string', JSON.stringify(['1', 5, hash])],
      ['a negative id', JSON.stringify([1, -1, hash])],
      ['a non-integer id', JSON.stringify([1, 1.5, hash])],
      ['an id beyond 2^53 - 1', JSON.stringify([1, 2 ** 53, hash])],
      ['an id given as a string', JSON.stringify([1, '5', hash])],
      ['a null id', JSON.stringify([1, null, hash])],
      ['an empty array', '[]'],
      ['a string', JSON.stringify('not a cursor')],
      ['the right shape with a wrong scope hash', JSON.stringify([1, 5, scopeHash('another scope')])],
    ])('rejects %s with InvalidCursorError', (_label, json) => {
      const cursor = forgeCursor(json);

      const error = decodeError(codec, cursor);

      expect(error).toBeInstanceOf(InvalidCursorError);
    });

    it.each([
      ['text that is not JSON', 'this is not json'],
      ['truncated JSON', '[1, 5, "abc'],
      ['bytes that are not UTF-8 JSON', '\u00ff\u00fe'],
      ['the JSON literal null', 'null'],
      ['a JSON object', JSON.stringify({ version: 1, after: 5, scope: hash })],
      ['a JSON number', '5'],
    ])('rejects a validly signed payload of %s with InvalidCursorError, not another error', (_label, json) => {
      const cursor = forgeCursor(json);

      const error = decodeError(codec, cursor);

      expect(error).toBeInstanceOf(InvalidCursorError);
    });
  });
});
