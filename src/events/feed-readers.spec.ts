import { describe, expect, it } from 'vitest';
import { ProblemException } from '../http/problem/problem.exception.js';
import { FeedReaders, READER_LIMITS } from './feed-readers.js';

function refusal(action: () => unknown): ProblemException {
  try {
    action();
  } catch (error) {
    if (error instanceof ProblemException) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('FeedReaders', () => {
  it.each(['wait', 'stream'] as const)('caps %s per principal with 429 and Retry-After', (kind) => {
    const readers = new FeedReaders();
    const { perPrincipal } = READER_LIMITS[kind];
    const releases = Array.from({ length: perPrincipal }, () => readers.acquire(kind, 'api-key:1'));
    const refused = refusal(() => readers.acquire(kind, 'api-key:1'));
    expect(refused.problemType.status).toBe(429);
    expect(refused.headers).toEqual({ 'Retry-After': '1' });
    // Others are not affected, and a release frees a place.
    expect(() => readers.acquire(kind, 'api-key:2')()).not.toThrow();
    releases[0]();
    releases[0]();
    expect(readers.count(kind)).toBe(perPrincipal - 1);
    expect(() => readers.acquire(kind, 'api-key:1')).not.toThrow();
  });

  it.each(['wait', 'stream'] as const)('caps %s per instance with 503 and Retry-After', (kind) => {
    const readers = new FeedReaders();
    const { perInstance } = READER_LIMITS[kind];
    for (let index = 0; index < perInstance; index++) readers.acquire(kind, `api-key:${index}`);
    const refused = refusal(() => readers.acquire(kind, 'api-key:new'));
    expect(refused.problemType.status).toBe(503);
    expect(refused.headers).toEqual({ 'Retry-After': '1' });
    expect(readers.count(kind)).toBe(perInstance);
    // The kinds are counted apart.
    const other = kind === 'wait' ? 'stream' : 'wait';
    expect(() => readers.acquire(other, 'api-key:new')).not.toThrow();
  });
});
