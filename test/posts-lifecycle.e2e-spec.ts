// @module-tag database
// (counts rows in posts, post_revisions and events around refused writes, and reads the stored state)
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Scope } from '../src/auth/principal.js';
import { PostsMaintenance } from '../src/posts/posts-maintenance.js';
import { Post } from '../src/posts/post.entity.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client, type HttpResult } from './helpers/http.js';
import { isStrictlyIncreasing, nextLinkOf, postFeed, postIdOf, until } from './helpers/post-feed.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

const HOUR_MS = 60 * 60 * 1000;
// An import's original publication time: kept to the millisecond.
const PAST_INSTANT = '2001-02-03T04:05:06.789Z';

const inFuture = (ms: number): string => new Date(Date.now() + ms).toISOString();
const uniqueAuthor = (label = 'author'): string => `${label}-${randomUUID()}`;
const idsOf = (posts: PostResource[]): number[] => posts.map((post) => post.id);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The state rules of contract §10 a body can break, each with the pointer the 400 must name. */
const INVALID_STATES: Array<[string, () => Record<string, unknown>, string]> = [
  ['a draft with a publishedAt in the past', () => ({ status: 'draft', publishedAt: PAST_INSTANT }), '/publishedAt'],
  [
    'a draft with a publishedAt in the future',
    () => ({ status: 'draft', publishedAt: inFuture(HOUR_MS) }),
    '/publishedAt',
  ],
  [
    'a published post with a future publishedAt',
    () => ({ status: 'published', publishedAt: inFuture(HOUR_MS) }),
    '/publishedAt',
  ],
  ['a published post with publishedAt null', () => ({ status: 'published', publishedAt: null }), '/publishedAt'],
  ['a scheduled post without publishedAt', () => ({ status: 'scheduled' }), '/publishedAt'],
  ['a scheduled post with publishedAt null', () => ({ status: 'scheduled', publishedAt: null }), '/publishedAt'],
  [
    'a scheduled post with a past publishedAt',
    () => ({ status: 'scheduled', publishedAt: PAST_INSTANT }),
    '/publishedAt',
  ],
  ['status null', () => ({ status: null }), '/status'],
  ['status "archived"', () => ({ status: 'archived' }), '/status'],
  ['status "Published" (case matters)', () => ({ status: 'Published' }), '/status'],
  ['publishedAt "yesterday"', () => ({ status: 'published', publishedAt: 'yesterday' }), '/publishedAt'],
  ['publishedAt 12345', () => ({ status: 'published', publishedAt: 12345 }), '/publishedAt'],
  ['publishedAt ""', () => ({ status: 'published', publishedAt: '' }), '/publishedAt'],
  [
    'publishedAt on a day that does not exist',
    () => ({ status: 'published', publishedAt: '2001-02-30T00:00:00Z' }),
    '/publishedAt',
  ],
];

