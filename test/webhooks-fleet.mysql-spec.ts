import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../src/auth/api-keys/api-key-token.js';
import type { CreatedWebhookResource } from '../src/webhooks/webhook.resource.js';
import { buildPost } from './factories/post.factory.js';
import { freePort } from './helpers/free-port.js';
import { client } from './helpers/http.js';
import { startTestApp, type TestApp } from './helpers/test-app.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';
import { WebhookReceiver } from './helpers/webhook-receiver.js';

// MySQL only: delivery on a fleet, where instances share the deliveries through claims with a lease.
const WEBHOOK_ENV = {
  WEBHOOK_SECRET_KEY: 'test-webhook-secret-key-0123456789abcdef',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms',
  WEBHOOK_TIMEOUT: '5s',
  WEBHOOK_LEASE: '2s',
};

/** webhook-id → how many times it arrived. */
function arrivals(receiver: WebhookReceiver): Map<string, number> {
  const counts = new Map<string, number>();
  for (const delivery of receiver.received) {
    const id = String(delivery.headers['webhook-id']);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhooks on a fleet (two instances, one MariaDB)', () => {
  let database: TestDatabase;
  const receiver = new WebhookReceiver();
  const instances: TestApp[] = [];

  beforeAll(async () => {
    await receiver.start();
  });
  afterEach(async () => {
    for (const instance of instances.splice(0)) await instance.close();
    await database?.drop();
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });
  afterAll(async () => {
    await receiver.stop();
  });

  it('2 instances x 1,000 events: every event delivered, duplicates counted', async () => {
    database = await createTestDatabase();
    instances.push(await startTestApp({ databaseUrl: database.url, env: WEBHOOK_ENV }));
    instances.push(await startTestApp({ databaseUrl: database.url, env: WEBHOOK_ENV }));
    const admin = client(
      () => instances[0].baseUrl,
      () => instances[0].adminToken,
    );
    expect((await admin.post<CreatedWebhookResource>('/webhooks', { url: receiver.url, events: ['*'] })).status).toBe(
      201,
    );
    const apis = instances.map((instance) =>
      client(
        () => instance.baseUrl,
        () => instances[0].writerToken,
      ),
    );
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let i = worker; i < 1_000; i += 8)
          expect((await apis[i % 2].post('/posts', buildPost())).status).toBe(201);
      }),
    );
    await until(() => arrivals(receiver).size >= 1_000, 60_000, '1,000 distinct deliveries');
    const seconds = (Date.now() - started) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const counts = arrivals(receiver);
    const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
    process.stdout.write(
      `webhooks on 2 instances: 1,000 events, ${counts.size} delivered, ${duplicates} duplicates, ` +
        `${(1_000 / seconds).toFixed(0)} events/s end to end\n`,
    );
    expect(counts.size).toBe(1_000);
    expect(duplicates).toBe(0);
  }, 120_000);

  it('EVENTS_DELIVERY=false: an API-only instance delivers nothing; a delivering instance then delivers all', async () => {
    database = await createTestDatabase();
    instances.push(
      await startTestApp({ databaseUrl: database.url, env: { ...WEBHOOK_ENV, EVENTS_DELIVERY: 'false' } }),
    );
    const admin = client(
      () => instances[0].baseUrl,
      () => instances[0].adminToken,
    );
    await admin.post('/webhooks', { url: receiver.url, events: ['*'] });
    for (let i = 0; i < 5; i++) await admin.post('/posts', buildPost());
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.received).toHaveLength(0);

    instances.push(await startTestApp({ databaseUrl: database.url, env: WEBHOOK_ENV }));
    await until(() => arrivals(receiver).size >= 5, 10_000, '5 deliveries');
    expect(arrivals(receiver).size).toBe(5);
  });
});

describe('a delivering instance killed mid-batch (kill -9)', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  const receiver = new WebhookReceiver();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    await receiver.start();
    database = await createTestDatabase();
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await receiver.stop();
    await database?.drop();
  });

  async function startService(token: string): Promise<{ child: ChildProcess; base: string }> {
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        ...process.env,
        ...WEBHOOK_ENV,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        BOOTSTRAP_API_KEY: token,
        THROTTLE_LIMIT: '1000000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    await until(() => output.includes('Listening on'), 30_000, `the service on ${port} (${output})`);
    return { child, base };
  }

  it('the other instance delivers what the dead one had claimed once its lease ends, with the same webhook-id', async () => {
    const token = generateApiKeyToken();
    const first = await startService(token);
    const admin = client(
      () => first.base,
      () => token,
    );
    expect((await admin.post('/webhooks', { url: receiver.url, events: ['*'] })).status).toBe(201);
    // The receiver holds every request: the first instance's deliveries stay in flight, claimed.
    receiver.answer = () => () => undefined;
    for (let i = 0; i < 10; i++) expect((await admin.post('/posts', buildPost())).status).toBe(201);
    await until(() => receiver.received.length >= 10, 10_000, 'the first instance to send all 10');
    const claimedIds = new Set(arrivals(receiver).keys());
    first.child.kill('SIGKILL');
    receiver.answer = () => 200;

    const killedAt = Date.now();
    await startService(token);
    await until(() => receiver.received.length >= 20, 20_000, 'the second instance to deliver the 10 again');
    const waited = Date.now() - killedAt;
    const counts = arrivals(receiver);
    process.stdout.write(
      `kill -9 mid-batch: 10 deliveries in flight on the killed instance, redelivered by the other after ${waited} ms; ` +
        `${[...counts.values()].filter((n) => n >= 2).length} of 10 arrived twice (at least once, same webhook-id)\n`,
    );
    expect([...counts.keys()].sort()).toEqual([...claimedIds].sort());
    expect([...counts.values()].every((n) => n >= 2)).toBe(true);
  });
});
