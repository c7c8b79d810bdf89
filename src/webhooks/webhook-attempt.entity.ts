import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the hand-written migration 1795000400000-add-webhooks.
/** One POST to a receiver, for the delivery log (GET /webhooks/{id}/deliveries). */
@Entity({ name: 'webhook_attempts' })
@Index('idx_webhook_attempts_webhook_id', ['webhookId', 'id'])
export class WebhookAttempt {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ name: 'delivery_id', type: 'bigint', unsigned: true })
  deliveryId: number;

  @Column({ name: 'webhook_id', type: 'bigint', unsigned: true })
  webhookId: number;

  @Column({ name: 'event_id', type: 'bigint', unsigned: true })
  eventId: number;

  @Column({ type: 'int', unsigned: true })
  attempt: number;

  @Column({ name: 'started_at', type: 'datetime', precision: 3 })
  startedAt: Date;

  @Column({ name: 'status_code', type: 'int', nullable: true })
  statusCode: number | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error: string | null;

  @Column({ name: 'duration_ms', type: 'int', unsigned: true })
  durationMs: number;

  @Column({ name: 'next_retry_at', type: 'datetime', precision: 3, nullable: true })
  nextRetryAt: Date | null;
}
