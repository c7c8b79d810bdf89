import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { Repository } from 'typeorm';
import { changedRows, EntityRows } from '../database/entity-rows.js';
import { TrashedPost } from './trashed-post.entity.js';

// The columns a post keeps in the trash, in the same order in both tables' statements.
const KEPT = 'id, title, content, author, owner_id, status, published_at, created_at';

/**
 * All SQL about posts_trash. A delete moves the post's row here and a restore moves it back, each
 * an INSERT … SELECT and a DELETE in the transaction of the change, so a post is always in exactly
 * one of the two tables; both moves count as a change (version + 1, updated now).
 */
@Injectable()
export class PostsTrashRepository {
  private readonly rows: EntityRows<TrashedPost>;
  private readonly forUpdate: string;

  constructor(
    @InjectRepository(TrashedPost) private readonly trash: Repository<TrashedPost>,
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
  ) {
    this.rows = new EntityRows(trash);
    this.forUpdate = trash.manager.connection.options.type === 'better-sqlite3' ? '' : ' FOR UPDATE';
  }

  /** Copies the post (locked by the caller) into the trash; the caller deletes it from posts. */
  async add(id: number, now: Date): Promise<void> {
    const at = this.time(now);
    await this.txHost.tx.query(
      `INSERT INTO posts_trash (${KEPT}, version, updated_at, deleted_at) ` +
        `SELECT ${KEPT}, version + 1, ?, ? FROM posts WHERE id = ?`,
      [at, at, id],
    );
  }

  /** Copies the trashed post back into posts as a new version, and removes it from the trash. */
  async restore(id: number, now: Date): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO posts (${KEPT}, version, updated_at) SELECT ${KEPT}, version + 1, ? FROM posts_trash WHERE id = ?`,
      [this.time(now), id],
    );
    await this.remove(id);
  }

  /** The trashed post, its row locked until the transaction ends (MySQL; SQLite has one writer). */
  async lockById(id: number): Promise<TrashedPost | undefined> {
    const [row] = await this.txHost.tx.query<Array<Record<string, unknown>>>(
      `${this.rows.selectByPrimaryKey}${this.forUpdate}`,
      [id],
    );
    return row === undefined ? undefined : this.rows.hydrate(row);
  }

  /** False when it was not there (purged by someone else first). */
  async remove(id: number): Promise<boolean> {
    return (await changedRows(this.txHost.tx, 'DELETE FROM posts_trash WHERE id = ?', [id])) > 0;
  }

  /** Removes the post if it was deleted before `cutoff`; false when another purge took it first. */
  async removeIfDeletedBefore(id: number, cutoff: Date): Promise<boolean> {
    const sql = 'DELETE FROM posts_trash WHERE id = ? AND deleted_at < ?';
    return (await changedRows(this.txHost.tx, sql, [id, this.time(cutoff)])) > 0;
  }

  /** Newest post first (by id), the owner's only unless ownerId is undefined (admin). */
  async findPage(ownerId: string | undefined, before: number | undefined, rows: number): Promise<TrashedPost[]> {
    const where: string[] = [];
    const parameters: unknown[] = [];
    if (ownerId !== undefined) {
      where.push('owner_id = ?');
      parameters.push(ownerId);
    }
    if (before !== undefined) {
      where.push('id < ?');
      parameters.push(before);
    }
    const found = await this.txHost.tx.query<Array<Record<string, unknown>>>(
      `SELECT ${this.rows.selectedColumns} FROM posts_trash` +
        `${where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`} ORDER BY id DESC LIMIT ?`,
      [...parameters, rows],
    );
    return found.map((row) => this.rows.hydrate(row));
  }

  /** Ids of posts trashed before `cutoff`, the oldest first (idx_posts_trash_deleted_at). */
  async findDeletedBefore(cutoff: Date, limit: number): Promise<number[]> {
    const rows = await this.txHost.tx.query<Array<{ id: number | string }>>(
      'SELECT id FROM posts_trash WHERE deleted_at < ? ORDER BY deleted_at, id LIMIT ?',
      [this.time(cutoff), limit],
    );
    return rows.map((row) => Number(row.id));
  }

  private time(date: Date): unknown {
    const column = this.trash.metadata.findColumnWithPropertyName('deletedAt')!;
    return this.trash.manager.connection.driver.preparePersistentValue(date, column);
  }
}
