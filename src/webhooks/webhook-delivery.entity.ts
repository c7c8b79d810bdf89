import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type DeliveryState = 'pending' | 'succeeded' | 'failed';

// Mirrors the hand-written migration 1795000400000-add-webhooks.
/** One event for one webhook: delivered at least once, retried on the schedule until its last attempt. */
@Entity({ name: 'webhook_deliveries' })
@Index('uq_webhook_deliveries_webhook_event', ['webhookId', 'eventId'], { unique: true })
@Index('idx_webhook_deliveries_state_next', ['state', 'nextAttemptAt'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ name: 'webhook_id', type: 'bigint', unsigned: true })
  webhookId: number;

  /** The event's id in the feed (its position): the `webhook-id` of every attempt. */
  @Column({ name: 'event_id', type: 'bigint', unsigned: true })
  eventId: number;

  @Column({ type: 'varchar', length: 16 })
  state: DeliveryState;

  @Column({ type: 'int', unsigned: true })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'datetime', precision: 3 })
  nextAttemptAt: Date;

  /** Claimed by an instance until then; an instance that dies releases it when the lease ends. */
  @Column({ name: 'lease_until', type: 'datetime', precision: 3, nullable: true })
  leaseUntil: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
