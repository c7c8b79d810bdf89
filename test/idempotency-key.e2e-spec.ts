// @module-tag database
// (checks the idempotency_keys rows behind each answer, and ages keys in the table)
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ApiKeyResource } from '../src/auth/api-keys/api-key.resource.js';
import { Scope } from '../src/auth/principal.js';
import { IdempotencyService } from '../src/idempotency/idempotency.service.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import type { HttpResult } from './helpers/http.js';
import { rawRequest } from './helpers/raw-http.js';
import { dialect } from './helpers/test-database.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

interface KeyRow {
  id: number | string;
  principal_id: string;
  idempotency_key: string;
  request_digest: string;
  response_status: number | string | null;
  response_body: string | null;
}

/**
 * A DATETIME(3) value in UTC as TypeORM writes it for both databases ('YYYY-MM-DD HH:MM:SS.mmm'):
 * raw queries do not convert a Date (better-sqlite3 refuses to bind one).
 */
const sqlDateTime = (date: Date): string => date.toISOString().replace('T', ' ').replace('Z', '');

/** Sends bytes that neither fetch nor node:http would send (control characters in a header). */
function rawSocketRequest(url: string, head: string[], body: string): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  const bytes = Buffer.concat([
    Buffer.from(
      [
        `POST ${target.pathname} HTTP/1.1`,
        `Host: ${target.host}`,
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        ...head,
        '',
        '',
      ].join('\r\n'),
      'latin1',
    ),
    Buffer.from(body, 'utf8'),
  ]);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(target.port), target.hostname, () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text });
    });
    socket.on('error', reject);
  });
}

