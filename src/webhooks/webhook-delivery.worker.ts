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
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();
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
    try {
      await this.fanOut();
      const room = MAX_IN_FLIGHT - this.inFlight.size;
      if (room > 0) {
        for (const delivery of await this.claim(room)) {
          const sending = this.deliver(delivery).finally(() => this.inFlight.delete(sending));
          this.inFlight.add(sending);
        }
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

  private async fanOut(): Promise<void> {
    await this.transaction(async (manager) => {
      const [cursor] = await manager.query<Array<{ dispatched_through: number | string }>>(
        this.mysql
          ? 'SELECT dispatched_through FROM webhook_dispatch WHERE id = 1 FOR UPDATE SKIP LOCKED'
          : 'SELECT dispatched_through FROM webhook_dispatch WHERE id = 1',
      );
      if (cursor === undefined) return;
      const after = Number(cursor.dispatched_through);
      const events = await manager.query<Array<{ position: number | string; type: string; occurred_at: unknown }>>(
        'SELECT position, type, occurred_at FROM events WHERE position > ? ORDER BY position LIMIT ?',
        [after, FAN_OUT_BATCH],
      );
      if (events.length === 0) return;
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

  private async deliver(delivery: WebhookDelivery): Promise<void> {
    try {
      const webhook = await this.dataSource.manager.findOneBy(Webhook, { id: delivery.webhookId });
      if (webhook === null) return; // deleted meanwhile, with its deliveries
      const event = await this.dataSource.manager.findOneBy(EventRecord, { position: delivery.eventId });
      const startedAt = new Date();
      let result: WebhookResult;
      if (!webhook.enabled) result = { kind: 'refused', reason: 'not sent: the webhook is disabled', durationMs: 0 };
      else if (event === null)
        result = { kind: 'refused', reason: 'not sent: the event is past EVENTS_RETENTION', durationMs: 0 };
      else result = await this.send(webhook, event, startedAt);
      await this.record(delivery, webhook, startedAt, result, event !== null && webhook.enabled);
    } catch (error) {
      // The lease runs out and another round (here or elsewhere) tries again: at least once.
      if (!this.stopped)
        this.logger.warn(`delivery ${delivery.id} failed before it was recorded: ${(error as Error).message}`);
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

  private async record(
    delivery: WebhookDelivery,
    webhook: Webhook,
    startedAt: Date,
    result: WebhookResult,
    retryable: boolean,
  ): Promise<void> {
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
        ? status! >= 200 && status! < 300
          ? null
          : `HTTP ${status}`
        : result.kind === 'refused'
          ? result.reason
          : result.error;
    await this.transaction(async (manager) => {
      await manager.insert(WebhookAttempt, {
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
      await manager.update(
        WebhookDelivery,
        { id: delivery.id },
        {
          attempts: attempt,
          state: outcome === 'retrying' ? 'pending' : outcome === 'succeeded' ? 'succeeded' : 'failed',
          nextAttemptAt: nextRetryAt ?? delivery.nextAttemptAt,
          leaseUntil: null,
        },
      );
      if (outcome === 'gone') {
        await manager.update(
          Webhook,
          { id: webhook.id },
          {
            enabled: false,
            disabledReason: `the receiver answered 410 Gone at ${startedAt.toISOString()}`,
            updatedAt: new Date(),
          },
        );
      }
    });
    this.outcomes[outcome]++;
  }

  private transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.mysql ? this.dataSource.transaction('READ COMMITTED', work) : this.dataSource.transaction(work);
  }
}
