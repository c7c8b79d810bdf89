import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { EVENTS_CONFIG, type EventsConfig } from '../config/config.module.js';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';
import type { EventType } from './event-types.js';
import { EventsRepository } from './events.repository.js';
import { toFeedEvent } from './events.service.js';
import { FeedReaders } from './feed-readers.js';
import { FeedSignal } from './feed-signal.js';

const BATCH = 100;
// A client that reads nothing for this long while the stream has data for it is cut off: its
// unsent events would otherwise pile up in memory.
const DRAIN_TIMEOUT_MS = 30_000;
// What an EventSource waits before it reconnects after the stream ends.
const RETRY_MS = 1_000;

/** Last-Event-ID: the id of an event (digits), as the stream sent it. */
const EVENT_ID = /^\d{1,15}$/;

export interface StreamRequest {
  /** `after` from the query, when given. */
  after?: number;
  types: readonly EventType[];
  principalId: string;
}

/**
 * Server-sent events on GET /events (contract §9): `id:` the event's id, `event:` its type, `data:`
 * the event as JSON; a comment at least every EVENTS_HEARTBEAT when nothing happens. A reconnecting
 * client's Last-Event-ID resumes right after that event, so nothing is lost in between. Without a
 * cursor (neither Last-Event-ID nor `after`), the stream starts live, at the newest event.
 *
 * Bounded: at most 5 open streams per principal and 1,000 per instance (FeedReaders), and a client
 * that does not read is cut off after 30 s of backpressure. The stream ends cleanly when draining
 * starts (shutdown), when the client goes, and when its position falls behind what retention has
 * removed (the reconnect then gets 410).
 */
@Injectable()
export class EventStreamer {
  private readonly logger = new Logger('Events');

  constructor(
    private readonly events: EventsRepository,
    private readonly signal: FeedSignal,
    private readonly readers: FeedReaders,
    @Inject(EVENTS_CONFIG) private readonly config: EventsConfig,
  ) {}

  /** Checks the cursor (400, 410 as problems, before anything is sent), then streams until the end. */
  async serve(request: Request, response: Response, stream: StreamRequest): Promise<void> {
    const lastEventId = request.get('last-event-id');
    if (lastEventId !== undefined && !EVENT_ID.test(lastEventId.trim())) {
      throw new ProblemException(ProblemTypes.validationFailed, 'Last-Event-ID must be the id of an event.', {
        errors: [{ parameter: 'Last-Event-ID', detail: 'must be the id of an event (digits)' }],
      });
    }
    const cursor = lastEventId !== undefined ? Number(lastEventId.trim()) : stream.after;
    const state = await this.events.sequenceState();
    let after = cursor ?? state.lastPosition;
    if (cursor !== undefined && cursor < state.purgedThrough) {
      throw new ProblemException(
        ProblemTypes.eventsExpired,
        `Events after ${cursor} have been removed (kept for EVENTS_RETENTION); read the current state again and reconnect without a cursor.`,
      );
    }
    if (after > state.lastPosition) {
      throw new ProblemException(ProblemTypes.validationFailed, `There is no event ${after} in this feed yet.`, {
        errors: [
          { parameter: lastEventId !== undefined ? 'Last-Event-ID' : 'after', detail: 'not an event of this feed' },
        ],
      });
    }
    const release = this.readers.acquire('stream', stream.principalId);
    const abort = new AbortController();
    const onClose = (): void => abort.abort();
    response.once('close', onClose);
    try {
      response.status(200);
      response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
      response.setHeader('Cache-Control', 'no-store');
      // Proxies such as nginx would otherwise hold the events back in their buffers.
      response.setHeader('X-Accel-Buffering', 'no');
      response.flushHeaders();
      await this.write(response, `retry: ${RETRY_MS}\n: events after ${after}\n\n`, abort.signal);
      let lastWrite = Date.now();
      while (!abort.signal.aborted && !this.signal.isClosed) {
        // The state first: a page shorter than BATCH then holds every matching event up to its last
        // position, so a filtered stream may move past the others without missing one of its own.
        const current = await this.events.sequenceState();
        if (after < current.purgedThrough) break;
        const rows = await this.events.page(after, stream.types, BATCH);
        if (rows.length > 0) {
          const text = rows
            .map((row) => `id: ${row.position}\nevent: ${row.type}\ndata: ${JSON.stringify(toFeedEvent(row))}\n\n`)
            .join('');
          await this.write(response, text, abort.signal);
          lastWrite = Date.now();
          after = rows[rows.length - 1].position!;
          if (rows.length === BATCH) continue;
        }
        after = Math.max(after, current.lastPosition);
        await this.signal.wait(after, lastWrite + this.config.heartbeatMs - Date.now(), abort.signal);
        if (Date.now() - lastWrite >= this.config.heartbeatMs && !abort.signal.aborted) {
          await this.write(response, ': heartbeat\n\n', abort.signal);
          lastWrite = Date.now();
        }
      }
      if (!abort.signal.aborted) response.end(this.signal.isClosed ? ': the server is shutting down\n\n' : undefined);
    } catch (error) {
      // Headers are sent: no problem document can follow. The client reconnects with Last-Event-ID.
      if (!abort.signal.aborted) this.logger.warn(`an event stream ended early: ${(error as Error).message}`);
      response.destroy();
    } finally {
      response.off('close', onClose);
      release();
    }
  }

  /** Writes, and waits (bounded) while the client's buffer is full. */
  private async write(response: Response, text: string, abort: AbortSignal): Promise<void> {
    if (response.write(text) || abort.aborted) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the client read nothing for ${DRAIN_TIMEOUT_MS} ms`));
      }, DRAIN_TIMEOUT_MS);
      const done = (): void => {
        cleanup();
        resolve();
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        response.off('drain', done);
        abort.removeEventListener('abort', done);
      };
      response.once('drain', done);
      abort.addEventListener('abort', done, { once: true });
    });
  }
}
