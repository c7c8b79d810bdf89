import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the hand-written migration (see post.entity.ts for why migrations are not generated).
@Entity({ name: 'idempotency_keys' })
@Index('uq_idempotency_keys_principal_key', ['principalId', 'idempotencyKey'], { unique: true })
export class IdempotencyRecord {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  /** Keys are scoped to the principal that sent them: two clients may use the same key. */
  @Column({ name: 'principal_id', type: 'varchar', length: 300 })
  principalId: string;

  @Column({ name: 'idempotency_key', type: 'varchar', length: 255 })
  idempotencyKey: string;

  /** SHA-256 of the request (method, path, body) the key was first used with. CHAR(64) in the table. */
  @Column({ name: 'request_digest', type: 'varchar', length: 64 })
  requestDigest: string;

  /** null while the first request is still running. */
  @Column({ name: 'response_status', type: 'int', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** JSON object of the response headers to replay (Location, ETag). */
  @Column({ name: 'response_headers', type: 'text', nullable: true })
  responseHeaders: string | null;

  @Column({ name: 'locked_at', type: 'datetime', precision: 3 })
  lockedAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;
}
