import { ValidateIf } from 'class-validator';
import { IsText } from '../../common/validation/text-rules.js';
import { AUTHOR_RULE, CONTENT_RULE, TITLE_RULE } from './post-input.dto.js';

// In a JSON merge patch (RFC 7396) an absent member is left alone and `null` removes it. Every post
// field is required, so `null` must reach the validator and fail: hence ValidateIf, not IsOptional
// (which would let null through as if the member were absent).
const present = (_: object, value: unknown): boolean => value !== undefined;

/** Body of PATCH /posts/:id: a merge patch with at least one of the fields. */
export class PatchPostDto {
  @ValidateIf(present)
  @IsText(TITLE_RULE)
  title?: string;

  @ValidateIf(present)
  @IsText(CONTENT_RULE)
  content?: string;

  @ValidateIf(present)
  @IsText(AUTHOR_RULE)
  author?: string;
}
