// Long file: the delivery loop's four steps (fan-out, claim, send, record) read best together.
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { In, type DataSource, type EntityManager } from 'typeorm';
import { WEBHOOKS_CONFIG, type WebhooksConfig } from '../config/config.module.js';
import { EventRecord } from '../events/event-record.entity.js';
import { toFeedEvent } from '../events/events.service.js';
import { Draining } from '../http/draining.js';
import { WebhookAttempt } from './webhook-attempt.entity.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { sendWebhook, type WebhookResult } from './webhook-sender.js';
import { Webhook } from './webhook.entity.js';
import { WebhooksService } from './webhooks.service.js';

const TICK_MS = 250;
const FAN_OUT_BATCH = 500;
const MAX_IN_FLIGHT = 32;

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed' | 'gone';

interface SentDelivery {
  delivery: WebhookDelivery;
  webhook: Webhook;
  startedAt: Date;
  result: WebhookResult;
  /** false when nothing was sent (webhook disabled, event expired): no retry helps. */
  retryable: boolean;
}

/**
 * Delivers events to webhooks, at least once, on a fleet (contract §9). Every 250 ms, on every
 * instance with EVENTS_DELIVERY on:
 *
 * 1. fan-out: events after `webhook_dispatch.dispatched_through` become one delivery per matching
 *    enabled webhook (created before the event), under that row's lock (SKIP LOCKED: one instance at
 *    a time, none waits);
 * 2. claim: due deliveries whose lease is free get this instance's lease (`FOR UPDATE SKIP LOCKED`,
 *    so two instances never claim one), at most 32 in flight;
 * 3. send: the event as the feed serves it, signed with `standardwebhooks` (the old secret too during
 *    a rotation), to the URL checked again against SSRF (webhook-sender.ts);
 * 4. record: the attempt for the log and the delivery's next state in one transaction: 2xx done; 410
 *    disables the webhook; anything else retried on WEBHOOK_RETRY_SCHEDULE (with ±10% jitter, and no
 *    sooner than a 429/503's Retry-After) until the schedule is spent.
 *
 * An instance that dies mid-delivery leaves its lease; when it ends, another instance sends the same
 * event again with the same `webhook-id` (the receiver's idempotency key).
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly mysql: boolean;
  private timer?: NodeJS.Timeout;
  private ticking = false;
  // A round found more work than it took (a full fan-out batch or a full claim): go again as soon as
  // there is room, instead of waiting for the next 250 ms.
  private backlog = false;
  private stopped = false;
  // Batches being sent; their deliveries count against MAX_IN_FLIGHT.
  private readonly inFlight = new Set<Promise<void>>();
  private inFlightDeliveries = 0;
  private readonly toRecord: SentDelivery[] = [];
  private recording: Promise<void> | undefined;
  readonly outcomes: Record<DeliveryOutcome, number> = { succeeded: 0, retrying: 0, failed: 0, gone: 0 };

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly webhooks: WebhooksService,
    private readonly draining: Draining,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
  ) {
    this.mysql = dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb';
  }

  onApplicationBootstrap(): void {
    if (!this.config.deliver) return;
    this.timer = setInterval(() => void this.tick(), TICK_MS).unref();
    this.draining.onStart(() => this.stop());
  }

  onApplicationShutdown(): void {
    this.stop();
  }

  /** One round of fan-out and claims (tests call it to go faster than the timer). */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    this.backlog = false;
    try {
      const fannedOut = await this.fanOut();
      const room = MAX_IN_FLIGHT - this.inFlightDeliveries;
      const claimed = room > 0 ? await this.claim(room) : [];
      this.backlog = fannedOut === FAN_OUT_BATCH || (room > 0 && claimed.length === room) || room <= 0;
      if (claimed.length > 0) {
        const sending = this.deliverBatch(claimed).finally(() => {
          this.inFlight.delete(sending);
          if (this.backlog) void this.tick();
        });
        this.inFlight.add(sending);
      }
    } catch (error) {
      if (!this.stopped) this.logger.warn(`webhook delivery round failed: ${(error as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  /** Seconds since the oldest delivery still to be made was created (0 when none waits): metrics. */
  async oldestPendingAgeSeconds(): Promise<number> {
    const oldest = await this.dataSource.manager.findOne(WebhookDelivery, {
      where: { state: 'pending' },
      order: { nextAttemptAt: 'ASC' },
      select: { id: true, createdAt: true },
    });
    return oldest === null ? 0 : Math.max(0, (Date.now() - oldest.createdAt.getTime()) / 1000);
  }

  /** Resolves when the deliveries in flight have been recorded (tests). */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Fans the next events out to deliveries; returns how many events it took. */
  private async fanOut(): Promise<number> {
    return this.transaction(async (manager) => {
      const [cursor] = await manager.query<Array<{ dispatched_through: number | string }>>(
        this.mysql
          ? 'SELECT dispatched_through FROM webhook_dispatch WHERE id = 1 FOR UPDATE SKIP LOCKED'
          : 'SELECT dispatched_through FROM webhook_dispatch WHERE id = 1',
      );
      if (cursor === undefined) return 0;
      const after = Number(cursor.dispatched_through);
      const events = await manager.query<Array<{ position: number | string; type: string; occurred_at: unknown }>>(
        'SELECT position, type, occurred_at FROM events WHERE position > ? ORDER BY position LIMIT ?',
        [after, FAN_OUT_BATCH],
      );
      if (events.length === 0) return 0;
      const webhooks = await manager.find(Webhook, { where: { enabled: true } });
      const occurredAt = manager.connection.getMetadata(EventRecord).findColumnWithPropertyName('occurredAt')!;
      const now = new Date();
      const rows: Array<Partial<WebhookDelivery>> = [];
      for (const event of events) {
        const at = manager.connection.driver.prepareHydratedValue(event.occurred_at, occurredAt) as Date;
        for (const webhook of webhooks) {
          if (webhook.createdAt > at) continue;
          if (webhook.eventTypes !== '*' && !webhook.eventTypes.split(',').includes(event.type)) continue;
          const eventId = Number(event.position);
          rows.push({
            webhookId: webhook.id,
            eventId,
            state: 'pending',
            attempts: 0,
            nextAttemptAt: now,
            leaseUntil: null,
            createdAt: now,
          });
        }
      }
      for (let start = 0; start < rows.length; start += 200) {
        await manager.insert(WebhookDelivery, rows.slice(start, start + 200));
      }
      const through = Number(events[events.length - 1].position);
      await manager.query('UPDATE webhook_dispatch SET dispatched_through = ? WHERE id = 1', [through]);
      return events.length;
    });
  }

  private async claim(room: number): Promise<WebhookDelivery[]> {
    return this.transaction(async (manager) => {
      const now = new Date();
      const nextAttemptAt = manager.connection
        .getMetadata(WebhookDelivery)
        .findColumnWithPropertyName('nextAttemptAt')!;
      const nowValue = manager.connection.driver.preparePersistentValue(now, nextAttemptAt) as unknown;
      const rows = await manager.query<Array<{ id: number | string }>>(
        "SELECT id FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= ? " +
          'AND (lease_until IS NULL OR lease_until < ?) ORDER BY next_attempt_at LIMIT ?' +
          (this.mysql ? ' FOR UPDATE SKIP LOCKED' : ''),
        [nowValue, nowValue, room],
      );
      if (rows.length === 0) return [];
      const ids = rows.map((row) => Number(row.id));
      await manager.update(WebhookDelivery, ids, { leaseUntil: new Date(now.getTime() + this.config.leaseMs) });
      return manager.findBy(WebhookDelivery, { id: In(ids) });
    });
  }

  /**
   * Sends a claimed batch concurrently; the webhooks and events are read once for the batch. Each
   * result is recorded as soon as it is in, together with whatever else finished meanwhile (one
   * transaction for all of them), so a slow receiver delays no other delivery's record.
   */
  private async deliverBatch(batch: WebhookDelivery[]): Promise<void> {
    this.inFlightDeliveries += batch.length;
    let left = batch.length;
    const done = (): void => {
      left--;
      this.inFlightDeliveries--;
    };
    try {
      const manager = this.dataSource.manager;
      const webhookIds = [...new Set(batch.map((delivery) => delivery.webhookId))];
      const eventIds = [...new Set(batch.map((delivery) => delivery.eventId))];
      const webhooks = new Map((await manager.findBy(Webhook, { id: In(webhookIds) })).map((row) => [row.id, row]));
      const events = new Map(
        (await manager.findBy(EventRecord, { position: In(eventIds) })).map((row) => [row.position!, row]),
      );
      await Promise.all(
        batch.map(async (delivery) => {
          try {
            const webhook = webhooks.get(delivery.webhookId);
            if (webhook === undefined) return; // deleted meanwhile, with its deliveries
            const event = events.get(delivery.eventId);
            const startedAt = new Date();
            let result: WebhookResult;
            if (!webhook.enabled)
              result = { kind: 'refused', reason: 'not sent: the webhook is disabled', durationMs: 0 };
            else if (event === undefined) {
              result = { kind: 'refused', reason: 'not sent: the event is past EVENTS_RETENTION', durationMs: 0 };
            } else result = await this.send(webhook, event, startedAt);
            await this.recordSoon({
              delivery,
              webhook,
              startedAt,
              result,
              retryable: event !== undefined && webhook.enabled,
            });
          } finally {
            done();
          }
        }),
      );
    } catch (error) {
      // The leases run out and another round (here or elsewhere) tries again: at least once.
      if (!this.stopped) this.logger.warn(`deliveries failed before they were recorded: ${(error as Error).message}`);
    } finally {
      this.inFlightDeliveries -= left;
    }
  }

  /** Queues a result and resolves once it is recorded, with the others queued by then. */
  private async recordSoon(sent: SentDelivery): Promise<void> {
    this.toRecord.push(sent);
    while (this.toRecord.includes(sent)) {
      if (this.recording !== undefined) {
        await this.recording.catch(() => undefined);
        continue;
      }
      const batch = this.toRecord.splice(0);
      this.recording = this.record(batch).finally(() => {
        this.recording = undefined;
      });
      await this.recording;
    }
  }

  private send(webhook: Webhook, event: EventRecord, at: Date): Promise<WebhookResult> {
    const box = this.webhooks.secretBox();
    const id = String(event.position);
    const body = JSON.stringify(toFeedEvent(event));
    const signatures = [new StandardWebhook(box.open(webhook.secret)).sign(id, at, body)];
    if (
      webhook.previousSecret !== null &&
      webhook.previousSecretExpiresAt !== null &&
      webhook.previousSecretExpiresAt > at
    ) {
      signatures.push(new StandardWebhook(box.open(webhook.previousSecret)).sign(id, at, body));
    }
    return sendWebhook({
      url: webhook.url,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'posts-api-webhooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signatures.join(' '),
      },
      body,
      timeoutMs: this.config.timeoutMs,
      allowPrivateNetworks: this.config.allowPrivateNetworks,
    });
  }

  private async record(results: SentDelivery[]): Promise<void> {
    const attempts: Array<Partial<WebhookAttempt>> = [];
    const changes: Array<{ id: number; change: Partial<WebhookDelivery> }> = [];
    const gone = new Map<number, Date>();
    const counted: DeliveryOutcome[] = [];
    for (const { delivery, webhook, startedAt, result, retryable } of results) {
      const attempt = delivery.attempts + 1;
      const status = result.kind === 'response' ? result.status : null;
      let outcome: DeliveryOutcome;
      let nextRetryAt: Date | null = null;
      if (status !== null && status >= 200 && status < 300) outcome = 'succeeded';
      else if (status === 410) outcome = 'gone';
      else if (!retryable || attempt > this.config.retryScheduleMs.length) outcome = 'failed';
      else {
        outcome = 'retrying';
        const wait = this.config.retryScheduleMs[attempt - 1] * (0.9 + Math.random() * 0.2);
        const retryAfter = result.kind === 'response' ? (result.retryAfterMs ?? 0) : 0;
        nextRetryAt = new Date(Date.now() + Math.max(wait, retryAfter));
      }
      const error =
        result.kind === 'response'
          ? outcome === 'succeeded'
            ? null
            : `HTTP ${status}`
          : result.kind === 'refused'
            ? result.reason
            : result.error;
      attempts.push({
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        eventId: delivery.eventId,
        attempt,
        startedAt,
        statusCode: status,
        error: error?.slice(0, 500) ?? null,
        durationMs: Math.round(result.durationMs),
        nextRetryAt,
      });
      changes.push({
        id: delivery.id,
        change: {
          attempts: attempt,
          state: outcome === 'retrying' ? 'pending' : outcome === 'succeeded' ? 'succeeded' : 'failed',
          nextAttemptAt: nextRetryAt ?? delivery.nextAttemptAt,
          leaseUntil: null,
        },
      });
      if (outcome === 'gone') gone.set(webhook.id, startedAt);
      counted.push(outcome);
    }
    if (attempts.length === 0) return;
    await this.transaction(async (manager) => {
      await manager.insert(WebhookAttempt, attempts);
      for (const { id, change } of changes) await manager.update(WebhookDelivery, { id }, change);
      for (const [id, at] of gone) {
        await manager.update(
          Webhook,
          { id },
          {
            enabled: false,
            disabledReason: `the receiver answered 410 Gone at ${at.toISOString()}`,
            updatedAt: new Date(),
          },
        );
      }
    });
    for (const outcome of counted) this.outcomes[outcome]++;
  }

  private transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.mysql ? this.dataSource.transaction('READ COMMITTED', work) : this.dataSource.transaction(work);
  }
}
