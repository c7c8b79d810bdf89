import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { Repository } from 'typeorm';
import { changedRows, EntityRows, type SqlStatement } from '../database/entity-rows.js';
import { Post, type PostStatus } from './post.entity.js';
import { postAsOf } from './post-lifecycle.js';

/** The fields a client writes. */
export type PostFields = Pick<Post, 'title' | 'content' | 'author' | 'status' | 'publishedAt'>;

export interface PostsPageQuery {
  /** published: what everyone sees (due scheduled posts included); draft and scheduled: not yet published. */
  status: PostStatus;
  /** Only this owner's posts (drafts and scheduled posts of a caller that is not admin). */
  ownerId?: string;
  author?: string;
  order: 'asc' | 'desc';
  /** The keyset position: posts after (asc) or before (desc) this id. */
  after?: number;
  /** Rows to read: one more than the page, to tell whether another page follows. */
  rows: number;
  count: boolean;
  now: Date;
}

/**
 * All SQL about the posts table. Statements run in the transaction of the calling context when
 * there is one (TransactionHost), else on their own. Every statement is fixed SQL (EntityRows: no
 * query builder on the hot paths). Posts come out as of now (postAsOf): a scheduled post whose
 * instant has passed reads as published even before the publication sweep has stored it.
 * Status values are written into the SQL as literals, never bound: SQLite uses its partial index on
 * scheduled posts only for a WHERE that names the literal.
 */
@Injectable()
export class PostsRepository {
  private readonly rows: EntityRows<Post>;
  private readonly mysql: boolean;

  constructor(
    @InjectRepository(Post) private readonly posts: Repository<Post>,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.rows = new EntityRows(posts);
    this.mysql = posts.manager.connection.options.type !== 'better-sqlite3';
  }

  /** The post as of `now`, or undefined (never a trashed one: the trash is another table). */
  async findById(id: number, now = new Date()): Promise<Post | undefined> {
    const post = await this.rows.findByPrimaryKey(id, this.txHost.tx);
    return post === undefined ? undefined : postAsOf(post, now);
  }

  /** The post as stored, its row locked until the transaction ends (MySQL; SQLite has one writer). */
  async lockById(id: number): Promise<Post | undefined> {
    const rows = await this.txHost.tx.query<Array<Record<string, unknown>>>(
      // SQLite runs one write transaction at a time: its reads in one need no lock.
      `${this.rows.selectByPrimaryKey}${this.mysql ? ' FOR UPDATE' : ''}`,
      [id],
    );
    return rows.length === 0 ? undefined : this.rows.hydrate(rows[0]);
  }

  /**
   * One page of the keyset listing: an index seek from the previous page's last id (never OFFSET),
   * so page 50,000 costs what page 1 costs. Published posts are two seeks in one statement: the
   * stored ones on (status, id), and the scheduled ones whose instant has passed but which the sweep
   * has not stored yet (a few seconds' worth) on the scheduled index.
   */
  async findPage(query: PostsPageQuery): Promise<{ rows: Post[]; totalCount?: number }> {
    const statement = this.pageStatement(query);
    const totalCount = query.count ? await this.count(query) : undefined;
    const rows = await this.txHost.tx.query<Array<Record<string, unknown>>>(statement.sql, statement.parameters);
    return { rows: rows.map((row) => postAsOf(this.rows.hydrate(row), query.now)), totalCount };
  }

  /** The statement of findPage()'s rows (the schema test explains it). */
  pageStatement(query: PostsPageQuery): SqlStatement {
    const direction = query.order === 'desc' ? 'DESC' : 'ASC';
    // The keyset index of the filter, named: left to their statistics, both databases sometimes walk
    // the primary key instead, which costs a page per page only while few posts are filtered out.
    const index =
      query.author !== undefined
        ? 'idx_posts_author_status_id'
        : query.ownerId !== undefined
          ? 'idx_posts_owner_status_id'
          : 'idx_posts_status_id';
    const keyset = this.mysql ? `posts FORCE INDEX (${index})` : `posts INDEXED BY ${index}`;
    const seek = (conditions: string[], parameters: unknown[], from = keyset): SqlStatement => {
      const where = [...conditions];
      const bound = [...parameters];
      if (query.ownerId !== undefined) {
        // An owner's listing is of drafts or scheduled posts; the term, word for word, lets SQLite use
        // its partial owner index, which holds those rows only.
        where.push('owner_id = ?', "status <> 'published'");
        bound.push(query.ownerId);
      }
      if (query.author !== undefined) {
        where.push('author = ?');
        bound.push(query.author);
      }
      if (query.after !== undefined) {
        where.push(query.order === 'desc' ? 'id < ?' : 'id > ?');
        bound.push(query.after);
      }
      return {
        sql: `SELECT ${this.rows.selectedColumns} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY id ${direction} LIMIT ?`,
        parameters: [...bound, query.rows],
      };
    };
    switch (query.status) {
      case 'draft':
        return seek(["status = 'draft'"], []);
      case 'scheduled':
        return seek(["status = 'scheduled'", 'published_at > ?'], [this.time(query.now)]);
      case 'published': {
        const stored = seek(["status = 'published'"], []);
        // Due but not yet stored by the sweep: a few seconds' worth, found on the scheduled index.
        const due = seek(["status = 'scheduled'", 'published_at <= ?'], [this.time(query.now)], 'posts');
        return {
          sql:
            `SELECT * FROM (${stored.sql}) AS stored_published UNION ALL ` +
            `SELECT * FROM (${due.sql}) AS due_published ORDER BY id ${direction} LIMIT ?`,
          parameters: [...stored.parameters, ...due.parameters, query.rows],
        };
      }
    }
  }

