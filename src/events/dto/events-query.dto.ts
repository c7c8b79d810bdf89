import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { ALL_EVENT_TYPES, type EventType } from '../event-types.js';

export const DEFAULT_EVENTS_PAGE_SIZE = 100;
export const MAX_EVENTS_PAGE_SIZE = 100;
export const MAX_WAIT_SECONDS = 30;

const once = (name: string): { message: string } => ({ message: `${name} must be given at most once` });
// Every pattern here is anchored and has no nested quantifier: linear on any input.
const TYPE_LIST = new RegExp(
  `^(?:${ALL_EVENT_TYPES.join('|').replaceAll('.', '\\.')})(?:,(?:${ALL_EVENT_TYPES.join('|').replaceAll('.', '\\.')}))*$`,
);

/** Query of GET /events. Values stay strings here; toEventsQuery() parses them. */
export class EventsQueryDto {
  @ApiPropertyOptional({
    description:
      'The id of the last event you have (from Link: rel="next" or an event); omit it to start at the oldest kept',
    pattern: '^[0-9]{1,15}$',
  })
  @IsOptional()
  @IsString(once('after'))
  @Matches(/^\d{1,15}$/, { message: 'after must be the id of an event (digits)' })
  after?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    default: 100,
    description: 'At most 100; larger values are coerced to 100',
  })
  @IsOptional()
  @IsString(once('limit'))
  @Matches(/^\d+$/, { message: 'limit must be a positive integer' })
  @Matches(/[1-9]/, { message: 'limit must be at least 1' })
  limit?: string;

  @ApiPropertyOptional({ description: `Comma-separated event types: ${ALL_EVENT_TYPES.join(', ')}` })
  @IsOptional()
  @IsString(once('type'))
  @Matches(TYPE_LIST, { message: `type must be a comma-separated list of ${ALL_EVENT_TYPES.join(', ')}` })
  type?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    default: 0,
    description: 'Seconds to wait for an event when there is none yet (long poll)',
  })
  @IsOptional()
  @IsString(once('wait'))
  @Matches(/^(?:[0-9]|[12][0-9]|30)$/, {
    message: `wait must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`,
  })
  wait?: string;
}

export interface EventsQuery {
  after?: number;
  limit: number;
  types: EventType[];
  waitMs: number;
}

export function toEventsQuery(query: EventsQueryDto): EventsQuery {
  const digits = query.limit?.replace(/^0+/, '');
  const limit =
    digits === undefined ? DEFAULT_EVENTS_PAGE_SIZE : digits.length > 3 ? MAX_EVENTS_PAGE_SIZE : Number(digits);
  return {
    after: query.after === undefined ? undefined : Number(query.after),
    limit: Math.min(limit, MAX_EVENTS_PAGE_SIZE),
    types: query.type === undefined ? [] : [...new Set(query.type.split(',') as EventType[])],
    waitMs: Number(query.wait ?? 0) * 1000,
  };
}
