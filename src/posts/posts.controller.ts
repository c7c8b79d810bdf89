import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import type { Response } from 'express';
import { CurrentPrincipal, RequireScope } from '../auth/auth.decorators.js';
import { Scope, type Principal } from '../auth/principal.js';
import { ParseIdPipe } from '../common/http/parse-id.pipe.js';
import { PublicUrls } from '../common/http/public-urls.js';
import { ListPostsQueryDto, toPageQuery } from './dto/list-posts-query.dto.js';
import { PatchPostDto } from './dto/patch-post.dto.js';
import { PostInputDto } from './dto/post-input.dto.js';
import { toPostResource, type PostResource } from './post.resource.js';
import { PostsService } from './posts.service.js';

@Controller('posts')
export class PostsController {
  constructor(
    private readonly postsService: PostsService,
    private readonly urls: PublicUrls,
  ) {}

  @Get()
  @RequireScope(Scope.postsRead)
  async list(
    @Query() query: ListPostsQueryDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource[]> {
    const pageQuery = toPageQuery(query);
    const page = await this.postsService.findPage(pageQuery);
    if (page.nextCursor !== undefined) {
      const next = this.urls.to('/posts', {
        limit: String(pageQuery.limit),
        order: pageQuery.order,
        author: pageQuery.author,
        count: query.count,
        cursor: page.nextCursor,
      });
      response.setHeader('Link', `<${next}>; rel="next"`);
    }
    if (page.totalCount !== undefined) response.setHeader('X-Total-Count', String(page.totalCount));
    return page.posts.map(toPostResource);
  }

  @Get(':id')
  @RequireScope(Scope.postsRead)
  async findOne(@Param('id', ParseIdPipe) id: number): Promise<PostResource> {
    return toPostResource(await this.postsService.findOne(id));
  }

  @Post()
  @RequireScope(Scope.postsWrite)
  async create(
    @Body() input: PostInputDto,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PostResource> {
    const post = await this.postsService.create(input, principal);
    response.setHeader('Location', this.urls.to(`/posts/${post.id}`));
    return toPostResource(post);
  }

  @Put(':id')
  @RequireScope(Scope.postsWrite)
  async replace(
    @Param('id', ParseIdPipe) id: number,
    @Body() input: PostInputDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<PostResource> {
    return toPostResource(await this.postsService.replace(id, input, principal));
  }

  @Patch(':id')
  @RequireScope(Scope.postsWrite)
  async patch(
    @Param('id', ParseIdPipe) id: number,
    @Body() patch: PatchPostDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<PostResource> {
    return toPostResource(await this.postsService.patch(id, patch, principal));
  }

  @Delete(':id')
  @RequireScope(Scope.postsWrite)
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(@Param('id', ParseIdPipe) id: number, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.postsService.remove(id, principal);
  }
}
