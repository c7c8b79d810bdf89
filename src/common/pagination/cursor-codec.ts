import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** What a cursor remembers: where the previous page ended and which query it belongs to. */
export interface CursorPosition {
  /** Key of the last item of the previous page. */
  after: number;
  /** Canonical description of the query (order and filters); a cursor is only valid for the same one. */
  scope: string;
}

export class InvalidCursorError extends Error {}

const VERSION = 1;
const MAX_CURSOR_LENGTH = 256;
const SIGNATURE_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Opaque, tamper-evident keyset cursors: base64url(JSON) + '.' + truncated HMAC-SHA256.
 * The scope is stored as a hash so that filters (an author name) neither leak nor lengthen the cursor.
 */
export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string | null) {
    this.key = secret === null ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  encode(position: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify([VERSION, position.after, scopeHash(position.scope)])).toString(
      'base64url',
    );
    return `${payload}.${this.sign(payload)}`;
  }

  /** The position after which the next page starts; throws InvalidCursorError for anything not issued for `scope`. */
  decode(cursor: string, scope: string): number {
    const [payload, signature, ...rest] = cursor.length <= MAX_CURSOR_LENGTH ? cursor.split('.') : [];
    if (!payload || !signature || rest.length > 0 || !BASE64URL.test(payload) || !BASE64URL.test(signature)) {
      throw new InvalidCursorError('the cursor is malformed; use the one from the Link header as it is');
    }
    const expected = Buffer.from(this.sign(payload), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    // The re-encoding check refuses non-canonical base64url (unused low bits in the last character),
    // so each position has exactly one valid cursor.
    if (
      given.length !== expected.length ||
      given.toString('base64url') !== signature ||
      !timingSafeEqual(given, expected)
    ) {
      throw new InvalidCursorError('the cursor was not issued by this service or has been altered');
    }
    const [version, after, hash] = parsePayload(payload);
    if (version !== VERSION || !Number.isSafeInteger(after) || (after as number) < 0) {
      throw new InvalidCursorError('the cursor is no longer supported; start again from the first page');
    }
    if (hash !== scopeHash(scope)) {
      throw new InvalidCursorError('the cursor belongs to a different query; keep the same order and filters');
    }
    return after as number;
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest().subarray(0, SIGNATURE_BYTES).toString('base64url');
  }
}

function parsePayload(payload: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // Falls through: only a key holder could sign such a payload, but it is still just a bad cursor.
  }
  throw new InvalidCursorError('the cursor is malformed; use the one from the Link header as it is');
}

function scopeHash(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 16);
}
