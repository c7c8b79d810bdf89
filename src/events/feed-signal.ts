import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Draining } from '../http/draining.js';
import { EventsRepository } from './events.repository.js';

// How often an instance with waiting readers looks for positions other instances handed out.
const POLL_INTERVAL_MS = 200;

interface Waiter {
  after: number;
  wake: () => void;
}

/**
 * The last feed position this instance knows of, and the readers waiting for one beyond theirs.
 * The local sequencer advances it at once; while anyone waits, one query every 200 ms (for the
 * whole instance, not per reader) picks up the positions other instances handed out. Every wait has
 * a deadline, and draining (shutdown) wakes them all. How many may wait is FeedReaders' business.
 */
@Injectable()
export class FeedSignal implements OnApplicationShutdown {
  private known = 0;
  private readonly waiters = new Set<Waiter>();
  private pollTimer?: NodeJS.Timeout;
  private polling = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly events: EventsRepository,
    private readonly draining: Draining,
  ) {
    this.unsubscribe = draining.onStart(() => {
      clearTimeout(this.pollTimer);
      for (const waiter of this.waiters) waiter.wake();
    });
  }

  get lastKnown(): number {
    return this.known;
  }

  get isClosed(): boolean {
    return this.draining.isDraining;
  }

  advance(position: number): void {
    if (position <= this.known) return;
    this.known = position;
    for (const waiter of this.waiters) if (waiter.after < position) waiter.wake();
  }

  /**
   * Resolves when a position after `after` exists (as far as this instance can tell), after
   * `timeoutMs`, when `abort` fires or when draining starts, whichever comes first.
   */
  async wait(after: number, timeoutMs: number, abort?: AbortSignal): Promise<void> {
    if (this.isClosed || after < this.known || timeoutMs <= 0 || abort?.aborted) return;
    let waiter!: Waiter;
    let timer!: NodeJS.Timeout;
    const onAbort = (): void => waiter.wake();
    await new Promise<void>((resolve) => {
      waiter = { after, wake: resolve };
      this.waiters.add(waiter);
      timer = setTimeout(resolve, timeoutMs);
      abort?.addEventListener('abort', onAbort, { once: true });
      this.startPolling();
    });
    clearTimeout(timer);
    abort?.removeEventListener('abort', onAbort);
    this.waiters.delete(waiter);
  }

  // Not on module destroy: Nest runs that before beforeApplicationShutdown, where a closing app
  // starts draining, and the waiters must still be woken then.
  onApplicationShutdown(): void {
    this.unsubscribe();
    clearTimeout(this.pollTimer);
  }

  private startPolling(): void {
    if (this.polling || this.isClosed) return;
    this.polling = true;
    const poll = async (): Promise<void> => {
      if (this.waiters.size === 0 || this.isClosed) {
        this.polling = false;
        return;
      }
      try {
        this.advance((await this.events.sequenceState()).lastPosition);
      } catch {
        // The database is unreachable: the waiters' deadlines still hold; try again next time.
      }
      this.pollTimer = setTimeout(() => void poll(), POLL_INTERVAL_MS).unref();
    };
    this.pollTimer = setTimeout(() => void poll(), POLL_INTERVAL_MS).unref();
  }
}
