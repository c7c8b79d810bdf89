import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the hand-written migration 1795000400000-add-webhooks.
@Entity({ name: 'webhooks' })
export class Webhook {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ type: 'varchar', length: 2048 })
  url: string;

  /** `*` or a comma-separated list of event types. */
  @Column({ name: 'event_types', type: 'varchar', length: 200 })
  eventTypes: string;

  @Column({ type: 'varchar', length: 500 })
  description: string;

  @Column({ type: 'boolean' })
  enabled: boolean;

  /** Why the service disabled it (a 410 from the receiver); null when enabled or disabled by a client. */
  @Column({ name: 'disabled_reason', type: 'varchar', length: 300, nullable: true })
  disabledReason: string | null;

  /** The signing secret, encrypted (webhook-secrets.ts); never in a response after creation, never logged. */
  @Column({ type: 'varchar', length: 300 })
  secret: string;

  /** After a rotation: the old secret, which signs too until previousSecretExpiresAt. */
  @Column({ name: 'previous_secret', type: 'varchar', length: 300, nullable: true })
  previousSecret: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'datetime', precision: 3, nullable: true })
  previousSecretExpiresAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