describe('the editorial life of a post (contract §10)', () => {
  const context = useTestApp();
  const { api } = context;
  const admin = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );

  const countRows = async (table: 'posts' | 'post_revisions' | 'events'): Promise<number> => {
    const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(
      `SELECT COUNT(*) AS n FROM ${table}`,
    );
    return Number(row.n);
  };
  const countAllRows = async () => ({
    posts: await countRows('posts'),
    revisions: await countRows('post_revisions'),
    events: await countRows('events'),
  });
  const storedPost = (id: number): Promise<Post | null> => context.app.dataSource.getRepository(Post).findOneBy({ id });
  const { readFeed, eventsOf } = postFeed(() => context.app.dataSource, admin);

  const create = async (overrides: Record<string, unknown> = {}): Promise<HttpResult<PostResource>> => {
    const response = await api.post<PostResource>('/posts', { ...buildPost(), ...overrides });
    expect(response.status).toBe(201);
    return response;
  };
  const listed = async (author: string): Promise<number[]> => {
    const response = await api.get<PostResource[]>(`/posts?author=${author}`);
    expect(response.status).toBe(200);
    return idsOf(response.body);
  };

  describe('on create', () => {
    it('publishes a post created without status at once, as a client of the original interface expects', async () => {
      const author = uniqueAuthor();
      const before = Date.now();

      const created = await create({ author });

      expect(created.body.status).toBe('published');
      const publishedAt = Date.parse(created.body.publishedAt!);
      expect(publishedAt).toBeGreaterThanOrEqual(before);
      expect(publishedAt).toBeLessThanOrEqual(Date.now());
      expect(Math.abs(publishedAt - Date.parse(created.body.createdAt))).toBeLessThan(1_000);
      expect(await listed(author)).toEqual([created.body.id]);
      expect((await api.get<PostResource>(`/posts/${created.body.id}`)).body).toEqual(created.body);
      expect(await storedPost(created.body.id)).toMatchObject({ status: 'published', version: 1 });
    });

    it('creates a draft, with publishedAt null, that only its owner sees and that is not listed', async () => {
      const author = uniqueAuthor();

      const created = await create({ author, status: 'draft' });
      const explicitNull = await create({ author, status: 'draft', publishedAt: null });

      for (const draft of [created.body, explicitNull.body]) {
        expect(draft).toMatchObject({ status: 'draft', publishedAt: null });
        expect((await api.get<PostResource>(`/posts/${draft.id}`)).body).toEqual(draft);
        expect(await storedPost(draft.id)).toMatchObject({ status: 'draft', publishedAt: null });
      }
      expect(await listed(author)).toEqual([]);
    });

    it('publishes now when status published comes without publishedAt', async () => {
      const before = Date.now();

      const created = await create({ status: 'published' });

      expect(created.body.status).toBe('published');
      expect(Date.parse(created.body.publishedAt!)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(created.body.publishedAt!)).toBeLessThanOrEqual(Date.now());
    });

    it('keeps the past publishedAt of an import exactly, and lists the post', async () => {
      const author = uniqueAuthor();

      const created = await create({ author, status: 'published', publishedAt: '2001-02-03T05:05:06.789+01:00' });

      expect(created.body).toMatchObject({ status: 'published', publishedAt: PAST_INSTANT });
      expect((await storedPost(created.body.id))?.publishedAt?.toISOString()).toBe(PAST_INSTANT);
      expect(await listed(author)).toEqual([created.body.id]);
    });

    it('creates a scheduled post that is not listed until its instant', async () => {
      const author = uniqueAuthor();
      const publishedAt = inFuture(HOUR_MS);

      const created = await create({ author, status: 'scheduled', publishedAt });

      expect(created.body).toMatchObject({ status: 'scheduled', publishedAt });
      expect(created.headers.get('etag')).toBe(`"${created.body.id}.1"`);
      expect((await api.get<PostResource>(`/posts/${created.body.id}`)).body).toEqual(created.body);
      expect(await listed(author)).toEqual([]);
      expect(await storedPost(created.body.id)).toMatchObject({ status: 'scheduled', version: 1 });
    });

    it.each(INVALID_STATES)('refuses %s with 400 at %s and stores nothing', async (_, state, pointer) => {
      const rowsBefore = await countAllRows();

      const response = await api.post('/posts', { ...buildPost(), ...state() });

      const problem = expectProblem(response, 400, 'validation-failed');
      expect(problem.errors?.map((error) => error.pointer)).toEqual([pointer]);
      expect(await countAllRows()).toEqual(rowsBefore);
    });
  });

  describe.each([
    ['PUT', (id: number, state: Record<string, unknown>) => api.put(`/posts/${id}`, { ...buildPost(), ...state })],
    ['PATCH', (id: number, state: Record<string, unknown>) => api.patch(`/posts/${id}`, state)],
  ])('on %s', (method, write) => {
    /** Asserts a 400 at `pointer` that changed nothing: not the row, no revision, no event. */
    const expectRefused = async (id: number, state: Record<string, unknown>, pointer: string) => {
      const rowBefore = await storedPost(id);
      const rowsBefore = await countAllRows();

      const problem = expectProblem(await write(id, state), 400, 'validation-failed');

      expect(problem.errors?.map((error) => error.pointer)).toEqual([pointer]);
      expect(await storedPost(id)).toEqual(rowBefore);
      expect(await countAllRows()).toEqual(rowsBefore);
    };

    it.each(INVALID_STATES)(
      `refuses ${method} with %s with 400 at %s and changes nothing`,
      async (_, state, pointer) => {
        const { body: post } = await create();
        await expectRefused(post.id, state(), pointer);
      },
    );

    it(`refuses ${method} with a publishedAt for a draft (no status: the post stays a draft)`, async () => {
      const { body: draft } = await create({ status: 'draft' });
      await expectRefused(draft.id, { publishedAt: PAST_INSTANT }, '/publishedAt');
    });

    it(`refuses ${method} with a future publishedAt alone for a published post`, async () => {
      const { body: post } = await create();
      await expectRefused(post.id, { publishedAt: inFuture(HOUR_MS) }, '/publishedAt');
    });

    it(`refuses ${method} with a past publishedAt alone for a scheduled post`, async () => {
      const { body: post } = await create({ status: 'scheduled', publishedAt: inFuture(HOUR_MS) });
      await expectRefused(post.id, { publishedAt: PAST_INSTANT }, '/publishedAt');
    });

    it(`keeps the state of a draft, a scheduled and a backdated post when ${method} has no status`, async () => {
      const states = [
        { status: 'draft', publishedAt: null },
        { status: 'scheduled', publishedAt: inFuture(HOUR_MS) },
        { status: 'published', publishedAt: PAST_INSTANT },
      ];
      for (const state of states) {
        const { body: post } = await create(state);

        const response = await write(post.id, { title: `${method} without status` });

        expect(response.status).toBe(200);
        expect(response.body).toMatchObject({ ...state, title: `${method} without status` });
        expect(await storedPost(post.id)).toMatchObject({ status: state.status, version: 2 });
      }
    });

    it(`publishes a draft now with ${method} status published, and lists it`, async () => {
      const author = uniqueAuthor();
      const { body: draft } = await create({ author, status: 'draft' });
      const before = Date.now();

      const response = await write(draft.id, { author, status: 'published' });

      expect(response.status).toBe(200);
      const published = response.body as PostResource;
      expect(published.status).toBe('published');
      expect(Date.parse(published.publishedAt!)).toBeGreaterThanOrEqual(before);
      expect(Date.parse(published.publishedAt!)).toBeLessThanOrEqual(Date.now());
      expect(await listed(author)).toEqual([draft.id]);
      const events = await eventsOf(draft.id);
      expect(events.map((event) => event.type)).toEqual(['post.created', 'post.published']);
      expect(events[1].data.post).toEqual(published);
    });

    it(`keeps the publishedAt of a published post when ${method} sends status published again`, async () => {
      const { body: post } = await create({ status: 'published', publishedAt: PAST_INSTANT });

      const response = await write(post.id, { status: 'published' });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'published', publishedAt: PAST_INSTANT });
    });

    it(`re-dates a scheduled post and backdates a published one with ${method} publishedAt alone`, async () => {
      const { body: scheduled } = await create({ status: 'scheduled', publishedAt: inFuture(HOUR_MS) });
      const { body: published } = await create();
      const later = inFuture(2 * HOUR_MS);

      const rescheduled = await write(scheduled.id, { publishedAt: later });
      const backdated = await write(published.id, { publishedAt: PAST_INSTANT });

      expect(rescheduled.status).toBe(200);
      expect(rescheduled.body).toMatchObject({ status: 'scheduled', publishedAt: later });
      expect(backdated.status).toBe(200);
      expect(backdated.body).toMatchObject({ status: 'published', publishedAt: PAST_INSTANT });
      expect((await storedPost(published.id))?.publishedAt?.toISOString()).toBe(PAST_INSTANT);
    });

    it(`takes a published post back to draft with ${method}: publishedAt null, no longer listed`, async () => {
      const author = uniqueAuthor();
      const { body: post } = await create({ author });

      const response = await write(post.id, { author, status: 'draft' });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'draft', publishedAt: null });
      expect(await listed(author)).toEqual([]);
      expect((await eventsOf(post.id)).map((event) => event.type)).toEqual(['post.created', 'post.unpublished']);
    });

    it(`schedules a published post with ${method}: no longer listed until the new instant`, async () => {
      const author = uniqueAuthor();
      const { body: post } = await create({ author });
      const publishedAt = inFuture(HOUR_MS);

      const response = await write(post.id, { author, status: 'scheduled', publishedAt });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ status: 'scheduled', publishedAt });
      expect(await listed(author)).toEqual([]);
    });
  });

  describe('Idempotency-Key with a state', () => {
    it('replays the first response to a retry with the same status, and creates nothing more', async () => {
      const key = randomUUID();
      const body = { ...buildPost(), status: 'scheduled', publishedAt: inFuture(HOUR_MS) };
      const first = await api.post<PostResource>('/posts', body, { 'Idempotency-Key': key });
      const postsBefore = await context.countPosts();

      const replay = await api.post<PostResource>('/posts', body, { 'Idempotency-Key': key });

      expect(first.status).toBe(201);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(replay.body).toMatchObject({ status: 'scheduled', publishedAt: body.publishedAt });
      expect(replay.headers.get('etag')).toBe(first.headers.get('etag'));
      expect(await context.countPosts()).toBe(postsBefore);
    });

    it.each([
      ['another status', () => ({ status: 'draft' }), () => ({ status: 'published' })],
      [
        'another publishedAt',
        () => ({ status: 'scheduled', publishedAt: inFuture(HOUR_MS) }),
        () => ({ publishedAt: inFuture(2 * HOUR_MS) }),
      ],
    ])('answers 422 to the same key with %s, and creates nothing', async (_, state, change) => {
      const key = randomUUID();
      const body = { ...buildPost(), ...state() };
      expect((await api.post('/posts', body, { 'Idempotency-Key': key })).status).toBe(201);
      const postsBefore = await context.countPosts();

      const reused = await api.post('/posts', { ...body, ...change() }, { 'Idempotency-Key': key });

      expectProblem(reused, 422, 'idempotency-key-reused');
      expect(await context.countPosts()).toBe(postsBefore);
    });
  });

  describe('scheduled publishing', () => {
    it(
      'publishes a scheduled post when its instant passes, with no write: reads, listing, ETag and one post.published',
      { timeout: 20_000 },
      async () => {
        const author = uniqueAuthor();
        const publishAt = new Date(Date.now() + 1_500);
        const created = await create({ author, status: 'scheduled', publishedAt: publishAt.toISOString() });
        const id = created.body.id;

        const before = await api.get<PostResource>(`/posts/${id}`);
        const listedBefore = await listed(author);
        const scheduledBefore = await api.get<PostResource[]>(`/posts?status=scheduled&author=${author}`);
        // The reads above must have happened before the instant, or they prove nothing.
        expect(Date.now()).toBeLessThan(publishAt.getTime());
        expect(before.body.status).toBe('scheduled');
        expect(before.headers.get('etag')).toBe(`"${id}.1"`);
        expect(listedBefore).toEqual([]);
        expect(idsOf(scheduledBefore.body)).toEqual([id]);

        const after = await until(
          () => api.get<PostResource>(`/posts/${id}`),
          (response) => response.body.status === 'published',
          5_000,
          `post ${id} to read as published`,
        );
        expect(Date.now()).toBeGreaterThanOrEqual(publishAt.getTime());
        expect(after.headers.get('etag')).toBe(`"${id}.2"`);
        expect(after.body).toMatchObject({
          ...created.body,
          status: 'published',
          publishedAt: publishAt.toISOString(),
          updatedAt: after.body.updatedAt,
        });
        expect(await listed(author)).toEqual([id]);
        expect((await api.get(`/posts?status=scheduled&author=${author}`)).body).toEqual([]);

        const publishedEvents = await until(
          async () => (await readFeed('&type=post.published')).filter((event) => postIdOf(event) === id),
          (events) => events.length > 0,
          5_000,
          `post.published of post ${id}`,
        );
        expect(publishedEvents).toHaveLength(1);
        expect(publishedEvents[0].data).toMatchObject({ version: 2, principal: 'system' });
        expect(publishedEvents[0].data.post).toEqual(after.body);

        const patched = await api.patch<PostResource>(
          `/posts/${id}`,
          { title: 'after publication' },
          { 'if-match': after.headers.get('etag')! },
        );
        expect(patched.status).toBe(200);
        expect(patched.headers.get('etag')).toBe(`"${id}.3"`);
        expect(patched.body).toMatchObject({ status: 'published', publishedAt: publishAt.toISOString() });

        const events = await eventsOf(id);
        expect(events.map((event) => [event.type, event.data.version])).toEqual([
          ['post.created', 1],
          ['post.published', 2],
          ['post.updated', 3],
        ]);
        expect(await storedPost(id)).toMatchObject({ status: 'published', version: 3 });
      },
    );

    it(
      'accepts a PUT and a DELETE with the ETag GET showed after the instant, the publication stored first',
      { timeout: 20_000 },
      async () => {
        const publishedAt = new Date(Date.now() + 1_200).toISOString();
        const { body: replaced } = await create({ status: 'scheduled', publishedAt });
        const { body: deleted } = await create({ status: 'scheduled', publishedAt });
        const readPublished = (id: number) =>
          until(
            () => api.get<PostResource>(`/posts/${id}`),
            (response) => response.body.status === 'published',
            5_000,
            `post ${id} to read as published`,
          );

        const replacedRead = await readPublished(replaced.id);
        const put = await api.put<PostResource>(`/posts/${replaced.id}`, buildPost(), {
          'if-match': replacedRead.headers.get('etag')!,
        });
        const deletedRead = await readPublished(deleted.id);
        const deletion = await api.delete(`/posts/${deleted.id}`, { 'if-match': deletedRead.headers.get('etag')! });

        expect(replacedRead.headers.get('etag')).toBe(`"${replaced.id}.2"`);
        expect(put.status).toBe(200);
        expect(put.body).toMatchObject({ status: 'published', publishedAt });
        expect(put.headers.get('etag')).toBe(`"${replaced.id}.3"`);
        expect(deletedRead.headers.get('etag')).toBe(`"${deleted.id}.2"`);
        expect(deletion.status).toBe(204);
        expect((await eventsOf(replaced.id)).map((event) => [event.type, event.data.version])).toEqual([
          ['post.created', 1],
          ['post.published', 2],
          ['post.updated', 3],
        ]);
        expect((await eventsOf(deleted.id)).map((event) => [event.type, event.data.version])).toEqual([
          ['post.created', 1],
          ['post.published', 2],
          ['post.deleted', 3],
        ]);
      },
    );
  });

  describe('events', () => {
    it('names every change by what it did, with strictly increasing versions and the post state', async () => {
      const writes: Array<{ type: string; response: HttpResult<PostResource> }> = [];
      const created = await create({ status: 'draft' });
      const id = created.body.id;
      writes.push({ type: 'post.created', response: created });
      const step = async (type: string, response: Promise<HttpResult>) => {
        const result = await response;
        expect(result.status, type).toBe(type === 'post.deleted' || type === 'post.purged' ? 204 : 200);
        writes.push({ type, response: result as HttpResult<PostResource> });
      };

      await step('post.published', api.patch(`/posts/${id}`, { status: 'published' }));
      await step('post.updated', api.patch(`/posts/${id}`, { title: 'edited while published' }));
      await step('post.unpublished', api.patch(`/posts/${id}`, { status: 'draft' }));
      await step('post.updated', api.patch(`/posts/${id}`, { content: 'edited as a draft' }));
      await step(
        'post.updated',
        api.put(`/posts/${id}`, { ...buildPost(), status: 'scheduled', publishedAt: inFuture(HOUR_MS) }),
      );
      await step('post.published', api.put(`/posts/${id}`, { ...buildPost(), status: 'published' }));
      await step('post.deleted', api.delete(`/posts/${id}`));
      await step('post.restored', api.post(`/trash/${id}/restore`));
      await step('post.deleted', api.delete(`/posts/${id}`));
      await step('post.purged', api.delete(`/trash/${id}`));

      const events = await eventsOf(id);
      expect(events.map((event) => event.type)).toEqual(writes.map((write) => write.type));
      const versions = events.map((event) => event.data.version as number);
      const history = JSON.stringify(events.map((event) => [event.type, event.data.version]));
      expect(isStrictlyIncreasing(versions), `the versions of ${history}`).toBe(true);
      events.forEach((event, index) => {
        const { response } = writes[index];
        if (event.type === 'post.deleted' || event.type === 'post.purged') {
          expect(event.data.post).toEqual({ id });
          return;
        }
        // A change's event carries the post as the response showed it, with the version of its ETag.
        expect(event.data.post).toEqual(response.body);
        expect(Object.keys(event.data.post as object)).toEqual(expect.arrayContaining(['status', 'publishedAt']));
        expect(`"${id}.${String(event.data.version)}"`).toBe(response.headers.get('etag'));
        expect(event.data.principal).toMatch(/^api-key:\d+$/);
      });
    });

    it('filters the feed by type=post.published', async () => {
      const { body: draft } = await create({ status: 'draft' });
      await api.patch(`/posts/${draft.id}`, { status: 'published' });
      await api.patch(`/posts/${draft.id}`, { title: 'not a publication' });
      await eventsOf(draft.id);

      const published = await readFeed('&type=post.published');

      expect(published.length).toBeGreaterThan(0);
      expect(new Set(published.map((event) => event.type))).toEqual(new Set(['post.published']));
      expect(published.filter((event) => postIdOf(event) === draft.id)).toHaveLength(1);
    });
  });

  describe('GET /posts?status=', () => {
    const otherWriter = async () => api.as(await context.app.createToken([Scope.postsRead, Scope.postsWrite]));

    it("lists a writer's own drafts only, and every draft for admin", async () => {
      const author = uniqueAuthor();
      const other = await otherWriter();
      const mine = [(await create({ author, status: 'draft' })).body, (await create({ author, status: 'draft' })).body];
      const theirs = (await other.post<PostResource>('/posts', { ...buildPost({ author }), status: 'draft' })).body;
      await create({ author });

      const ownList = await api.get<PostResource[]>(`/posts?status=draft&author=${author}`);
      const theirList = await other.get<PostResource[]>(`/posts?status=draft&author=${author}`);
      const adminList = await admin.get<PostResource[]>(`/posts?status=draft&author=${author}`);

      expect(ownList.status).toBe(200);
      expect(ownList.body).toEqual([...mine].reverse());
      expect(idsOf(theirList.body)).toEqual([theirs.id]);
      expect(idsOf(adminList.body)).toEqual([theirs.id, mine[1].id, mine[0].id]);
    });

    it('lists not-yet-due scheduled posts with status=scheduled, and published ones with status=published', async () => {
      const author = uniqueAuthor();
      const scheduled = (await create({ author, status: 'scheduled', publishedAt: inFuture(HOUR_MS) })).body;
      const published = (await create({ author })).body;
      await create({ author, status: 'draft' });

      const scheduledList = await api.get<PostResource[]>(`/posts?status=scheduled&author=${author}`);
      const publishedList = await api.get<PostResource[]>(`/posts?status=published&author=${author}`);

      expect(scheduledList.body).toEqual([scheduled]);
      expect(publishedList.body).toEqual([published]);
      expect(await listed(author)).toEqual([published.id]);
    });

    it('counts the posts of the status with count=true', async () => {
      const author = uniqueAuthor();
      const other = await otherWriter();
      for (let index = 0; index < 3; index++) await create({ author, status: 'draft' });
      await other.post('/posts', { ...buildPost({ author }), status: 'draft' });
      await create({ author });

      const own = await api.get(`/posts?status=draft&author=${author}&count=true&limit=1`);
      const all = await admin.get(`/posts?status=draft&author=${author}&count=true&limit=1`);
      const published = await api.get(`/posts?status=published&author=${author}&count=true`);

      expect(own.headers.get('x-total-count')).toBe('3');
      expect(all.headers.get('x-total-count')).toBe('4');
      expect(published.headers.get('x-total-count')).toBe('1');
    });

    it('pages through drafts with a next link that keeps status, never repeating or skipping one', async () => {
      const author = uniqueAuthor();
      const drafts: number[] = [];
      for (let index = 0; index < 5; index++) drafts.push((await create({ author, status: 'draft' })).body.id);
      await create({ author });

      const seen: number[] = [];
      let next: string | undefined = `/posts?status=draft&author=${author}&limit=2`;
      for (let pages = 0; next !== undefined; pages++) {
        expect(pages).toBeLessThan(5);
        const page: HttpResult<PostResource[]> = await api.get<PostResource[]>(next);
        expect(page.status).toBe(200);
        page.body.forEach((post) => expect(post.status).toBe('draft'));
        seen.push(...idsOf(page.body));
        next = nextLinkOf(page);
        if (next !== undefined) expect(new URL(next, 'http://x').searchParams.get('status')).toBe('draft');
      }

      expect(seen).toEqual([...drafts].reverse());
    });

    it('refuses a cursor of the draft listing in the scheduled or published listing (400)', async () => {
      const author = uniqueAuthor();
      for (let index = 0; index < 3; index++) await create({ author, status: 'draft' });
      const first = await api.get(`/posts?status=draft&author=${author}&limit=1`);
      const cursor = new URL(nextLinkOf(first)!, 'http://x').searchParams.get('cursor')!;

      for (const status of ['scheduled', 'published']) {
        const response = await api.get(`/posts?status=${status}&author=${author}&limit=1&cursor=${cursor}`);
        const problem = expectProblem(response, 400, 'validation-failed');
        expect(problem.errors?.map((error) => error.parameter)).toEqual(['cursor']);
      }
      expect((await api.get(`/posts?status=draft&author=${author}&limit=1&cursor=${cursor}`)).status).toBe(200);
    });

    it.each(['archived', 'DRAFT', ''])('refuses status=%s with 400 naming the status parameter', async (status) => {
      const problem = expectProblem(await api.get(`/posts?status=${status}`), 400, 'validation-failed');
      expect(problem.errors?.map((error) => error.parameter)).toEqual(['status']);
    });
  });
});

