import { Controller, Get, Headers, HttpCode, HttpStatus, Param, Post, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../auth/auth.decorators.js';
import { Scope, type Principal } from '../auth/principal.js';
import { ParseIdPipe } from '../http/parse-id.pipe.js';
import { PublicUrls } from '../http/public-urls.js';
import { ApiIdParam, ApiIfMatch, ApiProblems, ETAG_HEADER, RATE_LIMIT_HEADERS } from '../openapi/api-responses.js';
import { BEARER_SCHEME } from '../openapi/openapi.js';
import { PageQueryDto, toSimplePageQuery } from './dto/list-posts-query.dto.js';
import { preconditionOf, represent } from './post-http.js';
import { PostResource, PostRevisionResource, toPostRevisionResource } from './post.resource.js';
import { PostRevisionsService } from './post-revisions.service.js';
import { PostsService } from './posts.service.js';

const ApiVersionParam = (): MethodDecorator =>
  ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } });

/** The states a post's replaces, patches and restores replaced (contract §10): its owner's and admins'. */
@ApiTags('posts')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 429, 500, 503)
@Controller('posts/:id/revisions')
export class PostRevisionsController {
  constructor(
    private readonly postsService: PostsService,
    private readonly revisionsService: PostRevisionsService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @ApiIdParam()
  @RequireScope(Scope.postsRead)
  @ApiOperation({ summary: "A post's revisions, newest first, with keyset pagination (owner or admin)" })
  @ApiOkResponse({
    type: [PostRevisionResource],
    headers: {
      ...RATE_LIMIT_HEADERS,
      Link: { schema: { type: 'string' }, description: 'RFC 8288 rel="next" link when there are more revisions' },
    },
  })
  @ApiProblems(400, 403, 404)
  async list(
    @Param('id', ParseIdPipe) id: number,
    @Query() query: PageQueryDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostRevisionResource[]> {
    const pageQuery = toSimplePageQuery(query);
    const page = await this.revisionsService.findPage(id, pageQuery, principal);
    if (page.nextCursor !== undefined) {
      const next = this.urls.to(`/posts/${id}/revisions`, { limit: String(pageQuery.limit), cursor: page.nextCursor });
      response.setHeader('Link', `<${next}>; rel="next"`);
    }
    return page.revisions.map(toPostRevisionResource);
  }

  @Get(':version')
  @ApiIdParam()
  @ApiVersionParam()
  @RequireScope(Scope.postsRead)
  @ApiOperation({ summary: 'One revision of a post (owner or admin)' })
  @ApiOkResponse({ type: PostRevisionResource, headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 403, 404)
  async findOne(
    @Param('id', ParseIdPipe) id: number,
    @Param('version', ParseIdPipe) version: number,
    @CurrentPrincipal() principal: Principal,
  ): Promise<PostRevisionResource> {
    return toPostRevisionResource(await this.revisionsService.findOne(id, version, principal));
  }

  @Post(':version/restore')
  @ApiIdParam()
  @ApiVersionParam()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({
    summary: "Make a revision's title, content and author current as a new version (owner or admin)",
    description: 'The post keeps its status and publishedAt; the state it replaces is kept as a revision.',
  })
  @ApiIfMatch()
  @ApiOkResponse({ type: PostResource, headers: { ...ETAG_HEADER, ...RATE_LIMIT_HEADERS } })
  @ApiProblems(400, 403, 404, 412, 428)
  @HttpCode(HttpStatus.OK)
  async restore(
    @Param('id', ParseIdPipe) id: number,
    @Param('version', ParseIdPipe) version: number,
    @CurrentPrincipal() principal: Principal,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource> {
    const post = await this.postsService.restoreRevision(id, version, principal, preconditionOf(id, ifMatch));
    return represent(post, response);
  }
}
