import { describe, expect, it } from 'vitest';
import { JwksCircuitBreaker } from './jwks-circuit-breaker.js';

/** A breaker on a clock the test moves: 2 s first window, 30 s cap, 4 s probe deadline. */
function breakerWithClock() {
  let nowMs = 0;
  const breaker = new JwksCircuitBreaker({
    firstOpenMs: 2_000,
    maxOpenMs: 30_000,
    probeTimeoutMs: 4_000,
    now: () => nowMs,
  });
  const advance = (ms: number) => {
    nowMs += ms;
  };
  return { breaker, advance };
}

describe('JwksCircuitBreaker', () => {
  it('lets every fetch through while closed', () => {
    const { breaker } = breakerWithClock();

    const permits = [breaker.tryFetch(), breaker.tryFetch(), breaker.tryFetch()];

    expect(permits).toEqual([true, true, true]);
    expect(breaker.state).toBe('closed');
  });

  it('refuses fetches for the first window after a failure, with Retry-After counting down', () => {
    const { breaker, advance } = breakerWithClock();

    const opened = breaker.recordFailure();
    advance(500);
    const early = { permitted: breaker.tryFetch(), retryAfter: breaker.retryAfterSeconds(), state: breaker.state };
    advance(1_000);
    const late = { permitted: breaker.tryFetch(), retryAfter: breaker.retryAfterSeconds() };

    expect(opened).toBe(true);
    expect(early).toEqual({ permitted: false, retryAfter: 2, state: 'open' });
    expect(late).toEqual({ permitted: false, retryAfter: 1 });
  });

  it('lets exactly one probe through once the window has passed, and refuses the others until its deadline', () => {
    const { breaker, advance } = breakerWithClock();
    breaker.recordFailure();
    advance(2_000);

    const stateBefore = breaker.state;
    const probe = breaker.tryFetch();
    advance(1_000);
    const others = [breaker.tryFetch(), breaker.tryFetch()];

    expect(stateBefore).toBe('half-open');
    expect(probe).toBe(true);
    expect(others).toEqual([false, false]);
    expect(breaker.retryAfterSeconds()).toBe(3);
  });

  it('closes when the probe succeeds, and opens for the first window again on the next failure', () => {
    const { breaker, advance } = breakerWithClock();
    breaker.recordFailure();
    advance(2_000);
    breaker.tryFetch();
    breaker.recordFailure();
    advance(4_000);
    breaker.tryFetch();

    const closed = breaker.recordSuccess();
    const afterSuccess = [breaker.state, breaker.tryFetch(), breaker.tryFetch()];
    breaker.recordFailure();
    advance(1_999);
    const beforeFirstWindowEnds = breaker.tryFetch();
    advance(1);
    const atFirstWindowEnd = breaker.tryFetch();

    expect(closed).toBe(true);
    expect(afterSuccess).toEqual(['closed', true, true]);
    expect(beforeFirstWindowEnds).toBe(false);
    expect(atFirstWindowEnd).toBe(true);
  });

  it('doubles the window with every failed probe, up to the cap', () => {
    const { breaker, advance } = breakerWithClock();
    breaker.recordFailure();
    const windows: number[] = [];

    for (let probe = 0; probe < 6; probe++) {
      let waitedMs = 0;
      while (!breaker.tryFetch()) {
        advance(100);
        waitedMs += 100;
      }
      windows.push(waitedMs);
      breaker.recordFailure();
    }

    expect(windows).toEqual([2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('counts the failure of one fetch once, however many requests were waiting on it', () => {
    const { breaker, advance } = breakerWithClock();

    const reports = [breaker.recordFailure(), breaker.recordFailure(), breaker.recordFailure()];
    advance(1_999);
    const beforeFirstWindowEnds = breaker.tryFetch();
    advance(1);
    const atFirstWindowEnd = breaker.tryFetch();

    expect(reports).toEqual([true, false, false]);
    expect(beforeFirstWindowEnds).toBe(false);
    expect(atFirstWindowEnd).toBe(true);
  });

  it('lets another probe through when the probe in flight has not reported by its deadline', () => {
    const { breaker, advance } = breakerWithClock();
    breaker.recordFailure();
    advance(2_000);
    breaker.tryFetch();

    advance(3_999);
    const beforeDeadline = breaker.tryFetch();
    advance(1);
    const atDeadline = breaker.tryFetch();

    expect(beforeDeadline).toBe(false);
    expect(atDeadline).toBe(true);
  });

  it('reports a success while closed as no change', () => {
    const { breaker } = breakerWithClock();

    expect(breaker.recordSuccess()).toBe(false);
  });

  it('says a retry may come at once when closed or when the window has passed without a probe', () => {
    const { breaker, advance } = breakerWithClock();
    const whileClosed = breaker.retryAfterSeconds();
    breaker.recordFailure();
    advance(2_500);

    expect(whileClosed).toBe(1);
    expect(breaker.retryAfterSeconds()).toBe(1);
  });
});
