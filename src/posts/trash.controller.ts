import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../auth/auth.decorators.js';
import { Scope, type Principal } from '../auth/principal.js';
import { ParseIdPipe } from '../http/parse-id.pipe.js';
import { PublicUrls } from '../http/public-urls.js';
import { ApiIdParam, ApiProblems, ETAG_HEADER, RATE_LIMIT_HEADERS } from '../openapi/api-responses.js';
import { BEARER_SCHEME } from '../openapi/openapi.js';
import { PageQueryDto, toSimplePageQuery } from './dto/list-posts-query.dto.js';
import { represent } from './post-http.js';
import { PostResource, TrashedPostResource, toTrashedPostResource } from './post.resource.js';
import { TrashService } from './trash.service.js';

/** Deleted posts (contract §10): the caller's own, every one for admin; someone else's is 404. */
@ApiTags('trash')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 429, 500, 503)
@Controller('trash')
export class TrashController {
  constructor(
    private readonly trashService: TrashService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({ summary: 'Posts in the trash, newest post first (scope posts:write; all of them for admin)' })
  @ApiOkResponse({
    type: [TrashedPostResource],
    headers: {
      ...RATE_LIMIT_HEADERS,
      Link: { schema: { type: 'string' }, description: 'RFC 8288 rel="next" link when there are more posts' },
    },
  })
  @ApiProblems(400, 403)
  async list(
    @Query() query: PageQueryDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TrashedPostResource[]> {
    const pageQuery = toSimplePageQuery(query);
    const page = await this.trashService.findPage(pageQuery, principal);
    if (page.nextCursor !== undefined) {
      const next = this.urls.to('/trash', { limit: String(pageQuery.limit), cursor: page.nextCursor });
      response.setHeader('Link', `<${next}>; rel="next"`);
    }
    return page.posts.map(toTrashedPostResource);
  }

  @Post(':id/restore')
  @ApiIdParam()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({ summary: 'Bring a post back from the trash, with its id and state, as a new version' })
  @ApiOkResponse({ type: PostResource, headers: { ...ETAG_HEADER, ...RATE_LIMIT_HEADERS } })
  @ApiProblems(400, 403, 404)
  @HttpCode(HttpStatus.OK)
  async restore(
    @Param('id', ParseIdPipe) id: number,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource> {
    return represent(await this.trashService.restore(id, principal), response);
  }

  @Delete(':id')
  @ApiIdParam()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({ summary: 'Erase a post and its revisions for good (post.purged, a tombstone)' })
  @ApiNoContentResponse({ description: 'Erased', headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 403, 404)
  @HttpCode(HttpStatus.NO_CONTENT)
  async purge(@Param('id', ParseIdPipe) id: number, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.trashService.purge(id, principal);
  }
}
