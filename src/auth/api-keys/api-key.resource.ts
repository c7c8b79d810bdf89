import type { ApiKey } from './api-key.entity.js';

/** An API key as listed: never the token or its digest, only a hint to tell keys apart. */
export interface ApiKeyResource {
  id: number;
  name: string;
  scopes: string[];
  tokenHint: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export function toApiKeyResource(apiKey: ApiKey): ApiKeyResource {
  return {
    id: apiKey.id,
    name: apiKey.name,
    scopes: apiKey.scopes.split(' '),
    tokenHint: apiKey.tokenHint,
    createdAt: apiKey.createdAt.toISOString(),
    expiresAt: apiKey.expiresAt?.toISOString() ?? null,
    lastUsedAt: apiKey.lastUsedAt?.toISOString() ?? null,
    revokedAt: apiKey.revokedAt?.toISOString() ?? null,
  };
}
