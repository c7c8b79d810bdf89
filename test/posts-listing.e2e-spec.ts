import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Post } from '../src/posts/post.entity.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { seedPosts } from './factories/seed-posts.js';
import { deploymentUrl } from './helpers/deployment.js';
import type { HttpResult } from './helpers/http.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const POST_FIELDS = ['author', 'content', 'createdAt', 'id', 'publishedAt', 'status', 'title', 'updatedAt'];
const NEXT_LINK = /^<([^>]+)>; rel="next"$/;
const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
// A walk that needs more pages than this is following a loop, not a listing.
const MAX_PAGES = 50;

// Every test lists its own author, so posts created by the other tests of this file never show up in it.
const uniqueAuthor = (label = 'author') => `${label}-${randomUUID()}`;

const listPath = (query: Record<string, string>) => `/posts?${new URLSearchParams(query).toString()}`;

const idsOf = (posts: PostResource[]) => posts.map((post) => post.id);

/** The root-relative URL of the rel="next" link, or undefined when the response has none. */
function nextLinkOf(response: HttpResult): string | undefined {
  const header = response.headers.get('link');
  if (header === null) return undefined;
  const match = NEXT_LINK.exec(header);
  expect(match, `Link header ${header}`).not.toBeNull();
  return match![1];
}

/** The query of the rel="next" link, which the response must have. */
function nextQueryOf(response: HttpResult): URLSearchParams {
  const link = nextLinkOf(response);
  expect(link, 'a rel="next" link').toBeDefined();
  expect(link!.startsWith('/posts?')).toBe(true);
  return new URL(link!, 'http://base.invalid').searchParams;
}

function cursorOf(response: HttpResult): string {
  const cursor = nextQueryOf(response).get('cursor');
  expect(cursor).toBeTruthy();
  return cursor!;
}

/** Asserts a 400 validation-failed problem whose only error names the query parameter `name`. */
function expectInvalidParameter(response: HttpResult, name: string): void {
  const problem = expectProblem(response, 400, 'validation-failed');
  expect(problem.errors?.map((error) => error.parameter)).toEqual([name]);
}

function expectStrictlyDescending(ids: number[]): void {
  ids.slice(1).forEach((id, index) => expect(id).toBeLessThan(ids[index]));
}

function expectStrictlyAscending(ids: number[]): void {
  ids.slice(1).forEach((id, index) => expect(id).toBeGreaterThan(ids[index]));
}

/** Replaces the character at `index` by another base64url character. */
function changeCharacter(text: string, index: number, pick = (value: number) => (value + 1) % 64): string {
  const position = index < 0 ? text.length + index : index;
  const replacement = BASE64URL_ALPHABET[pick(BASE64URL_ALPHABET.indexOf(text[position]))];
  return text.slice(0, position) + replacement + text.slice(position + 1);
}

