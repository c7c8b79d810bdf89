import { ApiProperty } from '@nestjs/swagger';
import type { WebhookAttempt } from './webhook-attempt.entity.js';
import type { Webhook } from './webhook.entity.js';

export class WebhookResource {
  @ApiProperty({ example: 3 }) id: number;
  @ApiProperty({ example: 'https://hooks.example.com/posts' }) url: string;
  @ApiProperty({ type: [String], example: ['*'] }) events: string[];
  @ApiProperty({ example: 'search index' }) description: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Why the service disabled it (a 410 from the receiver)' })
  disabledReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CreatedWebhookResource extends WebhookResource {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret: in this response only',
  })
  secret: string;
}

export class RotatedSecretResource {
  @ApiProperty({ description: 'The new signing secret: in this response only' }) secret: string;
  @ApiProperty({ format: 'date-time', description: 'Until then the old secret signs too (a second signature)' })
  previousSecretExpiresAt: string;
}

export class WebhookAttemptResource {
  @ApiProperty() id: number;
  @ApiProperty({ description: 'The delivery (event × webhook) this attempt belongs to; redeliver it by this id' })
  deliveryId: number;
  @ApiProperty({ example: '1042', description: 'The event id: the webhook-id header of every attempt' })
  eventId: string;
  @ApiProperty({ example: 1 }) attempt: number;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: "The receiver's status code; null when there was no response",
  })
  statusCode: number | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty() durationMs: number;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the next attempt is due, if any',
  })
  nextRetryAt: string | null;
}

export function toWebhookResource(webhook: Webhook): WebhookResource {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.eventTypes.split(','),
    description: webhook.description,
    enabled: webhook.enabled,
    disabledReason: webhook.disabledReason,
    createdAt: webhook.createdAt.toISOString(),
    updatedAt: webhook.updatedAt.toISOString(),
  };
}

export function toAttemptResource(attempt: WebhookAttempt): WebhookAttemptResource {
  return {
    id: attempt.id,
    deliveryId: attempt.deliveryId,
    eventId: String(attempt.eventId),
    attempt: attempt.attempt,
    startedAt: attempt.startedAt.toISOString(),
    statusCode: attempt.statusCode,
    error: attempt.error,
    durationMs: attempt.durationMs,
    nextRetryAt: attempt.nextRetryAt?.toISOString() ?? null,
  };
}
