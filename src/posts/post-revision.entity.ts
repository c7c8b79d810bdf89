import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { PostStatus } from './post.entity.js';

/** A state of a post that a replace, patch or restore replaced (contract §10), kept in that write's transaction. */
@Entity({ name: 'post_revisions' })
@Index('uq_post_revisions_post_version', ['postId', 'version'], { unique: true })
export class PostRevision {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ name: 'post_id', type: 'bigint', unsigned: true })
  postId: number;

  /** The version the post had in this state. */
  @Column({ type: 'int', unsigned: true })
  version: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'varchar', length: 100 })
  author: string;

  @Column({ type: 'varchar', length: 9 })
  status: PostStatus;

  @Column({ name: 'published_at', type: 'datetime', precision: 3, nullable: true })
  publishedAt: Date | null;

  /** When the write that replaced this state happened. */
  @Column({ name: 'revised_at', type: 'datetime', precision: 3 })
  revisedAt: Date;
}
