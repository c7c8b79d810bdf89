import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsText } from '../../common/validation/text-rules.js';
import { ALL_EVENT_TYPES } from '../../events/event-types.js';

export const WEBHOOK_EVENT_CHOICES = ['*', ...ALL_EVENT_TYPES] as const;
const URL_MAX = 2048;

export class CreateWebhookDto {
  @ApiProperty({ maxLength: URL_MAX, example: 'https://hooks.example.com/posts' })
  @IsString({ message: 'url must be a string' })
  @MaxLength(URL_MAX, { message: `url must be at most ${URL_MAX} characters` })
  url: string;

  @ApiProperty({ type: [String], enum: WEBHOOK_EVENT_CHOICES, example: ['*'], description: '["*"] for every type' })
  @IsArray({ message: 'events must be an array of event types' })
  @ArrayMinSize(1, { message: 'events must name at least one event type' })
  @ArrayMaxSize(WEBHOOK_EVENT_CHOICES.length, { message: 'events names too many event types' })
  @IsIn(WEBHOOK_EVENT_CHOICES, { each: true, message: `each event must be one of ${WEBHOOK_EVENT_CHOICES.join(', ')}` })
  events: string[];

  @ApiPropertyOptional({ maxLength: 500, default: '' })
  @IsOptional()
  @IsText({ minLength: 0, maxLength: 500, requireVisible: false, forbidden: 'control' })
  description?: string;
}

export class UpdateWebhookDto {
  @ApiPropertyOptional({ maxLength: URL_MAX })
  @IsOptional()
  @IsString({ message: 'url must be a string' })
  @MaxLength(URL_MAX, { message: `url must be at most ${URL_MAX} characters` })
  url?: string;

  @ApiPropertyOptional({ type: [String], enum: WEBHOOK_EVENT_CHOICES })
  @IsOptional()
  @IsArray({ message: 'events must be an array of event types' })
  @ArrayMinSize(1, { message: 'events must name at least one event type' })
  @ArrayMaxSize(WEBHOOK_EVENT_CHOICES.length, { message: 'events names too many event types' })
  @IsIn(WEBHOOK_EVENT_CHOICES, { each: true, message: `each event must be one of ${WEBHOOK_EVENT_CHOICES.join(', ')}` })
  events?: string[];

  @ApiPropertyOptional({ description: 'true re-enables a webhook the service disabled after a 410' })
  @IsOptional()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;

  @ApiPropertyOptional({ maxLength: 500 })
  @IsOptional()
  @IsText({ minLength: 0, maxLength: 500, requireVisible: false, forbidden: 'control' })
  description?: string;
}
