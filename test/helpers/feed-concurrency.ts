import { expect } from 'vitest';
import type { FeedEvent } from '../../src/events/event-types.js';
import type { PostResource } from '../../src/posts/post.resource.js';
import { buildPost } from '../factories/post.factory.js';
import type { Client } from './http.js';

export interface FeedRunResult {
  writes: number;
  events: number;
  seconds: number;
}

/**
 * `writers` concurrent clients per API (one API per instance) make `writesPerApi` writes in all on
 * each (create, then two patches, then a delete every other post), while one reader walks the feed
 * with long polls. Then checks that the reader saw every write's event exactly once, in positions
 * that only increase, with each post's versions in order (created 1, updated 2, 3, deleted 4).
 */
export async function writeWhileReadingTheFeed(
  apis: Client[],
  reader: Client,
  options: { writers: number; writesPerApi: number },
): Promise<FeedRunResult> {
  const started = Date.now();
  const start = await currentPosition(reader);
  const acknowledged: Array<{ postId: number; version: number }> = [];
  let writing = true;

  const writer = async (api: Client, budget: { left: number }, index: number): Promise<void> => {
    for (let round = 0; budget.left > 0; round++) {
      budget.left--;
      const created = await api.post<PostResource>('/posts', buildPost());
      expect(created.status).toBe(201);
      acknowledged.push({ postId: created.body.id, version: 1 });
      for (let version = 2; version <= 3 && budget.left > 0; version++) {
        budget.left--;
        const patched = await api.patch(`/posts/${created.body.id}`, { title: `w${index} r${round} v${version}` });
        expect(patched.status).toBe(200);
        acknowledged.push({ postId: created.body.id, version });
      }
      if (round % 2 === 0 && budget.left > 0) {
        budget.left--;
        expect((await api.delete(`/posts/${created.body.id}`)).status).toBe(204);
        acknowledged.push({ postId: created.body.id, version: 4 });
      }
    }
  };

  const seen: FeedEvent[] = [];
  const read = async (): Promise<void> => {
    let after = start;
    for (;;) {
      const stillWriting = writing;
      const page = await reader.get<FeedEvent[]>(`/events?after=${after}&limit=100&wait=${stillWriting ? 1 : 2}`);
      expect(page.status).toBe(200);
      seen.push(...page.body);
      after = nextAfter(page.headers.get('link'));
      if (!stillWriting && page.body.length === 0) return;
    }
  };

  const reading = read();
  await Promise.all(
    apis.map((api) => {
      const budget = { left: options.writesPerApi };
      return Promise.all(Array.from({ length: options.writers }, (_, index) => writer(api, budget, index)));
    }),
  );
  writing = false;
  await reading;

  const positions = seen.map((event) => Number(event.id));
  positions.forEach((position, index) => {
    if (index > 0) expect(position).toBeGreaterThan(positions[index - 1]);
  });
  const seenWrites = seen.map((event) => `${(event.data.post as { id: number }).id}@${String(event.data.version)}`);
  expect(new Set(seenWrites).size).toBe(seen.length);
  expect(seenWrites.slice().sort()).toEqual(acknowledged.map(({ postId, version }) => `${postId}@${version}`).sort());
  const lastVersion = new Map<number, number>();
  for (const event of seen) {
    const postId = (event.data.post as { id: number }).id;
    const version = event.data.version as number;
    expect(version).toBe((lastVersion.get(postId) ?? 0) + 1);
    lastVersion.set(postId, version);
  }
  return { writes: acknowledged.length, events: seen.length, seconds: (Date.now() - started) / 1000 };
}

async function currentPosition(reader: Client): Promise<string> {
  let after = '0';
  for (;;) {
    const page = await reader.get<FeedEvent[]>(`/events?after=${after}&limit=100`);
    after = nextAfter(page.headers.get('link'));
    if (page.body.length === 0) return after;
  }
}

function nextAfter(link: string | null): string {
  return new URL(link!.slice(1, link!.indexOf('>')), 'http://x').searchParams.get('after')!;
}
