import { HttpException } from '@nestjs/common';
import type { FieldError, ProblemType } from './problem-types.js';

export interface ProblemOptions {
  errors?: FieldError[];
  headers?: Record<string, string>;
  cause?: unknown;
}

/** The one exception services throw; ProblemDetailsFilter renders it as RFC 9457 problem+json. */
export class ProblemException extends HttpException {
  readonly errors?: FieldError[];
  readonly headers: Record<string, string>;

  constructor(
    readonly problemType: ProblemType,
    readonly detail: string,
    options: ProblemOptions = {},
  ) {
    super(detail, problemType.status, { cause: options.cause });
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }
}

export function pointerTo(path: ReadonlyArray<string>): string {
  // RFC 6901: '~' and '/' inside a member name are escaped as '~0' and '~1'.
  return path.map((segment) => '/' + segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}
