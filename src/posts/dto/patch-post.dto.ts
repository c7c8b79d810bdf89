import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsText } from '../../common/validation/text-rules.js';
import type { PostStatus } from '../post.entity.js';
import { AUTHOR_RULE, CONTENT_RULE, PublishedAtMember, StatusMember, TITLE_RULE } from './post-input.dto.js';

// In a JSON merge patch (RFC 7396) an absent member is left alone and `null` removes it. Every post
// field is required, so `null` must reach the validator and fail: hence ValidateIf, not IsOptional
// (which would let null through as if the member were absent).
const present = (_: object, value: unknown): boolean => value !== undefined;

/** Body of PATCH /posts/:id: a merge patch with at least one of the fields (publishedAt null: see StatusMember). */
export class PatchPostDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'null is refused: every field is required' })
  @ValidateIf(present)
  @IsText(TITLE_RULE)
  title?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 100_000 })
  @ValidateIf(present)
  @IsText(CONTENT_RULE)
  content?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 100 })
  @ValidateIf(present)
  @IsText(AUTHOR_RULE)
  author?: string;

  @StatusMember()
  status?: PostStatus;

  @PublishedAtMember()
  publishedAt?: string | null;
}
