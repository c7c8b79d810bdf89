import type { DataSource } from 'typeorm';
import { expect } from 'vitest';
import type { FeedEvent } from '../../src/events/event-types.js';
import type { Client, HttpResult } from './http.js';

const NEXT_LINK = /^<([^>]+)>; rel="next"$/;

/** The id of the post an event is about (a tombstone's too). */
export const postIdOf = (event: FeedEvent): number => (event.data.post as { id: number }).id;

export const isStrictlyIncreasing = (values: number[]): boolean =>
  values.every((value, index) => index === 0 || value > values[index - 1]);

/** Reads until `done` holds, every 100 ms, failing after `timeoutMs`; returns the last reading. */
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The root-relative URL of the rel="next" link, or undefined when there is none. */
export function nextLinkOf(response: HttpResult): string | undefined {
  const header = response.headers.get('link');
  if (header === null) return undefined;
  const match = NEXT_LINK.exec(header);
  expect(match, `Link header ${header}`).not.toBeNull();
  return match![1];
}

/** A post's events: in the events table, and as the feed serves them to `admin`. */
export function postFeed(dataSource: () => DataSource, admin: Client) {
  const storedEventCount = async (postId: number): Promise<number> => {
    const [row] = await dataSource().query<Array<{ n: number | string }>>(
      'SELECT COUNT(*) AS n FROM events WHERE post_id = ?',
      [postId],
    );
    return Number(row.n);
  };
  /** The whole feed, oldest first, page by page (admin may read it). */
  const readFeed = async (query = ''): Promise<FeedEvent[]> => {
    const events: FeedEvent[] = [];
    for (let after = '0'; ;) {
      const page = await admin.get<FeedEvent[]>(`/events?after=${after}&limit=100${query}`);
      expect(page.status).toBe(200);
      if (page.body.length === 0) return events;
      events.push(...page.body);
      after = page.body[page.body.length - 1].id;
    }
  };
  /**
   * The post's events in feed order, once the feed serves every one the events table holds for it
   * (on MySQL an event gets its position a few milliseconds after its write's response).
   */
  const eventsOf = async (postId: number): Promise<FeedEvent[]> => {
    const stored = await storedEventCount(postId);
    const feed = async () => (await readFeed()).filter((event) => postIdOf(event) === postId);
    return until(
      feed,
      (events) => events.length >= stored,
      5_000,
      `the ${stored} events of post ${postId} in the feed`,
    );
  };
  return { storedEventCount, readFeed, eventsOf };
}
