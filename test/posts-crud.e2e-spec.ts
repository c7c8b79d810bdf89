import { describe, expect, it } from 'vitest';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const ISO_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('posts CRUD', () => {
  const context = useTestApp();
  const { api } = context;

  const createPost = async (overrides = {}) => {
    const response = await api.post<PostResource>('/posts', buildPost(overrides));
    expect(response.status).toBe(201);
    return response.body;
  };

  describe('POST /posts', () => {
    it('creates a post and answers 201 with the post, a Location and a JSON body', async () => {
      const input = buildPost();
      const countBefore = await context.countPosts();

      const response = await api.post<PostResource>('/posts', input);

      expect(response.status).toBe(201);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.headers.get('location')).toBe(`/posts/${response.body.id}`);
      expect(Object.keys(response.body).sort()).toEqual([
        'author',
        'content',
        'createdAt',
        'id',
        'publishedAt',
        'status',
        'title',
        'updatedAt',
      ]);
      expect(response.body).toMatchObject(input);
      expect(typeof response.body.id).toBe('number');
      expect(Number.isSafeInteger(response.body.id) && response.body.id > 0).toBe(true);
      expect(response.body.createdAt).toMatch(ISO_MILLISECONDS);
      expect(response.body.updatedAt).toBe(response.body.createdAt);
      // A client of the original interface, which sends no status, gets a post published at once.
      expect(response.body.status).toBe('published');
      expect(response.body.publishedAt).toBe(response.body.createdAt);
      expect(await context.countPosts()).toBe(countBefore + 1);
      const row = await context.findPostRow(response.body.id);
      expect(row).toMatchObject(input);
    });

    it('gives every new post a new, increasing id', async () => {
      const first = await createPost();
      const second = await createPost();
      expect(second.id).toBeGreaterThan(first.id);
    });

    it('never reuses the id of a deleted post', async () => {
      const deleted = await createPost();
      expect((await api.delete(`/posts/${deleted.id}`)).status).toBe(204);
      const next = await createPost();
      expect(next.id).toBeGreaterThan(deleted.id);
    });
  });

  describe('GET /posts/:id', () => {
    it('returns the post exactly as it was created', async () => {
      const created = await createPost();

      const response = await api.get<PostResource>(`/posts/${created.id}`);

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual(created);
    });

    it('returns 404 problem when the post does not exist', async () => {
      const response = await api.get('/posts/987654321');
      const problem = expectProblem(response, 404, 'not-found');
      expect(problem.detail).toContain('987654321');
      expect(problem.instance).toBe('/posts/987654321');
    });

    it('answers HEAD like GET without a body', async () => {
      const created = await createPost();
      const response = await api.send('HEAD', `/posts/${created.id}`);
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    });
  });

  describe('strings round-trip exactly', () => {
    const samples: Record<string, string> = {
      emoji: 'Hello 👋🏽 family 👨‍👩‍👧‍👦 flag 🇳🇿',
      cjk: '你好，世界 こんにちは 안녕하세요',
      rtl: 'مرحبا بالعالم שלום עולם',
      combining: 'e\u0301 vs \u00e9 (not normalised)',
      'leading and trailing spaces': '  spaced out  ',
      'astral plane': '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈',
    };

    for (const [name, text] of Object.entries(samples)) {
      it(`stores and returns ${name} byte-identical in every field`, async () => {
        const created = await createPost({ title: text, author: text, content: `${text}\n\tline two\r\n` });

        const read = await api.get<PostResource>(`/posts/${created.id}`);

        expect(read.body.title).toBe(text);
        expect(read.body.author).toBe(text);
        expect(read.body.content).toBe(`${text}\n\tline two\r\n`);
        expect(Buffer.from(read.text)).toEqual(Buffer.from(JSON.stringify(created)));
      });
    }

    it('stores 100,000 characters of four-byte content and returns them unchanged', async () => {
      const content = '😀'.repeat(100_000);
      const created = await createPost({ content });

      const read = await api.get<PostResource>(`/posts/${created.id}`);

      expect(read.status).toBe(200);
      expect(read.body.content).toBe(content);
      expect(read.body.content.length).toBe(200_000);
    });

    it('accepts a 200-character title and a 100-character author made of surrogate pairs', async () => {
      const created = await createPost({ title: '𝒜'.repeat(200), author: '🙂'.repeat(100) });
      const read = await api.get<PostResource>(`/posts/${created.id}`);
      expect(read.body.title).toBe('𝒜'.repeat(200));
      expect(read.body.author).toBe('🙂'.repeat(100));
    });
  });

  describe('PUT /posts/:id', () => {
    it('replaces title, content and author, keeps createdAt and moves updatedAt', async () => {
      const created = await createPost();
      await new Promise((resolve) => setTimeout(resolve, 5));
      const replacement = buildPost({ author: 'Grace Hopper' });

      const response = await api.put<PostResource>(`/posts/${created.id}`, replacement);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ ...replacement, id: created.id, createdAt: created.createdAt });
      expect(Date.parse(response.body.updatedAt)).toBeGreaterThan(Date.parse(created.updatedAt));
      expect((await api.get(`/posts/${created.id}`)).body).toEqual(response.body);
    });

    it('returns 404 problem and creates nothing when the post does not exist', async () => {
      const countBefore = await context.countPosts();
      const response = await api.put('/posts/987654321', buildPost());
      expectProblem(response, 404, 'not-found');
      expect(await context.countPosts()).toBe(countBefore);
    });

    it('is a full replacement: a missing field is 400 and the post is untouched', async () => {
      const created = await createPost();
      const response = await api.put(`/posts/${created.id}`, { title: 'Only a title' });
      const problem = expectProblem(response, 400, 'validation-failed');
      expect(problem.errors?.map((error) => error.pointer).sort()).toEqual(['/author', '/content']);
      expect((await api.get(`/posts/${created.id}`)).body).toEqual(created);
    });
  });

  describe('PATCH /posts/:id', () => {
    it('changes only the fields in the merge patch', async () => {
      const created = await createPost();

      const response = await api.patch<PostResource>(`/posts/${created.id}`, { title: 'New title' });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: created.id,
        title: 'New title',
        content: created.content,
        author: created.author,
        createdAt: created.createdAt,
      });
      expect(await context.findPostRow(created.id)).toMatchObject({ title: 'New title', content: created.content });
    });

    it('accepts application/merge-patch+json', async () => {
      const created = await createPost();
      const response = await api.patch<PostResource>(
        `/posts/${created.id}`,
        JSON.stringify({ author: 'Katherine Johnson', content: 'Orbits' }),
        { 'content-type': 'application/merge-patch+json' },
      );
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ author: 'Katherine Johnson', content: 'Orbits', title: created.title });
    });

    it('refuses null (removing a required field) with 400 and leaves the post untouched', async () => {
      const created = await createPost();
      const response = await api.patch(`/posts/${created.id}`, { title: null });
      const problem = expectProblem(response, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ pointer: '/title', detail: 'title must be a string, not null' }]);
      expect((await api.get(`/posts/${created.id}`)).body).toEqual(created);
    });

    it('refuses an empty patch with 400', async () => {
      const created = await createPost();
      const problem = expectProblem(await api.patch(`/posts/${created.id}`, {}), 400, 'validation-failed');
      expect(problem.errors?.[0].detail).toContain('at least one of title, content, author');
    });

    it('returns 404 problem when the post does not exist', async () => {
      expectProblem(await api.patch('/posts/987654321', { title: 'x' }), 404, 'not-found');
    });
  });

  describe('DELETE /posts/:id', () => {
    it('removes the post and answers 204 with an empty body', async () => {
      const created = await createPost();

      const response = await api.delete(`/posts/${created.id}`);

      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expect(await context.findPostRow(created.id)).toBeUndefined();
      expectProblem(await api.get(`/posts/${created.id}`), 404, 'not-found');
    });

    it('answers 404 to a second DELETE of the same post', async () => {
      const created = await createPost();
      expect((await api.delete(`/posts/${created.id}`)).status).toBe(204);
      expectProblem(await api.delete(`/posts/${created.id}`), 404, 'not-found');
    });
  });
});
