import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PublicUrls } from '../http/public-urls.js';
import { EventsModule } from '../events/events.module.js';
import { IdempotencyModule } from '../idempotency/idempotency.module.js';
import { CursorCodec } from '../common/pagination/cursor-codec.js';
import { POSTS_CONFIG, type PostsConfig } from '../config/config.module.js';
import { Post } from './post.entity.js';
import { PostRevision } from './post-revision.entity.js';
import { PostRevisionsController } from './post-revisions.controller.js';
import { PostRevisionsRepository } from './post-revisions.repository.js';
import { PostRevisionsService } from './post-revisions.service.js';
import { PostPublication } from './post-publication.js';
import { PostsMaintenance } from './posts-maintenance.js';
import { PostsTrashRepository } from './posts-trash.repository.js';
import { TrashController } from './trash.controller.js';
import { TrashService } from './trash.service.js';
import { TrashedPost } from './trashed-post.entity.js';
import { PostsController } from './posts.controller.js';
import { PostsRepository } from './posts.repository.js';
import { PostsService } from './posts.service.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';

@Module({
  imports: [TypeOrmModule.forFeature([Post, PostRevision, TrashedPost]), IdempotencyModule, EventsModule],
  controllers: [PostsController, PostRevisionsController, TrashController],
  providers: [
    PostsService,
    PostsRepository,
    PostRevisionsRepository,
    PostRevisionsService,
    PostsTrashRepository,
    TrashService,
    PostsMaintenance,
    PostPublication,
    PublicUrls,
    {
      provide: POSTS_CURSOR_CODEC,
      inject: [POSTS_CONFIG],
      useFactory: (config: PostsConfig) => new CursorCodec(config.cursorSecret),
    },
  ],
})
export class PostsModule {}
