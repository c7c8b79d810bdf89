import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { ProblemException } from './problem/problem.exception.js';
import { ProblemTypes } from './problem/problem-types.js';

// Ids are positive integers up to 2^53 - 1, the largest a JSON number carries exactly.
const DECIMAL_ID = /^[1-9][0-9]{0,15}$/;

/** Path ids: plain positive decimal integers only ('1e3', '0x10', '01', '1.0', ' 1' are 400, never coerced). */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata: ArgumentMetadata): number {
    const id = DECIMAL_ID.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(id)) {
      const name = metadata.data ?? 'id';
      const detail = `${name} must be a positive integer no greater than ${Number.MAX_SAFE_INTEGER}`;
      throw new ProblemException(ProblemTypes.validationFailed, `Invalid ${name}: ${detail}.`, {
        errors: [{ parameter: name, detail }],
      });
    }
    return id;
  }
}
