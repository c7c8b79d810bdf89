import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

/**
 * The `limit` query parameter of a listing: a positive integer given at most once; larger values
 * are coerced to `max` rather than refused (docs/api.md).
 */
export function PageLimit(defaultSize: number, max: number): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'integer',
      minimum: 1,
      default: defaultSize,
      description: `At most ${max}; larger values are coerced to ${max}`,
    }),
    IsOptional(),
    IsString({ message: 'limit must be given at most once' }),
    Matches(/^\d+$/, { message: 'limit must be a positive integer' }),
    Matches(/[1-9]/, { message: 'limit must be at least 1' }),
  );
}

/** The page size a validated `limit` asks for. */
export function pageLimit(text: string | undefined, defaultSize: number, max: number): number {
  // Comparing digit counts first keeps a 30-digit limit from becoming an imprecise float on the way.
  const digits = text?.replace(/^0+/, '');
  const limit = digits === undefined ? defaultSize : digits.length > 3 ? max : Number(digits);
  return Math.min(limit, max);
}
