import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { FeedReaders } from '../events/feed-readers.js';
import { WebhookDeliveryWorker, type DeliveryOutcome } from '../webhooks/webhook-delivery.worker.js';
import { readDatabasePool } from './database-pool.js';

// Anything else (WebDAV verbs and the like, all 404 or 405 here) shares one label value.
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

// TypeORM drivers whose pool readDatabasePool understands (both are mysql2 underneath).
const POOLED_DRIVERS = new Set<string>(['mysql', 'mariadb']);

const REQUEST_LABELS = ['method', 'route', 'status'] as const;
type RequestLabel = (typeof REQUEST_LABELS)[number];

/**
 * The metrics of one application instance. The registry is its own, never prom-client's global one,
 * so several apps in one process (the e2e suite) each count only their own requests.
 */
@Injectable()
export class MetricsService {
  private readonly registry = new Registry();
  private readonly requests: Counter<(typeof REQUEST_LABELS)[number]>;
  private readonly durations: Histogram<(typeof REQUEST_LABELS)[number]>;
  // The children of each label combination, looked up by one string rather than prom-client hashing
  // the label object twice per request. Bounded like the series themselves: methods × routes × statuses.
  private readonly series = new Map<
    string,
    { requests: Counter.Internal; durations: Histogram.Internal<RequestLabel> }
  >();

  constructor(@InjectDataSource() dataSource: DataSource, feedReaders: FeedReaders, deliveries: WebhookDeliveryWorker) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP responses sent, by method, route template and status code',
      labelNames: REQUEST_LABELS,
      registers: [this.registry],
    });
    this.durations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to sending the last byte of its response',
      labelNames: REQUEST_LABELS,
      registers: [this.registry],
    });
    // SQLite has one connection and no pool: nothing to report, so no pool gauges at all.
    if (POOLED_DRIVERS.has(dataSource.options.type)) registerDatabasePoolGauges(this.registry, dataSource);
    registerFeedGauges(this.registry, feedReaders);
    registerWebhookMetrics(this.registry, deliveries);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** `route` must be a template (`/posts/:id`) or `unmatched` (routeTemplateOf): raw paths would be unbounded. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const methodLabel = KNOWN_METHODS.has(method) ? method : 'OTHER';
    const key = `${methodLabel} ${route} ${status}`;
    let series = this.series.get(key);
    if (series === undefined) {
      const labels = { method: methodLabel, route, status: String(status) };
      series = { requests: this.requests.labels(labels), durations: this.durations.labels(labels) };
      this.series.set(key, series);
    }
    series.requests.inc();
    series.durations.observe(seconds);
  }

  /** Everything in the Prometheus text exposition format. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}

// Read at scrape time, like the pool's below.
function registerFeedGauges(registry: Registry, readers: FeedReaders): void {
  const waiting: Gauge = new Gauge({
    name: 'events_feed_waiting_reads',
    help: 'Reads of GET /events waiting for an event (wait=N) on this instance',
    registers: [registry],
    collect: () => waiting.set(readers.count('wait')),
  });
  const streams: Gauge = new Gauge({
    name: 'events_open_streams',
    help: 'Event streams (GET /events, Accept: text/event-stream) open on this instance',
    registers: [registry],
    collect: () => streams.set(readers.count('stream')),
  });
}

function registerWebhookMetrics(registry: Registry, deliveries: WebhookDeliveryWorker): void {
  const attempts: Counter<'outcome'> = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts made by this instance, by outcome (succeeded, retrying, failed, gone: 410)',
    labelNames: ['outcome'],
    registers: [registry],
    collect: () => {
      attempts.reset();
      for (const [outcome, count] of Object.entries(deliveries.outcomes) as Array<[DeliveryOutcome, number]>) {
        attempts.inc({ outcome }, count);
      }
    },
  });
  const oldest: Gauge = new Gauge({
    name: 'webhook_oldest_pending_delivery_seconds',
    help: 'Age of the oldest webhook delivery not yet made (0 when none waits)',
    registers: [registry],
    collect: async () => {
      oldest.set(await deliveries.oldestPendingAgeSeconds().catch(() => 0));
    },
  });
}

// Read at scrape time, so the values are current and nothing polls in between. A closed pool reads as 0.
function registerDatabasePoolGauges(registry: Registry, dataSource: DataSource): void {
  const connections: Gauge<'state'> = new Gauge({
    name: 'database_pool_connections',
    help: 'Connections of the MySQL/MariaDB pool, by state',
    labelNames: ['state'],
    registers: [registry],
    collect: () => {
      connections.reset();
      const pool = readDatabasePool(dataSource);
      if (pool === null) return;
      connections.set({ state: 'in_use' }, pool.open - pool.idle);
      connections.set({ state: 'idle' }, pool.idle);
    },
  });
  const waiting: Gauge = new Gauge({
    name: 'database_pool_waiting_requests',
    help: 'Queries waiting for a free connection of the MySQL/MariaDB pool',
    registers: [registry],
    collect: () => {
      waiting.reset();
      const pool = readDatabasePool(dataSource);
      if (pool !== null) waiting.set(pool.waiting);
    },
  });
  const limit: Gauge = new Gauge({
    name: 'database_pool_max_connections',
    help: 'Connection limit of the MySQL/MariaDB pool (DATABASE_POOL_SIZE)',
    registers: [registry],
    collect: () => {
      limit.reset();
      const pool = readDatabasePool(dataSource);
      if (pool?.limit != null) limit.set(pool.limit);
    },
  });
}
