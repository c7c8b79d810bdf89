// F (--floor): the framework floor. The smallest NestJS application on platform-express, the
// framework the service is built on, that answers GET /posts/:id and POST /posts like B0/B0s: the same
// SQL through the same store (better-sqlite3 statement or mysql2 pool, same settings), the same JSON,
// Content-Type, ETag and Location. One controller, one provider, ParseIntPipe and nothing else: no
// guards, interceptors, other pipes, middleware (not even Nest's default body parsers: POST reads the
// raw body and checks it like the baselines do) or logging. Run as a child process.
import 'reflect-metadata';
import {
  BadRequestException,
  Controller,
  Get,
  Inject,
  Module,
  NotFoundException,
  Param,
  ParseIntPipe,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { openMysqlStore } from './mysql-store.js';
import {
  baselineSettings,
  parseInput,
  postETag,
  readBody,
  representation,
  type PostStore,
  PUBLISHED_NOW,
  type StoredPost,
} from './post-http.js';
import { openSqliteStore } from './sqlite-store.js';

const POST_STORE = Symbol('POST_STORE');

const settings = baselineSettings(process.env);
const store = settings.databaseUrl.startsWith('sqlite:') ? openSqliteStore(settings) : openMysqlStore(settings);

@Controller('posts')
class PostsController {
  constructor(@Inject(POST_STORE) private readonly posts: PostStore) {}

  @Get(':id')
  async findOne(
    @Param('id', ParseIntPipe) id: number,
    @Res({ passthrough: true }) response: Response,
  ): Promise<object> {
    const post = await this.posts.findById(id);
    if (post === undefined) throw new NotFoundException();
    response.setHeader('ETag', postETag(post));
    return representation(post);
  }

  // 201 is @Post()'s default status.
  @Post()
  async create(@Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<object> {
    const input = parseInput(await readBody(request));
    if (input === undefined) throw new BadRequestException();
    const now = new Date();
    const id = await this.posts.insert(input, settings.ownerId, now);
    const post: StoredPost = { id, ...input, version: 1, ...PUBLISHED_NOW(now), createdAt: now, updatedAt: now };
    response.setHeader('Location', `/posts/${id}`);
    response.setHeader('ETag', postETag(post));
    return representation(post);
  }
}

@Module({ controllers: [PostsController], providers: [{ provide: POST_STORE, useValue: store }] })
class FloorModule {}

const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: false, bodyParser: false });
await app.listen(settings.port, settings.host);

const stop = (): void => {
  void app
    .close()
    .then(() => store.close())
    .finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
process.stdout.write(`F (NestJS + platform-express) listening on ${settings.host}:${settings.port}\n`);
