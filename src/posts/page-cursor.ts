import { type CursorCodec, InvalidCursorError } from '../common/pagination/cursor-codec.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';

/** The keyset position of a `cursor` query parameter issued for `scope`; 400 for any other. */
export function decodePageCursor(codec: CursorCodec, cursor: string, scope: string): number {
  try {
    return codec.decode(cursor, scope);
  } catch (error) {
    if (!(error instanceof InvalidCursorError)) throw error;
    throw new ProblemException(ProblemTypes.validationFailed, `Invalid cursor: ${error.message}.`, {
      errors: [{ parameter: 'cursor', detail: error.message }],
    });
  }
}

/**
 * A page of keyset rows read one more than `limit` (the extra row tells, without a COUNT, whether
 * another page follows): the first `limit`, and the cursor after the last of them if one does.
 */
export function keysetPage<T>(
  codec: CursorCodec,
  rows: T[],
  limit: number,
  scope: string,
  keyOf: (row: T) => number,
): { items: T[]; nextCursor?: string } {
  const items = rows.slice(0, limit);
  const nextCursor = rows.length > limit ? codec.encode({ after: keyOf(items[items.length - 1]), scope }) : undefined;
  return { items, nextCursor };
}
