import { Injectable } from '@nestjs/common';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import type { EventsQuery } from './dto/events-query.dto.js';
import type { EventRecord } from './event-record.entity.js';
import type { SqlStatement } from '../database/entity-rows.js';
import { EventSequencer } from './event-sequencer.js';
import type { EventType, FeedEvent, NewEvent, NewEventOfInsert } from './event-types.js';
import { EventsRepository, type SequenceState } from './events.repository.js';
import { FeedReaders } from './feed-readers.js';
import { FeedSignal } from './feed-signal.js';

export interface FeedPage {
  events: FeedEvent[];
  /** Where the next read resumes: the last event's id, or the same position when there was none. */
  next: number;
}

/**
 * The feed of contract §9: events in position order after a cursor, with an optional wait for the
 * next one. Positions are handed out after commit, one sequencer at a time (EventSequencer), so a
 * reader walking them never skips or repeats one, whatever the number of writers and instances.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly signal: FeedSignal,
    private readonly readers: FeedReaders,
    private readonly sequencer: EventSequencer,
  ) {}

  /** Appends an event in the caller's transaction (the change it records). */
  append(event: NewEvent): Promise<void> {
    return this.events.append(event);
  }

  /** True where insertWithEvent() applies: MySQL, outside a transaction. */
  get batchesInserts(): boolean {
    return this.events.batchesInserts;
  }

  /**
   * Runs `insert` and its event in one transaction sent as one statement batch (one round trip);
   * returns the inserted row's id. Only where batchesInserts is true.
   */
  async insertWithEvent(insert: SqlStatement, event: NewEventOfInsert): Promise<number> {
    const id = await this.events.insertWithEvent(insert, event);
    this.sequencer.committed();
    return id;
  }

  async page(query: EventsQuery, principalId: string, abort?: AbortSignal): Promise<FeedPage> {
    const start = query.after ?? (await this.events.sequenceState()).purgedThrough;
    const deadline = Date.now() + query.waitMs;
    let rows = await this.events.page(start, query.types, query.limit);
    let state = await this.checkedState(start, query.after !== undefined);
    // Waits only when there is nothing to give; with a type filter, until a matching event or the deadline.
    while (rows.length === 0 && Date.now() < deadline && !abort?.aborted && !this.signal.isClosed) {
      await this.waitBeyond(state.lastPosition, deadline - Date.now(), principalId, abort);
      rows = await this.events.page(start, query.types, query.limit);
      state = await this.checkedState(start, query.after !== undefined);
    }
    const events = rows.map(toFeedEvent);
    return { events, next: rows.length === 0 ? start : rows[rows.length - 1].position! };
  }

  /** The sequence state, read after the rows: a cursor behind what retention removed is 410, one ahead of the feed 400. */
  async checkedState(after: number, explicit: boolean): Promise<SequenceState> {
    const state = await this.events.sequenceState();
    if (explicit && after < state.purgedThrough) {
      throw new ProblemException(
        ProblemTypes.eventsExpired,
        `Events after ${after} have been removed (kept for EVENTS_RETENTION); read the current state again and resume from the oldest event kept (omit after).`,
      );
    }
    if (after > state.lastPosition) {
      throw new ProblemException(ProblemTypes.validationFailed, `There is no event ${after} in this feed yet.`, {
        errors: [{ parameter: 'after', detail: 'after must be the id of an event of this feed' }],
      });
    }
    return state;
  }

  private async waitBeyond(
    position: number,
    timeoutMs: number,
    principalId: string,
    abort?: AbortSignal,
  ): Promise<void> {
    const release = this.readers.acquire('wait', principalId);
    try {
      await this.signal.wait(position, timeoutMs, abort);
    } finally {
      release();
    }
  }
}

export function toFeedEvent(record: EventRecord): FeedEvent {
  return {
    id: String(record.position),
    type: record.type as EventType,
    occurredAt: record.occurredAt.toISOString(),
    data: JSON.parse(record.data) as Record<string, unknown>,
  };
}
