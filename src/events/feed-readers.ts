import { Injectable } from '@nestjs/common';
import { ProblemException } from '../http/problem/problem.exception.js';
import { ProblemTypes } from '../http/problem/problem-types.js';

export type ReaderKind = 'wait' | 'stream';

/** How many of each kind of lasting read may be open at once, per principal and per instance. */
export const READER_LIMITS: Record<ReaderKind, { perPrincipal: number; perInstance: number }> = {
  wait: { perPrincipal: 10, perInstance: 1_000 },
  stream: { perPrincipal: 5, perInstance: 1_000 },
};

const WHAT: Record<ReaderKind, string> = { wait: 'waiting reads of the events feed', stream: 'open event streams' };

/**
 * The reads of the feed that last (long polls while they wait, event streams while they are open),
 * counted so that neither one principal nor everyone together can hold an unbounded number of
 * responses, timers and listeners: over a principal's cap 429, over the instance's 503, both with
 * `Retry-After`.
 */
@Injectable()
export class FeedReaders {
  private readonly open: Record<ReaderKind, { total: number; byPrincipal: Map<string, number> }> = {
    wait: { total: 0, byPrincipal: new Map() },
    stream: { total: 0, byPrincipal: new Map() },
  };

  count(kind: ReaderKind): number {
    return this.open[kind].total;
  }

  /** Counts one more reader of this kind, or throws the problem that refuses it; returns its release. */
  acquire(kind: ReaderKind, principalId: string): () => void {
    const open = this.open[kind];
    const limits = READER_LIMITS[kind];
    const mine = open.byPrincipal.get(principalId) ?? 0;
    if (mine >= limits.perPrincipal) {
      throw new ProblemException(
        ProblemTypes.rateLimited,
        `At most ${limits.perPrincipal} ${WHAT[kind]} per principal; close one first.`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    if (open.total >= limits.perInstance) {
      throw new ProblemException(ProblemTypes.serviceUnavailable, `Too many ${WHAT[kind]} on this instance.`, {
        headers: { 'Retry-After': '1' },
      });
    }
    open.total++;
    open.byPrincipal.set(principalId, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      open.total--;
      const left = (open.byPrincipal.get(principalId) ?? 1) - 1;
      if (left === 0) open.byPrincipal.delete(principalId);
      else open.byPrincipal.set(principalId, left);
    };
  }
}
