import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scope } from '../src/auth/principal.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const STRONG_ETAG = /^"\d+\.\d+"$/;

describe('conditional requests', () => {
  const context = useTestApp();
  const { api } = context;

  const createPost = async (): Promise<{ post: PostResource; etag: string }> => {
    const response = await api.post<PostResource>('/posts', buildPost());
    expect(response.status).toBe(201);
    return { post: response.body, etag: response.headers.get('etag')! };
  };

  describe('ETag', () => {
    it('is strong, the same from POST as from a later GET, and changes on every write', async () => {
      const { post, etag } = await createPost();
      expect(etag).toMatch(STRONG_ETAG);
      expect((await api.get(`/posts/${post.id}`)).headers.get('etag')).toBe(etag);

      const replaced = await api.put(`/posts/${post.id}`, buildPost());
      const patched = await api.patch(`/posts/${post.id}`, { title: 'again' });
      const tags = [etag, replaced.headers.get('etag'), patched.headers.get('etag')];

      expect(new Set(tags).size).toBe(3);
      tags.forEach((tag) => expect(tag).toMatch(STRONG_ETAG));
      expect((await api.get(`/posts/${post.id}`)).headers.get('etag')).toBe(tags[2]);
    });

    it('changes even when a write stores identical values', async () => {
      const { post, etag } = await createPost();
      const same = { title: post.title, content: post.content, author: post.author };
      const response = await api.put(`/posts/${post.id}`, same);
      expect(response.headers.get('etag')).not.toBe(etag);
    });
  });

  describe('If-None-Match on GET', () => {
    it.each([
      ['the current ETag', (etag: string) => etag],
      ['its weak form', (etag: string) => `W/${etag}`],
      ['a list containing it', (etag: string) => `"0.0", ${etag}`],
      ['*', () => '*'],
    ])('answers 304 with the ETag and no body for %s', async (_, header) => {
      const { post, etag } = await createPost();

      const response = await api.get(`/posts/${post.id}`, { 'if-none-match': header(etag) });

      expect(response.status).toBe(304);
      expect(response.text).toBe('');
      expect(response.headers.get('etag')).toBe(etag);
    });

    it('answers 200 with the post once it has changed', async () => {
      const { post, etag } = await createPost();
      await api.patch(`/posts/${post.id}`, { title: 'changed' });
      const response = await api.get<PostResource>(`/posts/${post.id}`, { 'if-none-match': etag });
      expect(response.status).toBe(200);
      expect(response.body.title).toBe('changed');
    });

    it('answers 404 for a post that does not exist, whatever the condition', async () => {
      expectProblem(await api.get('/posts/987654321', { 'if-none-match': '*' }), 404, 'not-found');
    });
  });

  describe('If-Match on PUT, PATCH and DELETE', () => {
    it('applies a write whose If-Match names the current ETag, and returns the new ETag', async () => {
      const { post, etag } = await createPost();
      const response = await api.patch<PostResource>(`/posts/${post.id}`, { title: 'mine' }, { 'if-match': etag });
      expect(response.status).toBe(200);
      expect(response.headers.get('etag')).not.toBe(etag);
      expect(response.body.title).toBe('mine');
    });

    it.each([
      ['PUT', (id: number, headers: Record<string, string>) => api.put(`/posts/${id}`, buildPost(), headers)],
      ['PATCH', (id: number, headers: Record<string, string>) => api.patch(`/posts/${id}`, { title: 'x' }, headers)],
      ['DELETE', (id: number, headers: Record<string, string>) => api.delete(`/posts/${id}`, headers)],
    ])('refuses a %s with a stale ETag with 412 and changes nothing', async (_, write) => {
      const { post, etag: stale } = await createPost();
      await api.patch(`/posts/${post.id}`, { content: 'someone else was faster' });
      const rowBefore = await context.findPostRow(post.id);

      const response = await write(post.id, { 'if-match': stale });

      expectProblem(response, 412, 'precondition-failed');
      expect(await context.findPostRow(post.id)).toEqual(rowBefore);
    });

    it.each([
      ['a weak tag (If-Match compares strongly)', (etag: string) => `W/${etag}`, 412],
      ['the ETag of another post', () => '"1.1"', 412],
      ['a list that contains the current ETag', (etag: string) => `"999.9", ${etag}`, 200],
      ['*', () => '*', 200],
    ])('answers If-Match with %s as RFC 9110 says', async (_, header, status) => {
      const { post, etag } = await createPost();
      const response = await api.patch(`/posts/${post.id}`, { title: 'y' }, { 'if-match': header(etag) });
      expect(response.status).toBe(status);
    });

    it.each(['not-quoted', '"unterminated', 'W/"a", b'])('answers 400 to a malformed If-Match %s', async (header) => {
      const { post } = await createPost();
      expectProblem(await api.patch(`/posts/${post.id}`, { title: 'z' }, { 'if-match': header }), 400, 'bad-request');
    });

    it('checks 401, 403 and 404 before the precondition', async () => {
      const { post } = await createPost();
      const stale = '"1.999"';
      const otherWriter = api.as(await context.app.createToken([Scope.postsWrite]));

      expectProblem(
        await api.as(null).patch(`/posts/${post.id}`, { title: 'a' }, { 'if-match': stale }),
        401,
        'unauthorized',
      );
      expectProblem(
        await otherWriter.patch(`/posts/${post.id}`, { title: 'a' }, { 'if-match': stale }),
        403,
        'forbidden',
      );
      expectProblem(await api.patch('/posts/987654321', { title: 'a' }, { 'if-match': stale }), 404, 'not-found');
      expectProblem(await api.delete('/posts/987654321', { 'if-match': '*' }), 404, 'not-found');
    });
  });

  describe('under concurrency', () => {
    it(
      'lets exactly one of 20 concurrent PATCHes with the same ETag win; the other 19 get 412',
      { tags: ['database'] },
      async () => {
        const { post, etag } = await createPost();

        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, writer) =>
            api.patch(`/posts/${post.id}`, { title: `writer ${writer}` }, { 'if-match': etag }),
          ),
        );

        expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
        expect(responses.filter((response) => response.status === 412)).toHaveLength(19);
        const winner = responses.find((response) => response.status === 200)!.body as PostResource;
        expect((await context.findPostRow(post.id))?.title).toBe(winner.title);
        expect((await context.findPostRow(post.id))?.version).toBe(2);
      },
    );

    it(
      'loses no update when 50 clients race to append to one post, retrying on 412',
      { tags: ['database'] },
      async () => {
        const { post } = await createPost();

        const appendMarker = async (client: number): Promise<number> => {
          for (let attempt = 1; attempt <= 200; attempt++) {
            const current = await api.get<PostResource>(`/posts/${post.id}`);
            const response = await api.patch(
              `/posts/${post.id}`,
              { content: `${current.body.content}|${client}` },
              { 'if-match': current.headers.get('etag')! },
            );
            if (response.status === 200) return attempt;
            expect(response.status).toBe(412);
          }
          throw new Error(`client ${client} never got its write in`);
        };
        const attempts = await Promise.all(Array.from({ length: 50 }, (_, client) => appendMarker(client)));

        const final = (await api.get<PostResource>(`/posts/${post.id}`)).body.content;
        for (let client = 0; client < 50; client++) expect(final.split('|')).toContain(String(client));
        expect(final.split('|')).toHaveLength(51);
        expect((await context.findPostRow(post.id))?.version).toBe(51);
        expect(Math.max(...attempts)).toBeGreaterThan(1);
      },
    );
  });
});

