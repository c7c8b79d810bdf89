import { Inject, Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { isAdmin, type Principal } from '../auth/principal.js';
import type { CursorCodec } from '../common/pagination/cursor-codec.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import { POSTS_CONFIG, type PostsConfig } from '../config/config.module.js';
import { inRetriedTransaction } from '../database/deadlock-retry.js';
import { EventTypes } from '../events/event-types.js';
import { EventsService } from '../events/events.service.js';
import type { PageQuery } from './dto/list-posts-query.dto.js';
import type { PatchPostDto } from './dto/patch-post.dto.js';
import type { PostInputDto } from './dto/post-input.dto.js';
import type { Post } from './post.entity.js';
import type { WritePrecondition } from './post-etag.js';
import { postChanged, postCreatedAroundId, postTombstone } from './post-events.js';
import { changeEventType, mayChange, mayRead, resolveLifecycle } from './post-lifecycle.js';
import { PostPublication } from './post-publication.js';
import { forbiddenPost, postNotFound, revisionNotFound } from './post-problems.js';
import type { PostRevision } from './post-revision.entity.js';
import { PostRevisionsRepository } from './post-revisions.repository.js';
import { PostsRepository, type PostFields } from './posts.repository.js';
import { PostsTrashRepository } from './posts-trash.repository.js';
import { decodePageCursor, keysetPage } from './page-cursor.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';

export interface PostsPage {
  posts: Post[];
  /** Cursor of the next page; absent on the last page. */
  nextCursor?: string;
  /** Matching posts in all pages; only when the query asked for it. */
  totalCount?: number;
}

/**
 * What may be done with posts and by whom: visibility, ownership, preconditions, the states of
 * contract §10, revisions, pagination cursors. The SQL is the repositories'. Every write runs in a
 * transaction with the event that records it (contract §9: a write that rolls back emits nothing,
 * one that commits never loses its event), joining the caller's transaction if there is one (an
 * idempotent create's).
 */
@Injectable()
export class PostsService {
  constructor(
    private readonly posts: PostsRepository,
    private readonly revisions: PostRevisionsRepository,
    private readonly trash: PostsTrashRepository,
    private readonly publication: PostPublication,
    private readonly events: EventsService,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Inject(POSTS_CURSOR_CODEC) private readonly cursorCodec: CursorCodec,
    @Inject(POSTS_CONFIG) private readonly config: PostsConfig,
  ) {}

  /**
   * A page of the listing; concurrent inserts cannot make a client paging through see a post twice
   * or miss one. Published posts are everyone's; drafts and scheduled posts the caller's own, or
   * everyone's for an admin.
   */
  async findPage(query: PageQuery, principal: Principal): Promise<PostsPage> {
    const scope = pageScope(query);
    const after = query.cursor === undefined ? undefined : decodePageCursor(this.cursorCodec, query.cursor, scope);
    // One row more than asked tells whether a next page exists without a COUNT.
    const { rows, totalCount } = await this.posts.findPage({
      status: query.status,
      ownerId: query.status === 'published' || isAdmin(principal) ? undefined : principal.id,
      author: query.author,
      order: query.order,
      after,
      rows: query.limit + 1,
      count: query.count,
      now: new Date(),
    });
    const { items, nextCursor } = keysetPage(this.cursorCodec, rows, query.limit, scope, (post) => post.id);
    return { posts: items, nextCursor, totalCount };
  }

  /** The post as of now; 404 unless it is published or the caller's (or the caller is admin). */
  async findOne(id: number, principal: Principal): Promise<Post> {
    const post = await this.posts.findById(id);
    if (post === undefined || !mayRead(post, principal)) throw postNotFound(id);
    return post;
  }

  /**
   * The caller becomes the owner. On MySQL, outside a caller's transaction, the post, its event and
   * the transaction around them are one statement batch: one network round trip instead of four.
   */
  async create(input: PostInputDto, principal: Principal): Promise<Post> {
    const now = new Date();
    const fields: PostFields = {
      title: input.title,
      content: input.content,
      author: input.author,
      ...resolveLifecycle(input, undefined, now),
    };
    if (this.events.batchesInserts) {
      const { post, statement } = this.posts.insertStatement(fields, principal.id, now);
      post.id = await this.events.insertWithEvent(statement, postCreatedAroundId(post, principal.id));
      return post;
    }
    return this.txHost.withTransaction(async () => {
      const post = await this.posts.insert(fields, principal.id, now);
      await this.events.append(postChanged(EventTypes.postCreated, post, principal.id));
      return post;
    });
  }

  /** Absent status and publishedAt keep the post's state: they describe its life, not its text. */
  async replace(id: number, input: PostInputDto, principal: Principal, precondition: WritePrecondition): Promise<Post> {
    return this.change(id, principal, precondition, (current, now) => ({
      title: input.title,
      content: input.content,
      author: input.author,
      ...resolveLifecycle(input, current, now),
    }));
  }

  async patch(id: number, patch: PatchPostDto, principal: Principal, precondition: WritePrecondition): Promise<Post> {
    if (
      patch.title === undefined &&
      patch.content === undefined &&
      patch.author === undefined &&
      patch.status === undefined &&
      patch.publishedAt === undefined
    ) {
      throw new ProblemException(ProblemTypes.validationFailed, 'A patch must change at least one field.', {
        errors: [
          { pointer: '', detail: 'the patch must contain at least one of title, content, author, status, publishedAt' },
        ],
      });
    }
    return this.change(id, principal, precondition, (current, now) => ({
      title: patch.title ?? current.title,
      content: patch.content ?? current.content,
      author: patch.author ?? current.author,
      ...resolveLifecycle(patch, current, now),
    }));
  }

  /** Makes a revision's title, content and author current as a new version; the post keeps its state. */
  async restoreRevision(
    id: number,
    version: number,
    principal: Principal,
    precondition: WritePrecondition,
  ): Promise<Post> {
    let revision: PostRevision | undefined;
    // A revision that does not exist is 404 before If-Match is looked at, as the post's own would be.
    const findRevision = async (): Promise<void> => {
      revision = await this.revisions.findOne(id, version);
      if (revision === undefined) throw revisionNotFound(id, version);
    };
    return this.change(
      id,
      principal,
      precondition,
      (current) => ({
        title: revision!.title,
        content: revision!.content,
        author: revision!.author,
        status: current.status,
        publishedAt: current.publishedAt,
      }),
      findRevision,
    );
  }

  /** Moves the post to the trash (contract §10): 404 on every /posts route from then on. */
  async remove(id: number, principal: Principal, precondition: WritePrecondition): Promise<void> {
    await inRetriedTransaction(this.txHost, async () => {
      const now = new Date();
      const post = await this.lockForChange(id, principal, precondition, now);
      await this.trash.add(id, now);
      await this.posts.delete(id);
      await this.events.append(postTombstone(EventTypes.postDeleted, id, post.version, principal.id, now));
    });
  }

  // The post's row is locked and checked, then changed, in one transaction: a post cannot change
  // hands, state or version between the checks and the write, concurrent writers with the same ETag
  // cannot both win (the second reads the first's version), and a refused write has touched nothing.
  private async change(
    id: number,
    principal: Principal,
    precondition: WritePrecondition,
    next: (current: Post, now: Date) => PostFields,
    findTarget?: () => Promise<void>,
  ): Promise<Post> {
    return inRetriedTransaction(this.txHost, async () => {
      const now = new Date();
      const current = await this.lockForChange(id, principal, precondition, now, findTarget);
      const fields = next(current, now);
      await this.revisions.keep(current, now, this.config.revisionsPerPost);
      await this.posts.update(id, fields, now);
      const post: Post = { ...current, ...fields, version: current.version + 1, updatedAt: now };
      await this.events.append(postChanged(changeEventType(current.status, fields.status), post, principal.id));
      return post;
    });
  }

  /**
   * The post, locked, if the caller may change it under its precondition: 404 when it does not
   * exist or is not the caller's to see, 403 when it is someone else's, then 428 when If-Match is
   * required and missing, 412 when it does not match (401/403/404 before 412 and 428). A due
   * publication is stored first, so the post is what GET showed.
   */
  private async lockForChange(
    id: number,
    principal: Principal,
    precondition: WritePrecondition,
    now: Date,
    findTarget?: () => Promise<void>,
  ): Promise<Post> {
    const stored = await this.posts.lockById(id);
    if (stored === undefined) throw postNotFound(id);
    const post = await this.publication.publishIfDue(stored, now);
    if (!mayRead(post, principal)) throw postNotFound(id);
    if (!mayChange(post, principal)) throw forbiddenPost(id);
    await findTarget?.();
    if (precondition.kind === 'none' && this.config.requireIfMatch) {
      throw new ProblemException(
        ProblemTypes.preconditionRequired,
        "Send If-Match with the post's ETag (or *) to change it; read it with GET first.",
      );
    }
    if (precondition.kind === 'versions' && !precondition.versions.includes(post.version)) {
      throw new ProblemException(
        ProblemTypes.preconditionFailed,
        `Post ${id} has changed since the ETag in If-Match; read it again and reapply your change.`,
      );
    }
    return post;
  }
}

// The query a cursor belongs to: a cursor from a filtered or ascending listing cannot be replayed
// against another one. The published listing keeps the scope it had before states existed, so
// cursors issued then stay valid.
function pageScope(query: PageQuery): string {
  const scope: unknown[] = ['posts', query.order, query.author ?? null];
  if (query.status !== 'published') scope.push(query.status);
  return JSON.stringify(scope);
}
