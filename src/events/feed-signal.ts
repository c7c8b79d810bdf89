import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { EventsRepository } from './events.repository.js';

// How often an instance with waiting readers looks for positions other instances handed out.
const POLL_INTERVAL_MS = 200;
/** Readers waiting at once (long-polls and streams), per instance and per principal. */
export const MAX_WAITERS_PER_INSTANCE = 1_000;
export const MAX_WAITERS_PER_PRINCIPAL = 10;

export class TooManyWaitersError extends Error {
  constructor(readonly scope: 'instance' | 'principal') {
    super(`too many readers waiting for events on this ${scope}`);
  }
}

interface Waiter {
  after: number;
  principalId: string;
  wake: () => void;
}

/**
 * The last feed position this instance knows of, and the readers waiting for one beyond theirs.
 * The local sequencer advances it at once; while anyone waits, one query every 200 ms (for the
 * whole instance, not per reader) picks up the positions other instances handed out. Bounded: at
 * most MAX_WAITERS_PER_INSTANCE waiters, MAX_WAITERS_PER_PRINCIPAL per principal; every wait has a
 * deadline, and shutdown wakes them all.
 */
@Injectable()
export class FeedSignal implements BeforeApplicationShutdown {
  private known = 0;
  private readonly waiters = new Set<Waiter>();
  private readonly perPrincipal = new Map<string, number>();
  private pollTimer?: NodeJS.Timeout;
  private polling = false;
  private closed = false;

  constructor(private readonly events: EventsRepository) {}

  get lastKnown(): number {
    return this.known;
  }

  get waiting(): number {
    return this.waiters.size;
  }

  advance(position: number): void {
    if (position <= this.known) return;
    this.known = position;
    for (const waiter of this.waiters) if (waiter.after < position) waiter.wake();
  }

  /**
   * Resolves when a position after `after` exists (as far as this instance can tell), after
   * `timeoutMs`, when `abort` fires or at shutdown, whichever comes first; throws
   * TooManyWaitersError at once when the caps are reached.
   */
  async wait(after: number, timeoutMs: number, principalId: string, abort?: AbortSignal): Promise<void> {
    if (this.closed || after < this.known || timeoutMs <= 0 || abort?.aborted) return;
    if (this.waiters.size >= MAX_WAITERS_PER_INSTANCE) throw new TooManyWaitersError('instance');
    const mine = this.perPrincipal.get(principalId) ?? 0;
    if (mine >= MAX_WAITERS_PER_PRINCIPAL) throw new TooManyWaitersError('principal');

    let waiter!: Waiter;
    let timer!: NodeJS.Timeout;
    const onAbort = (): void => waiter.wake();
    await new Promise<void>((resolve) => {
      waiter = { after, principalId, wake: resolve };
      this.waiters.add(waiter);
      this.perPrincipal.set(principalId, mine + 1);
      timer = setTimeout(resolve, timeoutMs);
      abort?.addEventListener('abort', onAbort, { once: true });
      this.startPolling();
    });
    clearTimeout(timer);
    abort?.removeEventListener('abort', onAbort);
    this.waiters.delete(waiter);
    const left = (this.perPrincipal.get(principalId) ?? 1) - 1;
    if (left === 0) this.perPrincipal.delete(principalId);
    else this.perPrincipal.set(principalId, left);
  }

  /** Wakes every waiter and takes no more: long-polls answer and streams end before the server closes. */
  beforeApplicationShutdown(): void {
    this.closed = true;
    clearTimeout(this.pollTimer);
    for (const waiter of this.waiters) waiter.wake();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private startPolling(): void {
    if (this.polling || this.closed) return;
    this.polling = true;
    const poll = async (): Promise<void> => {
      if (this.waiters.size === 0 || this.closed) {
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
