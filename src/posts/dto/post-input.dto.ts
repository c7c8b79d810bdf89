import { IsText, type TextRule } from '../../common/validation/text-rules.js';

// Field rules of the posts API (docs/api.md): lengths in Unicode characters.
export const TITLE_RULE: TextRule = { minLength: 1, maxLength: 200, requireVisible: true, forbidden: 'control' };
export const CONTENT_RULE: TextRule = { minLength: 1, maxLength: 100_000, requireVisible: false, forbidden: 'nul' };
export const AUTHOR_RULE: TextRule = { minLength: 1, maxLength: 100, requireVisible: true, forbidden: 'control' };

/** Body of POST /posts and PUT /posts/:id: all three fields, nothing else. */
export class PostInputDto {
  @IsText(TITLE_RULE)
  title: string;

  @IsText(CONTENT_RULE)
  content: string;

  @IsText(AUTHOR_RULE)
  author: string;
}
