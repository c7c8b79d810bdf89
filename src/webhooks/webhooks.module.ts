import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PublicUrls } from '../http/public-urls.js';
import { WebhookAttempt } from './webhook-attempt.entity.js';
import { WebhookDelivery } from './webhook-delivery.entity.js';
import { WebhookDeliveryWorker } from './webhook-delivery.worker.js';
import { Webhook } from './webhook.entity.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Webhooks (contract §9): the admin endpoints and the delivery worker (off with EVENTS_DELIVERY=false). */
@Module({
  imports: [TypeOrmModule.forFeature([Webhook, WebhookDelivery, WebhookAttempt])],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookDeliveryWorker, PublicUrls],
  exports: [WebhookDeliveryWorker],
})
export class WebhooksModule {}
