import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the hand-written migrations 1795000300000-add-events and 1795000500000-key-events-by-position
// (see post.entity.ts for why migrations are not generated): the MySQL layout. On SQLite `position`
// is the table's key (the rowid, so no unique index of its own) and `id` a generated copy of it.
@Entity({ name: 'events' })
@Index('uq_events_position', ['position'], { unique: true })
@Index('idx_events_type_position', ['type', 'position'])
export class EventRecord {
  /**
   * The insert order: per post, the order of its writes (each waits for the previous one's commit).
   * On SQLite the same as `position`.
   */
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  /**
   * The feed order and the public id. MySQL: null until the sequencer numbers the committed event.
   * SQLite: taken by the INSERT (the rowid).
   */
  @Column({ type: 'bigint', unsigned: true, nullable: true })
  position: number | null;

  @Column({ type: 'varchar', length: 40 })
  type: string;

  @Column({ name: 'post_id', type: 'bigint', unsigned: true })
  postId: number;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt: Date;

  /** The event's `data` as JSON text, written once. */
  @Column({ type: 'text' })
  data: string;
}
