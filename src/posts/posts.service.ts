import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type EntityManager, type FindOptionsWhere, type Repository } from 'typeorm';
import { isAdmin, type Principal } from '../auth/principal.js';
import { CursorCodec, InvalidCursorError } from '../common/pagination/cursor-codec.js';
import { ProblemException } from '../common/problem/problem.exception.js';
import { ProblemTypes } from '../common/problem/problem-types.js';
import type { PageQuery } from './dto/list-posts-query.dto.js';
import type { PatchPostDto } from './dto/patch-post.dto.js';
import type { PostInputDto } from './dto/post-input.dto.js';
import { Post } from './post.entity.js';
import type { WritePrecondition } from './post-etag.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';
import { EntityRows } from '../database/entity-rows.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/environment.js';

export interface PostsPage {
  posts: Post[];
  /** Cursor of the next page; absent on the last page. */
  nextCursor?: string;
  /** Matching posts in all pages; only when the query asked for it. */
  totalCount?: number;
}

@Injectable()
export class PostsService {
  private readonly rows: EntityRows<Post>;

  constructor(
    @InjectRepository(Post) private readonly postRepository: Repository<Post>,
    @Inject(POSTS_CURSOR_CODEC) private readonly cursorCodec: CursorCodec,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.rows = new EntityRows(postRepository);
  }

  /**
   * Keyset pagination on the primary key: each page is an index seek from the previous page's last
   * id (never OFFSET), so page 50,000 costs what page 1 costs, and concurrent inserts cannot make a
   * client see a post twice or miss one.
   */
  async findPage(query: PageQuery): Promise<PostsPage> {
    const scope = pageScope(query);
    const after = query.cursor === undefined ? undefined : this.decodeCursor(query.cursor, scope);

    const select = this.postRepository.createQueryBuilder('post');
    if (query.author !== undefined) select.andWhere('post.author = :author', { author: query.author });
    const totalCount = query.count ? await select.clone().getCount() : undefined;

    if (after !== undefined)
      select.andWhere(query.order === 'desc' ? 'post.id < :after' : 'post.id > :after', { after });
    // One row more than asked tells whether a next page exists without a COUNT.
    const rows = await select
      .orderBy('post.id', query.order === 'desc' ? 'DESC' : 'ASC')
      .limit(query.limit + 1)
      .getMany();

    const posts = rows.slice(0, query.limit);
    const nextCursor =
      rows.length > query.limit ? this.cursorCodec.encode({ after: posts[posts.length - 1].id, scope }) : undefined;
    return { posts, nextCursor, totalCount };
  }

  async findOne(id: number): Promise<Post> {
    const post = await this.rows.findByPrimaryKey(id);
    if (!post) throw postNotFound(id);
    return post;
  }

  /** `manager`: the transaction to write in (an idempotent create stores its response in the same one). */
  async create(
    input: PostInputDto,
    principal: Principal,
    manager: EntityManager = this.postRepository.manager,
  ): Promise<Post> {
    // Set here rather than by a column default: the response needs it and insert() then needs no
    // SELECT; both databases keep the millisecond precision of a JS Date (DATETIME(3) on MySQL).
    const now = new Date();
    const post = manager.create(Post, {
      title: input.title,
      content: input.content,
      author: input.author,
      ownerId: principal.id,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    // Neither save() (a SELECT before the write) nor insert() (a SELECT after it, re-reading the
    // column with a default): every value is set here, and the id comes back from the driver.
    post.id = await this.rows.insert(post, manager);
    return post;
  }

  async replace(id: number, input: PostInputDto, principal: Principal, precondition: WritePrecondition): Promise<Post> {
    const changes = { title: input.title, content: input.content, author: input.author };
    return this.update(id, principal, precondition, changes);
  }

  async patch(id: number, patch: PatchPostDto, principal: Principal, precondition: WritePrecondition): Promise<Post> {
    const changes: Partial<Pick<Post, 'title' | 'content' | 'author'>> = {};
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
    const where = await this.writeTarget(id, principal, precondition);
    const result = await this.postRepository.delete(where);
    if (!result.affected) await this.explainMissedWrite(id, principal);
  }

  // Ownership and If-Match are part of the write's WHERE clause and the version moves in the same
  // statement: a post cannot change hands or versions between a check and the write, concurrent
  // writers with the same ETag cannot both win, and a refused write has touched nothing.
  private async update(
    id: number,
    principal: Principal,
    precondition: WritePrecondition,
    changes: Partial<Pick<Post, 'title' | 'content' | 'author'>>,
  ): Promise<Post> {
    const where = await this.writeTarget(id, principal, precondition);
    const result = await this.postRepository.update(where, {
      ...changes,
      updatedAt: new Date(),
      version: () => 'version + 1',
    });
    if (!result.affected) await this.explainMissedWrite(id, principal);
    return this.findOne(id);
  }

  private async writeTarget(
    id: number,
    principal: Principal,
    precondition: WritePrecondition,
  ): Promise<FindOptionsWhere<Post>> {
    if (precondition.kind === 'none' && this.config.requireIfMatch) {
      await this.explainMissedWrite(id, principal, 'missing');
    }
    const where = isAdmin(principal) ? { id } : { id, ownerId: principal.id };
    if (precondition.kind !== 'versions') return where;
    // A list with no usable tag can match no version: the write cannot happen.
    if (precondition.versions.length === 0) await this.explainMissedWrite(id, principal);
    return { ...where, version: In(precondition.versions) };
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
    const post = await this.postRepository.findOne({ where: { id }, select: { id: true, ownerId: true } });
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
