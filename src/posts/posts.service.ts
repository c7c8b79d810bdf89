import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { FindOptionsWhere, Repository } from 'typeorm';
import { isAdmin, type Principal } from '../auth/principal.js';
import { CursorCodec, InvalidCursorError } from '../common/pagination/cursor-codec.js';
import { ProblemException } from '../common/problem/problem.exception.js';
import { ProblemTypes } from '../common/problem/problem-types.js';
import type { PageQuery } from './dto/list-posts-query.dto.js';
import type { PatchPostDto } from './dto/patch-post.dto.js';
import type { PostInputDto } from './dto/post-input.dto.js';
import { Post } from './post.entity.js';
import { POSTS_CURSOR_CODEC } from './posts.tokens.js';

export interface PostsPage {
  posts: Post[];
  /** Cursor of the next page; absent on the last page. */
  nextCursor?: string;
  /** Matching posts in all pages; only when the query asked for it. */
  totalCount?: number;
}

@Injectable()
export class PostsService {
  constructor(
    @InjectRepository(Post) private readonly postRepository: Repository<Post>,
    @Inject(POSTS_CURSOR_CODEC) private readonly cursorCodec: CursorCodec,
  ) {}

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
    const post = await this.postRepository.findOneBy({ id });
    if (!post) throw postNotFound(id);
    return post;
  }

  async create(input: PostInputDto, principal: Principal): Promise<Post> {
    // Set here rather than by a column default: the response needs it and insert() then needs no
    // SELECT; both databases keep the millisecond precision of a JS Date (DATETIME(3) on MySQL).
    const now = new Date();
    const post = this.postRepository.create({
      title: input.title,
      content: input.content,
      author: input.author,
      ownerId: principal.id,
      createdAt: now,
      updatedAt: now,
    });
    // insert(), not save(): no SELECT before the write, and the id comes back from the driver.
    const result = await this.postRepository.insert(post);
    post.id = Number(result.identifiers[0].id);
    return post;
  }

  async replace(id: number, input: PostInputDto, principal: Principal): Promise<Post> {
    return this.update(id, principal, { title: input.title, content: input.content, author: input.author });
  }

  async patch(id: number, patch: PatchPostDto, principal: Principal): Promise<Post> {
    const changes: Partial<Pick<Post, 'title' | 'content' | 'author'>> = {};
    if (patch.title !== undefined) changes.title = patch.title;
    if (patch.content !== undefined) changes.content = patch.content;
    if (patch.author !== undefined) changes.author = patch.author;
    if (Object.keys(changes).length === 0) {
      throw new ProblemException(ProblemTypes.validationFailed, 'A patch must change at least one field.', {
        errors: [{ pointer: '', detail: 'the patch must contain at least one of title, content, author' }],
      });
    }
    return this.update(id, principal, changes);
  }

  async remove(id: number, principal: Principal): Promise<void> {
    const result = await this.postRepository.delete(ownedBy(id, principal));
    if (!result.affected) await this.explainMissedWrite(id);
  }

  // The ownership check is part of the write's WHERE clause, so a post cannot change hands between a
  // check and the write, and a refused write has touched nothing.
  private async update(
    id: number,
    principal: Principal,
    changes: Partial<Pick<Post, 'title' | 'content' | 'author'>>,
  ): Promise<Post> {
    const result = await this.postRepository.update(ownedBy(id, principal), { ...changes, updatedAt: new Date() });
    if (!result.affected) await this.explainMissedWrite(id);
    return this.findOne(id);
  }

  /** A write matched no row: 404 when the post does not exist, 403 when it belongs to someone else. */
  private async explainMissedWrite(id: number): Promise<never> {
    const exists = await this.postRepository.existsBy({ id });
    if (!exists) throw postNotFound(id);
    throw new ProblemException(
      ProblemTypes.forbidden,
      `Post ${id} belongs to another principal; only its owner or an admin may change it.`,
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

// Admins may change any post; everyone else only their own.
function ownedBy(id: number, principal: Principal): FindOptionsWhere<Post> {
  return isAdmin(principal) ? { id } : { id, ownerId: principal.id };
}

function postNotFound(id: number): ProblemException {
  return new ProblemException(ProblemTypes.notFound, `Post ${id} does not exist.`);
}
