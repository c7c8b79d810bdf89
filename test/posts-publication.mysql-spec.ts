import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedEvent } from '../src/events/event-types.js';
import { PostsMaintenance } from '../src/posts/posts-maintenance.js';
import { Post } from '../src/posts/post.entity.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { postIdOf, until } from './helpers/post-feed.js';
import { client, type Client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

// MySQL only: the publication sweep of contract §10 on a fleet. Every instance sweeps every second;
// a scheduled post must still be published, with its post.published event, exactly once.
const POSTS = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

describe('scheduled publication on a fleet (two instances, one MariaDB database)', () => {
  let database: TestDatabase;
  const instances: TestApp[] = [];
  const apis: Client[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    instances.push(await startTestApp({ databaseUrl: database.url }));
    instances.push(await startTestApp({ databaseUrl: database.url }));
    // One writer key, made on the first instance, used on both.
    for (const instance of instances) {
      apis.push(
        client(
          () => instance.baseUrl,
          () => instances[0].writerToken,
        ),
      );
    }
  });

  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await database?.drop();
  });

  const feed = () =>
    client(
      () => instances[1].baseUrl,
      () => instances[1].adminToken,
    );
  /** The post.published events of the feed (read through the second instance). */
  const publishedEvents = async (): Promise<FeedEvent[]> => {
    const events: FeedEvent[] = [];
    for (let after = '0'; ;) {
      const page = await feed().get<FeedEvent[]>(`/events?after=${after}&limit=100&type=post.published`);
      expect(page.status).toBe(200);
      if (page.body.length === 0) return events;
      events.push(...page.body);
      after = page.body[page.body.length - 1].id;
    }
  };
  const scheduleOnFirstInstance = async (publishAt: number): Promise<number[]> => {
    const responses = await Promise.all(
      Array.from({ length: POSTS }, () =>
        apis[0].post<PostResource>('/posts', {
          ...buildPost(),
          status: 'scheduled',
          publishedAt: new Date(publishAt).toISOString(),
        }),
      ),
    );
    responses.forEach((response) => expect(response.status).toBe(201));
    expect(Date.now(), 'the posts were created before their instant').toBeLessThan(publishAt);
    return responses.map((response) => response.body.id).sort((left, right) => left - right);
  };
  /**
   * Runs both instances' sweeps (PostsMaintenance.publishDue(): one run at a time per instance, as
   * its timer does) at once, over and over, until stopped, beside their own timers. Returns how many
   * rounds ran and how many publications the calls reported.
   */
  const stressSweeps = () => {
    let stopped = false;
    const totals = { rounds: 0, reported: 0 };
    const running = (async () => {
      while (!stopped) {
        const runs = instances.map((instance) => instance.app.get(PostsMaintenance).publishDue());
        for (const published of await Promise.all(runs)) totals.reported += published;
        totals.rounds++;
        await sleep(10);
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await running;
        return totals;
      },
    };
  };
  const storedPosts = (ids: number[]): Promise<Post[]> =>
    instances[0].dataSource.getRepository(Post).find({ where: ids.map((id) => ({ id })), order: { id: 'ASC' } });
  const storedEvents = async (ids: number[]): Promise<Array<{ type: string; post_id: number | string }>> =>
    instances[0].dataSource.query(
      `SELECT type, post_id FROM events WHERE post_id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`,
      ids,
    );

  it(
    'publishes 20 posts scheduled through one instance exactly once each while both instances sweep',
    { timeout: 60_000 },
    async () => {
      const publishAt = Date.now() + 2_000;
      const ids = await scheduleOnFirstInstance(publishAt);
      const sweeps = stressSweeps();

      const seen = await until(
        async () => (await publishedEvents()).filter((event) => ids.includes(postIdOf(event))),
        (events) => events.length >= POSTS,
        publishAt + 10_000 - Date.now(),
        `${POSTS} post.published events`,
      );
      // Both instances go on sweeping (timers and the stress loop) for 2 more seconds: still once each.
      await sleep(2_000);
      const totals = await sweeps.stop();
      const events = (await publishedEvents()).filter((event) => ids.includes(postIdOf(event)));

      process.stdout.write(
        `publication sweeps on 2 instances: ${totals.rounds} stress rounds, ${totals.reported} publications ` +
          'reported by them\n',
      );
      expect(seen.length).toBe(POSTS);
      expect(events).toHaveLength(POSTS);
      expect(events.map(postIdOf).sort((left, right) => left - right)).toEqual(ids);
      expect(new Set(events.map((event) => event.id)).size).toBe(POSTS);
      for (const event of events) {
        expect(event.data).toMatchObject({ version: 2, principal: 'system', post: { status: 'published' } });
      }
      expect(totals.rounds).toBeGreaterThan(0);
      expect(totals.reported).toBeLessThanOrEqual(POSTS);
      const rows = await storedPosts(ids);
      expect(rows.map((row) => [row.id, row.status, row.version])).toEqual(ids.map((id) => [id, 'published', 2]));
      const published = (await storedEvents(ids)).filter((row) => row.type === 'post.published');
      expect(published).toHaveLength(POSTS);
      for (const api of apis) {
        for (const id of ids) {
          const read = await api.get<PostResource>(`/posts/${id}`);
          expect(read.body.status).toBe('published');
          expect(read.headers.get('etag')).toBe(`"${id}.2"`);
        }
      }
    },
  );

  it(
    'stores each due publication once when writes through both instances race the sweeps',
    { timeout: 60_000 },
    async () => {
      const publishAt = Date.now() + 1_500;
      const ids = await scheduleOnFirstInstance(publishAt);
      await sleep(publishAt - Date.now() + 10);
      const sweeps = stressSweeps();

      // Each post is read through one instance (as published, with the ETag the publication gives
      // it) and patched through the other with that ETag, while the sweeps run.
      const patched = await Promise.all(
        ids.map(async (id, index) => {
          const read = await apis[(index + 1) % 2].get<PostResource>(`/posts/${id}`);
          expect(read.body.status).toBe('published');
          expect(read.headers.get('etag')).toBe(`"${id}.2"`);
          return apis[index % 2].patch<PostResource>(
            `/posts/${id}`,
            { title: `patched ${id}` },
            {
              'if-match': read.headers.get('etag')!,
            },
          );
        }),
      );
      await sleep(1_500);
      await sweeps.stop();

      patched.forEach((response, index) => {
        expect(response.status).toBe(200);
        expect(response.headers.get('etag')).toBe(`"${ids[index]}.3"`);
      });
      const rows = await storedPosts(ids);
      expect(rows.map((row) => [row.status, row.version])).toEqual(ids.map(() => ['published', 3]));
      const stored = await storedEvents(ids);
      for (const id of ids) {
        expect(stored.filter((row) => Number(row.post_id) === id).map((row) => row.type)).toEqual([
          'post.created',
          'post.published',
          'post.updated',
        ]);
      }
      const events = await until(
        async () => (await publishedEvents()).filter((event) => ids.includes(postIdOf(event))),
        (found) => found.length >= POSTS,
        5_000,
        `${POSTS} post.published events in the feed`,
      );
      expect(events.map(postIdOf).sort((left, right) => left - right)).toEqual(ids);
    },
  );
});
