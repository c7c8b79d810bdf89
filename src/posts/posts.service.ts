import { Inject, Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isAdmin, type Principal } from '../auth/principal.js';
import { CursorCodec, InvalidCursorError } from '../common/pagination/cursor-codec.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import { POSTS_CONFIG, type PostsConfig } from '../config/config.module.js';
import { EventsService } from '../events/events.service.js';
import type { PageQuery } from './dto/list-posts-query.dto.js';
import type { PatchPostDto } from './dto/patch-post.dto.js';
import type { PostInputDto } from './dto/post-input.dto.js';
import type { Post } from './post.entity.js';
import type { WritePrecondition } from './post-etag.js';
import { postCreatedAroundId, postDeleted, postWritten } from './post-events.js';
import { PostsRepository, type PostFields, type PostWriteTarget } from './posts.repository.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';

export interface PostsPage {
  posts: Post[];
  /** Cursor of the next page; absent on the last page. */
  nextCursor?: string;
  /** Matching posts in all pages; only when the query asked for it. */
  totalCount?: number;
}

/**
 * What may be done with posts and by whom: ownership, preconditions, pagination cursors. The SQL is
 * PostsRepository's. Every write runs in a transaction with the event that records it (contract §9:
 * a write that rolls back emits nothing, one that commits never loses its event), joining the
 * caller's transaction if there is one (an idempotent create's).
 */
@Injectable()
export class PostsService {
  constructor(
    private readonly posts: PostsRepository,
    private readonly events: EventsService,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(POSTS_CURSOR_CODEC) private readonly cursorCodec: CursorCodec,
    @Inject(POSTS_CONFIG) private readonly config: PostsConfig,
  ) {}

  /** A page of the listing; concurrent inserts cannot make a client paging through see a post twice or miss one. */
  async findPage(query: PageQuery): Promise<PostsPage> {
    const scope = pageScope(query);
    const after = query.cursor === undefined ? undefined : this.decodeCursor(query.cursor, scope);
    // One row more than asked tells whether a next page exists without a COUNT.
    const { rows, totalCount } = await this.posts.findPage({
      author: query.author,
      order: query.order,
      after,
      rows: query.limit + 1,
      count: query.count,
    });
    const posts = rows.slice(0, query.limit);
    const nextCursor =
      rows.length > query.limit ? this.cursorCodec.encode({ after: posts[posts.length - 1].id, scope }) : undefined;
    return { posts, nextCursor, totalCount };
  }

  async findOne(id: number): Promise<Post> {
    const post = await this.posts.findById(id);
    if (!post) throw postNotFound(id);
    return post;
  }

  /**
   * The caller becomes the owner. On MySQL, outside a caller's transaction, the post, its event and
   * the transaction around them are one statement batch: one network round trip instead of four.
   */
  async create(input: PostInputDto, principal: Principal): Promise<Post> {
    const fields = { title: input.title, content: input.content, author: input.author };
    if (this.events.batchesInserts) {
      const { post, statement } = this.posts.insertStatement(fields, principal.id);
      post.id = await this.events.insertWithEvent(statement, postCreatedAroundId(post, principal));
      return post;
    }
    return this.txHost.withTransaction(async () => {
      const post = await this.posts.insert(fields, principal.id);
      await this.events.append(postWritten('created', post, principal));
      return post;
    });
  }

  async replace(id: number, input: PostInputDto, principal: Principal, precondition: WritePrecondition): Promise<Post> {
    return this.update(id, principal, precondition, {
      title: input.title,
      content: input.content,
      author: input.author,
    });
  }

