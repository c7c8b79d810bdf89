import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { PageLimit, pageLimit } from '../../common/pagination/page-limit.js';
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

  @PageLimit(DEFAULT_EVENTS_PAGE_SIZE, MAX_EVENTS_PAGE_SIZE)
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
  return {
    after: query.after === undefined ? undefined : Number(query.after),
    limit: pageLimit(query.limit, DEFAULT_EVENTS_PAGE_SIZE, MAX_EVENTS_PAGE_SIZE),
    types: query.type === undefined ? [] : [...new Set(query.type.split(',') as EventType[])],
    waitMs: Number(query.wait ?? 0) * 1000,
  };
}
