import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageLimit, pageLimit } from '../../common/pagination/page-limit.js';
import { IsText } from '../../common/validation/text-rules.js';
import { AUTHOR_RULE } from './post-input.dto.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const once = (name: string): { message: string } => ({ message: `${name} must be given at most once` });

/** Query of GET /posts. Values stay strings here; PostsService.findPage gets them parsed by toPageQuery(). */
export class ListPostsQueryDto {
  @PageLimit(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
  limit?: string;

  @ApiPropertyOptional({ description: 'Opaque; take it from the Link: rel="next" header' })
  @IsOptional()
  @IsString(once('cursor'))
  @MaxLength(256, { message: 'cursor is not a cursor issued by this service' })
  cursor?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 100, description: 'Exact match' })
  @IsOptional()
  @IsText(AUTHOR_RULE)
  author?: string;

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc', description: 'By id' })
  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false', description: 'true adds X-Total-Count' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'count must be true or false' })
  count?: string;
}

export interface PageQuery {
  limit: number;
  order: 'asc' | 'desc';
  author?: string;
  cursor?: string;
  count: boolean;
}

export function toPageQuery(query: ListPostsQueryDto): PageQuery {
  return {
    limit: pageLimit(query.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    order: query.order === 'asc' ? 'asc' : 'desc',
    author: query.author,
    cursor: query.cursor,
    count: query.count === 'true',
  };
}
