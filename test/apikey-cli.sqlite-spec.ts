import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CACHE_TTL_MS } from '../src/auth/api-keys/api-keys.service.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';

// SQLite only (the e2e-sqlite project, whose global setup builds dist/ once). The program is the one
// `npm run apikey` runs, called directly so that no test rebuilds dist/ while another uses it; CI
// runs the npm command itself, against MariaDB.
const run = promisify(execFile);

async function apikey(
  databaseUrl: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/src/bin/apikey.js', ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      timeout: 60_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failure = error as { stdout: string; stderr: string; code: number };
    return { stdout: failure.stdout, stderr: failure.stderr, code: failure.code };
  }
}

describe('npm run apikey', { timeout: 90_000 }, () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-cli-'));
  let testApp: TestApp;

  beforeAll(async () => {
    testApp = await startTestApp({ sqlitePath: join(directory, 'posts.sqlite') });
  });
  afterAll(async () => {
    await testApp?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('creates a key with events:read that reads the feed and nothing else', async () => {
    const created = await apikey(
      testApp.databaseUrl,
      'create',
      '--name',
      'indexer',
      '--scopes',
      'events:read',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as { scopes: string[]; token: string };
    expect(key.scopes).toEqual(['events:read']);
    const api = client(() => testApp.baseUrl).as(key.token);
    expect((await api.get('/events')).status).toBe(200);
    expect((await api.get('/posts')).status).toBe(403);
  });

  it('creates, lists and revokes keys that the running service honours', async () => {
    const created = await apikey(
      testApp.databaseUrl,
      'create',
      '--name',
      'deploy bot',
      '--scopes',
      'posts:read,posts:write',
      '--expires-in',
      '30d',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout) as {
      id: number;
      name: string;
      scopes: string[];
      token: string;
      expiresAt: string;
    };
    expect(key).toMatchObject({ name: 'deploy bot', scopes: ['posts:read', 'posts:write'] });
    expect(key.token).toMatch(/^psk_/);
    expect(Date.parse(key.expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const api = client(() => testApp.baseUrl).as(key.token);
    expect((await api.post('/posts', { title: 't', content: 'c', author: 'a' })).status).toBe(201);

    const listed = await apikey(testApp.databaseUrl, 'list', '--json');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.token);
    expect(JSON.parse(listed.stdout)).toContainEqual(
      expect.objectContaining({ id: key.id, name: 'deploy bot', revokedAt: null }),
    );

    const revoked = await apikey(testApp.databaseUrl, 'revoke', String(key.id));
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked API key ${key.id}`);
    const revokedAt = Date.now();
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt < KEY_CACHE_TTL_MS + 2_000) {
      status = (await api.get('/posts')).status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(KEY_CACHE_TTL_MS + 200);

    const again = await apikey(testApp.databaseUrl, 'revoke', String(key.id));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('does not exist or is revoked already');
  });

  it.each([
    [['create', '--scopes', 'admin'], '--name'],
    [['create', '--name', 'x', '--scopes', 'posts:delete'], 'unknown scope posts:delete'],
    [['create', '--name', 'x', '--scopes', 'admin', '--expires-in', 'forever'], '--expires-in'],
    [['revoke', 'abc'], 'revoke needs one key id'],
    [['frobnicate'], 'unknown command'],
  ])('refuses %j with usage help and exit code 2', async (args, message) => {
    const result = await apikey(testApp.databaseUrl, ...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Usage: npm run --silent apikey');
    expect(result.stdout).toBe('');
  });
});