describe('GET /posts (listing)', () => {
  const context = useTestApp();
  const { api } = context;

  /** Creates posts over HTTP, a few at a time, and returns them oldest first. */
  const createPosts = async (author: string, count: number): Promise<PostResource[]> => {
    const created: PostResource[] = [];
    for (let start = 0; start < count; start += 10) {
      const batch = Array.from({ length: Math.min(10, count - start) }, () =>
        api.post<PostResource>('/posts', buildPost({ author })),
      );
      for (const response of await Promise.all(batch)) {
        expect(response.status).toBe(201);
        created.push(response.body);
      }
    }
    return created.sort((left, right) => left.id - right.id);
  };

  /**
   * Inserts rows straight into the table (for larger numbers) and returns their ids, ascending;
   * against a deployment, creates them over HTTP.
   */
  const insertRows = async (author: string, count: number): Promise<number[]> => {
    if (deploymentUrl !== undefined) return idsOf(await createPosts(author, count));
    const posts = Array.from({ length: count }, () => buildPost({ author }));
    await seedPosts(context.app.dataSource, posts);
    const repository = context.app.dataSource.getRepository(Post);
    const rows = await repository.find({ select: { id: true }, where: { author }, order: { id: 'ASC' } });
    return rows.map((row) => Number(row.id));
  };

  /** Follows rel="next" from `path` until the last page; returns every response on the way. */
  const walk = async (path: string): Promise<Array<HttpResult<PostResource[]>>> => {
    const responses: Array<HttpResult<PostResource[]>> = [];
    for (let next: string | undefined = path; next !== undefined; next = nextLinkOf(responses[responses.length - 1])) {
      if (responses.length === MAX_PAGES) throw new Error(`more than ${MAX_PAGES} pages from ${path}`);
      const response = await api.get<PostResource[]>(next);
      expect(response.status).toBe(200);
      responses.push(response);
    }
    return responses;
  };

  describe('the default page', () => {
    it('returns the 20 newest posts, newest first, as a JSON array of posts with exactly the post fields', async () => {
      const author = uniqueAuthor();
      const created = await createPosts(author, 25);
      const newestFirst = created.slice(-20).reverse();

      const response = await api.get<PostResource[]>('/posts');

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Array.isArray(response.body)).toBe(true);
      expect(response.body).toHaveLength(20);
      for (const post of response.body) expect(Object.keys(post).sort()).toEqual(POST_FIELDS);
      expectStrictlyDescending(idsOf(response.body));
      // Nothing else was created since: the newest 20 posts of the whole table are this test's.
      expect(response.body).toEqual(newestFirst);
      expect(nextLinkOf(response)).toBeDefined();
    });

    it('applies the same defaults to an author filter', async () => {
      const author = uniqueAuthor();
      const created = await createPosts(author, 21);

      const response = await api.get<PostResource[]>(listPath({ author }));

      expect(response.status).toBe(200);
      expect(response.body).toEqual(created.slice(-20).reverse());
      expect(nextQueryOf(response).get('author')).toBe(author);
    });

    it('answers an empty array and no Link for an author without posts', async () => {
      const response = await api.get<PostResource[]>(listPath({ author: uniqueAuthor('nobody') }));

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual([]);
      expect(response.headers.get('link')).toBeNull();
    });
  });

  describe('order', () => {
    it('lists oldest first with order=asc and newest first with order=desc', async () => {
      const author = uniqueAuthor();
      const created = await createPosts(author, 5);

      const ascending = await api.get<PostResource[]>(listPath({ author, order: 'asc' }));
      const descending = await api.get<PostResource[]>(listPath({ author, order: 'desc' }));

      expect(ascending.status).toBe(200);
      expect(ascending.body).toEqual(created);
      expect(descending.status).toBe(200);
      expect(descending.body).toEqual([...created].reverse());
    });

    it('refuses order=sideways with a 400 problem naming the order parameter', async () => {
      const response = await api.get('/posts?order=sideways');

      expectInvalidParameter(response, 'order');
    });
  });

  describe('limit', () => {
    it('returns exactly limit posts, the newest ones', async () => {
      const author = uniqueAuthor();
      const created = await createPosts(author, 8);

      const response = await api.get<PostResource[]>(listPath({ author, limit: '5' }));

      expect(response.status).toBe(200);
      expect(response.body).toEqual(created.slice(-5).reverse());
    });

    it.each(['1000', '99999999999999999999'])('coerces limit=%s to the maximum of 100', async (limit) => {
      const author = uniqueAuthor();
      const ids = await insertRows(author, 105);

      const response = await api.get<PostResource[]>(listPath({ author, limit }));

      expect(response.status).toBe(200);
      expect(idsOf(response.body)).toEqual(ids.slice(-100).reverse());
      expect(nextQueryOf(response).get('limit')).toBe('100');
      const lastPage = await api.get<PostResource[]>(nextLinkOf(response)!);
      expect(idsOf(lastPage.body)).toEqual(ids.slice(0, 5).reverse());
    });

    it.each(['limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1&limit=2'])(
      'refuses ?%s with a 400 problem naming the limit parameter',
      async (query) => {
        const response = await api.get(`/posts?${query}`);

        expectInvalidParameter(response, 'limit');
      },
    );
  });

  describe('author filter', () => {
    it('matches exactly: case, accents, trailing spaces and Unicode normalisation make different authors', async () => {
      const tag = randomUUID();
      const names = ['Ada', 'ada', 'Ada ', 'Adá', 'Ada\u0301'].map((name) => `${tag} ${name}`);
      const createdByName = new Map<string, PostResource[]>();
      for (const name of names) createdByName.set(name, await createPosts(name, 2));

      for (const name of names) {
        const response = await api.get<PostResource[]>(listPath({ author: name, count: 'true' }));

        expect(response.status).toBe(200);
        expect(response.body).toEqual([...createdByName.get(name)!].reverse());
        expect(response.headers.get('x-total-count')).toBe('2');
      }
    });

    it('refuses an empty author with a 400 problem naming the author parameter', async () => {
      const response = await api.get('/posts?author=');

      expectInvalidParameter(response, 'author');
    });
  });

  describe('the next link', () => {
    it.each([
      ['desc', (ids: number[]) => [...ids].reverse()],
      ['asc', (ids: number[]) => ids],
    ] as const)(
      'walks 47 posts in five pages of 10, each post exactly once, in order (order=%s)',
      async (order, expected) => {
        const author = uniqueAuthor();
        const ids = await insertRows(author, 47);

        const pages = await walk(listPath({ author, order, limit: '10' }));

        expect(pages.map((page) => page.body.length)).toEqual([10, 10, 10, 10, 7]);
        expect(pages.flatMap((page) => idsOf(page.body))).toEqual(expected(ids));
        for (const page of pages.slice(0, -1)) {
          const query = nextQueryOf(page);
          expect([...query.keys()].sort()).toEqual(['author', 'cursor', 'limit', 'order']);
          expect(query.get('limit')).toBe('10');
          expect(query.get('order')).toBe(order);
          expect(query.get('author')).toBe(author);
        }
        expect(pages[pages.length - 1].headers.get('link')).toBeNull();
      },
    );

    it('names the default order and limit in the link when the request left them out', async () => {
      const author = uniqueAuthor();
      await insertRows(author, 21);

      const response = await api.get(listPath({ author }));

      const query = nextQueryOf(response);
      expect(query.get('limit')).toBe('20');
      expect(query.get('order')).toBe('desc');
      expect(query.get('author')).toBe(author);
    });

    it('gives no next link when the last page is exactly full', async () => {
      const author = uniqueAuthor();
      const ids = await insertRows(author, 20);

      const pages = await walk(listPath({ author, limit: '10' }));

      expect(pages).toHaveLength(2);
      expect(pages.flatMap((page) => idsOf(page.body))).toEqual([...ids].reverse());
      expect(pages[1].headers.get('link')).toBeNull();
    });

    it('carries an author with spaces and accents through the link unchanged', async () => {
      const author = ` Adá Lovelace & Co ${randomUUID()} `;
      const created = await createPosts(author, 3);

      const pages = await walk(listPath({ author, limit: '2' }));

      expect(pages.flatMap((page) => page.body)).toEqual([...created].reverse());
    });

    it('leaves author out of the next link of an unfiltered listing', async () => {
      await insertRows(uniqueAuthor(), 3);

      const response = await api.get(listPath({ limit: '2' }));

      expect([...nextQueryOf(response).keys()].sort()).toEqual(['cursor', 'limit', 'order']);
    });
  });

  describe('walking while others insert', () => {
    it.each(['desc', 'asc'])(
      'never repeats or skips a post that existed when the walk began (order=%s)',
      async (order) => {
        const author = uniqueAuthor();
        const existing = idsOf(await createPosts(author, 12));
        const insertedMeanwhile: number[] = [];
        const seen: number[] = [];

        let next: string | undefined = listPath({ author, order, limit: '5' });
        while (next !== undefined) {
          if (seen.length > 200) throw new Error('the walk does not end');
          const response = await api.get<PostResource[]>(next);
          expect(response.status).toBe(200);
          seen.push(...idsOf(response.body));
          // Another client writes between two page fetches, for this author and for another one.
          insertedMeanwhile.push(...idsOf(await createPosts(author, 2)));
          await createPosts(uniqueAuthor('other'), 1);
          next = nextLinkOf(response);
        }

        expect(new Set(seen).size).toBe(seen.length);
        const existingSeen = seen.filter((id) => existing.includes(id));
        expect(existingSeen).toEqual(order === 'asc' ? existing : [...existing].reverse());
        if (order === 'asc') expectStrictlyAscending(seen);
        else expectStrictlyDescending(seen);
        // Whatever else the walk returned was inserted during it.
        for (const id of seen.filter((id) => !existing.includes(id))) expect(insertedMeanwhile).toContain(id);
      },
    );
  });

  describe('cursor', () => {
    const firstCursor = async (query: Record<string, string>): Promise<string> => {
      const response = await api.get(listPath(query));
      expect(response.status).toBe(200);
      return cursorOf(response);
    };

    it('continues exactly after the previous page when the cursor from the link is sent back', async () => {
      const author = uniqueAuthor();
      const created = await createPosts(author, 5);
      const cursor = await firstCursor({ author, limit: '2' });

      const response = await api.get<PostResource[]>(listPath({ author, limit: '2', cursor }));

      expect(response.status).toBe(200);
      expect(response.body).toEqual([created[2], created[1]]);
    });

    it('does not reveal the author it was issued for, and stays short', async () => {
      const author = uniqueAuthor('opaque');
      await createPosts(author, 3);

      const cursor = await firstCursor({ author, limit: '1' });

      expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(cursor.length).toBeLessThanOrEqual(256);
      expect(Buffer.from(cursor.split('.')[0], 'base64url').toString()).not.toContain(author);
    });

    const corruptions: Array<[string, (cursor: string) => string]> = [
      ['one character of the payload flipped', (cursor) => changeCharacter(cursor, 0)],
      ['the last character of the payload changed', (cursor) => changeCharacter(cursor, cursor.indexOf('.') - 1)],
      ['a forged signature of the right length', (cursor) => `${cursor.split('.')[0]}.${'A'.repeat(22)}`],
      ['the first character of the signature changed', (cursor) => changeCharacter(cursor, cursor.indexOf('.') + 1)],
      ['the last character of the signature changed', (cursor) => changeCharacter(cursor, -1, (value) => value ^ 1)],
      ['the signature cut short', (cursor) => cursor.slice(0, -1)],
      ['the signature made longer', (cursor) => `${cursor}A`],
      ['no signature', (cursor) => cursor.split('.')[0]],
      ['a third part', (cursor) => `${cursor}.x`],
      ['garbage "abc"', () => 'abc'],
      ['garbage "...."', () => '....'],
      ['an empty value', () => ''],
      ['300 characters', () => 'a'.repeat(300)],
    ];

    it.each(corruptions)(
      'refuses a cursor with %s with a 400 problem naming the cursor parameter',
      async (_, corrupt) => {
        const author = uniqueAuthor();
        await createPosts(author, 3);
        const cursor = await firstCursor({ author, limit: '1' });
        const corrupted = corrupt(cursor);
        expect(corrupted).not.toBe(cursor);

        const response = await api.get(listPath({ author, limit: '1', cursor: corrupted }));

        expectInvalidParameter(response, 'cursor');
      },
    );

    it.each([
      ['another author', (author: string) => ({ author: `${author}-B` })],
      ['no author filter', () => ({})],
      ['the other order', (author: string) => ({ author, order: 'asc' })],
    ] as const)('refuses a cursor replayed with %s (a foreign cursor) with 400', async (_, change) => {
      const author = uniqueAuthor();
      await createPosts(author, 3);
      await createPosts(`${author}-B`, 3);
      const cursor = await firstCursor({ author, limit: '1' });

      const response = await api.get(listPath({ ...change(author), limit: '1', cursor }));

      expectInvalidParameter(response, 'cursor');
    });

    it('refuses the payload of one cursor with the signature of another', async () => {
      const author = uniqueAuthor();
      await createPosts(author, 3);
      const [payload] = (await firstCursor({ author, limit: '1' })).split('.');
      const [, signature] = (await firstCursor({ author, limit: '2' })).split('.');

      const response = await api.get(listPath({ author, limit: '1', cursor: `${payload}.${signature}` }));

      expectInvalidParameter(response, 'cursor');
    });

    it('stays valid when the post it points after is deleted', async () => {
      const author = uniqueAuthor();
      const created = await createPosts(author, 4);
      const first = await api.get<PostResource[]>(listPath({ author, limit: '2' }));
      expect((await api.delete(`/posts/${created[2].id}`)).status).toBe(204);

      const response = await api.get<PostResource[]>(nextLinkOf(first)!);

      expect(response.status).toBe(200);
      expect(response.body).toEqual([created[1], created[0]]);
      expect(response.headers.get('link')).toBeNull();
    });

    it('refuses a cursor from the unfiltered listing when replayed with an author filter', async () => {
      const author = uniqueAuthor();
      await createPosts(author, 3);
      const cursor = await firstCursor({ limit: '1' });

      const response = await api.get(listPath({ author, limit: '1', cursor }));

      expectInvalidParameter(response, 'cursor');
    });
  });

  describe('count', () => {
    it('adds X-Total-Count with the number of matching posts in all pages, and keeps count in the link', async () => {
      const author = uniqueAuthor();
      const ids = await insertRows(author, 7);

      const pages = await walk(listPath({ author, limit: '3', count: 'true' }));

      expect(pages.map((page) => page.body.length)).toEqual([3, 3, 1]);
      expect(pages.flatMap((page) => idsOf(page.body))).toEqual([...ids].reverse());
      for (const page of pages) expect(page.headers.get('x-total-count')).toBe('7');
      for (const page of pages.slice(0, -1)) {
        expect(nextQueryOf(page).get('count')).toBe('true');
      }
    });

    it('counts every post when no author is given', { tags: ['database'] }, async () => {
      await insertRows(uniqueAuthor(), 2);
      const total = await context.countPosts();

      const response = await api.get('/posts?limit=1&count=true');

      expect(response.status).toBe(200);
      expect(response.headers.get('x-total-count')).toBe(String(total));
    });

    it.each(['/posts', '/posts?count=false'])('sends no X-Total-Count for %s', async (path) => {
      await insertRows(uniqueAuthor(), 1);

      const response = await api.get(path);

      expect(response.status).toBe(200);
      expect(response.headers.get('x-total-count')).toBeNull();
    });

    it('refuses count=yes with a 400 problem naming the count parameter', async () => {
      const response = await api.get('/posts?count=yes');

      expectInvalidParameter(response, 'count');
    });
  });

  describe('unknown parameters', () => {
    it('refuses a misspelt parameter (?autor=x) with a 400 problem naming it', async () => {
      const response = await api.get('/posts?autor=x');

      expectInvalidParameter(response, 'autor');
    });
  });

  it('never changes the database', { tags: ['database'] }, async () => {
    const author = uniqueAuthor();
    await createPosts(author, 4);
    const repository = context.app.dataSource.getRepository(Post);
    const rowsBefore = await repository.find({ where: { author }, order: { id: 'ASC' } });
    const countBefore = await context.countPosts();

    const first = await api.get(listPath({ author, limit: '2', count: 'true' }));
    const others = await Promise.all([
      api.get(nextLinkOf(first)!),
      api.get(listPath({ author, order: 'asc' })),
      api.get('/posts?limit=0'),
      api.get(listPath({ author, cursor: 'abc' })),
    ]);

    expect([first, ...others].map((response) => response.status)).toEqual([200, 200, 200, 400, 400]);
    expect(await context.countPosts()).toBe(countBefore);
    expect(await repository.find({ where: { author }, order: { id: 'ASC' } })).toEqual(rowsBefore);
  });
});