  private async count(query: PostsPageQuery): Promise<number> {
    const where: string[] = [];
    const parameters: unknown[] = [];
    if (query.status === 'draft') where.push("status = 'draft'");
    else {
      where.push(
        query.status === 'scheduled'
          ? "status = 'scheduled' AND published_at > ?"
          : "(status = 'published' OR (status = 'scheduled' AND published_at <= ?))",
      );
      parameters.push(this.time(query.now));
    }
    if (query.ownerId !== undefined) {
      where.push('owner_id = ?');
      parameters.push(query.ownerId);
    }
    if (query.author !== undefined) {
      where.push('author = ?');
      parameters.push(query.author);
    }
    const [row] = await this.txHost.tx.query<Array<{ total: number | string }>>(
      `SELECT COUNT(*) AS total FROM posts WHERE ${where.join(' AND ')}`,
      parameters,
    );
    return Number(row.total);
  }

  /**
   * Inserts a new post with every column set here (created and updated now, version 1), so nothing
   * is read back: neither save()'s SELECT before nor insert()'s SELECT after; the id comes from the
   * driver. Both databases keep a JS Date's milliseconds (DATETIME(3) on MySQL).
   */
  async insert(fields: PostFields, ownerId: string, now: Date): Promise<Post> {
    const post = this.newPost(fields, ownerId, now);
    post.id = await this.rows.insert(post, this.txHost.tx);
    return post;
  }

  /** The post insert() would write (its id still unset) and its INSERT, for a statement batch. */
  insertStatement(fields: PostFields, ownerId: string, now: Date): { post: Post; statement: SqlStatement } {
    const post = this.newPost(fields, ownerId, now);
    return { post, statement: this.rows.insertStatement(post) };
  }

  private newPost(fields: PostFields, ownerId: string, now: Date): Post {
    return this.posts.create({ ...fields, ownerId, version: 1, createdAt: now, updatedAt: now });
  }

  /** Writes the post's new fields and the next version; the caller holds its row (lockById). */
  async update(id: number, fields: PostFields, now: Date): Promise<void> {
    await this.txHost.tx.query(
      'UPDATE posts SET title = ?, content = ?, author = ?, status = ?, published_at = ?, updated_at = ?, ' +
        'version = version + 1 WHERE id = ?',
      [fields.title, fields.content, fields.author, fields.status, this.time(fields.publishedAt), this.time(now), id],
    );
  }

  /**
   * Stores the publication of a scheduled post whose instant has passed, with the version postAsOf()
   * showed; false when there was none to store (not due, or another instance stored it first: the
   * row's lock makes the second UPDATE find it published, so its event is written once in a fleet).
   */
  async publishIfDue(id: number, now: Date): Promise<boolean> {
    const changed = await changedRows(
      this.txHost.tx,
      "UPDATE posts SET status = 'published', version = version + 1 " +
        "WHERE id = ? AND status = 'scheduled' AND published_at <= ?",
      [id, this.time(now)],
    );
    return changed > 0;
  }

  /** Ids of scheduled posts whose instant has passed, the longest due first (the scheduled index). */
  async findDue(now: Date, limit: number): Promise<number[]> {
    const rows = await this.txHost.tx.query<Array<{ id: number | string }>>(
      "SELECT id FROM posts WHERE status = 'scheduled' AND published_at <= ? ORDER BY published_at LIMIT ?",
      [this.time(now), limit],
    );
    return rows.map((row) => Number(row.id));
  }

  /** Removes the post's row (it has been copied to the trash in the same transaction). */
  async delete(id: number): Promise<void> {
    await this.txHost.tx.query('DELETE FROM posts WHERE id = ?', [id]);
  }

  private time(date: Date | null): unknown {
    if (date === null) return null;
    const column = this.posts.metadata.findColumnWithPropertyName('updatedAt')!;
    return this.posts.manager.connection.driver.preparePersistentValue(date, column);
  }
}
