// @module-tag database
// (reads the post_revisions and events rows behind each answer)
import { describe, expect, it } from 'vitest';
import { Post } from '../src/posts/post.entity.js';
import { PostRevision } from '../src/posts/post-revision.entity.js';
import type { PostResource, PostRevisionResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import type { HttpResult } from './helpers/http.js';
import { nextLinkOf } from './helpers/post-feed.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const HOUR_MS = 60 * 60 * 1000;
const PAST_INSTANT = '2001-02-03T04:05:06.789Z';
const REVISION_FIELDS = ['author', 'content', 'publishedAt', 'revisedAt', 'status', 'title', 'version'];

/** The revision a write that answered `replaced` will keep: that state, revised at the write's time. */
function revisionOf(replaced: PostResource, version: number, revisedAt: string): PostRevisionResource {
  const { title, content, author, status, publishedAt } = replaced;
  return { version, title, content, author, status, publishedAt, revisedAt };
}

/** The helpers every describe below needs, on the app `context` started. */
function revisionHelpers(context: ReturnType<typeof useTestApp>) {
  const { api } = context;
  const create = async (overrides: Record<string, unknown> = {}) => {
    const response = await api.post<PostResource>('/posts', { ...buildPost(), ...overrides });
    expect(response.status).toBe(201);
    return response;
  };
  const storedRevisions = (postId: number): Promise<PostRevision[]> =>
    context.app.dataSource.getRepository(PostRevision).find({ where: { postId }, order: { version: 'DESC' } });
  const storedPost = (id: number): Promise<Post | null> => context.app.dataSource.getRepository(Post).findOneBy({ id });
  const storedEventCount = async (postId: number): Promise<number> => {
    const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(
      'SELECT COUNT(*) AS n FROM events WHERE post_id = ?',
      [postId],
    );
    return Number(row.n);
  };
  const listRevisions = async (postId: number): Promise<PostRevisionResource[]> => {
    const response = await api.get<PostRevisionResource[]>(`/posts/${postId}/revisions?limit=100`);
    expect(response.status).toBe(200);
    return response.body;
  };
  return { api, create, storedRevisions, storedPost, storedEventCount, listRevisions };
}

describe('revisions of a post (contract §10)', () => {
  const context = useTestApp();
  const { api, create, storedRevisions, storedPost, storedEventCount, listRevisions } = revisionHelpers(context);

  describe('keeping', () => {
    it('keeps exactly one revision per PUT, PATCH and restore, each with the state it replaced', async () => {
      const created = await create({ status: 'published', publishedAt: PAST_INSTANT });
      const id = created.body.id;

      const replaced = await api.put<PostResource>(`/posts/${id}`, buildPost({ title: 'replaced' }));
      expect(replaced.status).toBe(200);
      expect(await listRevisions(id)).toEqual([revisionOf(created.body, 1, replaced.body.updatedAt)]);

      const patched = await api.patch<PostResource>(`/posts/${id}`, { status: 'draft', content: 'patched' });
      expect(patched.status).toBe(200);
      expect(await listRevisions(id)).toEqual([
        revisionOf(replaced.body, 2, patched.body.updatedAt),
        revisionOf(created.body, 1, replaced.body.updatedAt),
      ]);

      const restored = await api.post<PostResource>(`/posts/${id}/revisions/1/restore`);
      expect(restored.status).toBe(200);
      const revisions = await listRevisions(id);
      expect(revisions).toEqual([
        revisionOf(patched.body, 3, restored.body.updatedAt),
        revisionOf(replaced.body, 2, patched.body.updatedAt),
        revisionOf(created.body, 1, replaced.body.updatedAt),
      ]);
      revisions.forEach((revision) => expect(Object.keys(revision).sort()).toEqual(REVISION_FIELDS));

      const rows = await storedRevisions(id);
      expect(rows.map((row) => [row.version, row.title, row.status, row.publishedAt?.toISOString() ?? null])).toEqual([
        [3, patched.body.title, 'draft', null],
        [2, 'replaced', 'published', PAST_INSTANT],
        [1, created.body.title, 'published', PAST_INSTANT],
      ]);
    });

    it('keeps a revision of a scheduled post with its status and publishedAt', async () => {
      const publishedAt = new Date(Date.now() + HOUR_MS).toISOString();
      const created = await create({ status: 'scheduled', publishedAt });

      const patched = await api.patch<PostResource>(`/posts/${created.body.id}`, { status: 'draft' });

      expect(patched.status).toBe(200);
      expect(await listRevisions(created.body.id)).toEqual([revisionOf(created.body, 1, patched.body.updatedAt)]);
    });

    it('keeps no revision for a create, a refused write or a delete', async () => {
      const created = await create();
      const id = created.body.id;
      expect(await listRevisions(id)).toEqual([]);

      expect((await api.patch(`/posts/${id}`, { title: '' })).status).toBe(400);
      expect((await api.patch(`/posts/${id}`, { title: 'x' }, { 'if-match': `"${id}.9"` })).status).toBe(412);
      expect(await storedRevisions(id)).toEqual([]);

      expect((await api.delete(`/posts/${id}`)).status).toBe(204);
      expect(await storedRevisions(id)).toEqual([]);
    });
  });

  describe('reading', () => {
    it('lists revisions newest first, a page at a time, with a next link until the last page', async () => {
      const { body: post } = await create();
      for (let index = 1; index <= 5; index++) {
        expect((await api.patch(`/posts/${post.id}`, { title: `edit ${index}` })).status).toBe(200);
      }

      const versions: number[][] = [];
      const links: Array<string | undefined> = [];
      let next: string | undefined = `/posts/${post.id}/revisions?limit=2`;
      while (next !== undefined) {
        expect(versions.length).toBeLessThan(5);
        const page: HttpResult<PostRevisionResource[]> = await api.get<PostRevisionResource[]>(next);
        expect(page.status).toBe(200);
        expect(page.headers.get('content-type')).toBe('application/json; charset=utf-8');
        versions.push(page.body.map((revision) => revision.version));
        next = nextLinkOf(page);
        links.push(next);
      }

      expect(versions).toEqual([[5, 4], [3, 2], [1]]);
      for (const link of links.slice(0, -1)) {
        const url = new URL(link!, 'http://x');
        expect(url.pathname).toBe(`/posts/${post.id}/revisions`);
        expect(url.searchParams.get('limit')).toBe('2');
        expect(url.searchParams.get('cursor')).toBeTruthy();
      }
      expect((await api.get(`/posts/${post.id}/revisions`)).headers.get('link')).toBeNull();
    });

    it("refuses a cursor of another post's revisions (400)", async () => {
      const { body: first } = await create();
      const { body: second } = await create();
      for (const id of [first.id, first.id, second.id, second.id]) await api.patch(`/posts/${id}`, { title: 'edit' });
      const page = await api.get(`/posts/${first.id}/revisions?limit=1`);
      const cursor = new URL(nextLinkOf(page)!, 'http://x').searchParams.get('cursor')!;

      const response = await api.get(`/posts/${second.id}/revisions?limit=1&cursor=${cursor}`);

      const problem = expectProblem(response, 400, 'validation-failed');
      expect(problem.errors?.map((error) => error.parameter)).toEqual(['cursor']);
    });

    it('reads one revision by its version', async () => {
      const { body: post } = await create();
      await api.patch(`/posts/${post.id}`, { title: 'second' });
      await api.patch(`/posts/${post.id}`, { title: 'third' });
      const listed = await listRevisions(post.id);

      const one = await api.get<PostRevisionResource>(`/posts/${post.id}/revisions/2`);

      expect(one.status).toBe(200);
      expect(one.body).toEqual(listed.find((revision) => revision.version === 2));
      expect(one.body.title).toBe('second');
    });

    it('answers 404 for a version the post has no revision of, and 400 for one that is not a version', async () => {
      const { body: post } = await create();
      await api.patch(`/posts/${post.id}`, { title: 'second' });

      expectProblem(await api.get(`/posts/${post.id}/revisions/2`), 404, 'not-found');
      expectProblem(await api.get(`/posts/${post.id}/revisions/99`), 404, 'not-found');
      expectProblem(await api.get('/posts/987654321/revisions'), 404, 'not-found');
      expect((await api.get(`/posts/${post.id}/revisions/0`)).status).toBe(400);
      expect((await api.get(`/posts/${post.id}/revisions/abc`)).status).toBe(400);
    });
  });

  describe('restoring', () => {
    it("makes a revision's title, content and author current as a new version, keeping status and publishedAt", async () => {
      const created = await create({ status: 'published', publishedAt: PAST_INSTANT });
      const id = created.body.id;
      const edited = await api.put<PostResource>(`/posts/${id}`, { ...buildPost(), status: 'draft' });
      const eventsBefore = await storedEventCount(id);

      const restored = await api.post<PostResource>(`/posts/${id}/revisions/1/restore`, undefined, {
        'if-match': edited.headers.get('etag')!,
      });

      expect(restored.status).toBe(200);
      expect(restored.headers.get('etag')).toBe(`"${id}.3"`);
      expect(restored.body).toMatchObject({
        id,
        title: created.body.title,
        content: created.body.content,
        author: created.body.author,
        status: 'draft',
        publishedAt: null,
        createdAt: created.body.createdAt,
      });
      expect(Date.parse(restored.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(edited.body.updatedAt));
      const read = await api.get<PostResource>(`/posts/${id}`);
      expect(read.body).toEqual(restored.body);
      expect(read.headers.get('etag')).toBe(`"${id}.3"`);
      expect((await listRevisions(id))[0]).toEqual(revisionOf(edited.body, 2, restored.body.updatedAt));
      expect(await storedPost(id)).toMatchObject({ version: 3, title: created.body.title, status: 'draft' });
      expect(await storedEventCount(id)).toBe(eventsBefore + 1);
    });

    it('answers 404 for a revision that does not exist before looking at If-Match (404 before 412)', async () => {
      const { body: post } = await create();
      await api.patch(`/posts/${post.id}`, { title: 'second' });

      const response = await api.post(`/posts/${post.id}/revisions/2/restore`, undefined, {
        'if-match': `"${post.id}.1"`,
      });

      expectProblem(response, 404, 'not-found');
      expect(await storedRevisions(post.id)).toHaveLength(1);
    });

    it('refuses a restore with a stale If-Match with 412 and changes nothing', async () => {
      const created = await create();
      const id = created.body.id;
      await api.patch(`/posts/${id}`, { title: 'newer' });
      const rowBefore = await storedPost(id);
      const revisionsBefore = await storedRevisions(id);
      const eventsBefore = await storedEventCount(id);

      const response = await api.post(`/posts/${id}/revisions/1/restore`, undefined, {
        'if-match': created.headers.get('etag')!,
      });

      expectProblem(response, 412, 'precondition-failed');
      expect(await storedPost(id)).toEqual(rowBefore);
      expect(await storedRevisions(id)).toEqual(revisionsBefore);
      expect(await storedEventCount(id)).toBe(eventsBefore);
    });

    it('answers 404 to a restore of a version that has no revision, and changes nothing', async () => {
      const { body: post } = await create();
      await api.patch(`/posts/${post.id}`, { title: 'newer' });
      const rowBefore = await storedPost(post.id);

      expectProblem(await api.post(`/posts/${post.id}/revisions/7/restore`), 404, 'not-found');
      expectProblem(await api.post('/posts/987654321/revisions/1/restore'), 404, 'not-found');

      expect(await storedPost(post.id)).toEqual(rowBefore);
      expect(await storedRevisions(post.id)).toHaveLength(1);
    });
  });

  describe('under concurrency', () => {
    it(
      'lets exactly one of 20 concurrent PATCHes with the same If-Match win: one revision and one event more',
      { tags: ['database'] },
      async () => {
        const created = await create();
        const id = created.body.id;
        const eventsBefore = await storedEventCount(id);

        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, writer) =>
            api.patch<PostResource>(
              `/posts/${id}`,
              { title: `writer ${writer}` },
              {
                'if-match': created.headers.get('etag')!,
              },
            ),
          ),
        );

        expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
        expect(responses.filter((response) => response.status === 412)).toHaveLength(19);
        const winner = responses.find((response) => response.status === 200)!.body;
        expect(await storedPost(id)).toMatchObject({ title: winner.title, version: 2 });
        const revisions = await storedRevisions(id);
        expect(revisions.map((revision) => [revision.version, revision.title])).toEqual([[1, created.body.title]]);
        expect(await storedEventCount(id)).toBe(eventsBefore + 1);
      },
    );
  });

  it('trims the revisions of two posts at their cap, written at the same time, without a deadlock: every PATCH succeeds', async () => {
    const posts = [(await create()).body, (await create()).body];
    // Past the default cap of 50: from then on every write deletes its post's oldest revision.
    for (let edit = 0; edit < 55; edit++) {
      for (const post of posts)
        expect((await api.patch(`/posts/${post.id}`, { title: `edit ${edit}` })).status).toBe(200);
    }

    const statuses: number[] = [];
    for (let round = 0; round < 60; round++) {
      const answers = await Promise.all(
        posts.map((post) => api.patch(`/posts/${post.id}`, { content: `round ${round}` })),
      );
      statuses.push(...answers.map((answer) => answer.status));
    }

    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    for (const post of posts) expect(await storedRevisions(post.id)).toHaveLength(50);
  });
});

