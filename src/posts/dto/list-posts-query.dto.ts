import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageLimit, pageLimit } from '../../common/pagination/page-limit.js';
import { IsText } from '../../common/validation/text-rules.js';
import { PostStatuses, type PostStatus } from '../post.entity.js';
import { AUTHOR_RULE } from './post-input.dto.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const once = (name: string): { message: string } => ({ message: `${name} must be given at most once` });

/** Query of GET /posts/:id/revisions and GET /trash: a page size and a cursor. */
export class PageQueryDto {
  @PageLimit(DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
  limit?: string;

  @ApiPropertyOptional({ description: 'Opaque; take it from the Link: rel="next" header' })
  @IsOptional()
  @IsString(once('cursor'))
  @MaxLength(256, { message: 'cursor is not a cursor issued by this service' })
  cursor?: string;
}

/** Query of GET /posts. Values stay strings here; PostsService.findPage gets them parsed by toPageQuery(). */
export class ListPostsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100, description: 'Exact match' })
  @IsOptional()
  @IsText(AUTHOR_RULE)
  author?: string;

  @ApiPropertyOptional({ enum: ['asc', 'desc'], default: 'desc', description: 'By id' })
  @IsOptional()
  @IsIn(['asc', 'desc'], { message: 'order must be asc or desc' })
  order?: string;

  @ApiPropertyOptional({
    enum: PostStatuses,
    default: 'published',
    description: "published: everyone's; draft and scheduled: the caller's own (everyone's for admin)",
  })
  @IsOptional()
  @IsIn(PostStatuses, { message: `status must be one of ${PostStatuses.join(', ')}` })
  status?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false', description: 'true adds X-Total-Count' })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'count must be true or false' })
  count?: string;
}

export interface PageQuery {
  limit: number;
  order: 'asc' | 'desc';
  author?: string;
  status: PostStatus;
  cursor?: string;
  count: boolean;
}

export function toPageQuery(query: ListPostsQueryDto): PageQuery {
  return {
    limit: pageLimit(query.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
    order: query.order === 'asc' ? 'asc' : 'desc',
    author: query.author,
    status: (query.status ?? 'published') as PostStatus,
    cursor: query.cursor,
    count: query.count === 'true',
  };
}

export function toSimplePageQuery(query: PageQueryDto): { limit: number; cursor?: string } {
  return { limit: pageLimit(query.limit, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE), cursor: query.cursor };
}
