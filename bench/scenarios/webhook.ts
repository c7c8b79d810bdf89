import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { compareAlternating, contender, printComparison } from '../compare.js';
import { createBenchDatabase, queryRows, withConnection } from '../databases.js';
import { createPostRequests } from '../load.js';
import type { DatabaseTarget } from '../options.js';
import { formatNumber, print } from '../output.js';
import { startService, type ServiceSecrets } from '../servers.js';
import type { ScenarioContext } from './scenario-context.js';
import { describeBound, verdictFor, type ScenarioResult } from './scenario-result.js';

// Issue 16: a webhook may cost the write path at most 15% (the outbox write is in both sides).
const BOUND = { atLeast: 0.85 };
const DRAIN_TIMEOUT_MS = 180_000;

/**
 * webhook, as a fleet runs it (API-only instances beside delivery instances):
 *
 * 1. POST /posts on the service with no webhook vs on an API-only service (EVENTS_DELIVERY=false,
 *    its own fresh database) with one active webhook, in alternating rounds: what a webhook costs
 *    the write path (target ≥ 0.85; the outbox write is in both);
 * 2. then that service stops and a delivery instance starts on its database: how fast it delivers
 *    the backlog, every event, to a local receiver answering 204 (events/s between the first and the
 *    last arrival). The receiver runs in this process.
 */
export async function runWebhookScenario(
  context: ScenarioContext,
  target: DatabaseTarget,
  secrets: ServiceSecrets,
  workDir: string,
): Promise<ScenarioResult> {
  const arrivals: number[] = [];
  const ids = new Set<string>();
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      ids.add(String(request.headers['webhook-id']));
      arrivals.push(performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const directory = join(workDir, 'webhook');
  mkdirSync(directory, { recursive: true });
  const databaseTarget = target.kind === 'mysql' ? { ...target, url: `${target.url}_webhook` } : target;
  const database = await createBenchDatabase(databaseTarget, directory);
  const webhookEnv = {
    WEBHOOK_SECRET_KEY: 'bench-webhook-secret-key-0123456789abcdef',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  };
  const kind = context.database.kind;
  const apiOnly = await startService(database.url, secrets, directory, `${kind}-webhook-api`, undefined, {
    ...webhookEnv,
    EVENTS_DELIVERY: 'false',
  });
  let deliverer: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    const created = await fetch(`${apiOnly.baseUrl}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secrets.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiverUrl, events: ['*'] }),
    });
    if (created.status !== 201) throw new Error(`POST /webhooks answered ${created.status}`);
    print(
      `  webhook: POST /posts, no webhook (service) vs one active webhook (an API-only service, EVENTS_DELIVERY=false, ` +
        `its own database, pid ${apiOnly.pid}); target: webhook ≥ ${BOUND.atLeast} × none; then a delivery instance drains it`,
    );
    const comparison = await compareAlternating(
      contender('one webhook', apiOnly, createPostRequests()),
      contender('no webhook', context.service, createPostRequests()),
      context.settings,
    );
    const webhook = comparison.a.median.requestsPerSecond;
    const none = comparison.b.median.requestsPerSecond;
    const ratio = webhook / none;
    const verdict = verdictFor(ratio, BOUND, comparison.problems);
    await apiOnly.stop();

    const events = await withConnection(database, async (connection) => {
      const [row] = await queryRows<{ n: number | string }>(connection, 'SELECT COUNT(*) AS n FROM events');
      return Number(row.n);
    });
    const started = performance.now();
    deliverer = await startService(database.url, secrets, directory, `${kind}-webhook-delivery`, undefined, webhookEnv);
    while (ids.size < events && performance.now() - started < DRAIN_TIMEOUT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    const spanSeconds = arrivals.length < 2 ? 0 : (Math.max(...arrivals) - Math.min(...arrivals)) / 1000;
    const deliveryRate = spanSeconds === 0 ? 0 : (ids.size - 1) / spanSeconds;
    const duplicates = arrivals.length - ids.size;
    const delivery =
      `delivery instance: ${formatNumber(ids.size)} of ${formatNumber(events)} events delivered (${duplicates} duplicates) ` +
      `in ${formatNumber(spanSeconds, 1)} s: ${formatNumber(deliveryRate)} events/s to a local receiver`;
    printComparison('webhook', comparison, [
      `ratio one webhook / none ${formatNumber(ratio, 2)}, target ${describeBound(BOUND)}: ${verdict}`,
      delivery,
    ]);
    const problems = [...comparison.problems];
    if (ids.size < events) problems.push(`only ${ids.size} of ${events} events were delivered`);
    return {
      scenario: 'webhook',
      database: kind,
      unit: 'req/s',
      serviceLabel: 'one webhook',
      baselineLabel: 'no webhook',
      service: webhook,
      baseline: none,
      ratio,
      target: describeBound(BOUND),
      verdict: problems.length > comparison.problems.length ? 'INVALID' : verdict,
      notes: [...problems, delivery],
      details: { comparison, events, delivered: ids.size, duplicates, spanSeconds, deliveryRate },
    };
  } finally {
    await apiOnly.stop();
    await deliverer?.stop();
    await database.drop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}
