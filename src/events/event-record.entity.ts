import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the hand-written migration 1795000300000-add-events (see post.entity.ts for why migrations
// are not generated).
@Entity({ name: 'events' })
@Index('uq_events_position', ['position'], { unique: true })
@Index('idx_events_type_position', ['type', 'position'])
@Index('idx_events_occurred_at', ['occurredAt'])
export class EventRecord {
  /** The insert order: per post, the order of its writes (each waits for the previous one's commit). */
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  /** The feed order and the public id; null until the sequencer numbers the committed event. */
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
