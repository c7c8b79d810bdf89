import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventSequencer } from '../src/events/event-sequencer.js';
import { EventsRetention } from '../src/events/events-retention.js';
import { EventsRepository } from '../src/events/events.repository.js';
import { EventsService } from '../src/events/events.service.js';
import type { FeedEvent } from '../src/events/event-types.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { dialect } from './helpers/test-database.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

// The outbox's guarantees that need the service in this process: a change and its event commit or
// roll back together, and retention makes old cursors 410.
describe('the events outbox', { tags: ['database'] }, () => {
  const context = useTestApp();
  const { api } = context;
  const admin = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );
  const count = async (table: 'posts' | 'events') => {
    const [row] = await context.app.dataSource.query<Array<{ n: number | string }>>(
      `SELECT COUNT(*) AS n FROM ${table}`,
    );
    return Number(row.n);
  };

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each(['create', 'patch', 'delete'] as const)(
    'a %s whose transaction fails after its event was written leaves neither the change nor the event',
    async (write) => {
      const post = (await api.post<PostResource>('/posts', buildPost())).body;
      if (write === 'create' && dialect === 'mysql') {
        // There a create is one statement batch; its event's INSERT fails (data NULL) after the post's.
        const repository = context.app.app.get(EventsRepository);
        const insertWithEvent = repository.insertWithEvent.bind(repository);
        vi.spyOn(repository, 'insertWithEvent').mockImplementationOnce((insert, event) =>
          insertWithEvent(insert, { ...event, dataAroundId: [event.dataAroundId[0], null as unknown as string] }),
        );
      } else {
        const events = context.app.app.get(EventsService);
        const append = events.append.bind(events);
        vi.spyOn(events, 'append').mockImplementationOnce(async (event) => {
          await append(event);
          throw new Error('injected: fails after the event insert');
        });
      }
      const [postsBefore, eventsBefore] = [await count('posts'), await count('events')];

      const response =
        write === 'create'
          ? await api.post('/posts', buildPost())
          : write === 'patch'
            ? await api.patch(`/posts/${post.id}`, { title: 'never' })
            : await api.delete(`/posts/${post.id}`);

      expectProblem(response, 500, 'internal-error');
      expect([await count('posts'), await count('events')]).toEqual([postsBefore, eventsBefore]);
      expect((await api.get<PostResource>(`/posts/${post.id}`)).body).toEqual(post);
      // No connection went back to the pool inside the failed transaction: the next writes on it
      // would commit what it left (MySQL's START TRANSACTION commits an open one).
      for (let index = 0; index < 5; index += 1) expect((await api.post('/posts', buildPost())).status).toBe(201);
      expect([await count('posts'), await count('events')]).toEqual([postsBefore + 5, eventsBefore + 5]);
    },
  );

  it('removes the oldest events in feed order, up to the first one still within EVENTS_RETENTION, never one after it', async () => {
    const retention = 30 * 86_400_000;
    const writes: PostResource[] = [];
    for (let index = 0; index < 3; index += 1) writes.push((await api.post<PostResource>('/posts', buildPost())).body);
    const eventsOf = async () => {
      const rows = await context.app.dataSource.query<Array<{ position: number | string; post_id: number | string }>>(
        `SELECT position, post_id FROM events WHERE post_id IN (${writes.map(() => '?').join(', ')}) ORDER BY position`,
        writes.map((post) => post.id),
      );
      return rows.map((row) => [Number(row.position), Number(row.post_id)]);
    };
    await context.app.app.get(EventSequencer).settle();
    const [first, second, third] = await eventsOf();
    expect([first[1], second[1], third[1]]).toEqual(writes.map((post) => post.id));
    const cutoff = new Date(writes[2].updatedAt);
    const sweep = () => context.app.app.get(EventsRetention).sweep(new Date(cutoff.getTime() + retention));

    // The oldest event occurred after the cutoff: nothing behind it goes, though the second is older.
    const move = (position: number, at: string) =>
      context.app.dataSource.query('UPDATE events SET occurred_at = ? WHERE position = ?', [at, position]);
    const [oldest] = await context.app.dataSource.query<Array<{ position: number | string }>>(
      'SELECT position FROM events ORDER BY position LIMIT 1',
    );
    await move(Number(oldest.position), '2999-01-01 00:00:00.000');
    await move(second[0], '2000-01-01 00:00:00.000');
    expect(await sweep()).toBe(0);
    expect(await eventsOf()).toEqual([first, second, third]);

    // Back in order: everything up to the second write goes; the third write (at the cutoff) stays.
    await move(Number(oldest.position), '2000-01-01 00:00:00.000');
    await move(first[0], '2000-01-01 00:00:00.000');
    expect(await sweep()).toBeGreaterThanOrEqual(2);
    expect(await eventsOf()).toEqual([third]);
    expectProblem(await admin.get(`/events?after=${first[0]}`), 410, 'events-expired');
    const rest = await admin.get<FeedEvent[]>(`/events?after=${second[0]}`);
    expect(rest.body.map((event) => event.data.post)).toEqual([writes[2]]);
  });

  it('removes events past EVENTS_RETENTION; a cursor before them is 410, no cursor starts after them', async () => {
    await api.post('/posts', buildPost());
    const first = await admin.get<FeedEvent[]>('/events?limit=1&wait=5');
    expect(first.body.length).toBe(1);
    // Retention removes numbered events only (MySQL numbers them just after their commit).
    await context.app.app.get(EventSequencer).settle();
    const total = await count('events');
    expect(total).toBeGreaterThan(0);

    // Everything is older than the retention a day from now.
    const removed = await context.app.app.get(EventsRetention).sweep(new Date(Date.now() + 31 * 86_400_000));
    expect(removed).toBe(total);
    expect(await count('events')).toBe(0);

    const expired = expectProblem(await admin.get('/events?after=0'), 410, 'events-expired');
    expect(expired.detail).toContain('omit after');
    const fresh = await admin.get<FeedEvent[]>('/events');
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual([]);
    const resume = new URL(fresh.headers.get('link')!.slice(1, -'>; rel="next"'.length), 'http://x');
    const after = resume.searchParams.get('after')!;
    expect(Number(after)).toBeGreaterThanOrEqual(total);
    expect((await admin.get(`/events?after=${after}`)).status).toBe(200);

    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    const next = await admin.get<FeedEvent[]>(`/events?after=${after}&wait=5`);
    expect(next.body.map((event) => event.data.post)).toEqual([post]);
  });
});
