import { Injectable, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { ProblemException, pointerTo } from './problem/problem.exception.js';
import { ProblemTypes, type FieldError } from './problem/problem-types.js';

// Keys that JSON.parse creates as own properties but that class-transformer would turn into a
// prototype swap or a constructor override on the DTO instance, or skip without a word because the
// instance inherits a method of that name (toString, valueOf, hasOwnProperty, ...), so that the
// whitelist never sees them: refused before transformation.
const PROTOTYPE_KEYS = ['prototype', ...Object.getOwnPropertyNames(Object.prototype)];

/**
 * The global DTO pipe: class-validator rules, unknown members refused, and every failure reported as
 * one 400 problem listing each broken field (`pointer` for body members, `parameter` for the query).
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      // One message per field (its first broken rule), but every broken field is listed.
      stopAtFirstError: true,
      // Location-free here; transform() knows whether they are body or query errors.
      exceptionFactory: (errors) => new UnmappedValidationErrors(errors),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (!this.isDto(metadata)) return value;
    const location = metadata.type === 'body' ? 'body' : 'query';
    if (location === 'body' && (value === null || typeof value !== 'object' || Array.isArray(value))) {
      throw invalid([{ pointer: '', detail: 'the request body must be a JSON object' }]);
    }
    const prototypeKeys = Object.keys(value as object).filter((key) => PROTOTYPE_KEYS.includes(key));
    if (prototypeKeys.length > 0) throw invalid(prototypeKeys.map((key) => unknownMember(location, key)));

    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (error instanceof UnmappedValidationErrors) throw invalid(flatten(error.errors, location));
      throw error;
    }
  }

  // Primitive path and query values (an `id: number` parameter) are left to their own parsing pipes:
  // ValidationPipe would otherwise coerce '1e3' to 1000 before they see it.
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }

  private isDto(metadata: ArgumentMetadata): boolean {
    return (metadata.type === 'body' || metadata.type === 'query') && this.toValidate(metadata);
  }
}

class UnmappedValidationErrors {
  constructor(readonly errors: ValidationError[]) {}
}

function invalid(errors: FieldError[]): ProblemException {
  const fields = errors.map((error) => ('pointer' in error ? error.pointer || 'body' : error.parameter));
  return new ProblemException(ProblemTypes.validationFailed, `Invalid: ${[...new Set(fields)].join(', ')}.`, {
    errors,
  });
}

function unknownMember(location: 'body' | 'query', key: string): FieldError {
  return location === 'body'
    ? { pointer: pointerTo([key]), detail: `unknown field "${key}"` }
    : { parameter: key, detail: `unknown query parameter "${key}"` };
}

function flatten(errors: ValidationError[], location: 'body' | 'query', parents: string[] = []): FieldError[] {
  return errors.flatMap((error) => {
    const path = [...parents, error.property];
    const own = Object.entries(error.constraints ?? {}).map(([constraint, message]): FieldError => {
      if (constraint === 'whitelistValidation') return unknownMember(location, path.join('.'));
      return location === 'body'
        ? { pointer: pointerTo(path), detail: message }
        : { parameter: path.join('.'), detail: message };
    });
    return [...own, ...flatten(error.children ?? [], location, path)];
  });
}
