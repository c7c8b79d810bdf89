import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { Repository } from 'typeorm';
import { changedRows, EntityRows } from '../database/entity-rows.js';
import type { Post } from './post.entity.js';
import { PostRevision } from './post-revision.entity.js';

// Revisions deleted per statement: a lowered REVISIONS_PER_POST is worked off over several writes.
const DELETE_BATCH = 1_000;

/** All SQL about post_revisions; the writes run in the transaction of the post's change. */
@Injectable()
export class PostRevisionsRepository {
  private readonly rows: EntityRows<PostRevision>;
  // The (post_id, version) index, named on MySQL so that a read of one post's revisions never scans.
  private readonly byPostAndVersion: string;

  constructor(
    @InjectRepository(PostRevision) private readonly revisions: Repository<PostRevision>,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.rows = new EntityRows(revisions);
    const sqlite = revisions.manager.connection.options.type === 'better-sqlite3';
    this.byPostAndVersion = sqlite ? '' : ' FORCE INDEX (uq_post_revisions_post_version)';
  }

  /**
   * Keeps `post` (the state a write is about to replace) and drops the oldest revisions beyond
   * `keep`. The ones to drop are found with a plain read, then deleted by primary key: a range DELETE
   * may scan (and lock) far more than the post's rows on MySQL, and two writers trimming different
   * posts then deadlock. Only the post's writer, which holds the post's row, touches its revisions.
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
    const dropped = await manager.query<Array<{ id: number | string }>>(
      `SELECT id FROM post_revisions${this.byPostAndVersion} WHERE post_id = ? ORDER BY version DESC LIMIT ? OFFSET ?`,
      [post.id, DELETE_BATCH, keep],
    );
    await this.deleteByIds(dropped.map((row) => Number(row.id)));
  }

  /** Newest first; `before`: the last version of the previous page (the unique (post_id, version) index). */
  async findPage(postId: number, before: number | undefined, rows: number): Promise<PostRevision[]> {
    const seek = before === undefined ? '' : ' AND version < ?';
    const parameters = before === undefined ? [postId, rows] : [postId, before, rows];
    const found = await this.txHost.tx.query<Array<Record<string, unknown>>>(
      `SELECT ${this.rows.selectedColumns} FROM post_revisions${this.byPostAndVersion} WHERE post_id = ?${seek} ` +
        'ORDER BY version DESC LIMIT ?',
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

  /** Erases every revision of the post (its purge), by primary key as keep() does. */
  async deleteAll(postId: number): Promise<void> {
    for (;;) {
      const found = await this.txHost.tx.query<Array<{ id: number | string }>>(
        `SELECT id FROM post_revisions${this.byPostAndVersion} WHERE post_id = ? LIMIT ?`,
        [postId, DELETE_BATCH],
      );
      await this.deleteByIds(found.map((row) => Number(row.id)));
      if (found.length < DELETE_BATCH) return;
    }
  }

  private async deleteByIds(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await changedRows(this.txHost.tx, `DELETE FROM post_revisions WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
  }
}
