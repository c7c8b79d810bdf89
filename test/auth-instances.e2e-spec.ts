// @module-tag instance
// (starts instances of its own, on its own database, with their own environment)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRepositoryToken } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateApiKeyToken, digestToken } from '../src/auth/api-keys/api-key-token.js';
import { ApiKey } from '../src/auth/api-keys/api-key.entity.js';
import { KEY_CACHE_TTL_MS } from '../src/auth/api-keys/api-keys.service.js';
import { Scope } from '../src/auth/principal.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp, type TestAppOptions } from './helpers/test-app.js';

describe('API keys across instances and restarts', () => {
  const started: TestApp[] = [];
  const directories: string[] = [];

  // SQLite instances can only share a file database; MySQL ones share the first app's database.
  const firstInstance = async (options: TestAppOptions = {}): Promise<TestApp> => {
    const directory = mkdtempSync(join(tmpdir(), 'posts-auth-'));
    directories.push(directory);
    const app = await startTestApp({ ...options, sqlitePath: join(directory, 'posts.sqlite') });
    started.push(app);
    return app;
  };
  const anotherInstance = async (of: TestApp, options: TestAppOptions = {}): Promise<TestApp> => {
    const app = await startTestApp({ ...options, databaseUrl: of.databaseUrl });
    started.push(app);
    return app;
  };

  afterEach(async () => {
    vi.restoreAllMocks();
    // Close the later instances first: the first one owns (and drops) the MySQL database.
    for (const app of started.splice(0).reverse()) await app.close();
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  it('serves a hot key from the cache, and a revocation on one instance reaches the other within 5 seconds', async () => {
    const first = await firstInstance();
    const second = await anotherInstance(first);
    const token = await first.createToken([Scope.postsRead]);
    const onSecond = client(() => second.baseUrl).as(token);
    expect((await onSecond.get('/posts')).status).toBe(200);

    // A hot key costs no database round trip on the second instance.
    const apiKeyRepository = second.app.get<Repository<ApiKey>>(getRepositoryToken(ApiKey));
    const lookups = vi.spyOn(apiKeyRepository, 'findOneBy');
    for (let request = 0; request < 20; request++) expect((await onSecond.get('/posts')).status).toBe(200);
    expect(lookups).not.toHaveBeenCalled();

    const keyId = (await first.dataSource.getRepository(ApiKey).findOneByOrFail({ tokenDigest: digestToken(token) }))
      .id;
    const revokedAt = Date.now();
    expect(
      (
        await client(
          () => first.baseUrl,
          () => first.adminToken,
        ).delete(`/api-keys/${keyId}`)
      ).status,
    ).toBe(204);

    let status = 200;
    while (status === 200 && Date.now() - revokedAt < KEY_CACHE_TTL_MS + 2_000) {
      status = (await onSecond.get('/posts')).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const elapsed = Date.now() - revokedAt;
    expect(status).toBe(401);
    expect(elapsed).toBeLessThanOrEqual(KEY_CACHE_TTL_MS + 200);
  });

  it('creates the BOOTSTRAP_API_KEY admin key once, however many instances start with it, and stores it hashed', async () => {
    const bootstrapKey = generateApiKeyToken();
    const first = await firstInstance({ env: { BOOTSTRAP_API_KEY: bootstrapKey } });

    await Promise.all([
      anotherInstance(first, { env: { BOOTSTRAP_API_KEY: bootstrapKey } }),
      anotherInstance(first, { env: { BOOTSTRAP_API_KEY: bootstrapKey } }),
    ]);

    const rows = await first.dataSource.getRepository(ApiKey).findBy({ tokenDigest: digestToken(bootstrapKey) });
    expect(rows).toHaveLength(1);
    expect(rows[0].scopes).toBe('admin');
    const everything = await first.dataSource.query<unknown[]>('SELECT * FROM api_keys');
    expect(JSON.stringify(everything)).not.toContain(bootstrapKey);
    expect(
      (
        await client(
          () => first.baseUrl,
          () => bootstrapKey,
        ).get('/api-keys')
      ).status,
    ).toBe(200);
  });

  it('on a first start with no keys, creates one admin key and prints it once; a restart prints nothing', async () => {
    const printed: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });

    const first = await firstInstance({ env: { BOOTSTRAP_API_KEY: '' } });
    const output = printed.join('');
    const tokens = output.match(/psk_[A-Za-z0-9_-]{49}/g) ?? [];
    expect(new Set(tokens).size).toBe(1);
    expect(output).toContain('shown only this once');
    expect(
      (
        await client(
          () => first.baseUrl,
          () => tokens[0] ?? null,
        ).get('/api-keys')
      ).status,
    ).toBe(200);

    printed.length = 0;
    await anotherInstance(first, { env: { BOOTSTRAP_API_KEY: '' } });
    expect(printed.join('')).not.toMatch(/psk_/);
  });

  it('creates no key at all on a first start when OAuth is configured', async () => {
    const printed: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed.push(String(chunk));
      return true;
    });
    const app = await firstInstance({
      env: {
        BOOTSTRAP_API_KEY: '',
        OAUTH_ISSUER: 'https://issuer.test/',
        OAUTH_AUDIENCE: 'posts-api',
        OAUTH_JWKS_URL: 'http://127.0.0.1:9/jwks',
      },
    });
    expect(printed.join('')).not.toMatch(/psk_/);
    // Only the key the test helper itself creates for its writer client.
    expect(await app.dataSource.getRepository(ApiKey).count()).toBe(1);
  });
});