  async patch(id: number, patch: PatchPostDto, principal: Principal, precondition: WritePrecondition): Promise<Post> {
    const changes: Partial<PostFields> = {};
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.content !== undefined) changes.content = patch.content;
    if (patch.author !== undefined) changes.author = patch.author;
    if (Object.keys(changes).length === 0) {
      throw new ProblemException(ProblemTypes.validationFailed, 'A patch must change at least one field.', {
        errors: [{ pointer: '', detail: 'the patch must contain at least one of title, content, author' }],
      });
    }
    return this.update(id, principal, precondition, changes);
  }

  async remove(id: number, principal: Principal, precondition: WritePrecondition): Promise<void> {
    const target = await this.writeTarget(id, principal, precondition);
    await this.txHost.withTransaction(async () => {
      // Locked until the commit (MySQL), so the version the tombstone carries is the one deleted.
      const version = await this.posts.lockVersion(id);
      if (version === undefined || !(await this.posts.delete(target))) await this.explainMissedWrite(id, principal);
      await this.events.append(postDeleted(id, version!, principal));
    });
  }

  // Ownership and If-Match are part of the write's WHERE clause and the version moves in the same
  // statement: a post cannot change hands or versions between a check and the write, concurrent
  // writers with the same ETag cannot both win, and a refused write has touched nothing.
  private async update(
    id: number,
    principal: Principal,
    precondition: WritePrecondition,
    changes: Partial<PostFields>,
  ): Promise<Post> {
    const target = await this.writeTarget(id, principal, precondition);
    return this.txHost.withTransaction(async () => {
      if (!(await this.posts.update(target, changes))) await this.explainMissedWrite(id, principal);
      const post = await this.findOne(id);
      await this.events.append(postWritten('updated', post, principal));
      return post;
    });
  }

  private async writeTarget(
    id: number,
    principal: Principal,
    precondition: WritePrecondition,
  ): Promise<PostWriteTarget> {
    if (precondition.kind === 'none' && this.config.requireIfMatch) {
      await this.explainMissedWrite(id, principal, 'missing');
    }
    const target: PostWriteTarget = isAdmin(principal) ? { id } : { id, ownerId: principal.id };
    if (precondition.kind !== 'versions') return target;
    // A list with no usable tag can match no version: the write cannot happen.
    if (precondition.versions.length === 0) await this.explainMissedWrite(id, principal);
    return { ...target, versions: precondition.versions };
  }

  /**
   * Why a write matched no row (or may not be tried): 404 when the post does not exist, 403 when it
   * belongs to someone else, otherwise its precondition: 428 when If-Match is required and missing,
   * 412 when it did not match. Hence the precedence 401/403/404 before 412 and 428.
   */
  private async explainMissedWrite(
    id: number,
    principal: Principal,
    precondition: 'failed' | 'missing' = 'failed',
  ): Promise<never> {
    const post = await this.posts.findOwner(id);
    if (!post) throw postNotFound(id);
    if (!isAdmin(principal) && post.ownerId !== principal.id) {
      throw new ProblemException(
        ProblemTypes.forbidden,
        `Post ${id} belongs to another principal; only its owner or an admin may change it.`,
      );
    }
    if (precondition === 'missing') {
      throw new ProblemException(
        ProblemTypes.preconditionRequired,
        "Send If-Match with the post's ETag (or *) to change it; read it with GET first.",
      );
    }
    throw new ProblemException(
      ProblemTypes.preconditionFailed,
      `Post ${id} has changed since the ETag in If-Match; read it again and reapply your change.`,
    );
  }

  private decodeCursor(cursor: string, scope: string): number {
    try {
      return this.cursorCodec.decode(cursor, scope);
    } catch (error) {
      if (!(error instanceof InvalidCursorError)) throw error;
      throw new ProblemException(ProblemTypes.validationFailed, `Invalid cursor: ${error.message}.`, {
        errors: [{ parameter: 'cursor', detail: error.message }],
      });
    }
  }
}

// The query a cursor belongs to: a cursor from an author-filtered or ascending listing cannot be
// replayed against another one.
function pageScope(query: PageQuery): string {
  return JSON.stringify(['posts', query.order, query.author ?? null]);
}

function postNotFound(id: number): ProblemException {
  return new ProblemException(ProblemTypes.notFound, `Post ${id} does not exist.`);
}
