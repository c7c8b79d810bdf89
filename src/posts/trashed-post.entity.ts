import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import type { PostStatus } from './post.entity.js';

/**
 * A post in the trash (contract §10): the posts row moved here whole, with the time of its delete, so
 * no query on posts needs a "not deleted" filter and no index on posts carries trashed rows. Its id
 * stays reserved (posts' ids are never handed out again), so a restore brings it back under the same id.
 */
@Entity({ name: 'posts_trash' })
@Index('idx_posts_trash_owner_id', ['ownerId', 'id'])
@Index('idx_posts_trash_deleted_at', ['deletedAt', 'id'])
export class TrashedPost {
  @PrimaryColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'varchar', length: 100 })
  author: string;

  @Column({ name: 'owner_id', type: 'varchar', length: 300, nullable: true })
  ownerId: string | null;

  /** One more than the post's last version: its delete was a change (the tombstone carries it). */
  @Column({ type: 'int', unsigned: true })
  version: number;

  @Column({ type: 'varchar', length: 9 })
  status: PostStatus;

  @Column({ name: 'published_at', type: 'datetime', precision: 3, nullable: true })
  publishedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'datetime', precision: 3 })
  deletedAt: Date;
}
