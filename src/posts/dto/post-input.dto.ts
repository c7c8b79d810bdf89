import { ApiProperty } from '@nestjs/swagger';
import { IsText, type TextRule } from '../../common/validation/text-rules.js';

// Field rules of the posts API (docs/api.md): lengths in Unicode characters.
export const TITLE_RULE: TextRule = { minLength: 1, maxLength: 200, requireVisible: true, forbidden: 'control' };
export const CONTENT_RULE: TextRule = { minLength: 1, maxLength: 100_000, requireVisible: false, forbidden: 'nul' };
export const AUTHOR_RULE: TextRule = { minLength: 1, maxLength: 100, requireVisible: true, forbidden: 'control' };

/** Body of POST /posts and PUT /posts/:id: all three fields, nothing else. */
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
}
