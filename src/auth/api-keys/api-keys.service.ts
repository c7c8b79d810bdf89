import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, type Repository } from 'typeorm';
import { ProblemException } from '../../http/problem/problem.exception.js';
import { ProblemTypes } from '../../http/problem/problem-types.js';
import { effectiveScopes, type Principal, type ScopeName } from '../principal.js';
import {
  digestToken,
  generateApiKeyToken,
  isGeneratedKeyShape,
  isWellFormedGeneratedKey,
  tokenHint,
} from './api-key-token.js';
import { ApiKey } from './api-key.entity.js';
import { expiryOf } from './api-key-expiry.js';

// A key found in the database is trusted for this long without asking again: a hot key costs no
// round trip, and a revocation made anywhere (another instance, the CLI) takes effect within it.
export const KEY_CACHE_TTL_MS = 5_000;
const KEY_CACHE_MAX_ENTRIES = 10_000;
// last_used_at is a hint for operators; writing it on every request would turn reads into writes.
const LAST_USED_RESOLUTION_MS = 60_000;

interface CachedKey {
  key: ApiKey;
  /** What the key stands for, built once per load rather than once per request. */
  principal: Principal;
  loadedAt: number;
}

export interface NewApiKey {
  name: string;
  scopes: ScopeName[];
  expiresAt?: Date | null;
  /** A caller-chosen token (BOOTSTRAP_API_KEY); a random one is generated otherwise. */
  token?: string;
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache = new Map<string, CachedKey>();
  private readonly loading = new Map<string, Promise<ApiKey | null>>();

  constructor(@InjectRepository(ApiKey) private readonly apiKeyRepository: Repository<ApiKey>) {}

  /** The principal a token stands for, or null when it is unknown, revoked or expired. */
  async authenticate(token: string, now = Date.now()): Promise<Principal | null> {
    const digest = digestToken(token);
    let entry = this.cache.get(digest);
    if (entry === undefined || now - entry.loadedAt >= KEY_CACHE_TTL_MS) {
      // Typos and guesses are refused without a lookup (a cached digest passed this check already).
      if (isGeneratedKeyShape(token) && !isWellFormedGeneratedKey(token)) return null;
      entry = await this.load(digest);
    }
    if (entry === undefined) return null;
    const { key } = entry;
    const expiry = expiryOf(key);
    if (key.revokedAt !== null || (expiry !== null && expiry.getTime() <= now)) return null;
    this.recordUse(key, now);
    return entry.principal;
  }

  /** A new key; its token is returned this once. An expiry must lie in the future (400). */
  async create(input: NewApiKey): Promise<{ apiKey: ApiKey; token: string }> {
    if (input.expiresAt != null && input.expiresAt.getTime() <= Date.now()) {
      throw new ProblemException(ProblemTypes.validationFailed, 'Invalid: /expiresAt.', {
        errors: [{ pointer: '/expiresAt', detail: 'expiresAt must be in the future' }],
      });
    }
    const token = input.token ?? generateApiKeyToken();
    const apiKey = this.apiKeyRepository.create({
      name: input.name,
      tokenDigest: digestToken(token),
      tokenHint: tokenHint(token),
      scopes: [...new Set(input.scopes)].join(' '),
      expiresAt: input.expiresAt ?? null,
      createdAt: new Date(),
      lastUsedAt: null,
      revokedAt: null,
    });
    const result = await this.apiKeyRepository.insert(apiKey);
    apiKey.id = Number(result.identifiers[0].id);
    return { apiKey, token };
  }

  list(): Promise<ApiKey[]> {
    return this.apiKeyRepository.find({ order: { id: 'ASC' } });
  }

  /** The key with this id, revoked or not; 404 when there is none. */
  async get(id: number): Promise<ApiKey> {
    const apiKey = await this.apiKeyRepository.findOneBy({ id });
    if (!apiKey) throw apiKeyNotFound(id);
    return apiKey;
  }

  findByToken(token: string): Promise<ApiKey | null> {
    return this.apiKeyRepository.findOneBy({ tokenDigest: digestToken(token) });
  }

  count(): Promise<number> {
    return this.apiKeyRepository.count();
  }

  /** Revokes an active key; 404 when there is no such key or it is revoked already. */
  async revoke(id: number): Promise<void> {
    const result = await this.apiKeyRepository.update({ id, revokedAt: IsNull() }, { revokedAt: new Date() });
    // This instance stops honouring the key at once; the others within KEY_CACHE_TTL_MS.
    for (const [digest, entry] of this.cache) if (entry.key.id === id) this.cache.delete(digest);
    if (!result.affected) throw apiKeyNotFound(id);
  }

  private async load(digest: string): Promise<CachedKey | undefined> {
    // Concurrent requests with the same token share one query.
    let pending = this.loading.get(digest);
    if (!pending) {
      pending = this.apiKeyRepository.findOneBy({ tokenDigest: digest }).finally(() => this.loading.delete(digest));
      this.loading.set(digest, pending);
    }
    const key = await pending;
    this.cache.delete(digest);
    if (!key) return undefined;
    const entry: CachedKey = {
      key,
      principal: { id: `api-key:${key.id}`, kind: 'api-key', scopes: effectiveScopes(key.scopes.split(' ')) },
      loadedAt: Date.now(),
    };
    this.cache.set(digest, entry);
    // Map keeps insertion order: the first entry is the least recently loaded.
    if (this.cache.size > KEY_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    return entry;
  }

  private recordUse(key: ApiKey, now: number): void {
    if (key.lastUsedAt !== null && now - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    key.lastUsedAt = new Date(now);
    this.apiKeyRepository.update({ id: key.id }, { lastUsedAt: key.lastUsedAt }).catch((error: Error) => {
      this.logger.warn({ message: 'could not record the last use of an API key', keyId: key.id, error: error.message });
    });
  }
}

function apiKeyNotFound(id: number): ProblemException {
  return new ProblemException(ProblemTypes.notFound, `API key ${id} does not exist or is revoked already.`);
}
