import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the migration (the schema's source of truth, written by hand for both databases; content is
// MEDIUMTEXT on MySQL, which an entity shared with SQLite cannot say, so never use migration:generate).
@Entity({ name: 'posts' })
@Index('idx_posts_author_id', ['author', 'id'])
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

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
