import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The stored state of a post (contract §10). A `scheduled` post whose publishedAt has passed *is*
 * published: reads say so at once (PostsRepository), and the publication sweep stores it.
 */
export const PostStatuses = ['draft', 'scheduled', 'published'] as const;
export type PostStatus = (typeof PostStatuses)[number];

// Mirrors the migration (the schema's source of truth, written by hand for both databases; content is
// MEDIUMTEXT on MySQL, which an entity shared with SQLite cannot say, so never use migration:generate).
@Entity({ name: 'posts' })
// The list's keyset indexes (migration 1795000600000): each filter of GET /posts seeks to its status
// and walks ids in order. The owner and due-scheduled indexes are partial on SQLite (only drafts and
// scheduled posts pay for them).
@Index('idx_posts_status_id', ['status', 'id'])
@Index('idx_posts_author_status_id', ['author', 'status', 'id'])
@Index('idx_posts_owner_status_id', ['ownerId', 'status', 'id'])
@Index('idx_posts_scheduled', ['status', 'publishedAt'])
export class Post {
  // A number on both drivers: better-sqlite3 returns integers as numbers, and mysql2 does too for
  // BIGINT with bigNumberStrings off (database.options.ts); ids stay below Number.MAX_SAFE_INTEGER.
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'text' })
  content: string;

  @Column({ type: 'varchar', length: 100 })
  author: string;

  /** The principal that created the post (`api-key:<id>` or `oauth:<sub>`); never part of the representation. */
  @Column({ name: 'owner_id', type: 'varchar', length: 300, nullable: true })
  ownerId: string | null;

  /** Incremented by every write, in the same statement; the strong ETag is built from it. Not exposed. */
  @Column({ type: 'int', unsigned: true, default: 1 })
  version: number;

  @Column({ type: 'varchar', length: 9 })
  status: PostStatus;

  /** When the post is (or was, or will be) published; null for a draft. */
  @Column({ name: 'published_at', type: 'datetime', precision: 3, nullable: true })
  publishedAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
