import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../auth/principal.js';
import type { CursorCodec } from '../common/pagination/cursor-codec.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import { decodePageCursor, keysetPage } from './page-cursor.js';
import { mayChange } from './post-lifecycle.js';
import type { PostRevision } from './post-revision.entity.js';
import { PostRevisionsRepository } from './post-revisions.repository.js';
import { revisionNotFound } from './post-problems.js';
import { PostsService } from './posts.service.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';

export interface RevisionsPage {
  revisions: PostRevision[];
  nextCursor?: string;
}

/**
 * Reading a post's revisions (contract §10): its owner's and admins'. Another principal gets 404
 * where the post is hidden from it (a draft), 403 where it may read the post but not change it.
 * Restoring one is a change of the post: PostsService.restoreRevision.
 */
@Injectable()
export class PostRevisionsService {
  constructor(
    private readonly posts: PostsService,
    private readonly revisions: PostRevisionsRepository,
    @Inject(POSTS_CURSOR_CODEC) private readonly cursorCodec: CursorCodec,
  ) {}

  /** Newest first. */
  async findPage(id: number, query: { limit: number; cursor?: string }, principal: Principal): Promise<RevisionsPage> {
    await this.findOwnPost(id, principal);
    const scope = JSON.stringify(['revisions', id]);
    const before = query.cursor === undefined ? undefined : decodePageCursor(this.cursorCodec, query.cursor, scope);
    const rows = await this.revisions.findPage(id, before, query.limit + 1);
    const { items, nextCursor } = keysetPage(this.cursorCodec, rows, query.limit, scope, (row) => row.version);
    return { revisions: items, nextCursor };
  }

  async findOne(id: number, version: number, principal: Principal): Promise<PostRevision> {
    await this.findOwnPost(id, principal);
    const revision = await this.revisions.findOne(id, version);
    if (revision === undefined) throw revisionNotFound(id, version);
    return revision;
  }

  private async findOwnPost(id: number, principal: Principal): Promise<void> {
    const post = await this.posts.findOne(id, principal);
    if (!mayChange(post, principal)) {
      throw new ProblemException(
        ProblemTypes.forbidden,
        `Post ${id} belongs to another principal; only its owner or an admin may read its revisions.`,
      );
    }
  }
}
