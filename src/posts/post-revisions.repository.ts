import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { Repository } from 'typeorm';
import { changedRows, EntityRows } from '../database/entity-rows.js';
import type { Post } from './post.entity.js';
import { PostRevision } from './post-revision.entity.js';

/** All SQL about post_revisions; the writes run in the transaction of the post's change. */
@Injectable()
export class PostRevisionsRepository {
  private readonly rows: EntityRows<PostRevision>;

  constructor(
    @InjectRepository(PostRevision) private readonly revisions: Repository<PostRevision>,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.rows = new EntityRows(revisions);
  }

  /**
   * Keeps `post` (the state a write is about to replace) and drops the oldest revisions beyond
   * `keep`. The trim first finds the newest revision to drop with a plain read, so the DELETE, and
   * its locks, run only when there is something to drop.
   */
  async keep(post: Post, revisedAt: Date, keep: number): Promise<void> {
    const manager = this.txHost.tx;
    const revision = this.revisions.create({
      postId: post.id,
      version: post.version,
      title: post.title,
      content: post.content,
      author: post.author,
      status: post.status,
      publishedAt: post.publishedAt,
      revisedAt,
    });
    await this.rows.insert(revision, manager);
    const [oldestDropped] = await manager.query<Array<{ version: number | string }>>(
      'SELECT version FROM post_revisions WHERE post_id = ? ORDER BY version DESC LIMIT 1 OFFSET ?',
      [post.id, keep],
    );
    if (oldestDropped !== undefined) {
      await changedRows(manager, 'DELETE FROM post_revisions WHERE post_id = ? AND version <= ?', [
        post.id,
        Number(oldestDropped.version),
      ]);
    }
  }

  /** Newest first; `before`: the last version of the previous page (the unique (post_id, version) index). */
  async findPage(postId: number, before: number | undefined, rows: number): Promise<PostRevision[]> {
    const seek = before === undefined ? '' : ' AND version < ?';
    const parameters = before === undefined ? [postId, rows] : [postId, before, rows];
    const found = await this.txHost.tx.query<Array<Record<string, unknown>>>(
      `SELECT ${this.rows.selectedColumns} FROM post_revisions WHERE post_id = ?${seek} ORDER BY version DESC LIMIT ?`,
      parameters,
    );
    return found.map((row) => this.rows.hydrate(row));
  }

  async findOne(postId: number, version: number): Promise<PostRevision | undefined> {
    const [row] = await this.txHost.tx.query<Array<Record<string, unknown>>>(
      `SELECT ${this.rows.selectedColumns} FROM post_revisions WHERE post_id = ? AND version = ?`,
      [postId, version],
    );
    return row === undefined ? undefined : this.rows.hydrate(row);
  }

  /** Erases every revision of the post (its purge). */
  async deleteAll(postId: number): Promise<void> {
    await changedRows(this.txHost.tx, 'DELETE FROM post_revisions WHERE post_id = ?', [postId]);
  }
}
