import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ALL_EVENT_TYPES, type FeedEvent } from '../src/events/event-types.js';
import type { PostResource } from '../src/posts/post.resource.js';
import { buildPost } from './factories/post.factory.js';
import { client } from './helpers/http.js';
import { openStream } from './helpers/sse.js';
import { TcpProxy } from './helpers/tcp-proxy.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';

/** The raw bytes of an event stream for `ms`, read with node:http (no SSE client in between). */
function readRaw(url: string, token: string, ms: number, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>((resolve, reject) => {
    const outgoing = request(
      url,
      { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        const done = (): void => resolve({ status: response.statusCode ?? 0, headers: response.headers, text });
        response.on('end', done);
        setTimeout(() => {
          outgoing.destroy();
          done();
        }, ms);
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('GET /events as server-sent events (contract §9: the stream)', () => {
  const context = useTestApp();
  const { api } = context;
  const admin = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );
  const streams: Array<{ close: () => void }> = [];
  const open = (path: string, headers: Record<string, string> = {}, types: readonly string[] = ALL_EVENT_TYPES) => {
    const stream = openStream(`${context.app.baseUrl}${path}`, context.app.adminToken, types, headers);
    streams.push(stream);
    return stream;
  };
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  /** The feed's newest position, once every write so far has one. */
  const head = async (): Promise<string> => {
    const marker = (await api.post<PostResource>('/posts', buildPost())).body;
    let after = '0';
    for (;;) {
      const page = await admin.get<FeedEvent[]>(`/events?after=${after}&wait=5`);
      after = page.body.at(-1)?.id ?? after;
      if (page.body.some((event) => (event.data.post as { id: number }).id === marker.id)) return after;
    }
  };

  it('streams new events live, as the feed serves them: id, event type and the event as data', async () => {
    await head();
    const stream = open('/events');
    await stream.waitOpen();
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    await api.patch(`/posts/${post.id}`, { title: 'streamed' });
    const [created, updated] = await stream.waitFor(2);

    expect([created.type, updated.type]).toEqual(['post.created', 'post.updated']);
    expect(created.data.data.post).toEqual(post);
    const feed = await admin.get<FeedEvent[]>(`/events?after=${Number(created.id) - 1}&limit=2`);
    expect(feed.body).toEqual([created.data, updated.data]);
    expect(feed.body.map((event) => event.id)).toEqual([created.id, updated.id]);
  });

  it('answers with text/event-stream, no-store, a retry hint, and a comment as heartbeat', async () => {
    const raw = await readRaw(`${context.app.baseUrl}/events`, context.app.adminToken, 300);
    expect(raw.status).toBe(200);
    expect(raw.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(raw.headers['cache-control']).toBe('no-store');
    expect(raw.text).toMatch(/^retry: \d+\n: events after \d+\n\n/);
  });

  it('resumes after Last-Event-ID: the events written while disconnected, each once', async () => {
    const start = await head();
    const first = open('/events');
    await first.waitOpen();
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    const [seen] = await first.waitFor(1);
    first.close();
    for (const title of ['while away 1', 'while away 2']) await api.patch(`/posts/${post.id}`, { title });
    await api.delete(`/posts/${post.id}`);

    const second = open('/events', { 'last-event-id': seen.id });
    const missed = await second.waitFor(3);
    expect(missed.map((event) => [event.type, event.data.data.version])).toEqual([
      ['post.updated', 2],
      ['post.updated', 3],
      ['post.deleted', 4],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(second.received).toHaveLength(3);
    expect(Number(seen.id)).toBeGreaterThan(Number(start));
  });

  it('starts after `after` when there is no Last-Event-ID, and filters by type', async () => {
    const start = await head();
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    await api.patch(`/posts/${post.id}`, { title: 'not streamed' });
    await api.delete(`/posts/${post.id}`);
    const stream = open(`/events?after=${start}&type=post.deleted`, {}, ALL_EVENT_TYPES);
    const [deleted] = await stream.waitFor(1);
    expect(deleted.type).toBe('post.deleted');
    expect(deleted.data.data.post).toEqual({ id: post.id });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stream.received).toHaveLength(1);
  });

  it('refuses a malformed Last-Event-ID and one ahead of the feed with 400, before streaming', async () => {
    for (const lastEventId of ['abc', '999999999999']) {
      const response = await admin.get('/events', { accept: 'text/event-stream', 'last-event-id': lastEventId });
      const problem = expectProblem(response, 400, 'validation-failed');
      expect(problem.errors).toEqual([{ parameter: 'Last-Event-ID', detail: expect.any(String) as string }]);
    }
  });

  it('needs events:read like the feed', async () => {
    expectProblem(await api.get('/events', { accept: 'text/event-stream' }), 403, 'insufficient-scope');
    expectProblem(await api.as(null).get('/events', { accept: 'text/event-stream' }), 401, 'unauthorized');
  });

  it('allows 5 open streams per principal: the 6th is 429 with Retry-After', async () => {
    const reader = await context.app.createToken(['events:read']);
    const five = Array.from({ length: 5 }, () => {
      const stream = openStream(`${context.app.baseUrl}/events`, reader, ALL_EVENT_TYPES);
      streams.push(stream);
      return stream;
    });
    await Promise.all(five.map((stream) => stream.waitOpen()));
    const sixth = await api.as(reader).get('/events', { accept: 'text/event-stream' });
    expectProblem(sixth, 429, 'rate-limited');
    expect(sixth.headers.get('retry-after')).toBe('1');
    // Another principal is not affected, and a closed stream frees its place.
    expect((await readRaw(`${context.app.baseUrl}/events`, context.app.adminToken, 100)).status).toBe(200);
    five[0].close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await readRaw(`${context.app.baseUrl}/events`, reader, 100)).status).toBe(200);
  });
});

describe('event streams across a broken connection', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: { EVENTS_HEARTBEAT: '200ms' } });

  it('sends a comment at least every EVENTS_HEARTBEAT when nothing happens', async () => {
    const raw = await readRaw(`${context.app.baseUrl}/events`, context.app.adminToken, 1_100);
    const heartbeats = raw.text.split(': heartbeat\n\n').length - 1;
    expect(heartbeats).toBeGreaterThanOrEqual(4);
    expect(heartbeats).toBeLessThanOrEqual(6);
  });

  it('the client reconnects by itself with Last-Event-ID and loses nothing written while it was cut off', async () => {
    const url = new URL(context.app.baseUrl);
    const proxy = new TcpProxy({ host: url.hostname, port: Number(url.port) });
    await proxy.start();
    const api = context.api;
    const stream = openStream(`http://127.0.0.1:${proxy.port}/events`, context.app.adminToken, ALL_EVENT_TYPES);
    try {
      await stream.waitOpen();
      const post = (await api.post<PostResource>('/posts', buildPost())).body;
      await stream.waitFor(1);
      await proxy.stop();
      for (let version = 2; version <= 6; version++) await api.patch(`/posts/${post.id}`, { title: `v${version}` });
      await proxy.start();
      await stream.waitOpen(2);
      const all = await stream.waitFor(6);
      expect(all.map((event) => event.data.data.version)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(new Set(all.map((event) => event.id)).size).toBe(6);
    } finally {
      stream.close();
      await proxy.stop();
    }
  });

  it('ends open streams cleanly when the application closes', async () => {
    const other = await (await import('./helpers/test-app.js')).startTestApp();
    const raw = readRaw(`${other.baseUrl}/events`, other.adminToken, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = Date.now();
    await other.close();
    const result = await raw;
    expect(Date.now() - closing).toBeLessThan(3_000);
    expect(result.status).toBe(200);
    expect(result.text).toContain(': the server is shutting down\n\n');
  });
});
