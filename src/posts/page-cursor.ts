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
