// @module-tag database
// (reads the posts, posts_trash, post_revisions and events rows behind each answer)
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Scope } from '../src/auth/principal.js';
import { PostsMaintenance } from '../src/posts/posts-maintenance.js';
import { Post } from '../src/posts/post.entity.js';
import { PostRevision } from '../src/posts/post-revision.entity.js';
import type { PostResource, PostRevisionResource, TrashedPostResource } from '../src/posts/post.resource.js';
import { TrashedPost } from '../src/posts/trashed-post.entity.js';
import { buildPost } from './factories/post.factory.js';
import { client, type HttpResult } from './helpers/http.js';
import { isStrictlyIncreasing, nextLinkOf, postFeed, postIdOf, until } from './helpers/post-feed.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const PAST_INSTANT = '2001-02-03T04:05:06.789Z';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const versionOf = (response: HttpResult): number => Number(/^"\d+\.(\d+)"$/.exec(response.headers.get('etag')!)![1]);

/** Reading and arranging helpers on the app `context` started. */
function trashHelpers(context: ReturnType<typeof useTestApp>) {
  const { api } = context;
  const admin = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );
  const dataSource = () => context.app.dataSource;
  const create = async (overrides: Record<string, unknown> = {}, as = api) => {
    const response = await as.post<PostResource>('/posts', { ...buildPost(), ...overrides });
    expect(response.status).toBe(201);
    return response;
  };
  const trash = async (id: number, as = api) => expect((await as.delete(`/posts/${id}`)).status).toBe(204);
  const storedPost = (id: number) => dataSource().getRepository(Post).findOneBy({ id });
  const trashedRow = (id: number) => dataSource().getRepository(TrashedPost).findOneBy({ id });
  const storedRevisions = (postId: number) =>
    dataSource()
      .getRepository(PostRevision)
      .find({ where: { postId }, order: { version: 'DESC' } });
  const { readFeed, eventsOf } = postFeed(dataSource, admin);
  return { api, admin, create, trash, storedPost, trashedRow, storedRevisions, readFeed, eventsOf };
}

