import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../auth/auth.decorators.js';
import { Scope, type Principal } from '../auth/principal.js';
import { parseEntityTagCondition, weakMatch } from '../http/entity-tags.js';
import { ParseIdPipe } from '../http/parse-id.pipe.js';
import { PublicUrls } from '../http/public-urls.js';
import { Idempotent } from '../idempotency/idempotent.decorator.js';
import { ListPostsQueryDto, toPageQuery } from './dto/list-posts-query.dto.js';
import { PatchPostDto } from './dto/patch-post.dto.js';
import { PostInputDto } from './dto/post-input.dto.js';
import { ApiIdParam, ApiIfMatch, ApiProblems, ETAG_HEADER, RATE_LIMIT_HEADERS } from '../openapi/api-responses.js';
import { BEARER_SCHEME } from '../openapi/openapi.js';
import { postETag } from './post-etag.js';
import { preconditionOf, represent } from './post-http.js';
import { PostResource, toPostResource } from './post.resource.js';
import { PostsService } from './posts.service.js';

@ApiTags('posts')
@ApiBearerAuth(BEARER_SCHEME)
@ApiProblems(401, 429, 500, 503)
@Controller('posts')
export class PostsController {
  constructor(
    private readonly postsService: PostsService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @RequireScope(Scope.postsRead)
  @ApiOperation({
    summary: 'List posts, newest first, with keyset pagination (scope posts:read)',
    description: "Published posts by default; status=draft or scheduled lists the caller's own (every one for admin).",
  })
  @ApiOkResponse({
    type: [PostResource],
    headers: {
      ...RATE_LIMIT_HEADERS,
      Link: { schema: { type: 'string' }, description: 'RFC 8288 rel="next" link when there are more posts' },
      'X-Total-Count': { schema: { type: 'integer' }, description: 'With count=true: matching posts in all pages' },
    },
  })
  @ApiProblems(400, 403)
  async list(
    @Query() query: ListPostsQueryDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource[]> {
    const pageQuery = toPageQuery(query);
    const page = await this.postsService.findPage(pageQuery, principal);
    if (page.nextCursor !== undefined) {
      const next = this.urls.to('/posts', {
        limit: String(pageQuery.limit),
        order: pageQuery.order,
        author: pageQuery.author,
        status: query.status,
        count: query.count,
        cursor: page.nextCursor,
      });
      response.setHeader('Link', `<${next}>; rel="next"`);
    }
    if (page.totalCount !== undefined) response.setHeader('X-Total-Count', String(page.totalCount));
    return page.posts.map(toPostResource);
  }

  @Get(':id')
  @ApiIdParam()
  @RequireScope(Scope.postsRead)
  @ApiOperation({
    summary: 'Read one post (scope posts:read)',
    description: 'A draft or a not yet published scheduled post is 404 to anyone but its owner and admins.',
  })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'ETag(s) or *: 304 when the post is unchanged' })
  @ApiOkResponse({ type: PostResource, headers: { ...ETAG_HEADER, ...RATE_LIMIT_HEADERS } })
  @ApiNotModifiedResponse({ description: 'The post still has the given ETag', headers: ETAG_HEADER })
  @ApiProblems(400, 403, 404)
  async findOne(
    @Param('id', ParseIdPipe) id: number,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource | undefined> {
    const condition = parseEntityTagCondition(ifNoneMatch, 'If-None-Match');
    const post = await this.postsService.findOne(id, principal);
    const etag = postETag(post);
    response.setHeader('ETag', etag);
    if (condition !== undefined && weakMatch(condition, etag)) {
      response.status(HttpStatus.NOT_MODIFIED);
      return undefined;
    }
    return toPostResource(post);
  }

  @Post()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({
    summary: 'Create a post (scope posts:write); the caller becomes its owner',
    description: 'Without status the post is published now; send draft, or scheduled with a future publishedAt.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'Up to 255 printable ASCII characters; a retry with the same key and body replays the first response (24 h)',
  })
  @ApiBody({ type: PostInputDto })
  @ApiCreatedResponse({
    type: PostResource,
    headers: {
      ...ETAG_HEADER,
      ...RATE_LIMIT_HEADERS,
      Location: { schema: { type: 'string' }, description: 'URL of the new post' },
      'Idempotent-Replayed': { schema: { type: 'string', enum: ['true'] }, description: 'This is a replayed response' },
    },
  })
  @ApiProblems(400, 403, 409, 413, 415, 422)
  @Idempotent({
    fingerprint: ({ body }: { body: Partial<PostInputDto> }) => [
      'POST /posts',
      body.title,
      body.content,
      body.author,
      body.status,
      body.publishedAt,
    ],
  })
  async create(
    @Body() input: PostInputDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource> {
    const post = await this.postsService.create(input, principal);
    response.setHeader('Location', this.urls.to(`/posts/${post.id}`));
    return represent(post, response);
  }

  @Put(':id')
  @ApiIdParam()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({
    summary: 'Replace a post: title, content and author (owner or admin)',
    description:
      'status and publishedAt are optional: absent, the post keeps its state. The replaced state is kept as a revision.',
  })
  @ApiIfMatch()
  @ApiOkResponse({ type: PostResource, headers: { ...ETAG_HEADER, ...RATE_LIMIT_HEADERS } })
  @ApiProblems(400, 403, 404, 412, 413, 415, 428)
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() input: PostInputDto,
    @CurrentPrincipal() principal: Principal,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource> {
    return represent(await this.postsService.replace(id, input, principal, preconditionOf(id, ifMatch)), response);
  }

  @Patch(':id')
  @ApiIdParam()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({
    summary: 'Change some fields of a post with a JSON merge patch (owner or admin)',
    description: 'The replaced state is kept as a revision.',
  })
  @ApiConsumes('application/json', 'application/merge-patch+json')
  @ApiIfMatch()
  @ApiOkResponse({ type: PostResource, headers: { ...ETAG_HEADER, ...RATE_LIMIT_HEADERS } })
  @ApiProblems(400, 403, 404, 412, 413, 415, 428)
  async patch(
    @Param('id', ParseIdPipe) id: number,
    @Body() patch: PatchPostDto,
    @CurrentPrincipal() principal: Principal,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource> {
    return represent(await this.postsService.patch(id, patch, principal, preconditionOf(id, ifMatch)), response);
  }

  @Delete(':id')
  @ApiIdParam()
  @RequireScope(Scope.postsWrite)
  @ApiOperation({
    summary: 'Move a post to the trash (owner or admin); a second DELETE is 404',
    description: 'GET /trash lists it; POST /trash/{id}/restore brings it back, DELETE /trash/{id} erases it.',
  })
  @ApiIfMatch()
  @ApiNoContentResponse({ description: 'In the trash', headers: RATE_LIMIT_HEADERS })
  @ApiProblems(400, 403, 404, 412, 428)
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(
    @Param('id', ParseIdPipe) id: number,
    @CurrentPrincipal() principal: Principal,
    @Headers('if-match') ifMatch: string | undefined,
  ): Promise<void> {
    await this.postsService.remove(id, principal, preconditionOf(id, ifMatch));
  }
}