describe('Idempotency-Key on POST /posts', () => {
  const context = useTestApp();
  const { api } = context;

  const withKey = (key: string) => ({ 'Idempotency-Key': key });

  const countKeyRows = async (): Promise<number> => {
    const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(
      'SELECT COUNT(*) AS n FROM idempotency_keys',
    );
    return Number(row.n);
  };

  const keyRows = (key: string): Promise<KeyRow[]> =>
    context.app.dataSource.query<KeyRow[]>(
      'SELECT id, principal_id, idempotency_key, request_digest, response_status, response_body' +
        ' FROM idempotency_keys WHERE idempotency_key = ? ORDER BY id',
      [key],
    );

  let writerPrincipal: string | undefined;
  /** `api-key:<id>` of the writer key, looked up through the admin API. */
  const writerPrincipalId = async (): Promise<string> => {
    if (writerPrincipal === undefined) {
      const response = await api.as(context.app.adminToken).get<ApiKeyResource[]>('/api-keys');
      expect(response.status).toBe(200);
      const writer = response.body.find((apiKey) => apiKey.name === 'writer');
      expect(writer).toBeDefined();
      writerPrincipal = `api-key:${writer?.id}`;
    }
    return writerPrincipal;
  };

  const expectCreated = (response: HttpResult<PostResource>) => {
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('location')).toBe(`/posts/${response.body.id}`);
    expect(response.headers.get('etag')).toBe(`"${response.body.id}.1"`);
  };

  const expectReplayOf = (replay: HttpResult<PostResource>, first: HttpResult<PostResource>) => {
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(Buffer.from(replay.text)).toEqual(Buffer.from(first.text));
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(replay.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(replay.headers.get('content-type')).toBe('application/json; charset=utf-8');
  };

  describe('a repeated request', () => {
    it('creates the post once and replays the first response byte for byte, marked Idempotent-Replayed', async () => {
      const key = randomUUID();
      const input = buildPost();
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const first = await api.post<PostResource>('/posts', input, withKey(key));

      expectCreated(first);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(first.body).toMatchObject(input);
      const read = await api.get<PostResource>(`/posts/${first.body.id}`);
      expect(read.headers.get('etag')).toBe(first.headers.get('etag'));
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect(await countKeyRows()).toBe(keysBefore + 1);

      const repeat = await api.post<PostResource>('/posts', input, withKey(key));

      expectReplayOf(repeat, first);
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect(await countKeyRows()).toBe(keysBefore + 1);
      const rows = await keyRows(key);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ principal_id: await writerPrincipalId(), idempotency_key: key });
      expect(Number(rows[0].response_status)).toBe(201);
      expect(rows[0].response_body).toBe(first.text);
    });

    it('keeps replaying the same response on every further repeat', async () => {
      const key = randomUUID();
      const input = buildPost();
      const first = await api.post<PostResource>('/posts', input, withKey(key));
      expectCreated(first);
      const postsAfterFirst = await context.countPosts();

      const repeats = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        repeats.push(await api.post<PostResource>('/posts', input, withKey(key)));
      }

      repeats.forEach((repeat) => expectReplayOf(repeat, first));
      expect(await context.countPosts()).toBe(postsAfterFirst);
    });

    it('replays 100,000 characters of emoji, CJK and RTL text byte for byte', async () => {
      const key = randomUUID();
      const input = buildPost({
        title: 'Hello 👋🏽 你好 مرحبا',
        author: '🙂'.repeat(100),
        content: `${'😀'.repeat(49_990)}\n\t안녕하세요\r\n`,
      });
      const first = await api.post<PostResource>('/posts', input, withKey(key));
      expectCreated(first);
      const postsAfterFirst = await context.countPosts();

      const repeat = await api.post<PostResource>('/posts', input, withKey(key));

      expectReplayOf(repeat, first);
      expect(repeat.body).toMatchObject(input);
      expect(await context.countPosts()).toBe(postsAfterFirst);
    });

    it('answers 422 idempotency-key-reused to the same key with a different body, and creates nothing', async () => {
      const key = randomUUID();
      const input = buildPost();
      const first = await api.post<PostResource>('/posts', input, withKey(key));
      expectCreated(first);
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const reused = await api.post('/posts', { ...input, title: `${input.title} (edited)` }, withKey(key));

      const problem = expectProblem(reused, 422, 'idempotency-key-reused');
      expect(problem.detail).toContain('different request');
      expect(reused.headers.get('idempotent-replayed')).toBeNull();
      expect(reused.headers.get('location')).toBeNull();
      expect(await context.countPosts()).toBe(postsBefore);
      expect(await countKeyRows()).toBe(keysBefore);
      // The key still belongs to the first request.
      expectReplayOf(await api.post<PostResource>('/posts', input, withKey(key)), first);
    });

    it.each([
      ['only in a different field', (input: Record<string, string>) => ({ ...input, author: `${input.author}!` })],
      [
        'only in trailing whitespace of the content',
        (input: Record<string, string>) => ({ ...input, content: `${input.content} ` }),
      ],
    ])('treats a body that differs %s as another request (422)', async (_label, change) => {
      const key = randomUUID();
      const input = buildPost();
      expectCreated(await api.post<PostResource>('/posts', input, withKey(key)));
      const postsBefore = await context.countPosts();

      const response = await api.post('/posts', change({ ...input }), withKey(key));

      expectProblem(response, 422, 'idempotency-key-reused');
      expect(await context.countPosts()).toBe(postsBefore);
    });

    it('treats a body that differs only in JSON member order or whitespace as the same request (replay)', async () => {
      // The request digest is taken over the parsed fields, not over the bytes of the body.
      const key = randomUUID();
      const input = buildPost();
      const compact = JSON.stringify({ title: input.title, content: input.content, author: input.author });
      const first = await api.post<PostResource>('/posts', compact, {
        ...withKey(key),
        'content-type': 'application/json',
      });
      expectCreated(first);
      const postsAfterFirst = await context.countPosts();
      const reordered = JSON.stringify({ author: input.author, content: input.content, title: input.title }, null, 2);

      const reorderedRepeat = await api.post<PostResource>('/posts', `\n  ${reordered}\n\n`, {
        ...withKey(key),
        'content-type': 'application/json',
      });

      expect(reordered).not.toBe(compact);
      expectReplayOf(reorderedRepeat, first);
      expect(await context.countPosts()).toBe(postsAfterFirst);
    });
  });

  describe('scope', () => {
    it('keeps keys per principal: the same key from another API key creates a separate post', async () => {
      const key = randomUUID();
      const input = buildPost();
      const otherToken = await context.app.createToken([Scope.postsRead, Scope.postsWrite], { name: 'other-writer' });
      const postsBefore = await context.countPosts();
      const first = await api.post<PostResource>('/posts', input, withKey(key));
      expectCreated(first);

      const fromOther = await api.as(otherToken).post<PostResource>('/posts', input, withKey(key));

      expectCreated(fromOther);
      expect(fromOther.headers.get('idempotent-replayed')).toBeNull();
      expect(fromOther.body.id).not.toBe(first.body.id);
      expect(fromOther.headers.get('location')).not.toBe(first.headers.get('location'));
      expect(await context.countPosts()).toBe(postsBefore + 2);
      const rows = await keyRows(key);
      expect(rows).toHaveLength(2);
      expect(new Set(rows.map((row) => row.principal_id)).size).toBe(2);
      expect(rows.map((row) => row.principal_id)).toContain(await writerPrincipalId());
      // Each principal replays its own response.
      expectReplayOf(await api.as(otherToken).post<PostResource>('/posts', input, withKey(key)), fromOther);
      expectReplayOf(await api.post<PostResource>('/posts', input, withKey(key)), first);
      expect(await context.countPosts()).toBe(postsBefore + 2);
    });

    it('does not answer 422 when another principal uses the key with a different body', async () => {
      const key = randomUUID();
      const otherToken = await context.app.createToken([Scope.postsWrite], { name: 'third-writer' });
      expectCreated(await api.post<PostResource>('/posts', buildPost(), withKey(key)));

      const fromOther = await api.as(otherToken).post<PostResource>('/posts', buildPost(), withKey(key));

      expectCreated(fromOther);
      expect(fromOther.headers.get('idempotent-replayed')).toBeNull();
    });
  });

  describe('concurrent repeats', () => {
    it('creates exactly one post from 10 parallel requests with the same key; the others replay or get 409', async () => {
      const key = randomUUID();
      const input = buildPost();
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const responses = await Promise.all(
        Array.from({ length: 10 }, () => api.post<PostResource>('/posts', input, withKey(key))),
      );

      const created = responses.filter((response) => response.status === 201);
      const inUse = responses.filter((response) => response.status !== 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((response) => response.text)).size).toBe(1);
      expect(new Set(created.map((response) => response.headers.get('location'))).size).toBe(1);
      expect(new Set(created.map((response) => response.headers.get('etag'))).size).toBe(1);
      expect(created.filter((response) => response.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      created.forEach((response) => expectCreated(response));
      for (const response of inUse) {
        expectProblem(response, 409, 'idempotency-key-in-use');
        expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      }
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect(await countKeyRows()).toBe(keysBefore + 1);
      // Once the first has finished, a retry replays it.
      const retry = await api.post<PostResource>('/posts', input, withKey(key));
      expectReplayOf(retry, created[0]);
      expect(await context.countPosts()).toBe(postsBefore + 1);
    });
  });

  describe('key format', () => {
    it('accepts the structured-field string form "…" as the same key as the bare token', async () => {
      const key = `abc-${randomUUID()}`;
      const input = buildPost();
      const postsBefore = await context.countPosts();

      const quoted = await api.post<PostResource>('/posts', input, withKey(`"${key}"`));
      const bare = await api.post<PostResource>('/posts', input, withKey(key));

      expectCreated(quoted);
      expect(quoted.headers.get('idempotent-replayed')).toBeNull();
      expectReplayOf(bare, quoted);
      expect(await context.countPosts()).toBe(postsBefore + 1);
      const rows = await keyRows(key);
      expect(rows.map((row) => row.idempotency_key)).toEqual([key]);
    });

    it('decodes the escapes of a structured-field string: "a\\"b\\\\c" is the key a"b\\c', async () => {
      // RFC 8941 §3.3.3: inside the quotes, \" stands for " and \\ for \.
      const suffix = randomUUID();
      const input = buildPost();
      const postsBefore = await context.countPosts();

      const quoted = await api.post<PostResource>('/posts', input, withKey(`"a\\"b\\\\c-${suffix}"`));
      const bare = await api.post<PostResource>('/posts', input, withKey(`a"b\\c-${suffix}`));

      expectCreated(quoted);
      expectReplayOf(bare, quoted);
      expect(await context.countPosts()).toBe(postsBefore + 1);
    });

    it('tells keys apart by case: ABC and abc are two keys', async () => {
      const suffix = randomUUID();
      const input = buildPost();
      const postsBefore = await context.countPosts();

      const upper = await api.post<PostResource>('/posts', input, withKey(`KEY-ABC-${suffix.toUpperCase()}`));
      const lower = await api.post<PostResource>('/posts', input, withKey(`key-abc-${suffix.toLowerCase()}`));

      expectCreated(upper);
      expectCreated(lower);
      expect(lower.headers.get('idempotent-replayed')).toBeNull();
      expect(lower.body.id).not.toBe(upper.body.id);
      expect(await context.countPosts()).toBe(postsBefore + 2);
    });

    it('accepts a key of 255 printable ASCII characters', async () => {
      const key = `k${randomUUID()}`.padEnd(255, '~');
      const postsBefore = await context.countPosts();

      const response = await api.post<PostResource>('/posts', buildPost(), withKey(key));

      expectCreated(response);
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect((await keyRows(key)).map((row) => row.idempotency_key)).toEqual([key]);
    });

    it.each([
      ['empty', ''],
      ['only spaces', '   '],
      ['an empty quoted string', '""'],
      ['256 characters long', 'k'.repeat(256)],
      ['256 characters long inside quotes', `"${'k'.repeat(256)}"`],
      ['split by a space', 'abc 123'],
    ])('answers 400 validation-failed to a key that is %s, and creates nothing', async (_label, key) => {
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const response = await api.post('/posts', buildPost(), withKey(key));

      const problem = expectProblem(response, 400, 'validation-failed');
      expect(problem.errors?.[0].parameter).toBe('Idempotency-Key');
      expect(await context.countPosts()).toBe(postsBefore);
      expect(await countKeyRows()).toBe(keysBefore);
    });

    it.each([
      ['non-ASCII (Latin-1 bytes)', 'caf\u00e9-key'],
      ['non-ASCII (UTF-8 bytes read as Latin-1)', Buffer.from('ключ-123', 'utf8').toString('latin1')],
      ['a tab', 'abc\t123'],
    ])('answers 400 validation-failed to a key containing %s, sent as raw header bytes', async (_label, key) => {
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const response = await rawRequest(`${context.app.baseUrl}/posts`, {
        method: 'POST',
        headers: api.headers({ 'content-type': 'application/json', 'idempotency-key': key }),
        body: JSON.stringify(buildPost()),
      });

      expect(response.status).toBe(400);
      const problem = JSON.parse(response.text) as { type: string; errors?: Array<{ parameter?: string }> };
      expect(problem.type).toBe('urn:problem-type:posts-api:validation-failed');
      expect(problem.errors?.[0].parameter).toBe('Idempotency-Key');
      expect(await context.countPosts()).toBe(postsBefore);
      expect(await countKeyRows()).toBe(keysBefore);
    });

    it.each([
      ['SOH (0x01)', '\x01'],
      ['ESC (0x1b)', '\x1b'],
      ['DEL (0x7f)', '\x7f'],
    ])('refuses a key containing the control character %s with 400 and creates nothing', async (_label, control) => {
      // Node's HTTP parser rejects these bytes before the application sees the request.
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const response = await rawSocketRequest(
        `${context.app.baseUrl}/posts`,
        [`Authorization: Bearer ${context.app.writerToken}`, `Idempotency-Key: abc${control}123`],
        JSON.stringify(buildPost()),
      );

      expect(response.status).toBe(400);
      expect(await context.countPosts()).toBe(postsBefore);
      expect(await countKeyRows()).toBe(keysBefore);
    });

    it('answers 400 validation-failed to two Idempotency-Key header lines, even with the same value', async () => {
      const key = randomUUID();
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const response = await rawSocketRequest(
        `${context.app.baseUrl}/posts`,
        [`Authorization: Bearer ${context.app.writerToken}`, `Idempotency-Key: ${key}`, `Idempotency-Key: ${key}`],
        JSON.stringify(buildPost()),
      );

      expect(response.status).toBe(400);
      const problem = JSON.parse(response.text.slice(response.text.indexOf('\r\n\r\n') + 4)) as {
        type: string;
        errors?: Array<{ parameter?: string }>;
      };
      expect(problem.type).toBe('urn:problem-type:posts-api:validation-failed');
      expect(problem.errors?.[0].parameter).toBe('Idempotency-Key');
      expect(await context.countPosts()).toBe(postsBefore);
      expect(await countKeyRows()).toBe(keysBefore);
    });

    it('creates the post from the same raw socket request with a valid key, so the 400s above are about the key', async () => {
      const key = randomUUID();
      const postsBefore = await context.countPosts();

      const response = await rawSocketRequest(
        `${context.app.baseUrl}/posts`,
        [`Authorization: Bearer ${context.app.writerToken}`, `Idempotency-Key: ${key}`],
        JSON.stringify(buildPost()),
      );

      expect(response.status).toBe(201);
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect(await keyRows(key)).toHaveLength(1);
    });
  });

  describe('failed and keyless requests', () => {
    it('does not burn the key on a 400: the corrected request with the same key creates the post, then replays', async () => {
      const key = randomUUID();
      const input = buildPost();
      const postsBefore = await context.countPosts();

      const invalid = await api.post('/posts', { title: input.title, author: input.author }, withKey(key));

      const problem = expectProblem(invalid, 400, 'validation-failed');
      expect(problem.errors?.map((error) => error.pointer)).toEqual(['/content']);
      expect(await keyRows(key)).toEqual([]);
      expect(await context.countPosts()).toBe(postsBefore);

      const valid = await api.post<PostResource>('/posts', input, withKey(key));

      expectCreated(valid);
      expect(valid.headers.get('idempotent-replayed')).toBeNull();
      expect(await context.countPosts()).toBe(postsBefore + 1);
      const repeat = await api.post<PostResource>('/posts', input, withKey(key));
      expectReplayOf(repeat, valid);
      expect(await context.countPosts()).toBe(postsBefore + 1);
    });

    it('releases the key when the request fails inside its transaction: a retry then creates the post', async () => {
      const key = randomUUID();
      const input = buildPost({ title: `refused-${randomUUID()}` });
      const { dataSource } = context.app;
      // A trigger makes the INSERT of this one post fail, as a database error would.
      await dataSource.query(
        dialect === 'mysql'
          ? `CREATE TRIGGER refuse_marked_post BEFORE INSERT ON posts FOR EACH ROW BEGIN
               IF NEW.title = '${input.title}' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by the test'; END IF;
             END`
          : `CREATE TRIGGER refuse_marked_post BEFORE INSERT ON posts WHEN NEW.title = '${input.title}'
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
      );
      const postsBefore = await context.countPosts();
      let failed: HttpResult;
      try {
        failed = await api.post('/posts', input, withKey(key));
      } finally {
        await dataSource.query('DROP TRIGGER refuse_marked_post');
      }

      expectProblem(failed, 500, 'internal-error');
      expect(await keyRows(key)).toEqual([]);
      expect(await context.countPosts()).toBe(postsBefore);

      const retry = await api.post<PostResource>('/posts', input, withKey(key));

      expectCreated(retry);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect(Number((await keyRows(key))[0].response_status)).toBe(201);
    });

    it('creates a post for every request without an Idempotency-Key, even with the same body', async () => {
      const input = buildPost();
      const postsBefore = await context.countPosts();
      const keysBefore = await countKeyRows();

      const first = await api.post<PostResource>('/posts', input);
      const second = await api.post<PostResource>('/posts', input);

      expectCreated(first);
      expectCreated(second);
      expect(second.body.id).not.toBe(first.body.id);
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(second.headers.get('idempotent-replayed')).toBeNull();
      expect(await context.countPosts()).toBe(postsBefore + 2);
      expect(await countKeyRows()).toBe(keysBefore);
    });
  });

  describe('expiry after 24 hours', () => {
    /** Moves the key's expiry an hour into the past, as if 25 hours had gone by. */
    const expire = async (key: string): Promise<void> => {
      const anHourAgo = sqlDateTime(new Date(Date.now() - HOUR_MS));
      await context.app.dataSource.query('UPDATE idempotency_keys SET expires_at = ? WHERE idempotency_key = ?', [
        anHourAgo,
        key,
      ]);
      const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(
        'SELECT COUNT(*) AS n FROM idempotency_keys WHERE idempotency_key = ? AND expires_at = ?',
        [key, anHourAgo],
      );
      expect(Number(row.n)).toBe(1);
    };

    it('remembers a key for 24 hours', async () => {
      const key = randomUUID();
      const before = Date.now();

      expectCreated(await api.post<PostResource>('/posts', buildPost(), withKey(key)));

      const record = await context.app.dataSource.query<Array<{ expires_at: string | Date }>>(
        'SELECT expires_at FROM idempotency_keys WHERE idempotency_key = ?',
        [key],
      );
      const raw = record[0].expires_at;
      const expiresAt = raw instanceof Date ? raw.getTime() : Date.parse(`${raw.replace(' ', 'T')}Z`);
      expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS - 1_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + DAY_MS + 1_000);
    });

    it('treats an expired key as unused: the same request creates a new post, not a replay', async () => {
      const key = randomUUID();
      const input = buildPost();
      const first = await api.post<PostResource>('/posts', input, withKey(key));
      expectCreated(first);
      await expire(key);
      const postsBefore = await context.countPosts();

      const again = await api.post<PostResource>('/posts', input, withKey(key));

      expectCreated(again);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(again.body.id).not.toBe(first.body.id);
      expect(await context.countPosts()).toBe(postsBefore + 1);
      const rows = await keyRows(key);
      expect(rows).toHaveLength(1);
      expect(rows[0].response_body).toBe(again.text);
      // The new record replays the new post.
      expectReplayOf(await api.post<PostResource>('/posts', input, withKey(key)), again);
    });

    it('lets an expired key be used with a different body (no 422)', async () => {
      const key = randomUUID();
      expectCreated(await api.post<PostResource>('/posts', buildPost(), withKey(key)));
      await expire(key);

      const response = await api.post<PostResource>('/posts', buildPost(), withKey(key));

      expectCreated(response);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    });

    it('deletes expired keys with deleteExpired() and keeps live ones', async () => {
      const expiredKey = randomUUID();
      const liveKey = randomUUID();
      expectCreated(await api.post<PostResource>('/posts', buildPost(), withKey(expiredKey)));
      const liveInput = buildPost();
      const live = await api.post<PostResource>('/posts', liveInput, withKey(liveKey));
      expectCreated(live);
      await expire(expiredKey);
      const keysBefore = await countKeyRows();
      const postsBefore = await context.countPosts();

      const deleted = await context.app.app.get(IdempotencyService).deleteExpired();

      expect(deleted).toBeGreaterThanOrEqual(1);
      expect(await keyRows(expiredKey)).toEqual([]);
      expect(await keyRows(liveKey)).toHaveLength(1);
      expect(await countKeyRows()).toBe(keysBefore - deleted);
      const [remaining] = await context.app.dataSource.query<Array<{ n: number | string }>>(
        'SELECT COUNT(*) AS n FROM idempotency_keys WHERE expires_at <= ?',
        [sqlDateTime(new Date())],
      );
      expect(Number(remaining.n)).toBe(0);
      // Posts are never deleted with their keys, and the live key still replays.
      expect(await context.countPosts()).toBe(postsBefore);
      expectReplayOf(await api.post<PostResource>('/posts', liveInput, withKey(liveKey)), live);
    });
  });

  describe('an in-progress key', () => {
    /** The digest the service stored for this body, taken from a real request under a throwaway key. */
    const digestOf = async (input: object): Promise<string> => {
      const probeKey = randomUUID();
      expectCreated(await api.post<PostResource>('/posts', input, withKey(probeKey)));
      const [row] = await keyRows(probeKey);
      return row.request_digest;
    };

    const insertPending = async (key: string, digest: string, lockedAt: Date): Promise<void> => {
      await context.app.dataSource.query(
        'INSERT INTO idempotency_keys' +
          ' (principal_id, idempotency_key, request_digest, response_status, response_body, response_headers,' +
          ' locked_at, expires_at) VALUES (?, ?, ?, NULL, NULL, NULL, ?, ?)',
        [
          await writerPrincipalId(),
          key,
          digest,
          sqlDateTime(lockedAt),
          sqlDateTime(new Date(lockedAt.getTime() + DAY_MS)),
        ],
      );
    };

    it('is taken over by a retry once abandoned (locked a minute ago): the retry creates the post', async () => {
      const key = randomUUID();
      const input = buildPost();
      await insertPending(key, await digestOf(input), new Date(Date.now() - 60_000));
      const postsBefore = await context.countPosts();

      const retry = await api.post<PostResource>('/posts', input, withKey(key));

      expectCreated(retry);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(retry.body).toMatchObject(input);
      expect(await context.countPosts()).toBe(postsBefore + 1);
      const rows = await keyRows(key);
      expect(rows).toHaveLength(1);
      expect(Number(rows[0].response_status)).toBe(201);
      expect(rows[0].response_body).toBe(retry.text);
      expectReplayOf(await api.post<PostResource>('/posts', input, withKey(key)), retry);
      expect(await context.countPosts()).toBe(postsBefore + 1);
    });

    it('lets exactly one of 5 parallel retries take over an abandoned key', async () => {
      const key = randomUUID();
      const input = buildPost();
      await insertPending(key, await digestOf(input), new Date(Date.now() - 60_000));
      const postsBefore = await context.countPosts();

      const responses = await Promise.all(
        Array.from({ length: 5 }, () => api.post<PostResource>('/posts', input, withKey(key))),
      );

      const created = responses.filter((response) => response.status === 201);
      expect(created.filter((response) => response.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      expect(new Set(created.map((response) => response.text)).size).toBe(1);
      for (const response of responses.filter((candidate) => candidate.status !== 201)) {
        expectProblem(response, 409, 'idempotency-key-in-use');
      }
      expect(await context.countPosts()).toBe(postsBefore + 1);
      expect(await keyRows(key)).toHaveLength(1);
    });

    it('answers 409 idempotency-key-in-use with Retry-After while the first request holds the key', async () => {
      const key = randomUUID();
      const input = buildPost();
      await insertPending(key, await digestOf(input), new Date());
      const postsBefore = await context.countPosts();

      const retry = await api.post('/posts', input, withKey(key));

      expectProblem(retry, 409, 'idempotency-key-in-use');
      expect(retry.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(await context.countPosts()).toBe(postsBefore);
      const rows = await keyRows(key);
      expect(rows).toHaveLength(1);
      expect(rows[0].response_status).toBeNull();
    });

    it('answers 422 rather than taking over an abandoned key sent with a different body', async () => {
      const key = randomUUID();
      await insertPending(key, await digestOf(buildPost()), new Date(Date.now() - 60_000));
      const postsBefore = await context.countPosts();

      const retry = await api.post('/posts', buildPost(), withKey(key));

      expectProblem(retry, 422, 'idempotency-key-reused');
      expect(await context.countPosts()).toBe(postsBefore);
      expect((await keyRows(key))[0].response_status).toBeNull();
    });
  });
});