describe('the trash (contract §10)', () => {
  const context = useTestApp();
  const { api, admin, create, trash, storedPost, trashedRow, storedRevisions, eventsOf } = trashHelpers(context);
  const otherWriter = async () => api.as(await context.app.createToken([Scope.postsRead, Scope.postsWrite]));

  describe('DELETE /posts/{id}', () => {
    it('moves the post to the trash: 204, then 404 on every /posts route, its revisions kept', async () => {
      const created = await create();
      const id = created.body.id;
      const patched = await api.patch<PostResource>(`/posts/${id}`, { title: 'edited before the delete' });
      const before = Date.now();

      const response = await api.delete(`/posts/${id}`);

      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expectProblem(await api.get(`/posts/${id}`), 404, 'not-found');
      expectProblem(await api.delete(`/posts/${id}`), 404, 'not-found');
      expectProblem(await api.patch(`/posts/${id}`, { title: 'x' }), 404, 'not-found');
      expectProblem(await api.put(`/posts/${id}`, buildPost()), 404, 'not-found');
      expectProblem(await api.get(`/posts/${id}/revisions`), 404, 'not-found');
      expectProblem(await api.post(`/posts/${id}/revisions/1/restore`), 404, 'not-found');
      expectProblem(await admin.get(`/posts/${id}`), 404, 'not-found');

      expect(await storedPost(id)).toBeNull();
      const row = await trashedRow(id);
      expect(row).toMatchObject({ id, title: patched.body.title, status: 'published', version: 3 });
      expect(row!.deletedAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(row!.deletedAt.getTime()).toBeLessThanOrEqual(Date.now());
      expect((await storedRevisions(id)).map((revision) => revision.version)).toEqual([1]);
      const events = await eventsOf(id);
      expect(events.map((event) => [event.type, event.data.post, event.data.version])).toEqual([
        ['post.created', created.body, 1],
        ['post.updated', patched.body, 2],
        ['post.deleted', { id }, 3],
      ]);
    });
  });

  describe('DELETE /posts/{id} with If-Match', () => {
    it('refuses a stale ETag with 412 and trashes nothing', async () => {
      const created = await create();
      await api.patch(`/posts/${created.body.id}`, { title: 'newer' });

      const response = await api.delete(`/posts/${created.body.id}`, { 'if-match': created.headers.get('etag')! });

      expectProblem(response, 412, 'precondition-failed');
      expect(await storedPost(created.body.id)).toMatchObject({ version: 2 });
      expect(await trashedRow(created.body.id)).toBeNull();
    });
  });

  describe('ids', () => {
    it('never hands the id of a trashed post to a new one, so the trashed post can always come back', async () => {
      const { body: newest } = await create();
      await trash(newest.id);

      const { body: next } = await create();
      const restored = await api.post<PostResource>(`/trash/${newest.id}/restore`);

      expect(next.id).toBeGreaterThan(newest.id);
      expect(restored.status).toBe(200);
      expect((await api.get<PostResource>(`/posts/${newest.id}`)).body.title).toBe(newest.title);
      expect((await api.get<PostResource>(`/posts/${next.id}`)).body.title).toBe(next.title);
    });
  });

  describe('GET /trash', () => {
    it('lists a trashed post as it was, with deletedAt', async () => {
      const { body: post } = await create({ status: 'published', publishedAt: PAST_INSTANT });
      const before = Date.now();
      await trash(post.id);

      const response = await api.get<TrashedPostResource[]>('/trash');

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const item = response.body.find((trashed) => trashed.id === post.id);
      expect(item).toBeDefined();
      // As it was; updatedAt may be the move's time (toEqual takes an undefined member as absent).
      expect({ ...item, updatedAt: post.updatedAt, deletedAt: undefined }).toEqual(post);
      expect(Date.parse(item!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(post.updatedAt));
      expect(Date.parse(item!.updatedAt)).toBeLessThanOrEqual(Date.parse(item!.deletedAt));
      expect(Object.keys(item!).sort()).toEqual([...Object.keys(post), 'deletedAt'].sort());
      expect(Date.parse(item!.deletedAt)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(item!.deletedAt)).toBeLessThanOrEqual(Date.now());
      expect(item!.deletedAt).toBe((await trashedRow(post.id))!.deletedAt.toISOString());
    });

    it("lists the caller's own trashed posts only, and every one for admin", async () => {
      const writer = await otherWriter();
      const other = await otherWriter();
      const { body: mine } = await create({}, writer);
      const { body: theirs } = await create({}, other);
      const { body: live } = await create({}, writer);
      await trash(mine.id, writer);
      await trash(theirs.id, other);

      const ownIds = (await writer.get<TrashedPostResource[]>('/trash')).body.map((post) => post.id);
      const adminIds = (await admin.get<TrashedPostResource[]>('/trash?limit=100')).body.map((post) => post.id);

      expect(ownIds).toEqual([mine.id]);
      expect(adminIds).toEqual(expect.arrayContaining([mine.id, theirs.id]));
      expect(adminIds).not.toContain(live.id);
    });

    it('pages newest post first, with a next link until the last page', async () => {
      const writer = await otherWriter();
      const ids: number[] = [];
      for (let index = 0; index < 5; index++) ids.push((await create({}, writer)).body.id);
      for (const id of ids) await trash(id, writer);

      const pages: number[][] = [];
      let next: string | undefined = '/trash?limit=2';
      while (next !== undefined) {
        expect(pages.length).toBeLessThan(5);
        const page: HttpResult<TrashedPostResource[]> = await writer.get<TrashedPostResource[]>(next);
        expect(page.status).toBe(200);
        pages.push(page.body.map((post) => post.id));
        next = nextLinkOf(page);
        if (next !== undefined) expect(new URL(next, 'http://x').searchParams.get('limit')).toBe('2');
      }

      const newestFirst = [...ids].reverse();
      expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4)]);
    });

    it('needs the posts:write scope (403 for a reader)', async () => {
      const reader = api.as(await context.app.createToken([Scope.postsRead]));
      expectProblem(await reader.get('/trash'), 403, 'insufficient-scope');
    });
  });

  describe('POST /trash/{id}/restore', () => {
    it('brings the post back under its id and state as a newer version, with its revisions and post.restored', async () => {
      const created = await create({ status: 'published', publishedAt: PAST_INSTANT });
      const id = created.body.id;
      const patched = await api.patch<PostResource>(`/posts/${id}`, { content: 'kept through the trash' });
      await trash(id);
      const revisionsBefore = await storedRevisions(id);

      const restored = await api.post<PostResource>(`/trash/${id}/restore`);

      expect(restored.status).toBe(200);
      expect(restored.body).toMatchObject({ ...patched.body, updatedAt: restored.body.updatedAt });
      expect(Date.parse(restored.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(patched.body.updatedAt));
      expect(versionOf(restored)).toBeGreaterThan(versionOf(patched));
      const read = await api.get<PostResource>(`/posts/${id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(restored.body);
      expect(read.headers.get('etag')).toBe(restored.headers.get('etag'));
      const revisions = await api.get<PostRevisionResource[]>(`/posts/${id}/revisions`);
      expect(revisions.body.map((revision) => revision.version)).toEqual([1]);
      expect(await storedRevisions(id)).toEqual(revisionsBefore);
      expect(await trashedRow(id)).toBeNull();
      expect(await storedPost(id)).toMatchObject({ id, version: versionOf(restored) });

      const events = await eventsOf(id);
      const last = events[events.length - 1];
      expect(events.map((event) => event.type)).toEqual([
        'post.created',
        'post.updated',
        'post.deleted',
        'post.restored',
      ]);
      expect(last.data).toMatchObject({ post: restored.body, version: versionOf(restored) });
      expect(last.data.version).toBeGreaterThan(events[2].data.version as number);
    });

    it('brings a draft back as a draft and a scheduled post back as scheduled', async () => {
      const publishedAt = new Date(Date.now() + HOUR_MS).toISOString();
      for (const state of [
        { status: 'draft', publishedAt: null },
        { status: 'scheduled', publishedAt },
      ]) {
        const { body: post } = await create(state);
        await trash(post.id);

        const restored = await api.post<PostResource>(`/trash/${post.id}/restore`);

        expect(restored.status).toBe(200);
        expect(restored.body).toMatchObject({ id: post.id, ...state });
        expect((await api.get<PostResource>(`/posts/${post.id}`)).body).toMatchObject(state);
      }
    });

    it('lets the post be changed with the ETag the restore answered', async () => {
      const { body: post } = await create();
      await trash(post.id);
      const restored = await api.post<PostResource>(`/trash/${post.id}/restore`);

      const patched = await api.patch(
        `/posts/${post.id}`,
        { title: 'after' },
        { 'if-match': restored.headers.get('etag')! },
      );

      expect(patched.status).toBe(200);
    });

    it(
      'publishes a scheduled post whose instant passed in the trash, with strictly increasing versions',
      { timeout: 20_000 },
      async () => {
        const publishAt = Date.now() + 1_200;
        const created = await create({ status: 'scheduled', publishedAt: new Date(publishAt).toISOString() });
        const id = created.body.id;
        await trash(id);
        await sleep(publishAt + 100 - Date.now());

        const restored = await api.post<PostResource>(`/trash/${id}/restore`);

        expect(restored.status).toBe(200);
        expect(restored.body.status).toBe('published');
        const events = await until(
          () => eventsOf(id),
          (found) => found.some((event) => event.type === 'post.published'),
          5_000,
          `post.published of post ${id}`,
        );
        expect(events.filter((event) => event.type === 'post.published')).toHaveLength(1);
        expect(events.filter((event) => event.type === 'post.restored')).toHaveLength(1);
        const versions = events.map((event) => event.data.version as number);
        const history = JSON.stringify(events.map((event) => [event.type, event.data.version]));
        expect(isStrictlyIncreasing(versions), `the versions of ${history}`).toBe(true);
        const read = await api.get<PostResource>(`/posts/${id}`);
        expect(read.headers.get('etag')).toBe(`"${id}.${Math.max(...versions)}"`);
      },
    );

    it("answers 404 for an id not in the trash, a live post and someone else's trashed post", async () => {
      const { body: live } = await create();
      const other = await otherWriter();
      const { body: theirs } = await create({}, other);
      await trash(theirs.id, other);

      expectProblem(await api.post('/trash/987654321/restore'), 404, 'not-found');
      expectProblem(await api.post(`/trash/${live.id}/restore`), 404, 'not-found');
      expectProblem(await api.post(`/trash/${theirs.id}/restore`), 404, 'not-found');

      expect(await trashedRow(theirs.id)).not.toBeNull();
      expect((await admin.post(`/trash/${theirs.id}/restore`)).status).toBe(200);
    });
  });

  describe('DELETE /trash/{id}', () => {
    it('erases the post and its revisions for good: 204 and a post.purged tombstone', async () => {
      const { body: post } = await create();
      await api.patch(`/posts/${post.id}`, { title: 'one' });
      await api.patch(`/posts/${post.id}`, { title: 'two' });
      await trash(post.id);
      expect(await storedRevisions(post.id)).toHaveLength(2);

      const response = await api.delete(`/trash/${post.id}`);

      expect(response.status).toBe(204);
      expect(response.text).toBe('');
      expect(await trashedRow(post.id)).toBeNull();
      expect(await storedPost(post.id)).toBeNull();
      expect(await storedRevisions(post.id)).toEqual([]);
      expect(
        (await api.get<TrashedPostResource[]>('/trash?limit=100')).body.map((trashed) => trashed.id),
      ).not.toContain(post.id);
      expectProblem(await api.get(`/posts/${post.id}`), 404, 'not-found');
      expectProblem(await api.post(`/trash/${post.id}/restore`), 404, 'not-found');
      expectProblem(await api.delete(`/trash/${post.id}`), 404, 'not-found');

      const events = await eventsOf(post.id);
      const purged = events[events.length - 1];
      expect(events.map((event) => event.type)).toEqual([
        'post.created',
        'post.updated',
        'post.updated',
        'post.deleted',
        'post.purged',
      ]);
      expect(purged.data.post).toEqual({ id: post.id });
      expect(purged.data.version).toBeGreaterThan(events[3].data.version as number);
      expect(purged.data.principal).toMatch(/^api-key:\d+$/);
    });

    it("answers 404 for an id not in the trash, a live post and someone else's trashed post", async () => {
      const { body: live } = await create();
      const other = await otherWriter();
      const { body: theirs } = await create({}, other);
      await trash(theirs.id, other);

      expectProblem(await api.delete('/trash/987654321'), 404, 'not-found');
      expectProblem(await api.delete(`/trash/${live.id}`), 404, 'not-found');
      expectProblem(await api.delete(`/trash/${theirs.id}`), 404, 'not-found');

      expect(await storedPost(live.id)).not.toBeNull();
      expect(await trashedRow(theirs.id)).not.toBeNull();
      expect((await admin.delete(`/trash/${theirs.id}`)).status).toBe(204);
    });
  });

  describe('under concurrency', () => {
    it('moves a post to the trash once when 10 DELETEs race: one 204, nine 404, one post.deleted', async () => {
      const { body: post } = await create();

      const responses = await Promise.all(Array.from({ length: 10 }, () => api.delete(`/posts/${post.id}`)));

      expect(responses.map((response) => response.status).sort()).toEqual([204, ...Array<number>(9).fill(404)]);
      expect(await storedPost(post.id)).toBeNull();
      expect(await trashedRow(post.id)).toMatchObject({ id: post.id, version: 2 });
      expect((await eventsOf(post.id)).map((event) => event.type)).toEqual(['post.created', 'post.deleted']);
    });

    it('brings a post back once when 10 restores race: one 200, nine 404, one post.restored', async () => {
      const { body: post } = await create();
      await trash(post.id);

      const responses = await Promise.all(Array.from({ length: 10 }, () => api.post(`/trash/${post.id}/restore`)));

      expect(responses.map((response) => response.status).sort()).toEqual([200, ...Array<number>(9).fill(404)]);
      expect(await trashedRow(post.id)).toBeNull();
      expect(await storedPost(post.id)).toMatchObject({ id: post.id, version: 3 });
      expect((await eventsOf(post.id)).map((event) => event.type)).toEqual([
        'post.created',
        'post.deleted',
        'post.restored',
      ]);
    });

    it('erases a post once when 10 purges race: one 204, nine 404, one post.purged', async () => {
      const { body: post } = await create();
      await trash(post.id);

      const responses = await Promise.all(Array.from({ length: 10 }, () => api.delete(`/trash/${post.id}`)));

      expect(responses.map((response) => response.status).sort()).toEqual([204, ...Array<number>(9).fill(404)]);
      expect(await trashedRow(post.id)).toBeNull();
      expect((await eventsOf(post.id)).map((event) => event.type)).toEqual([
        'post.created',
        'post.deleted',
        'post.purged',
      ]);
    });
  });

  describe('when moves in both directions race', () => {
    it('answers every DELETE, restore and PATCH of one post with 2xx, 404 or 412, never a 5xx, and keeps the post in one place', async () => {
      const { body: post } = await create();
      const answered: string[] = [];

      // Deletes, restores and patches of the same post at the same time lock rows of posts and
      // posts_trash in both orders: InnoDB breaks the deadlocks by rolling a transaction back.
      for (let round = 0; round < 150; round++) {
        const responses = await Promise.all([
          api.delete(`/posts/${post.id}`),
          api.post(`/trash/${post.id}/restore`),
          api.post(`/trash/${post.id}/restore`),
          api.patch(`/posts/${post.id}`, { content: `round ${round}` }),
        ]);
        answered.push(
          ...responses.map(
            (response, index) => `${['DELETE', 'restore', 'restore', 'PATCH'][index]} ${response.status}`,
          ),
        );
      }

      expect(answered.filter((answer) => !/ (200|204|404)$/.test(answer))).toEqual([]);
      const live = await storedPost(post.id);
      const trashed = await trashedRow(post.id);
      expect([live, trashed].filter((row) => row !== null)).toHaveLength(1);
      const versions = (await eventsOf(post.id)).map((event) => Number(event.data.version));
      expect(versions).toEqual([...versions].sort((left, right) => left - right));
      expect(new Set(versions).size).toBe(versions.length);
    });
  });

  describe('Idempotency-Key across the trash', () => {
    it('replays the original 201 for a retried create of a trashed post, creates nothing, and the restore works', async () => {
      const key = randomUUID();
      const body = buildPost();
      const first = await api.post<PostResource>('/posts', body, { 'Idempotency-Key': key });
      expect(first.status).toBe(201);
      await trash(first.body.id);
      const postsBefore = await context.countPosts();

      const replay = await api.post<PostResource>('/posts', body, { 'Idempotency-Key': key });

      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(replay.headers.get('location')).toBe(first.headers.get('location'));
      expect(await context.countPosts()).toBe(postsBefore);
      expectProblem(await api.get(`/posts/${first.body.id}`), 404, 'not-found');
      const restored = await api.post<PostResource>(`/trash/${first.body.id}/restore`);
      expect(restored.status).toBe(200);
      expect((await api.get(`/posts/${first.body.id}`)).status).toBe(200);
    });
  });
});

describe('TRASH_RETENTION: PostsMaintenance.purgeTrash', { tags: ['instance'] }, () => {
  const context = useTestApp();
  const { api, admin, create, trash, storedRevisions, readFeed } = trashHelpers(context);
  const maintenance = () => context.app.app.get(PostsMaintenance);

  it(
    'erases 150 posts trashed longer ago than the retention, in batches, each with one post.purged by system',
    { timeout: 60_000 },
    async () => {
      const ids: number[] = [];
      for (let start = 0; start < 150; start += 10) {
        const batch = await Promise.all(Array.from({ length: 10 }, () => create()));
        ids.push(...batch.map((response) => response.body.id));
      }
      for (const id of ids.slice(0, 5)) expect((await api.patch(`/posts/${id}`, { title: 'edited' })).status).toBe(200);
      for (let start = 0; start < ids.length; start += 10) {
        await Promise.all(ids.slice(start, start + 10).map((id) => trash(id)));
      }
      expect(await maintenance().purgeTrash(new Date(Date.now() + 29 * DAY_MS))).toBe(0);

      const purged = await maintenance().purgeTrash(new Date(Date.now() + 31 * DAY_MS));

      expect(purged).toBe(150);
      expect((await admin.get('/trash')).body).toEqual([]);
      for (const id of ids.slice(0, 5)) expect(await storedRevisions(id)).toEqual([]);
      const [stored] = await context.app.dataSource.query<Array<{ n: number | string; posts: number | string }>>(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT post_id) AS posts FROM events WHERE type = 'post.purged'",
      );
      expect([Number(stored.n), Number(stored.posts)]).toEqual([150, 150]);
      const events = await until(
        () => readFeed('&type=post.purged'),
        (found) => found.length >= 150,
        5_000,
        '150 post.purged events in the feed',
      );
      expect(events.map(postIdOf).sort((left, right) => left - right)).toEqual(ids.sort((left, right) => left - right));
      for (const event of events) {
        expect(event.data).toMatchObject({ post: { id: postIdOf(event) }, principal: 'system' });
        expect(Object.keys(event.data.post as object)).toEqual(['id']);
      }
      expect(await maintenance().purgeTrash(new Date(Date.now() + 31 * DAY_MS))).toBe(0);
    },
  );
});

describe('with TRASH_RETENTION=1s', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: { TRASH_RETENTION: '1s' } });
  const { create, trash, trashedRow } = trashHelpers(context);

  it('erases a post trashed more than 1 s ago and keeps one trashed just now', async () => {
    const { body: old } = await create();
    const { body: recent } = await create();
    await trash(old.id);
    const oldDeletedAt = (await trashedRow(old.id))!.deletedAt.getTime();
    await sleep(oldDeletedAt + 1_100 - Date.now());
    await trash(recent.id);

    const purged = await context.app.app.get(PostsMaintenance).purgeTrash();

    expect(purged).toBe(1);
    expect(await trashedRow(old.id)).toBeNull();
    expect(await trashedRow(recent.id)).not.toBeNull();
  });
});
