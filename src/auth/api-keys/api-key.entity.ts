import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

// Mirrors the hand-written migration (see post.entity.ts for why migrations are not generated).
@Entity({ name: 'api_keys' })
export class ApiKey {
  @PrimaryGeneratedColumn({ type: 'bigint', unsigned: true })
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** SHA-256 of the token, hex; the token itself is never stored. CHAR(64) in the table (TypeORM's SQLite driver has no char type). */
  @Index('uq_api_keys_token_digest', { unique: true })
  @Column({ name: 'token_digest', type: 'varchar', length: 64 })
  tokenDigest: string;

  @Column({ name: 'token_hint', type: 'varchar', length: 16 })
  tokenHint: string;

  /** Space-separated, as in OAuth 2.0. */
  @Column({ type: 'varchar', length: 200 })
  scopes: string;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3, nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', precision: 3, nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt: Date | null;
}
