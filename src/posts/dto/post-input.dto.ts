import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';
import { IsDateTime } from '../../common/validation/date-time.js';
import { IsText, type TextRule } from '../../common/validation/text-rules.js';
import { PostStatuses, type PostStatus } from '../post.entity.js';

// Field rules of the posts API (docs/api.md): lengths in Unicode characters.
export const TITLE_RULE: TextRule = { minLength: 1, maxLength: 200, requireVisible: true, forbidden: 'control' };
export const CONTENT_RULE: TextRule = { minLength: 1, maxLength: 100_000, requireVisible: false, forbidden: 'nul' };
export const AUTHOR_RULE: TextRule = { minLength: 1, maxLength: 100, requireVisible: true, forbidden: 'control' };

/** `status` of a body: absent keeps the post's state (a create's: published); null is refused. */
export function StatusMember(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      enum: PostStatuses,
      description: 'Absent: published on create, unchanged on replace and patch (contract §10)',
    }),
    ValidateIf((_: object, value: unknown) => value !== undefined),
    IsIn(PostStatuses, { message: `status must be one of ${PostStatuses.join(', ')}` }),
  );
}

/** `publishedAt` of a body: an RFC 3339 instant, or null (only for a draft; PostsService checks the state rules). */
export function PublishedAtMember(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      format: 'date-time',
      nullable: true,
      description: 'draft: null; published: now by default, never in the future; scheduled: required, in the future',
    }),
    ValidateIf((_: object, value: unknown) => value !== undefined && value !== null),
    IsDateTime(),
  );
}

/** Body of POST /posts and PUT /posts/:id: the three fields, and optionally the post's state. */
export class PostInputDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    description: 'Unicode characters; not only white space; no control characters',
    example: 'Hello',
  })
  @IsText(TITLE_RULE)
  title: string;

  @ApiProperty({ minLength: 1, maxLength: 100_000, description: 'Unicode characters; no NUL', example: 'Body text' })
  @IsText(CONTENT_RULE)
  content: string;

  @ApiProperty({
    minLength: 1,
    maxLength: 100,
    description: 'Unicode characters; not only white space; no control characters',
    example: 'Ada',
  })
  @IsText(AUTHOR_RULE)
  author: string;

  @StatusMember()
  status?: PostStatus;

  @PublishedAtMember()
  publishedAt?: string | null;
}
