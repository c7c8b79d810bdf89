import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../src/http/body/json-body.guard.js';
import { buildPost } from './factories/post.factory.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

// Each case: a body that breaks one rule of spec §1, the pointer it must be reported at, and a
// phrase the detail must contain so the client can tell what to fix.
const invalidBodies: Array<[string, object, string, string]> = [
  ['a missing title', { content: 'c', author: 'a' }, '/title', 'must be a string'],
  ['a missing content', { title: 't', author: 'a' }, '/content', 'must be a string'],
  ['a missing author', { title: 't', content: 'c' }, '/author', 'must be a string'],
  ['a numeric title', buildPost({ title: 42 as never }), '/title', 'not number'],
  ['a null author', buildPost({ author: null as never }), '/author', 'not null'],
  ['an array content', buildPost({ content: ['a'] as never }), '/content', 'not an array'],
  ['an object title', buildPost({ title: { text: 'x' } as never }), '/title', 'not object'],
  ['a boolean author', buildPost({ author: true as never }), '/author', 'not boolean'],
  ['an empty title', buildPost({ title: '' }), '/title', '1 to 200 characters'],
  ['a 201-character title', buildPost({ title: 'x'.repeat(201) }), '/title', 'it has 201'],
  ['a 201-character title of surrogate pairs', buildPost({ title: '😀'.repeat(201) }), '/title', 'it has 201'],
  ['a title of blanks and a tab', buildPost({ title: ' \t ' }), '/title', 'non-whitespace'],
  ['a title of spaces only', buildPost({ title: '   ' }), '/title', 'non-whitespace'],
  ['a title with a newline', buildPost({ title: 'two\nlines' }), '/title', 'U+000A'],
  ['a title with a tab', buildPost({ title: 'tab\there' }), '/title', 'U+0009'],
  ['a title with DEL', buildPost({ title: 'del\u007f' }), '/title', 'U+007F'],
  ['a title with a C1 control', buildPost({ title: 'nel\u0085' }), '/title', 'U+0085'],
  ['a title with a lone high surrogate', buildPost({ title: 'bad \ud800' }), '/title', 'well-formed Unicode'],
  ['a title with a lone low surrogate', buildPost({ title: '\udc00' }), '/title', 'well-formed Unicode'],
  ['an empty content', buildPost({ content: '' }), '/content', '1 to 100000 characters'],
  ['content of 100,001 characters', buildPost({ content: 'x'.repeat(100_001) }), '/content', 'it has 100001'],
  ['content with NUL', buildPost({ content: 'nul\u0000byte' }), '/content', 'NUL'],
  ['content with a lone surrogate', buildPost({ content: 'x\udbff' }), '/content', 'well-formed Unicode'],
  ['an empty author', buildPost({ author: '' }), '/author', '1 to 100 characters'],
  ['a 101-character author', buildPost({ author: 'a'.repeat(101) }), '/author', 'it has 101'],
  ['an author of non-breaking spaces only', buildPost({ author: '\u00a0\u2003' }), '/author', 'non-whitespace'],
  ['an author with a carriage return', buildPost({ author: 'Ada\r' }), '/author', 'U+000D'],
  ['an unknown field', { ...buildPost(), tags: ['x'] }, '/tags', 'unknown field'],
  ['a client-chosen id', { ...buildPost(), id: 7 }, '/id', 'unknown field'],
  [
    'a client-chosen createdAt',
    { ...buildPost(), createdAt: '2020-01-01T00:00:00.000Z' },
    '/createdAt',
    'unknown field',
  ],
  ['an ownerId', { ...buildPost(), ownerId: 'someone' }, '/ownerId', 'unknown field'],
  ['a field name with a slash', { ...buildPost(), 'a/b~c': 1 }, '/a~1b~0c', 'unknown field'],
];