describe('with REQUIRE_IF_MATCH=true', { tags: ['instance'] }, () => {
  let testApp: TestApp;
  const api = client(
    () => testApp.baseUrl,
    () => testApp.writerToken,
  );

  beforeAll(async () => {
    testApp = await startTestApp({ env: { REQUIRE_IF_MATCH: 'true' } });
  });
  afterAll(async () => {
    await testApp.close();
  });

  it('refuses PUT, PATCH and DELETE without If-Match with 428, and accepts them with it', async () => {
    const created = await api.post<PostResource>('/posts', buildPost());
    const id = created.body.id;

    expectProblem(await api.put(`/posts/${id}`, buildPost()), 428, 'precondition-required');
    expectProblem(await api.patch(`/posts/${id}`, { title: 'x' }), 428, 'precondition-required');
    expectProblem(await api.delete(`/posts/${id}`), 428, 'precondition-required');
    expect((await api.get<PostResource>(`/posts/${id}`)).body).toEqual(created.body);

    const patched = await api.patch(`/posts/${id}`, { title: 'x' }, { 'if-match': created.headers.get('etag')! });
    expect(patched.status).toBe(200);
    expect((await api.delete(`/posts/${id}`, { 'if-match': '*' })).status).toBe(204);
  });

  it('still answers 404 before 428 for a post that does not exist', async () => {
    expectProblem(await api.patch('/posts/987654321', { title: 'x' }), 404, 'not-found');
  });

  it('does not require a precondition to create', async () => {
    expect((await api.post('/posts', buildPost())).status).toBe(201);
  });
});
