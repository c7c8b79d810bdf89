import { describe, expect, it } from 'vitest';
import { ProblemException } from '../http/problem/problem.exception.js';
import { changeEventType, isDue, postAsOf, resolveLifecycle, type Lifecycle } from './post-lifecycle.js';

const NOW = new Date('2026-11-24T12:00:00.000Z');
const PAST = '2026-11-01T08:00:00.000Z';
const FUTURE = '2027-01-01T00:00:00.000Z';
const draft: Lifecycle = { status: 'draft', publishedAt: null };
const published: Lifecycle = { status: 'published', publishedAt: new Date(PAST) };
const scheduled: Lifecycle = { status: 'scheduled', publishedAt: new Date(FUTURE) };

function refusal(run: () => unknown): { pointer?: string; detail: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProblemException);
    const problem = error as ProblemException;
    expect(problem.problemType.status).toBe(400);
    return problem.errors![0];
  }
  throw new Error('the state was accepted');
}

describe('resolveLifecycle', () => {
  describe('on create', () => {
    it('publishes now when no status is sent', () => {
      expect(resolveLifecycle({}, undefined, NOW)).toEqual({ status: 'published', publishedAt: NOW });
    });

    it('keeps a past publishedAt of a published post (an import)', () => {
      expect(resolveLifecycle({ status: 'published', publishedAt: PAST }, undefined, NOW)).toEqual(published);
    });

    it('gives a draft no publishedAt, also when null is sent', () => {
      expect(resolveLifecycle({ status: 'draft' }, undefined, NOW)).toEqual(draft);
      expect(resolveLifecycle({ status: 'draft', publishedAt: null }, undefined, NOW)).toEqual(draft);
    });

    it('schedules a post for a future instant', () => {
      expect(resolveLifecycle({ status: 'scheduled', publishedAt: FUTURE }, undefined, NOW)).toEqual(scheduled);
    });

    it.each([
      ['a draft with a publishedAt', { status: 'draft' as const, publishedAt: PAST }],
      ['a published post with a future publishedAt', { status: 'published' as const, publishedAt: FUTURE }],
      ['a published post with a null publishedAt', { status: 'published' as const, publishedAt: null }],
      ['a publishedAt alone in the future (the default status is published)', { publishedAt: FUTURE }],
      ['a scheduled post without publishedAt', { status: 'scheduled' as const }],
      ['a scheduled post with a null publishedAt', { status: 'scheduled' as const, publishedAt: null }],
      ['a scheduled post with a past publishedAt', { status: 'scheduled' as const, publishedAt: PAST }],
      ['a scheduled post for exactly now', { status: 'scheduled' as const, publishedAt: NOW.toISOString() }],
    ])('refuses %s with a pointer at publishedAt', (_, input) => {
      expect(refusal(() => resolveLifecycle(input, undefined, NOW)).pointer).toBe('/publishedAt');
    });
  });

  describe('on replace and patch', () => {
    it('keeps the state when neither status nor publishedAt is sent', () => {
      expect(resolveLifecycle({}, draft, NOW)).toEqual(draft);
      expect(resolveLifecycle({}, scheduled, NOW)).toEqual(scheduled);
      expect(resolveLifecycle({}, published, NOW)).toEqual(published);
    });

    it('publishes a draft or a scheduled post now, and keeps the publishedAt of a published one', () => {
      expect(resolveLifecycle({ status: 'published' }, draft, NOW)).toEqual({ status: 'published', publishedAt: NOW });
      expect(resolveLifecycle({ status: 'published' }, scheduled, NOW)).toEqual({
        status: 'published',
        publishedAt: NOW,
      });
      expect(resolveLifecycle({ status: 'published' }, published, NOW)).toEqual(published);
    });

    it('reschedules a scheduled post with publishedAt alone, and keeps its instant when only the status is sent', () => {
      const later = '2027-06-01T00:00:00.000Z';
      expect(resolveLifecycle({ publishedAt: later }, scheduled, NOW)).toEqual({
        status: 'scheduled',
        publishedAt: new Date(later),
      });
      expect(resolveLifecycle({ status: 'scheduled' }, scheduled, NOW)).toEqual(scheduled);
    });

    it('takes a post back to draft', () => {
      expect(resolveLifecycle({ status: 'draft' }, published, NOW)).toEqual(draft);
    });

    it('refuses a publishedAt alone on a draft, and status scheduled alone on a post that is not scheduled', () => {
      expect(refusal(() => resolveLifecycle({ publishedAt: PAST }, draft, NOW)).pointer).toBe('/publishedAt');
      expect(refusal(() => resolveLifecycle({ status: 'scheduled' }, published, NOW)).pointer).toBe('/publishedAt');
    });
  });
});

describe('postAsOf', () => {
  const post = { ...scheduled, version: 3 };

  it('shows a scheduled post whose instant has passed as published, one version later', () => {
    expect(postAsOf(post, new Date(FUTURE))).toEqual({
      status: 'published',
      publishedAt: new Date(FUTURE),
      version: 4,
    });
    expect(isDue(post, new Date(FUTURE))).toBe(true);
  });

  it('leaves a post alone before its instant, and every draft and published post', () => {
    expect(postAsOf(post, NOW)).toBe(post);
    const published3 = { ...published, version: 3 };
    expect(postAsOf(published3, NOW)).toBe(published3);
    const draft3 = { ...draft, version: 3 };
    expect(postAsOf(draft3, NOW)).toBe(draft3);
  });
});

describe('changeEventType', () => {
  it.each([
    ['draft', 'published', 'post.published'],
    ['scheduled', 'published', 'post.published'],
    ['published', 'draft', 'post.unpublished'],
    ['scheduled', 'draft', 'post.unpublished'],
    ['published', 'published', 'post.updated'],
    ['draft', 'draft', 'post.updated'],
    ['draft', 'scheduled', 'post.updated'],
    ['published', 'scheduled', 'post.updated'],
  ] as const)('names a change from %s to %s %s', (before, after, type) => {
    expect(changeEventType(before, after)).toBe(type);
  });
});