describe('posts validation', () => {
  const context = useTestApp();
  const { api } = context;

  describe.each([
    ['POST /posts', 'post'],
    ['PUT /posts/:id', 'put'],
  ] as const)('%s', (_, method) => {
    it.each(invalidBodies)(
      'refuses %s with 400 at the right pointer and stores nothing',
      async (_, body, pointer, phrase) => {
        const existing = (await api.post<{ id: number }>('/posts', buildPost())).body;
        const countBefore = await context.countPosts();
        const rowBefore = await context.findPostRow(existing.id);

        const response =
          method === 'post' ? await api.post('/posts', body) : await api.put(`/posts/${existing.id}`, body);

        const problem = expectProblem(response, 400, 'validation-failed');
        const error = problem.errors?.find((candidate) => candidate.pointer === pointer);
        expect(error, JSON.stringify(problem.errors)).toBeDefined();
        expect(error?.detail).toContain(phrase);
        expect(await context.countPosts()).toBe(countBefore);
        expect(await context.findPostRow(existing.id)).toEqual(rowBefore);
      },
    );
  });

  it('reports every broken field of a request at once', async () => {
    const response = await api.post('/posts', { title: '', content: 5, extra: true });

    const problem = expectProblem(response, 400, 'validation-failed');
    expect(problem.errors?.map((error) => error.pointer).sort()).toEqual(['/author', '/content', '/extra', '/title']);
  });

  it.each([
    ['__proto__', '{"__proto__": {"polluted": true}, "title": "t", "content": "c", "author": "a"}'],
    ['constructor', '{"constructor": {"prototype": {"polluted": true}}, "title": "t", "content": "c", "author": "a"}'],
    ['prototype', '{"prototype": {}, "title": "t", "content": "c", "author": "a"}'],
  ])('refuses a %s member as an unknown field without polluting anything', async (key, json) => {
    const countBefore = await context.countPosts();

    const response = await api.post('/posts', json, { 'content-type': 'application/json' });

    const problem = expectProblem(response, 400, 'validation-failed');
    expect(problem.errors).toEqual([{ pointer: `/${key}`, detail: `unknown field "${key}"` }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await context.countPosts()).toBe(countBefore);
  });

  // Found by the fuzz suite: class-transformer skipped these members (the DTO inherits a method of that
  // name), so POST {"title": "t", "content": "c", "author": "a", "toString": 1} created a post.
  it.each(Object.getOwnPropertyNames(Object.prototype).filter((name) => !['__proto__', 'constructor'].includes(name)))(
    'refuses a %s member, named after an inherited method, as an unknown field and stores nothing',
    async (name) => {
      const existing = (await api.post<{ id: number }>('/posts', buildPost())).body;
      const countBefore = await context.countPosts();
      const rowBefore = await context.findPostRow(existing.id);

      const created = await api.post('/posts', { ...buildPost(), [name]: 1 });
      const patched = await api.patch(`/posts/${existing.id}`, { title: 'changed', [name]: 'x' });

      for (const response of [created, patched]) {
        const problem = expectProblem(response, 400, 'validation-failed');
        expect(problem.errors).toEqual([{ pointer: `/${name}`, detail: `unknown field "${name}"` }]);
      }
      expect(await context.countPosts()).toBe(countBefore);
      expect(await context.findPostRow(existing.id)).toEqual(rowBefore);
    },
  );

  describe('deeply nested JSON', () => {
    const json = { 'content-type': 'application/json' };
    const arrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    const objects = (depth: number) => '{"a":'.repeat(depth) + '0' + '}'.repeat(depth);

    // Found by the fuzz suite: class-transformer recursed into such values and overflowed the stack (500).
    it.each([
      ['arrays as the title', `{"title": ${arrays(100_000)}, "content": "c", "author": "a"}`],
      ['objects in the content', `{"title": "t", "content": ${objects(100_000)}, "author": "a"}`],
      ['objects in an unknown member', `{"title": "t", "content": "c", "author": "a", "x": ${objects(100_000)}}`],
    ])('answers 400 malformed-json, not 500, to %s nested 100,000 levels deep, and stores nothing', async (_, body) => {
      const existing = (await api.post<{ id: number }>('/posts', buildPost())).body;
      const countBefore = await context.countPosts();
      const rowBefore = await context.findPostRow(existing.id);

      const responses = [
        await api.post('/posts', body, json),
        await api.put(`/posts/${existing.id}`, body, json),
        await api.patch(`/posts/${existing.id}`, body, json),
      ];

      for (const response of responses) {
        const problem = expectProblem(response, 400, 'malformed-json');
        expect(problem.detail).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
      }
      expect(await context.countPosts()).toBe(countBefore);
      expect(await context.findPostRow(existing.id)).toEqual(rowBefore);
    });

    it(`validates a body nested ${MAX_JSON_DEPTH} levels deep as usual, and refuses one level more as malformed`, async () => {
      // The body object is the first level.
      const body = (depth: number) => `{"title": "t", "content": "c", "author": "a", "x": ${arrays(depth - 1)}}`;

      const atLimit = expectProblem(await api.post('/posts', body(MAX_JSON_DEPTH), json), 400, 'validation-failed');
      expectProblem(await api.post('/posts', body(MAX_JSON_DEPTH + 1), json), 400, 'malformed-json');

      expect(atLimit.errors).toEqual([{ pointer: '/x', detail: 'unknown field "x"' }]);
    });
  });

  it.each([
    ['an array', '[{"title": "t", "content": "c", "author": "a"}]'],
    ['an empty array', '[]'],
  ])('refuses %s as the body with 400', async (_, json) => {
    const problem = expectProblem(
      await api.post('/posts', json, { 'content-type': 'application/json' }),
      400,
      'validation-failed',
    );
    expect(problem.errors).toEqual([{ pointer: '', detail: 'the request body must be a JSON object' }]);
  });

  it('refuses a JSON body whose string holds an escaped lone surrogate', async () => {
    const json = '{"title": "\\ud800", "content": "c", "author": "a"}';
    const problem = expectProblem(
      await api.post('/posts', json, { 'content-type': 'application/json' }),
      400,
      'validation-failed',
    );
    expect(problem.errors?.[0]).toMatchObject({ pointer: '/title' });
  });

  it('accepts the longest allowed values at every boundary', async () => {
    const body = { title: 'x'.repeat(200), content: 'y'.repeat(100_000), author: 'z'.repeat(100) };
    const response = await api.post('/posts', body);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject(body);
  });

  it('accepts tabs, newlines and a non-whitespace character in content', async () => {
    const response = await api.post('/posts', buildPost({ content: '\t\r\n x \u0085' }));
    expect(response.status).toBe(201);
  });

  describe('PATCH /posts/:id', () => {
    it.each([
      ['a null content', { content: null }, '/content'],
      ['a numeric author', { author: 1 }, '/author'],
      ['a too long title', { title: 'x'.repeat(201) }, '/title'],
      ['an unknown field', { title: 'ok', views: 3 }, '/views'],
      ['an id', { id: 1 }, '/id'],
    ])('refuses %s with 400 and leaves the post untouched', async (_, patch, pointer) => {
      const created = (await api.post<{ id: number }>('/posts', buildPost())).body;
      const rowBefore = await context.findPostRow(created.id);

      const problem = expectProblem(await api.patch(`/posts/${created.id}`, patch), 400, 'validation-failed');

      expect(problem.errors?.map((error) => error.pointer)).toContain(pointer);
      expect(await context.findPostRow(created.id)).toEqual(rowBefore);
    });
  });

  describe('post ids in the path', () => {
    const malformedIds = [
      'abc',
      '1.5',
      '-1',
      '0',
      '1e3',
      '0x10',
      '01',
      '+1',
      '%201',
      '1%20',
      '99999999999999999999999',
      '9007199254740992',
    ];

    it.each(malformedIds)('answers 400 to GET, PUT, PATCH and DELETE of /posts/%s', async (id) => {
      const responses = await Promise.all([
        api.get(`/posts/${id}`),
        api.put(`/posts/${id}`, buildPost()),
        api.patch(`/posts/${id}`, { title: 'x' }),
        api.delete(`/posts/${id}`),
      ]);
      for (const response of responses) {
        const problem = expectProblem(response, 400, 'validation-failed');
        expect(problem.errors?.[0]).toMatchObject({ parameter: 'id' });
      }
    });

    it('answers 404, not 400, for a well-formed id at the top of the range that does not exist', async () => {
      expectProblem(await api.get('/posts/9007199254740991'), 404, 'not-found');
    });
  });
});