describe('with REVISIONS_PER_POST=3', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: { REVISIONS_PER_POST: '3' } });
  const { api, create, storedRevisions, listRevisions } = revisionHelpers(context);

  it('keeps only the 3 newest revisions of a post, dropping the oldest first', async () => {
    const { body: post } = await create();
    const titles = [post.title];
    for (let index = 1; index <= 6; index++) {
      const patched = await api.patch<PostResource>(`/posts/${post.id}`, { title: `edit ${index}` });
      expect(patched.status).toBe(200);
      titles.push(patched.body.title);
    }

    const revisions = await listRevisions(post.id);

    expect(revisions.map((revision) => [revision.version, revision.title])).toEqual([
      [6, titles[5]],
      [5, titles[4]],
      [4, titles[3]],
    ]);
    expect((await storedRevisions(post.id)).map((revision) => revision.version)).toEqual([6, 5, 4]);
    expectProblem(await api.get(`/posts/${post.id}/revisions/3`), 404, 'not-found');
  });

  it("trims each post's revisions on its own", async () => {
    const { body: busy } = await create();
    const { body: quiet } = await create();
    await api.patch(`/posts/${quiet.id}`, { title: 'the one edit' });
    for (let index = 0; index < 4; index++) await api.patch(`/posts/${busy.id}`, { title: `edit ${index}` });

    expect((await storedRevisions(quiet.id)).map((revision) => revision.version)).toEqual([1]);
    expect((await storedRevisions(busy.id)).map((revision) => revision.version)).toEqual([4, 3, 2]);
  });
});
