import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { expectProblem } from './helpers/use-test-app.js';

describe('when another process holds the SQLite write lock', () => {
  const directory = mkdtempSync(join(tmpdir(), 'posts-busy-'));
  const path = join(directory, 'posts.sqlite');
  let testApp: TestApp;
  const api = client(
    () => testApp.baseUrl,
    () => testApp.writerToken,
  );

  beforeAll(async () => {
    testApp = await startTestApp({ sqlitePath: path });
  });

  afterAll(async () => {
    await testApp?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('answers writes with 503 and Retry-After once the busy timeout passes, keeps serving reads, and recovers', async () => {
    const existing = await api.post<{ id: number }>('/posts', buildPost());
    const other = new Database(path);
    other.prepare('BEGIN IMMEDIATE').run();

    try {
      const write = await api.post('/posts', buildPost({ title: 'blocked' }));
      expectProblem(write, 503, 'service-unavailable');
      expect(write.headers.get('retry-after')).toMatch(/^\d+$/);
      // WAL mode: readers are not blocked by the other connection's write lock.
      expect((await api.get(`/posts/${existing.body.id}`)).status).toBe(200);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }

    expect((await api.post('/posts', buildPost())).status).toBe(201);
    const titles = (await api.get<Array<{ title: string }>>('/posts')).body.map((post) => post.title);
    expect(titles).not.toContain('blocked');
  });
});