describe('a due scheduled post before the publication sweep has run', { tags: ['instance'] }, () => {
  const context = useTestApp();
  const { api } = context;
  let maintenance: PostsMaintenance;
  /** The real sweep, which the held timer no longer runs. */
  const sweep = (): Promise<number> => PostsMaintenance.prototype.publishDue.call(maintenance);

  beforeAll(() => {
    maintenance = context.app.app.get(PostsMaintenance);
    // Holds this app's publication timer, so what reads show is the query-time state alone.
    vi.spyOn(maintenance, 'publishDue').mockResolvedValue(0);
  });

  const storedPost = (id: number): Promise<Post | null> => context.app.dataSource.getRepository(Post).findOneBy({ id });
  const storedEventTypes = async (id: number): Promise<string[]> => {
    const rows = await context.app.dataSource.query<Array<{ type: string }>>(
      'SELECT type FROM events WHERE post_id = ? ORDER BY id',
      [id],
    );
    return rows.map((row) => row.type);
  };

  it(
    'reads, lists and counts it as published with the next version, and the sweep then stores that once',
    { timeout: 20_000 },
    async () => {
      const author = uniqueAuthor();
      const publishedAt = new Date(Date.now() + 1_000).toISOString();
      const created = await api.post<PostResource>('/posts', {
        ...buildPost({ author }),
        status: 'scheduled',
        publishedAt,
      });
      const id = created.body.id;
      const due = await until(
        () => api.get<PostResource>(`/posts/${id}`),
        (response) => response.body.status === 'published',
        5_000,
        `post ${id} to read as published`,
      );
      // More than one sweep interval later, the held sweep has still stored nothing.
      await sleep(1_200);

      expect(await storedPost(id)).toMatchObject({ status: 'scheduled', version: 1 });
      expect(await storedEventTypes(id)).toEqual(['post.created']);
      expect(due.headers.get('etag')).toBe(`"${id}.2"`);
      expect((await api.get(`/posts/${id}`, { 'if-none-match': created.headers.get('etag')! })).status).toBe(200);
      expect((await api.get(`/posts/${id}`, { 'if-none-match': due.headers.get('etag')! })).status).toBe(304);
      const list = await api.get<PostResource[]>(`/posts?author=${author}&count=true`);
      expect(list.body).toEqual([due.body]);
      expect(list.headers.get('x-total-count')).toBe('1');
      const scheduled = await api.get<PostResource[]>(`/posts?status=scheduled&author=${author}&count=true`);
      expect(scheduled.body).toEqual([]);
      expect(scheduled.headers.get('x-total-count')).toBe('0');

      expect(await sweep()).toBe(1);
      expect(await sweep()).toBe(0);

      expect(await storedPost(id)).toMatchObject({ status: 'published', version: 2 });
      expect(await storedEventTypes(id)).toEqual(['post.created', 'post.published']);
      const read = await api.get<PostResource>(`/posts/${id}`);
      expect(read.body).toEqual(due.body);
      expect(read.headers.get('etag')).toBe(due.headers.get('etag'));
    },
  );

  it(
    'stores the publication before a PATCH with the ETag GET showed, with its event, once',
    { timeout: 20_000 },
    async () => {
      const publishedAt = new Date(Date.now() + 1_000).toISOString();
      const created = await api.post<PostResource>('/posts', { ...buildPost(), status: 'scheduled', publishedAt });
      const id = created.body.id;
      const due = await until(
        () => api.get<PostResource>(`/posts/${id}`),
        (response) => response.body.status === 'published',
        5_000,
        `post ${id} to read as published`,
      );
      expect(await storedPost(id)).toMatchObject({ status: 'scheduled', version: 1 });

      const patched = await api.patch<PostResource>(
        `/posts/${id}`,
        { title: 'written when due' },
        { 'if-match': due.headers.get('etag')! },
      );

      expect(patched.status).toBe(200);
      expect(patched.headers.get('etag')).toBe(`"${id}.3"`);
      expect(patched.body).toMatchObject({ status: 'published', publishedAt, title: 'written when due' });
      expect(await storedPost(id)).toMatchObject({ status: 'published', version: 3 });
      expect(await storedEventTypes(id)).toEqual(['post.created', 'post.published', 'post.updated']);
      expect(await sweep()).toBe(0);
      expect(await storedEventTypes(id)).toEqual(['post.created', 'post.published', 'post.updated']);
      // The revision a PATCH keeps is the state it replaced: the publication the write stored first.
      const revisions = await api.get<Array<{ version: number; status: string }>>(`/posts/${id}/revisions`);
      expect(revisions.body.map((revision) => [revision.version, revision.status])).toEqual([[2, 'published']]);
    },
  );

  it(
    'refuses a PATCH with the ETag from before the instant (412): the post has changed since',
    { timeout: 20_000 },
    async () => {
      const publishedAt = new Date(Date.now() + 1_000).toISOString();
      const created = await api.post<PostResource>('/posts', { ...buildPost(), status: 'scheduled', publishedAt });
      const id = created.body.id;
      await until(
        () => api.get<PostResource>(`/posts/${id}`),
        (response) => response.body.status === 'published',
        5_000,
        `post ${id} to read as published`,
      );

      const response = await api.patch(
        `/posts/${id}`,
        { title: 'stale' },
        { 'if-match': created.headers.get('etag')! },
      );

      expectProblem(response, 412, 'precondition-failed');
      expect((await storedPost(id))?.title).toBe(created.body.title);
    },
  );
});
