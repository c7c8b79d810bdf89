import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { In, type FindOptionsWhere, type Repository } from 'typeorm';
import { EntityRows, type SqlStatement } from '../database/entity-rows.js';
import { Post } from './post.entity.js';

/** The fields a client writes. */
export type PostFields = Pick<Post, 'title' | 'content' | 'author'>;

/**
 * The rows a write may touch: the post, its owner's unless an admin writes, and the versions
 * If-Match allows. Checks and write are one statement, so nothing can change in between.
 */
export interface PostWriteTarget {
  id: number;
  ownerId?: string;
  versions?: number[];
}

export interface PostsPageQuery {
  author?: string;
  order: 'asc' | 'desc';
  /** The keyset position: posts after (asc) or before (desc) this id. */
  after?: number;
  /** Rows to read: one more than the page, to tell whether another page follows. */
  rows: number;
  count: boolean;
}

/**
 * All SQL about posts. Statements run in the transaction of the calling context when there is one
 * (TransactionHost), else on their own. The primary-key read and the insert are fixed statements
 * (EntityRows: prepared once, no query builder on the hot path); the listing is a keyset query.
 */
@Injectable()
export class PostsRepository {
  private readonly rows: EntityRows<Post>;

  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.rows = new EntityRows(posts);
  }

  findById(id: number): Promise<Post | undefined> {
    return this.rows.findByPrimaryKey(id, this.txHost.tx);
  }

  /** Just enough of a post to explain why a write did not apply to it. */
  async findOwner(id: number): Promise<Pick<Post, 'id' | 'ownerId'> | undefined> {
    const post = await this.txHost.tx.findOne(Post, { where: { id }, select: { id: true, ownerId: true } });
    return post ?? undefined;
  }

  /** The post's version, its row locked until the transaction ends (MySQL; SQLite has one writer). */
  async lockVersion(id: number): Promise<number | undefined> {
    const manager = this.txHost.tx;
    const select = manager
      .createQueryBuilder(Post, 'post')
      .select('post.version', 'version')
      .where('post.id = :id', { id });
    if (manager.connection.options.type !== 'better-sqlite3') select.setLock('pessimistic_write');
    const row = await select.getRawOne<{ version: number | string }>();
    return row === undefined ? undefined : Number(row.version);
  }

  /**
   * One page of the keyset listing on the primary key: an index seek from the previous page's last
   * id (never OFFSET), so page 50,000 costs what page 1 costs.
   */
  async findPage(query: PostsPageQuery): Promise<{ rows: Post[]; totalCount?: number }> {
    const select = this.posts.createQueryBuilder('post', this.txHost.tx.queryRunner);
    if (query.author !== undefined) select.andWhere('post.author = :author', { author: query.author });
    const totalCount = query.count ? await select.clone().getCount() : undefined;
    if (query.after !== undefined) {
      select.andWhere(query.order === 'desc' ? 'post.id < :after' : 'post.id > :after', { after: query.after });
    }
    const rows = await select
      .orderBy('post.id', query.order === 'desc' ? 'DESC' : 'ASC')
      .limit(query.rows)
      .getMany();
    return { rows, totalCount };
  }

  /**
   * Inserts a new post with every column set here (created and updated now, version 1), so nothing
   * is read back: neither save()'s SELECT before nor insert()'s SELECT after; the id comes from the
   * driver. Both databases keep a JS Date's milliseconds (DATETIME(3) on MySQL).
   */
  async insert(fields: PostFields, ownerId: string): Promise<Post> {
    const post = this.newPost(fields, ownerId);
    post.id = await this.rows.insert(post, this.txHost.tx);
    return post;
  }

  /** The post insert() would write (its id still unset) and its INSERT, for a statement batch. */
  insertStatement(fields: PostFields, ownerId: string): { post: Post; statement: SqlStatement } {
    const post = this.newPost(fields, ownerId);
    return { post, statement: this.rows.insertStatement(post) };
  }

  private newPost(fields: PostFields, ownerId: string): Post {
    const now = new Date();
    return this.posts.create({ ...fields, ownerId, version: 1, createdAt: now, updatedAt: now });
  }

  /** Applies the changes and moves the version in one UPDATE; false when no row matched the target. */
  async update(target: PostWriteTarget, changes: Partial<PostFields>): Promise<boolean> {
    const result = await this.txHost.tx.update(Post, whereOf(target), {
      ...changes,
      updatedAt: new Date(),
      version: () => 'version + 1',
    });
    return Boolean(result.affected);
  }

  /** False when no row matched the target. */
  async delete(target: PostWriteTarget): Promise<boolean> {
    const result = await this.txHost.tx.delete(Post, whereOf(target));
    return Boolean(result.affected);
  }
}

function whereOf(target: PostWriteTarget): FindOptionsWhere<Post> {
  const where: FindOptionsWhere<Post> = { id: target.id };
  if (target.ownerId !== undefined) where.ownerId = target.ownerId;
  if (target.versions !== undefined) where.version = In(target.versions);
  return where;
}
