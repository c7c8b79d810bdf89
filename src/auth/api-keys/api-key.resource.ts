import { ApiProperty } from '@nestjs/swagger';
import type { ApiKey } from './api-key.entity.js';
import { expiryOf } from './api-key-expiry.js';

/** An API key as listed: never the token or its digest, only a hint to tell keys apart. */
export class ApiKeyResource {
  @ApiProperty({ example: 3 })
  id: number;

  @ApiProperty({ example: 'ci pipeline' })
  name: string;

  @ApiProperty({ type: [String], example: ['posts:read'] })
  scopes: string[];

  @ApiProperty({ description: 'The first characters of the token', example: 'psk_3q7Z' })
  tokenHint: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  lastUsedAt: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  revokedAt: string | null;
}

export class CreatedApiKeyResource extends ApiKeyResource {
  @ApiProperty({ description: 'The key itself: shown in this response only', example: 'psk_…' })
  token: string;
}

export function toApiKeyResource(apiKey: ApiKey): ApiKeyResource {
  return {
    id: apiKey.id,
    name: apiKey.name,
    scopes: apiKey.scopes.split(' '),
    tokenHint: apiKey.tokenHint,
    createdAt: apiKey.createdAt.toISOString(),
    expiresAt: expiryOf(apiKey)?.toISOString() ?? null,
    lastUsedAt: apiKey.lastUsedAt?.toISOString() ?? null,
    revokedAt: apiKey.revokedAt?.toISOString() ?? null,
  };
}
