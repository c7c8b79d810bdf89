import { describe, expect, it } from 'vitest';
import type { FeedEvent } from '../src/events/event-types.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

/** The `after` of a Link: rel="next" header. */
function nextAfter(link: string | null): string {
  expect(link).toMatch(/^<[^>]*\/events\?[^>]*>; rel="next"$/);
  return new URL(link!.slice(1, link!.indexOf('>')), 'http://x').searchParams.get('after')!;
}

describe('GET /events (contract §9: the feed)', () => {
  const context = useTestApp();
  const { api } = context;
  const feed = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );

  /** Everything after `after`, page by page, and the position to resume from. */
  const readAll = async (after: string, query = '') => {
    const events: FeedEvent[] = [];
    for (;;) {
      const page = await feed.get<FeedEvent[]>(`/events?after=${after}&limit=100${query}`);
      expect(page.status).toBe(200);
      const next = nextAfter(page.headers.get('link'));
      events.push(...page.body);
      if (page.body.length === 0) return { events, next };
      after = next;
    }
  };
  const head = async () => (await readAll('0')).next;
  /**
   * The next `count` events after `after`, waiting for them (positions are handed out just after a
   * write's commit, which may be a moment after its response), then what follows them at once: [].
   */
  const nextEvents = async (after: string, count: number) => {
    const events: FeedEvent[] = [];
    while (events.length < count) {
      const page = await feed.get<FeedEvent[]>(`/events?after=${after}&wait=5`);
      expect(page.body.length).toBeGreaterThan(0);
      events.push(...page.body);
      after = nextAfter(page.headers.get('link'));
    }
    expect((await feed.get(`/events?after=${after}`)).body).toEqual([]);
    return events;
  };

  it('records create, replace, patch and delete, in order, with the post, its version and the principal', async () => {
    const start = await head();
    const created = await api.post<PostResource>('/posts', buildPost({ title: 'first' }));
    const id = created.body.id;
    const etag1 = created.headers.get('etag')!;
    const replaced = await api.put<PostResource>(`/posts/${id}`, buildPost({ title: 'second' }), { 'If-Match': etag1 });
    expect(replaced.status).toBe(200);
    const patched = await api.patch<PostResource>(
      `/posts/${id}`,
      { title: 'third' },
      {
        'If-Match': replaced.headers.get('etag')!,
      },
    );
    expect(patched.status).toBe(200);
    expect((await api.delete(`/posts/${id}`)).status).toBe(204);

    const mine = await nextEvents(start, 4);
    expect(mine.map((event) => event.type)).toEqual(['post.created', 'post.updated', 'post.updated', 'post.deleted']);
    expect(mine.map((event) => event.data.version)).toEqual([1, 2, 3, 4]);
    expect(mine[0].data.post).toEqual(created.body);
    expect(mine[1].data.post).toEqual(replaced.body);
    expect(mine[2].data.post).toEqual(patched.body);
    expect(mine[3].data.post).toEqual({ id });
    for (const event of mine) {
      expect(event.data.principal).toMatch(/^api-key:\d+$/);
      expect(event.data.principal).toBe(mine[0].data.principal);
      expect(Object.keys(event).sort()).toEqual(['data', 'id', 'occurredAt', 'type']);
      expect(event.id).toMatch(/^[1-9]\d*$/);
      expect(event.occurredAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(JSON.stringify(event)).not.toContain(context.app.writerToken);
    }
    const ids = mine.map((event) => Number(event.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(4);
  });

  it('emits nothing for a write that is refused or fails', async () => {
    const start = await head();
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    expect((await api.put(`/posts/${post.id}`, buildPost(), { 'If-Match': '"0"' })).status).toBe(412);
    expect((await api.patch(`/posts/${post.id}`, { title: '' })).status).toBe(400);
    expect((await api.post('/posts', { title: 'no content' })).status).toBe(400);
    expect((await api.as(context.app.adminToken).delete('/posts/987654321')).status).toBe(404);
    const marker = (await api.post<PostResource>('/posts', buildPost())).body;
    const events = await nextEvents(start, 2);
    expect(events.map((event) => [event.type, event.data.post])).toEqual([
      ['post.created', post],
      ['post.created', marker],
    ]);
  });

  it('gives an idempotent create one event, however often it is retried', async () => {
    const start = await head();
    const body = buildPost();
    const headers = { 'Idempotency-Key': `feed-${Date.now()}` };
    const first = await api.post<PostResource>('/posts', body, headers);
    const again = await api.post<PostResource>('/posts', body, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const events = await nextEvents(start, 1);
    expect(events.map((event) => [event.type, (event.data.post as { id: number }).id])).toEqual([
      ['post.created', first.body.id],
    ]);
  });

  it('always links to the next position: the same one when nothing has happened', async () => {
    const position = await head();
    const empty = await feed.get<FeedEvent[]>(`/events?after=${position}&limit=5&type=post.deleted`);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual([]);
    const link = empty.headers.get('link')!;
    expect(nextAfter(link)).toBe(position);
    expect(link).toContain('limit=5');
    expect(link).toContain('type=post.deleted');
  });

  it('pages with limit, oldest first, and filters by type', async () => {
    const start = await head();
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    await api.patch(`/posts/${post.id}`, { title: 'patched once' });
    await api.patch(`/posts/${post.id}`, { title: 'patched twice' });
    await api.delete(`/posts/${post.id}`);
    await nextEvents(start, 4);

    const first = await feed.get<FeedEvent[]>(`/events?after=${start}&limit=2`);
    expect(first.body.map((event) => event.type)).toEqual(['post.created', 'post.updated']);
    const second = await feed.get<FeedEvent[]>(`/events?after=${nextAfter(first.headers.get('link'))}&limit=2`);
    expect(second.body.map((event) => event.type)).toEqual(['post.updated', 'post.deleted']);

    const filtered = await readAll(start, '&type=post.deleted,post.created');
    expect(filtered.events.map((event) => event.type)).toEqual(['post.created', 'post.deleted']);
  });

  it('starts at the oldest event kept when there is no cursor', async () => {
    const fromStart = await feed.get<FeedEvent[]>('/events?limit=3');
    const afterZero = await feed.get<FeedEvent[]>('/events?limit=3&after=0');
    expect(fromStart.status).toBe(200);
    expect(fromStart.body).toHaveLength(3);
    expect(fromStart.body).toEqual(afterZero.body);
  });

  it('long-polls with wait: answers as soon as an event exists', async () => {
    const position = await head();
    const started = Date.now();
    const waiting = feed.get<FeedEvent[]>(`/events?after=${position}&wait=10`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.map((event) => event.data.post)).toEqual([post]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('long-polls with wait: answers empty, linking to the same position, when the time is up', async () => {
    const position = await head();
    const started = Date.now();
    const answer = await feed.get<FeedEvent[]>(`/events?after=${position}&wait=1`);
    const waited = Date.now() - started;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([]);
    expect(nextAfter(answer.headers.get('link'))).toBe(position);
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(3_000);
  });

  it.each([
    ['after=abc', 'after'],
    ['after=-1', 'after'],
    ['after=1234567890123456', 'after'],
    ['after=999999999999', 'after'],
    ['type=post.archived', 'type'],
    ['type=post.created,', 'type'],
    ['type=post.created&type=post.deleted', 'type'],
    ['wait=31', 'wait'],
    ['wait=1.5', 'wait'],
    ['limit=0', 'limit'],
    ['limit=x', 'limit'],
  ])('refuses %s with 400 naming the parameter', async (query, parameter) => {
    const problem = expectProblem(await feed.get(`/events?${query}`), 400, 'validation-failed');
    expect(problem.errors?.map((error) => ('parameter' in error ? error.parameter : undefined))).toContain(parameter);
  });

  it('needs events:read (or admin): a posts:write key is 403, an events:read key reads', async () => {
    expectProblem(await api.get('/events'), 403, 'insufficient-scope');
    const reader = await context.app.createToken(['events:read']);
    const page = await api.as(reader).get('/events?limit=1');
    expect(page.status).toBe(200);
    expectProblem(await api.as(null).get('/events'), 401, 'unauthorized');
  });
});
