import type { Response } from 'express';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProblemException } from '../http/problem/problem.exception.js';
import type { RateLimitRecord } from './memory-rate-limit.store.js';
import { applyRateLimit, type RateLimitPolicy } from './rate-limit.headers.js';

// Half a second past a whole second: X-RateLimit-Reset rounds the current time up.
const NOW_MS = 1_700_000_000_500;
const NOW_SECONDS_ROUNDED_UP = 1_700_000_001;

const POLICY: RateLimitPolicy = { name: 'default', limit: 10, windowSeconds: 60 };

function fakeResponse() {
  const headers: Record<string, string | number | readonly string[]> = {};
  const response = {
    headers,
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name] = value;
      return response;
    },
  };
  return { headers, response: response as unknown as Response };
}

function record(overrides: Partial<RateLimitRecord>): RateLimitRecord {
  return { totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0, ...overrides };
}

/** The error applyRateLimit throws, or undefined when it returns. */
function errorFrom(response: Response, policy: RateLimitPolicy, current: RateLimitRecord): unknown {
  try {
    applyRateLimit(response, policy, current);
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('applyRateLimit', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW_MS);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells a client within its budget the policy, what remains and when the window resets', () => {
    const { headers, response } = fakeResponse();

    const error = errorFrom(response, POLICY, record({ totalHits: 3, timeToExpire: 42 }));

    expect(error).toBeUndefined();
    expect(headers).toEqual({
      'RateLimit-Policy': '"default";q=10;w=60',
      RateLimit: '"default";r=7;t=42',
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '7',
      'X-RateLimit-Reset': String(NOW_SECONDS_ROUNDED_UP + 42),
    });
  });

  it('names the policy it applies in both structured fields', () => {
    const { headers, response } = fakeResponse();

    applyRateLimit(
      response,
      { name: 'auth-failures', limit: 20, windowSeconds: 300 },
      record({ totalHits: 5, timeToExpire: 299 }),
    );

    expect(headers['RateLimit-Policy']).toBe('"auth-failures";q=20;w=300');
    expect(headers.RateLimit).toBe('"auth-failures";r=15;t=299');
  });

  it('reports the whole budget when nothing was counted (a store failing open)', () => {
    const { headers, response } = fakeResponse();

    applyRateLimit(response, POLICY, record({ totalHits: 0, timeToExpire: 60 }));

    expect(headers.RateLimit).toBe('"default";r=10;t=60');
    expect(headers['X-RateLimit-Remaining']).toBe('10');
  });

  it('lets the last request of the budget through with nothing remaining', () => {
    const { headers, response } = fakeResponse();

    const error = errorFrom(response, POLICY, record({ totalHits: 10, timeToExpire: 5 }));

    expect(error).toBeUndefined();
    expect(headers.RateLimit).toBe('"default";r=0;t=5');
    expect(headers['X-RateLimit-Remaining']).toBe('0');
  });

  it('never reports a negative remainder', () => {
    const { headers, response } = fakeResponse();

    applyRateLimit(response, POLICY, record({ totalHits: 12, timeToExpire: 5 }));

    expect(headers['X-RateLimit-Remaining']).toBe('0');
  });

  describe('over the limit', () => {
    const blocked = record({ totalHits: 11, timeToExpire: 42, isBlocked: true, timeToBlockExpire: 17 });

    it('throws a 429 rate-limited problem with Retry-After equal to the seconds until the block ends', () => {
      const { response } = fakeResponse();

      const error = errorFrom(response, POLICY, blocked);

      expect(error).toBeInstanceOf(ProblemException);
      const problem = error as ProblemException;
      expect(problem.getStatus()).toBe(429);
      expect(problem.problemType.status).toBe(429);
      expect(problem.problemType.type).toMatch(/:rate-limited$/);
      expect(problem.headers).toEqual({ 'Retry-After': '17' });
      expect(problem.detail).toContain('(default)');
      expect(problem.detail).toContain('17 s');
    });

    it('sets the budget headers before throwing: nothing remains and t counts down the block', () => {
      const { headers, response } = fakeResponse();

      errorFrom(response, POLICY, blocked);

      expect(headers).toEqual({
        'RateLimit-Policy': '"default";q=10;w=60',
        RateLimit: '"default";r=0;t=17',
        'X-RateLimit-Limit': '10',
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(NOW_SECONDS_ROUNDED_UP + 17),
      });
    });

    it('gives the same number of seconds in RateLimit t and Retry-After', () => {
      const { headers, response } = fakeResponse();

      const error = errorFrom(
        response,
        POLICY,
        record({ totalHits: 4, timeToExpire: 0, isBlocked: true, timeToBlockExpire: 9 }),
      ) as ProblemException;

      expect(headers.RateLimit).toBe(`"default";r=0;t=${error.headers['Retry-After']}`);
      expect(error.headers['Retry-After']).toBe('9');
    });
  });
});
