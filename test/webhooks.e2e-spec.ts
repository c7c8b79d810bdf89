import type { Server } from 'node:http';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FeedEvent } from '../src/events/event-types.js';
import type { PostResource } from '../src/posts/post.resource.js';
import type {
  CreatedWebhookResource,
  WebhookAttemptResource,
  WebhookResource,
} from '../src/webhooks/webhook.resource.js';
import { buildPost } from './factories/post.factory.js';
import { freePort } from './helpers/free-port.js';
import { client } from './helpers/http.js';
import { expectProblem, useTestApp } from './helpers/use-test-app.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

const WEBHOOK_ENV = {
  WEBHOOK_SECRET_KEY: 'test-webhook-secret-key-0123456789abcdef',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms',
  WEBHOOK_TIMEOUT: '1s',
  WEBHOOK_LEASE: '3s',
};

/** The standardwebhooks library, as a receiver would use it: throws when the signature does not verify. */
function verify(secret: string, delivery: { headers: Record<string, unknown>; body: string }): unknown {
  const headers = {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  };
  return new StandardWebhook(secret).verify(delivery.body, headers);
}

describe('webhooks (contract §9: push)', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: WEBHOOK_ENV });
  const { api } = context;
  const admin = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );
  const receiver = new WebhookReceiver();
  const created: number[] = [];

  beforeAll(async () => {
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });
  afterEach(async () => {
    // One webhook at a time: each test sees only its own deliveries.
    for (const id of created.splice(0)) await admin.delete(`/webhooks/${id}`);
  });

  const subscribe = async (events: string[] = ['*'], url = receiver.url) => {
    const response = await admin.post<CreatedWebhookResource>('/webhooks', { url, events, description: 'test' });
    expect(response.status).toBe(201);
    created.push(response.body.id);
    return response.body;
  };
  const log = async (id: number) =>
    (await admin.get<WebhookAttemptResource[]>(`/webhooks/${id}/deliveries?limit=100`)).body;

  it('creates, reads, changes and deletes a webhook; the secret is in the creation response only', async () => {
    const response = await admin.post<CreatedWebhookResource>('/webhooks', {
      url: receiver.url,
      events: ['post.created'],
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`/webhooks/${response.body.id}`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toMatchObject({
      url: receiver.url,
      events: ['post.created'],
      enabled: true,
      description: '',
    });
    expect(response.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = response.body.id;

    const one = await admin.get<WebhookResource>(`/webhooks/${id}`);
    expect(one.body).not.toHaveProperty('secret');
    expect(JSON.stringify((await admin.get('/webhooks')).body)).not.toContain(response.body.secret);
    const [row] = await context.app.dataSource.query<Array<{ secret: string }>>(
      'SELECT secret FROM webhooks WHERE id = ?',
      [id],
    );
    expect(row.secret).not.toContain(response.body.secret.slice(6));

    const changed = await admin.patch<WebhookResource>(`/webhooks/${id}`, {
      events: ['post.deleted', 'post.updated'],
      enabled: false,
    });
    expect(changed.body).toMatchObject({ events: ['post.deleted', 'post.updated'], enabled: false });
    expect((await admin.delete(`/webhooks/${id}`)).status).toBe(204);
    expectProblem(await admin.get(`/webhooks/${id}`), 404, 'not-found');
  });

  it('is for admins only', async () => {
    expectProblem(await api.get('/webhooks'), 403, 'insufficient-scope');
    expectProblem(await api.post('/webhooks', { url: receiver.url, events: ['*'] }), 403, 'insufficient-scope');
  });

  it.each([
    [{ url: 'ftp://example.com/hook', events: ['*'] }, '/url'],
    [{ url: 'http://user:pw@example.com/hook', events: ['*'] }, '/url'],
    [{ url: 'not a url', events: ['*'] }, '/url'],
    [{ url: 'https://example.com/hook', events: ['post.archived'] }, '/events'],
    [{ url: 'https://example.com/hook', events: [] }, '/events'],
  ])('refuses %j with 400 pointing at the field', async (body, pointer) => {
    const problem = expectProblem(await admin.post('/webhooks', body), 400, 'validation-failed');
    expect(problem.errors?.map((error) => ('pointer' in error ? error.pointer : undefined))).toContain(pointer);
  });

  it('delivers each event signed to the Standard Webhooks spec: the library verifies it, a tampered body fails', async () => {
    const webhook = await subscribe();
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    const [delivery] = await receiver.waitFor(1);

    const event = verify(webhook.secret, delivery) as FeedEvent;
    expect(event).toMatchObject({ type: 'post.created', data: { post, version: 1 } });
    expect(delivery.headers['webhook-id']).toBe(event.id);
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    const feed = await admin.get<FeedEvent[]>(`/events?after=${Number(event.id) - 1}&limit=1`);
    expect(feed.body[0]).toEqual(event);
    expect(() =>
      verify(webhook.secret, { ...delivery, body: delivery.body.replace('"version":1', '"version":2') }),
    ).toThrow();
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, delivery)).toThrow();
  });

  it('sends only the event types the webhook subscribes to', async () => {
    await subscribe(['post.deleted']);
    const post = (await api.post<PostResource>('/posts', buildPost())).body;
    await api.patch(`/posts/${post.id}`, { title: 'not sent' });
    await api.delete(`/posts/${post.id}`);
    const [delivery] = await receiver.waitFor(1);
    expect(JSON.parse(delivery.body)).toMatchObject({ type: 'post.deleted', data: { post: { id: post.id } } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
  });

  it('delivers the editorial events of §10, each signed, to a webhook that subscribes to them', async () => {
    const webhook = await subscribe(['post.published', 'post.unpublished', 'post.restored', 'post.purged']);
    const draft = (await api.post<PostResource>('/posts', { ...buildPost(), status: 'draft' })).body;
    await api.patch(`/posts/${draft.id}`, { status: 'published' });
    await api.patch(`/posts/${draft.id}`, { status: 'draft' });
    await api.patch(`/posts/${draft.id}`, { title: 'not sent: an update of a draft' });
    await api.delete(`/posts/${draft.id}`);
    await api.post(`/trash/${draft.id}/restore`);
    await api.delete(`/posts/${draft.id}`);
    await api.delete(`/trash/${draft.id}`);

    const deliveries = await receiver.waitFor(4);
    // Deliveries may overtake one another (docs/api.md): their order is the versions'.
    const events = deliveries
      .map((delivery) => verify(webhook.secret, delivery) as FeedEvent)
      .sort((left, right) => Number(left.data.version) - Number(right.data.version));
    expect(events.map((event) => [event.type, event.data.version])).toEqual([
      ['post.published', 2],
      ['post.unpublished', 3],
      ['post.restored', 6],
      ['post.purged', 8],
    ]);
    expect(events[3].data.post).toEqual({ id: draft.id });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(4);
  });

  it('retries a receiver that answers 500, with the same webhook-id, until it succeeds; the log shows each attempt', async () => {
    receiver.answer = (n) => (n <= 2 ? 500 : 204);
    const webhook = await subscribe();
    await api.post('/posts', buildPost());
    const deliveries = await receiver.waitFor(3);
    expect(new Set(deliveries.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const attempts = (await log(webhook.id)).reverse();
    expect(attempts.map((attempt) => [attempt.attempt, attempt.statusCode, attempt.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 500, 'HTTP 500'],
      [3, 204, null],
    ]);
    expect(attempts[0].nextRetryAt).not.toBeNull();
    expect(attempts[2].nextRetryAt).toBeNull();
    expect(new Set(attempts.map((attempt) => attempt.deliveryId)).size).toBe(1);
    expect(attempts.map((attempt) => attempt.eventId)).toEqual(Array(3).fill(deliveries[0].headers['webhook-id']));
  });

  it('gives up after the last retry of the schedule', async () => {
    receiver.answer = () => 503;
    const webhook = await subscribe();
    await api.post('/posts', buildPost());
    await receiver.waitFor(4);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received).toHaveLength(4);
    const attempts = await log(webhook.id);
    expect(attempts[0]).toMatchObject({ attempt: 4, statusCode: 503, nextRetryAt: null });
  });

  it('delivers everything once a receiver that was down is back', async () => {
    const webhook = await subscribe();
    await receiver.stop();
    for (let i = 0; i < 3; i++) await api.post('/posts', buildPost());
    await new Promise((resolve) => setTimeout(resolve, 800));
    await receiver.start();
    const deliveries = await receiver.waitFor(3);
    expect(new Set(deliveries.map((delivery) => delivery.headers['webhook-id'])).size).toBe(3);
    const refused = (await log(webhook.id)).filter((attempt) => attempt.statusCode === null);
    expect(refused.length).toBeGreaterThan(0);
  });

  it('honours Retry-After on 429', async () => {
    receiver.answer = (n) => (n === 1 ? (response) => response.writeHead(429, { 'retry-after': '1' }).end() : 200);
    await subscribe();
    await api.post('/posts', buildPost());
    const [first, second] = await receiver.waitFor(2, 5_000);
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const target = new WebhookReceiver();
    await target.start();
    try {
      receiver.answer = (n) => (n === 1 ? (response) => response.writeHead(307, { location: target.url }).end() : 200);
      const webhook = await subscribe();
      await api.post('/posts', buildPost());
      await receiver.waitFor(2);
      expect(target.received).toHaveLength(0);
      expect((await log(webhook.id)).at(-1)).toMatchObject({ attempt: 1, statusCode: 307 });
    } finally {
      await target.stop();
    }
  });

  it('disables the webhook when the receiver answers 410, and sends it nothing more', async () => {
    receiver.answer = () => 410;
    const webhook = await subscribe();
    await api.post('/posts', buildPost());
    await receiver.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const state = (await admin.get<WebhookResource>(`/webhooks/${webhook.id}`)).body;
    expect(state.enabled).toBe(false);
    expect(state.disabledReason).toMatch(/410 Gone/);
    await api.post('/posts', buildPost());
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(receiver.received).toHaveLength(1);
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const webhook = await subscribe();
    const rotated = await admin.post<{ secret: string; previousSecretExpiresAt: string }>(
      `/webhooks/${webhook.id}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(webhook.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await api.post('/posts', buildPost());
    const [delivery] = await receiver.waitFor(1);
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, delivery)).toBeTruthy();
    expect(verify(webhook.secret, delivery)).toBeTruthy();
  });

  it('redelivers a delivery on request, with the same webhook-id', async () => {
    const webhook = await subscribe();
    await api.post('/posts', buildPost());
    const [first] = await receiver.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const [attempt] = await log(webhook.id);
    const again = await admin.post(`/webhooks/${webhook.id}/deliveries/${attempt.deliveryId}/redeliver`);
    expect(again.status).toBe(202);
    const [, second] = await receiver.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    expectProblem(await admin.post(`/webhooks/${webhook.id}/deliveries/987654/redeliver`), 404, 'not-found');
  });

  it('reports attempts by outcome and the age of the oldest waiting delivery in /metrics', async () => {
    const metric = async (name: string, labels = '') => {
      const text = (await api.as(null).get('/metrics')).text;
      const line = text.split('\n').find((row) => row.startsWith(`${name}${labels} `));
      return Number(line?.split(' ')[1]);
    };
    const before = await metric('webhook_delivery_attempts_total', '{outcome="retrying"}');
    // The first attempt hangs past WEBHOOK_TIMEOUT (1 s): meanwhile the delivery waits, and ages.
    receiver.answer = (n) =>
      n === 1 ? (response) => setTimeout(() => response.writeHead(200).end(), 1_500) : n <= 3 ? 500 : 200;
    await subscribe();
    await api.post('/posts', buildPost());
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(await metric('webhook_oldest_pending_delivery_seconds')).toBeGreaterThan(0.5);
    await receiver.waitFor(4);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await metric('webhook_delivery_attempts_total', '{outcome="retrying"}')).toBeGreaterThanOrEqual(before + 3);
    expect(await metric('webhook_delivery_attempts_total', '{outcome="succeeded"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('webhook_oldest_pending_delivery_seconds')).toBe(0);
  });

  it('reaches the example receiver in docs/, which verifies each delivery and refuses a forged one', async () => {
    // @ts-expect-error: a plain JavaScript example, without declarations
    const { createReceiver } = (await import('../docs/examples/webhook-receiver.mjs')) as {
      createReceiver: (secret: string, onEvent: (event: FeedEvent) => void) => Server;
    };
    const events: FeedEvent[] = [];
    const port = await freePort();
    const webhook = await subscribe(['post.created'], `http://127.0.0.1:${port}/hook`);
    const start = async (secret: string): Promise<Server> => {
      const server = createReceiver(secret, (event) => events.push(event));
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      return server;
    };

    // With another secret than this webhook's, every delivery is refused (401) and none is passed on.
    const forged = await start(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    await api.post('/posts', buildPost());
    await new Promise((resolve) => setTimeout(resolve, 500));
    await new Promise((resolve) => forged.close(resolve));
    expect(events).toEqual([]);
    expect((await log(webhook.id)).map((attempt) => attempt.statusCode)).toContain(401);

    const verified = await start(webhook.secret);
    try {
      const post = (await api.post<PostResource>('/posts', buildPost())).body;
      const deadline = Date.now() + 5_000;
      while (!events.some((event) => event.data.post && (event.data.post as PostResource).id === post.id)) {
        if (Date.now() > deadline) throw new Error('the example receiver got no verified event');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(events.every((event) => event.type === 'post.created')).toBe(true);
    } finally {
      await new Promise((resolve) => verified.close(resolve));
    }
  });

  it('keeps the service ready while a receiver fails', async () => {
    receiver.answer = () => 500;
    await subscribe();
    await api.post('/posts', buildPost());
    await receiver.waitFor(2);
    expect((await api.as(null).get('/health/ready')).status).toBe(200);
  });
});

describe('webhook URLs that point inside the network', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: { ...WEBHOOK_ENV, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
  const admin = client(
    () => context.app.baseUrl,
    () => context.app.adminToken,
  );

  it.each([
    'http://127.0.0.1:9/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://10.0.0.8/hook',
    'http://[::ffff:192.168.1.1]/hook',
  ])('refuses %s at creation (SSRF)', async (url) => {
    const problem = expectProblem(await admin.post('/webhooks', { url, events: ['*'] }), 400, 'validation-failed');
    expect(problem.errors).toEqual([{ pointer: '/url', detail: expect.any(String) as string }]);
  });
});

describe('webhooks without WEBHOOK_SECRET_KEY', { tags: ['instance'] }, () => {
  const context = useTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });

  it('cannot be created: 503 saying what the operator must set', async () => {
    const admin = client(
      () => context.app.baseUrl,
      () => context.app.adminToken,
    );
    const problem = expectProblem(
      await admin.post('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] }),
      503,
      'service-unavailable',
    );
    expect(problem.detail).toContain('WEBHOOK_SECRET_KEY');
  });
});
