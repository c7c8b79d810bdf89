import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, LessThan, type Repository } from 'typeorm';
import { WEBHOOKS_CONFIG, type WebhooksConfig } from '../config/config.module.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import type { CreateWebhookDto, UpdateWebhookDto } from './dto/webhook-input.dto.js';
import { WebhookAttempt } from './webhook-attempt.entity.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { generateWebhookSecret, SecretBox } from './webhook-secrets.js';
import { checkWebhookUrl } from './webhook-sender.js';
import { Webhook } from './webhook.entity.js';

/** How long the old secret keeps signing after a rotation. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_ATTEMPTS_PAGE = 100;

/** The admin side of webhooks: subscriptions, their secrets, the delivery log and redelivery. */
@Injectable()
export class WebhooksService {
  private readonly box: SecretBox | null;

  constructor(
    @InjectRepository(Webhook) private readonly webhooks: Repository<Webhook>,
    @InjectRepository(WebhookDelivery) private readonly deliveries: Repository<WebhookDelivery>,
    @InjectRepository(WebhookAttempt) private readonly attempts: Repository<WebhookAttempt>,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
  ) {
    this.box = config.secretKey === null ? null : new SecretBox(config.secretKey);
  }

  /** The sealing box; without WEBHOOK_SECRET_KEY no webhook can be created or signed for. */
  secretBox(): SecretBox {
    if (this.box === null) {
      throw new ProblemException(
        ProblemTypes.serviceUnavailable,
        'Webhooks are not configured on this service: its operator must set WEBHOOK_SECRET_KEY.',
      );
    }
    return this.box;
  }

  async create(input: CreateWebhookDto): Promise<{ webhook: Webhook; secret: string }> {
    const box = this.secretBox();
    await this.checkUrl(input.url);
    const secret = generateWebhookSecret();
    const now = new Date();
    const webhook = this.webhooks.create({
      url: input.url,
      eventTypes: eventTypesOf(input.events),
      description: input.description ?? '',
      enabled: true,
      disabledReason: null,
      secret: box.seal(secret),
      previousSecret: null,
      previousSecretExpiresAt: null,
      createdAt: now,
      updatedAt: now,
    });
    await this.webhooks.insert(webhook);
    return { webhook, secret };
  }

  list(): Promise<Webhook[]> {
    return this.webhooks.find({ order: { id: 'ASC' } });
  }

  async get(id: number): Promise<Webhook> {
    const webhook = await this.webhooks.findOneBy({ id });
    if (webhook === null) throw new ProblemException(ProblemTypes.notFound, `Webhook ${id} does not exist.`);
    return webhook;
  }

  async update(id: number, change: UpdateWebhookDto): Promise<Webhook> {
    const webhook = await this.get(id);
    if (change.url !== undefined) {
      await this.checkUrl(change.url);
      webhook.url = change.url;
    }
    if (change.events !== undefined) webhook.eventTypes = eventTypesOf(change.events);
    if (change.description !== undefined) webhook.description = change.description;
    if (change.enabled !== undefined) {
      webhook.enabled = change.enabled;
      webhook.disabledReason = null;
    }
    webhook.updatedAt = new Date();
    await this.webhooks.update({ id }, webhook);
    return webhook;
  }

  /** The webhook, its deliveries and its log, in one transaction. */
  async remove(id: number): Promise<void> {
    await this.get(id);
    await this.dataSource.transaction(async (manager) => {
      await manager.delete(WebhookAttempt, { webhookId: id });
      await manager.delete(WebhookDelivery, { webhookId: id });
      await manager.delete(Webhook, { id });
    });
  }

  /** A new secret; the old one keeps signing (a second signature) for 24 hours. */
  async rotateSecret(id: number): Promise<{ secret: string; previousSecretExpiresAt: Date }> {
    const box = this.secretBox();
    const webhook = await this.get(id);
    const secret = generateWebhookSecret();
    const previousSecretExpiresAt = new Date(Date.now() + PREVIOUS_SECRET_TTL_MS);
    await this.webhooks.update(
      { id },
      { secret: box.seal(secret), previousSecret: webhook.secret, previousSecretExpiresAt, updatedAt: new Date() },
    );
    return { secret, previousSecretExpiresAt };
  }

  /** The delivery log, newest first, `before` an attempt id for the next page. */
  async attemptsOf(id: number, limit: number, before?: number): Promise<WebhookAttempt[]> {
    await this.get(id);
    return this.attempts.find({
      where: before === undefined ? { webhookId: id } : { webhookId: id, id: LessThan(before) },
      order: { id: 'DESC' },
      take: limit,
    });
  }

  /** Makes a delivery due again now, whatever its state; its attempts continue to be counted. */
  async redeliver(id: number, deliveryId: number): Promise<WebhookDelivery> {
    await this.get(id);
    const delivery = await this.deliveries.findOneBy({ id: deliveryId, webhookId: id });
    if (delivery === null) {
      throw new ProblemException(ProblemTypes.notFound, `Delivery ${deliveryId} of webhook ${id} does not exist.`);
    }
    const now = new Date();
    await this.deliveries.update({ id: deliveryId }, { state: 'pending', nextAttemptAt: now, leaseUntil: null });
    return { ...delivery, state: 'pending', nextAttemptAt: now, leaseUntil: null };
  }

  private async checkUrl(url: string): Promise<void> {
    const reason = await checkWebhookUrl(url, this.config.allowPrivateNetworks);
    if (reason !== null) {
      throw new ProblemException(ProblemTypes.validationFailed, `The webhook URL is refused: ${reason}.`, {
        errors: [{ pointer: '/url', detail: reason }],
      });
    }
  }
}

function eventTypesOf(events: string[]): string {
  return events.includes('*') ? '*' : [...new Set(events)].join(',');
}
